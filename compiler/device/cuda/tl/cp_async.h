// Asynchronous global -> shared copies (sm_80 and later).
//
//   cp_async_16(smem, gmem, pred)  cp.async.cg.shared.global, 16 bytes
//   cp_async_8 / cp_async_4        cp.async.ca.shared.global, 8 / 4 bytes
// When pred is false nothing is read from gmem (src-size 0) and the
// destination bytes are zero-filled, so gmem may then be out of bounds.
// Both addresses must be aligned to the copy size.
//   cp_async_commit()      cp.async.commit_group: close the current group
//   cp_async_wait<N>()     cp.async.wait_group N: wait until at most N of this
//                          thread's committed groups are still pending
// A thread sees only its own copies; a block barrier (syncthreads) after the
// wait publishes them to the other threads.
#ifndef TILEC_DEVICE_CUDA_TL_CP_ASYNC_H_
#define TILEC_DEVICE_CUDA_TL_CP_ASYNC_H_

#include "tl/sync.h"
#include "tl/types.h"

namespace tl {

__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool pred) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(detail::smem_addr(smem)),
               "l"(detail::gmem_addr(gmem)), "r"(pred ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_8(void* smem, const void* gmem, bool pred) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(detail::smem_addr(smem)),
               "l"(detail::gmem_addr(gmem)), "r"(pred ? 8 : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, bool pred) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(detail::smem_addr(smem)),
               "l"(detail::gmem_addr(gmem)), "r"(pred ? 4 : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  static_assert(N >= 0, "tl::cp_async_wait<N>: N is the number of groups left pending, N >= 0");
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_CP_ASYNC_H_
