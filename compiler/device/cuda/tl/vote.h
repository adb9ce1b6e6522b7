// Warp votes for CUDA (sm_70 and later), over the lanes of `mask`: every lane
// that executes the call must be in `mask` and all of them pass the same
// mask; the call waits for every lane of the mask.
//
//   vote_all(mask, pred)     pred holds in every lane of mask   vote.sync.all.pred
//   vote_any(mask, pred)     pred holds in some lane of mask    vote.sync.any.pred
//   vote_ballot(mask, pred)  bit l set when lane l of mask has pred
//                                                               vote.sync.ballot.b32
//   activemask()             the lanes executing this call together
//                                                               activemask.b32
// On CUDA a lane mask is 32 bits (lane_mask_t); the host twin's is 64 bits
// so that wavefronts of 64 lanes fit.
#ifndef TILEC_DEVICE_CUDA_TL_VOTE_H_
#define TILEC_DEVICE_CUDA_TL_VOTE_H_

#include "tl/types.h"

namespace tl {

using lane_mask_t = unsigned;

__device__ __forceinline__ bool vote_all(lane_mask_t mask, bool pred) {
  uint32_t r;
  asm volatile(
      "{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %1, 0;\n\tvote.sync.all.pred q, p, %2;\n\t"
      "selp.u32 %0, 1, 0, q;\n\t}"
      : "=r"(r)
      : "r"(static_cast<uint32_t>(pred)), "r"(mask));
  return r != 0;
}

__device__ __forceinline__ bool vote_any(lane_mask_t mask, bool pred) {
  uint32_t r;
  asm volatile(
      "{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %1, 0;\n\tvote.sync.any.pred q, p, %2;\n\t"
      "selp.u32 %0, 1, 0, q;\n\t}"
      : "=r"(r)
      : "r"(static_cast<uint32_t>(pred)), "r"(mask));
  return r != 0;
}

__device__ __forceinline__ lane_mask_t vote_ballot(lane_mask_t mask, bool pred) {
  uint32_t r;
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tvote.sync.ballot.b32 %0, p, %2;\n\t}"
      : "=r"(r)
      : "r"(static_cast<uint32_t>(pred)), "r"(mask));
  return r;
}

__device__ __forceinline__ lane_mask_t activemask() {
  uint32_t r;
  asm volatile("activemask.b32 %0;" : "=r"(r));
  return r;
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_VOTE_H_
