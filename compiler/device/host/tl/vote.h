// Host twin of cuda/tl/vote.h: warp votes as collectives of the lanes of
// `mask`. Every lane of the mask must make the call with the same mask (a
// lane outside its own mask is an error); the emulator answers once all of
// them have arrived, so lanes outside the mask may be anywhere else. A lane
// mask is 64 bits here: bit l is lane l, bits 32..63 are used by 64-lane
// warps (EmulatorOptions::warp_size = 64) only.
//
//   vote_all(mask, pred), vote_any(mask, pred), vote_ballot(mask, pred)
//   activemask()   the lanes of this warp that have not exited (the emulator
//                  has no notion of divergent lanes executing apart)
#ifndef TILEC_DEVICE_HOST_TL_VOTE_H_
#define TILEC_DEVICE_HOST_TL_VOTE_H_

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {

using lane_mask_t = unsigned long long;

namespace host {

inline uint64_t vote(int32_t mode, lane_mask_t mask, bool pred) {
  VoteIn in{mode, pred ? 1 : 0, mask};
  uint64_t out = 0;
  collective(kWarpVote, &in, &out);
  return out;
}

}  // namespace host

inline bool vote_all(lane_mask_t mask, bool pred) {
  return host::vote(host::kVoteAll, mask, pred) != 0;
}

inline bool vote_any(lane_mask_t mask, bool pred) {
  return host::vote(host::kVoteAny, mask, pred) != 0;
}

inline lane_mask_t vote_ballot(lane_mask_t mask, bool pred) {
  return host::vote(host::kVoteBallot, mask, pred);
}

inline lane_mask_t activemask() {
  host::Thread* t = host::current_thread;
  return t->rt->mbarrier(t, host::kActiveMask, nullptr, 0);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_VOTE_H_
