// The tl device library for AMD GPUs (gfx90a, gfx942): what HIP-flavoured
// generated code includes, built on clang's amdgcn builtins alone (clang-19
// compiles it with -nogpulib -nogpuinc: no ROCm headers or device libraries).
// Generated code is the same text as for CUDA (docs/amdgpu.md "Emission"):
// this header gives it CUDA's spellings on amdgcn.
//
//   __launch_bounds__(n)  the workgroup size a kernel is compiled for
//                         (amdgpu_flat_work_group_size: CUDA's spelling is
//                         ignored by clang for amdgcn)
//   threadIdx, blockIdx, gridDim   .x .y .z from the work-item and workgroup
//                         ids and the dispatch packet (no hidden kernel
//                         arguments)
//   tl::syncthreads()     workgroup barrier: release fence, s_barrier,
//                         acquire fence (the bare builtin orders no memory)
//   tl::warp_lanes        64 (the wavefront)
//
// Then the tile primitives: element types, buffers, cross-lane moves, math,
// atomics, MFMA, and the target-neutral templates shared with CUDA and the
// emulator (tl/arith.h, tl/layout.h, tl/reduce.h, tl/gemm_mfma.h).
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
#define __restrict__ __restrict

#define TL_LAUNCH_BOUNDS(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define __launch_bounds__(n, ...) TL_LAUNCH_BOUNDS(n)

#include "tl/types.h"

namespace tl {

__device__ __forceinline__ int thread_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ __forceinline__ int thread_y() { return __builtin_amdgcn_workitem_id_y(); }
__device__ __forceinline__ int thread_z() { return __builtin_amdgcn_workitem_id_z(); }
__device__ __forceinline__ int block_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ __forceinline__ int block_y() { return __builtin_amdgcn_workgroup_id_y(); }
__device__ __forceinline__ int block_z() { return __builtin_amdgcn_workgroup_id_z(); }

namespace detail {

struct Dim3 {
  unsigned x, y, z;
};
__device__ __forceinline__ Dim3 thread_idx() {
  return {static_cast<unsigned>(thread_x()), static_cast<unsigned>(thread_y()),
          static_cast<unsigned>(thread_z())};
}
__device__ __forceinline__ Dim3 block_idx() {
  return {static_cast<unsigned>(block_x()), static_cast<unsigned>(block_y()),
          static_cast<unsigned>(block_z())};
}
// The HSA dispatch packet: workgroup sizes (16-bit) at bytes 4, 6, 8, grid
// sizes in work-items (32-bit) at bytes 12, 16, 20.
__device__ __forceinline__ Dim3 grid_dim() {
  const auto* p = static_cast<const unsigned char*>(__builtin_amdgcn_dispatch_ptr());
  const auto* wg = reinterpret_cast<const unsigned short*>(p + 4);
  const auto* grid = reinterpret_cast<const unsigned*>(p + 12);
  return {grid[0] / wg[0], grid[1] / wg[1], grid[2] / wg[2]};
}

}  // namespace detail

__device__ __forceinline__ void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

}  // namespace tl

#define threadIdx (::tl::detail::thread_idx())
#define blockIdx (::tl::detail::block_idx())
#define gridDim (::tl::detail::grid_dim())

#include "tl/buffer.h"
#include "tl/shfl.h"
#include "tl/math.h"
#include "tl/mfma.h"

#include "tl/arith.h"
#include "tl/shfl_wide.h"
#include "tl/layout.h"
#include "tl/reduce.h"
#include "tl/gemm_mfma.h"
#include "tl/atomic.h"

#endif  // TILEC_DEVICE_HIP_TL_TL_H_
