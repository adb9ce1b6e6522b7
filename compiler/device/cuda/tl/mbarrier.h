// mbarriers for CUDA: the 8-byte barrier objects in shared memory of the PTX
// ISA (mbarrier.*, 8-byte aligned, addressed through a generic pointer into
// shared memory). An mbarrier counts arrivals and, on sm_90, transaction
// bytes; its current phase completes when the pending arrival count and the
// tx-count are both zero, and then the phase advances and the pending count
// is reloaded with the expected count.
//
//   mbarrier_init(bar, count)            expected = pending = count (1 .. 2^20 - 1),
//                                        phase 0, tx-count 0          (sm_80)
//   mbarrier_arrive(bar) -> token        one arrival; the token names the
//                                        phase it arrived in           (sm_80)
//   mbarrier_arrive(bar, count) -> token count arrivals                (sm_90)
//   mbarrier_arrive_expect_tx(bar, tx) -> token
//                                        tx-count += tx, then one arrival (sm_90)
//   mbarrier_expect_tx(bar, tx)          tx-count += tx                (sm_90)
//   mbarrier_complete_tx(bar, tx)        tx-count -= tx (what an async copy
//                                        does when its bytes land)     (sm_90)
//   mbarrier_test_wait(bar, token)       has the token's phase completed?
//                                        never waits                   (sm_80)
//   mbarrier_test_wait_parity(bar, p)    has the phase of parity p completed?
//                                        never waits                   (sm_80)
//   mbarrier_try_wait(bar, token), mbarrier_try_wait_parity(bar, p)
//                                        the same, waiting for a while (sm_90)
//   mbarrier_wait_parity(bar, p)         waits until the phase of parity p
//                                        completes (test_wait loop on sm_80)
//   mbarrier_inval(bar)                  before the memory is reused   (sm_80)
// The sm_90 operations fail to compile for an earlier architecture, with a
// message naming the operation.
#ifndef TILEC_DEVICE_CUDA_TL_MBARRIER_H_
#define TILEC_DEVICE_CUDA_TL_MBARRIER_H_

#include "tl/sync.h"
#include "tl/types.h"

namespace tl {
namespace detail {

template <typename>
inline constexpr bool kArchDependentFalse = false;

}  // namespace detail

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define TL_MBARRIER_REQUIRE_SM90(what)                           \
  static_assert(detail::kArchDependentFalse<Arch>,               \
                what " needs sm_90 or later (PTX ISA 7.8); on sm_80 use " \
                     "mbarrier_arrive(bar) and mbarrier_test_wait")
#else
#define TL_MBARRIER_REQUIRE_SM90(what)
#endif

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(detail::smem_addr(bar)), "r"(count)
               : "memory");
}

// fence.mbarrier_init: makes barriers just initialised visible to the
// asynchronous proxy (TMA's complete_tx) before the block barrier that
// publishes them (sm_90).
__device__ __forceinline__ void fence_barrier_init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

__device__ __forceinline__ uint64_t mbarrier_arrive(uint64_t* bar) {
  uint64_t token;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];"
               : "=l"(token)
               : "r"(detail::smem_addr(bar))
               : "memory");
  return token;
}

template <typename Arch = void>
__device__ __forceinline__ uint64_t mbarrier_arrive(uint64_t* bar, uint32_t count) {
  TL_MBARRIER_REQUIRE_SM90("tl::mbarrier_arrive(bar, count)");
  uint64_t token;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;"
               : "=l"(token)
               : "r"(detail::smem_addr(bar)), "r"(count)
               : "memory");
  return token;
}

template <typename Arch = void>
__device__ __forceinline__ uint64_t mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t tx) {
  TL_MBARRIER_REQUIRE_SM90("tl::mbarrier_arrive_expect_tx");
  uint64_t token;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
               : "=l"(token)
               : "r"(detail::smem_addr(bar)), "r"(tx)
               : "memory");
  return token;
}

template <typename Arch = void>
__device__ __forceinline__ void mbarrier_expect_tx(uint64_t* bar, uint32_t tx) {
  TL_MBARRIER_REQUIRE_SM90("tl::mbarrier_expect_tx");
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(
                   detail::smem_addr(bar)),
               "r"(tx)
               : "memory");
}

template <typename Arch = void>
__device__ __forceinline__ void mbarrier_complete_tx(uint64_t* bar, uint32_t tx) {
  TL_MBARRIER_REQUIRE_SM90("tl::mbarrier_complete_tx");
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(
                   detail::smem_addr(bar)),
               "r"(tx)
               : "memory");
}

__device__ __forceinline__ bool mbarrier_test_wait(uint64_t* bar, uint64_t token) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\tmbarrier.test_wait.shared.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(detail::smem_addr(bar)), "l"(token)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ bool mbarrier_test_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(detail::smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

template <typename Arch = void>
__device__ __forceinline__ bool mbarrier_try_wait(uint64_t* bar, uint64_t token) {
  TL_MBARRIER_REQUIRE_SM90("tl::mbarrier_try_wait");
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\tmbarrier.try_wait.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(detail::smem_addr(bar)), "l"(token)
      : "memory");
  return done != 0;
}

template <typename Arch = void>
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  TL_MBARRIER_REQUIRE_SM90("tl::mbarrier_try_wait_parity");
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(detail::smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_test_wait_parity(bar, parity)) {
  }
}

__device__ __forceinline__ void mbarrier_inval(uint64_t* bar) {
  asm volatile("mbarrier.inval.shared.b64 [%0];" ::"r"(detail::smem_addr(bar)) : "memory");
}

#undef TL_MBARRIER_REQUIRE_SM90

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_MBARRIER_H_
