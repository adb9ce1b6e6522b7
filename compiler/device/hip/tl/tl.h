// The tl device library for AMD GPUs (gfx90a, gfx942): what HIP-flavoured
// generated code includes, built on clang's amdgcn builtins alone (clang-19
// compiles it with -nogpulib -nogpuinc: no ROCm headers or device libraries).
// This first part holds the execution model; the tile primitives (MFMA
// gemms, wavefront reductions, LDS layouts) join it with the AMD emitter.
//
//   TL_LAUNCH_BOUNDS(n)   the workgroup size a kernel is compiled for
//                         (amdgpu_flat_work_group_size: CUDA's spelling of
//                         launch bounds is ignored by clang for amdgcn)
//   tl::thread_x(), tl::block_x() ...   work-item and workgroup ids
//   tl::syncthreads()     workgroup barrier: release fence, s_barrier,
//                         acquire fence (the bare builtin orders no memory)
//   tl::wave_size         64 on gfx90a and gfx942
#ifndef TILEC_DEVICE_HIP_TL_TL_H_
#define TILEC_DEVICE_HIP_TL_TL_H_

#if !defined(__HIP__) || !defined(__AMDGCN__)
#error "tl/tl.h for AMD GPUs is compiled by clang in HIP mode for amdgcn"
#endif

// HIP's function and variable qualifiers, as clang spells them (the ROCm
// headers that usually define them are not used).
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif

#define TL_LAUNCH_BOUNDS(n) __attribute__((amdgpu_flat_work_group_size(1, n)))

namespace tl {

using int8_t = signed char;
using uint8_t = unsigned char;
using int16_t = short;
using uint16_t = unsigned short;
using int32_t = int;
using uint32_t = unsigned int;
using int64_t = long long;
using uint64_t = unsigned long long;

inline constexpr int wave_size = 64;

__device__ __forceinline__ int thread_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ __forceinline__ int thread_y() { return __builtin_amdgcn_workitem_id_y(); }
__device__ __forceinline__ int thread_z() { return __builtin_amdgcn_workitem_id_z(); }
__device__ __forceinline__ int block_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ __forceinline__ int block_y() { return __builtin_amdgcn_workgroup_id_y(); }
__device__ __forceinline__ int block_z() { return __builtin_amdgcn_workgroup_id_z(); }

__device__ __forceinline__ void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_TL_H_
