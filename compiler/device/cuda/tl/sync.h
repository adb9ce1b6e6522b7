// Block-level primitives for CUDA: dynamic shared memory and the block
// barrier, plus the address-space conversions the other wrappers use.
//
// dynamic_smem() is the base of the block's dynamic shared memory (1024-byte
// aligned: the period of wgmma's 128-byte swizzle); generated code places
// every shared buffer at an offset from it.
// syncthreads() is `bar.sync 0`: every thread of the block must reach it.
#ifndef TILEC_DEVICE_CUDA_TL_SYNC_H_
#define TILEC_DEVICE_CUDA_TL_SYNC_H_

#include "tl/types.h"

namespace tl {

__device__ __forceinline__ uint8_t* dynamic_smem() {
  extern __shared__ __align__(1024) uint8_t tl_dynamic_smem_base[];
  return tl_dynamic_smem_base;
}

__device__ __forceinline__ void syncthreads() { asm volatile("bar.sync 0;" ::: "memory"); }

// bar.sync id, count: a barrier among `count` threads (whole warps), e.g. the
// consumer warpgroups of a warp-specialised kernel.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// setmaxnreg (sm_90a): moves register budget between warpgroups; every warp
// of the warpgroup executes it.
template <int Count>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Count >= 24 && Count <= 256 && Count % 8 == 0,
                "setmaxnreg takes 24 to 256 registers, a multiple of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Count));
}
template <int Count>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Count >= 24 && Count <= 256 && Count % 8 == 0,
                "setmaxnreg takes 24 to 256 registers, a multiple of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Count));
}

namespace detail {

// 32-bit .shared window address of a generic pointer into shared memory.
// The compiler's own conversion, which it sees through: the address of
// p + a constant is the address of p plus that constant, so a loop's
// ldmatrix and cp.async addresses share one base.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The same through inline PTX, which the compiler does not see through:
// wgmma descriptors are built from it once per call and advanced by
// constants (tl::wgmma_desc_advance); seen through, the compiler rebuilds
// each descriptor's address bits from the pointer instead.
__device__ __forceinline__ uint32_t smem_addr_opaque(const void* p) {
  uint32_t a;
  asm("{\n\t.reg .u64 t;\n\tcvta.to.shared.u64 t, %1;\n\tcvt.u32.u64 %0, t;\n\t}"
      : "=r"(a)
      : "l"(p));
  return a;
}

// .global address of a generic pointer into global memory.
__device__ __forceinline__ uint64_t gmem_addr(const void* p) {
  uint64_t a;
  asm("cvta.to.global.u64 %0, %1;" : "=l"(a) : "l"(p));
  return a;
}

}  // namespace detail
}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_SYNC_H_
