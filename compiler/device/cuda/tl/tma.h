// TMA loads on sm_90: cp.async.bulk.tensor copies a box of a global tensor,
// described by a tensor map (CUtensorMap: 128 opaque bytes the runtime makes
// at launch with cuTensorMapEncodeTiled and passes as a __grid_constant__
// kernel parameter), into shared memory, in the swizzle the map names, with
// zeros for the box's elements outside the tensor; the bytes written complete
// transactions on an mbarrier (tl/mbarrier.h), which consumers wait on.
//
//   tma_load(dst, map, bar, c0, ..., c{rank-1})
//        the box whose first element is at coordinates (c0 innermost, ...),
//        to `dst` (128-byte aligned; the swizzle's period, 256/512/1024 bytes,
//        for the layout it names) completing box bytes on `bar`
// One thread issues a load; arrive_expect_tx on `bar` accounts its bytes.
#ifndef TILEC_DEVICE_CUDA_TL_TMA_H_
#define TILEC_DEVICE_CUDA_TL_TMA_H_

#include "tl/sync.h"
#include "tl/types.h"

namespace tl {

struct alignas(64) TmaMap {
  unsigned long long opaque[16];
};

#define TL_TMA_LOAD_HEAD(rank) \
  "cp.async.bulk.tensor." #rank "d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {"

__device__ __forceinline__ void tma_load(void* dst, const TmaMap& map, uint64_t* bar, int c0) {
  asm volatile(TL_TMA_LOAD_HEAD(1) "%3}], [%2];" ::"r"(detail::smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(&map)), "r"(detail::smem_addr(bar)), "r"(c0)
               : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const TmaMap& map, uint64_t* bar, int c0,
                                         int c1) {
  asm volatile(TL_TMA_LOAD_HEAD(2) "%3, %4}], [%2];" ::"r"(detail::smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(&map)), "r"(detail::smem_addr(bar)), "r"(c0),
               "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const TmaMap& map, uint64_t* bar, int c0, int c1,
                                         int c2) {
  asm volatile(TL_TMA_LOAD_HEAD(3) "%3, %4, %5}], [%2];" ::"r"(detail::smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(&map)), "r"(detail::smem_addr(bar)), "r"(c0),
               "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const TmaMap& map, uint64_t* bar, int c0, int c1,
                                         int c2, int c3) {
  asm volatile(TL_TMA_LOAD_HEAD(4) "%3, %4, %5, %6}], [%2];" ::"r"(detail::smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(&map)), "r"(detail::smem_addr(bar)), "r"(c0),
               "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const TmaMap& map, uint64_t* bar, int c0, int c1,
                                         int c2, int c3, int c4) {
  asm volatile(TL_TMA_LOAD_HEAD(5) "%3, %4, %5, %6, %7}], [%2];" ::"r"(detail::smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(&map)), "r"(detail::smem_addr(bar)), "r"(c0),
               "r"(c1), "r"(c2), "r"(c3), "r"(c4)
               : "memory");
}

#undef TL_TMA_LOAD_HEAD

// TMA stores: the box at `src` (shared memory, in the map's swizzle) to the
// tensor at coordinates (c0 innermost, ...), elements outside the tensor
// dropped; one bulk async-group per commit. Shared memory written by the
// threads must be made visible to the async proxy first (fence_proxy_async
// before the block barrier).
#define TL_TMA_STORE_HEAD(rank) "cp.async.bulk.tensor." #rank "d.global.shared::cta.bulk_group [%0, {"

__device__ __forceinline__ void tma_store(const TmaMap& map, const void* src, int c0) {
  asm volatile(TL_TMA_STORE_HEAD(1) "%2}], [%1];" ::"l"(reinterpret_cast<uint64_t>(&map)),
               "r"(detail::smem_addr(src)), "r"(c0)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TmaMap& map, const void* src, int c0, int c1) {
  asm volatile(TL_TMA_STORE_HEAD(2) "%2, %3}], [%1];" ::"l"(reinterpret_cast<uint64_t>(&map)),
               "r"(detail::smem_addr(src)), "r"(c0), "r"(c1)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TmaMap& map, const void* src, int c0, int c1,
                                          int c2) {
  asm volatile(TL_TMA_STORE_HEAD(3) "%2, %3, %4}], [%1];" ::"l"(reinterpret_cast<uint64_t>(&map)),
               "r"(detail::smem_addr(src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TmaMap& map, const void* src, int c0, int c1,
                                          int c2, int c3) {
  asm volatile(TL_TMA_STORE_HEAD(4) "%2, %3, %4, %5}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(&map)),
               "r"(detail::smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void tma_store(const TmaMap& map, const void* src, int c0, int c1,
                                          int c2, int c3, int c4) {
  asm volatile(TL_TMA_STORE_HEAD(5) "%2, %3, %4, %5, %6}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(&map)),
               "r"(detail::smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
               : "memory");
}

#undef TL_TMA_STORE_HEAD

// cp.async.bulk.commit_group / wait_group N: the thread's bulk stores so far
// form a group; waiting leaves at most N groups pending (their writes done).
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_TMA_H_
