// Hopper's warpgroup mma for CUDA (sm_90a): the instructions tl/gemm_wgmma.h
// is built on.
//
//   WgmmaGroup                      the wgmma group being built (empty here;
//                                   the emulator keeps its pending results in it)
//   wgmma_fence()                   wgmma.fence.sync.aligned: orders earlier
//                                   register and shared-memory accesses before
//                                   the wgmma that follow
//   wgmma_ss<N, Kind, TA, TB>(group, d, desc_a, desc_b, scale_d)
//                                   wgmma.mma_async m64nNk16/k32 (tl/wgmma_ops.h)
//   wgmma_rs<N, Kind, TB>(group, d, a, desc_b, scale_d)
//                                   the same with A from registers (a: the four
//                                   f16x2 registers of the ISA's A fragment)
//   wgmma_commit(group)             wgmma.commit_group.sync.aligned
//   wgmma_wait<N>(group)            wgmma.wait_group.sync.aligned N: all but
//                                   the newest N groups are complete
//   wgmma_fence_operand<Count>(d)   keeps the compiler from moving accesses
//                                   of d[0..Count) across it
//   fence_proxy_async()             fence.proxy.async.shared::cta: this
//                                   thread's shared-memory writes become
//                                   visible to the async proxy (wgmma, TMA)
//   wgmma_smem_addr(p)              the .shared address of p
#ifndef TILEC_DEVICE_CUDA_TL_WGMMA_H_
#define TILEC_DEVICE_CUDA_TL_WGMMA_H_

#include "tl/sync.h"
#include "tl/types.h"
#include "tl/wgmma_ops.h"

namespace tl {

struct WgmmaGroup {};

__device__ __forceinline__ uint32_t wgmma_smem_addr(const void* p) {
  return detail::smem_addr_opaque(p);
}

__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit(WgmmaGroup&) {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wgmma_wait(WgmmaGroup&) {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

template <int Count>
__device__ __forceinline__ void wgmma_fence_operand(float* d) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int Count>
__device__ __forceinline__ void wgmma_fence_operand(uint32_t* a) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

template <int N, int Kind, int TransA, int TransB>
__device__ __forceinline__ void wgmma_ss(WgmmaGroup&, float* d, uint64_t desc_a, uint64_t desc_b,
                                         uint32_t scale_d) {
  detail::WgmmaOp<N>::template run<Kind, TransA, TransB>(d, desc_a, desc_b, scale_d);
}

template <int N, int Kind, int TransB>
__device__ __forceinline__ void wgmma_rs(WgmmaGroup&, float* d, const uint32_t (&a)[4],
                                         uint64_t desc_b, uint32_t scale_d) {
  detail::WgmmaRsOp<N>::template run<Kind, TransB>(d, a, desc_b, scale_d);
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_WGMMA_H_
