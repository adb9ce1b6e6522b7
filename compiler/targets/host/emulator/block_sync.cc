// The block runner's warp votes and mbarriers (tl/vote.h, tl/mbarrier.h).
#include <bit>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/emulator/block_impl.h"
#include "compiler/targets/host/emulator/mbarrier.h"

namespace tilec::host {
namespace {

const char* VoteName(int32_t mode) {
  switch (mode) {
    case tl::host::kVoteAll: return "vote_all";
    case tl::host::kVoteAny: return "vote_any";
    case tl::host::kVoteBallot: return "vote_ballot";
    default: return "an unknown vote";
  }
}

}  // namespace

void BlockRunner::Impl::Vote(ThreadState& t, const tl::host::VoteIn& in, uint64_t* out) {
  const WarpState& warp = warps_[t.warp];
  const uint64_t lanes = warp.size == 64 ? ~uint64_t{0} : (uint64_t{1} << warp.size) - 1;
  const uint64_t mask = in.member_mask;
  if (((mask >> t.lane) & 1) == 0) {
    Trap(t,
         absl::StrFormat("%s: lane %d votes with member mask 0x%x, which does not include it",
                         VoteName(in.mode), t.lane, mask),
         t.pub.pc);
  }
  if ((mask & ~lanes) != 0) {
    Trap(t,
         absl::StrFormat("%s: member mask 0x%x names lanes this %d-lane warp does not have",
                         VoteName(in.mode), mask, warp.size),
         t.pub.pc);
  }
  int arrived = 1;
  for (int l = 0; l < warp.size; ++l) {
    const ThreadState& u = threads_[warp.first + l];
    if (&u == &t || u.state != State::kVote || (u.vote_mask & mask) == 0) continue;
    if (u.vote_mask != mask) {
      Trap(t,
           absl::StrFormat("lane %d votes with member mask 0x%x while lane %d waits at a vote "
                           "with member mask 0x%x (overlapping masks must be equal)",
                           t.lane, mask, l, u.vote_mask),
           t.pub.pc);
    }
    ++arrived;
  }
  t.vote_mask = mask;
  t.operands = LaneOperands{&in, out};
  t.state = State::kVote;
  if (arrived < std::popcount(mask)) {
    Yield(t);  // resumed with the result once the mask's last lane arrives
    return;
  }
  uint64_t ballot = 0;
  for (int l = 0; l < warp.size; ++l) {
    if (((mask >> l) & 1) == 0) continue;
    const auto& lane_in =
        *static_cast<const tl::host::VoteIn*>(threads_[warp.first + l].operands.in);
    if (lane_in.mode != in.mode) {
      Trap(t,
           absl::StrFormat("lane %d executes %s while lane %d executes %s with the same member "
                           "mask 0x%x",
                           t.lane, VoteName(in.mode), l, VoteName(lane_in.mode), mask),
           t.pub.pc);
    }
    if (lane_in.pred != 0) ballot |= uint64_t{1} << l;
  }
  uint64_t result = ballot;
  if (in.mode == tl::host::kVoteAll) result = ballot == mask ? 1 : 0;
  if (in.mode == tl::host::kVoteAny) result = ballot != 0 ? 1 : 0;
  for (int l = 0; l < warp.size; ++l) {
    if (((mask >> l) & 1) == 0) continue;
    ThreadState& u = threads_[warp.first + l];
    *static_cast<uint64_t*>(u.operands.out) = result;
    if (&u != &t) Release(u);
  }
  t.state = State::kRunning;
}

std::string BlockRunner::Impl::BarrierName(const void* bar) const {
  return absl::StrCat("the mbarrier at shared offset ", static_cast<const uint8_t*>(bar) - smem_);
}

uint64_t* BlockRunner::Impl::BarrierWord(ThreadState& t, void* bar) {
  const auto* b = static_cast<const uint8_t*>(bar);
  if (b < smem_ || grid_.smem_bytes < 8 || b > smem_ + grid_.smem_bytes - 8) {
    Trap(t,
         absl::StrFormat("mbarrier: address %p is outside the block's dynamic shared memory", bar),
         t.pub.pc);
  }
  if ((b - smem_) % 8 != 0) {
    Trap(t, absl::StrCat("mbarrier: shared offset ", b - smem_, " is not 8-byte aligned"),
         t.pub.pc);
  }
  return static_cast<uint64_t*>(bar);
}

uint64_t BlockRunner::Impl::BlockOp(ThreadState& t, uint32_t op, void* bar, uint64_t arg) {
  if (op == tl::host::kActiveMask) {
    const WarpState& warp = warps_[t.warp];
    uint64_t mask = 0;
    for (int l = 0; l < warp.size; ++l) {
      if (threads_[warp.first + l].state != State::kDone) mask |= uint64_t{1} << l;
    }
    return mask;
  }
  uint64_t* word = BarrierWord(t, bar);
  auto fail = [&](const absl::Status& s) {
    Trap(t, absl::StrCat(BarrierName(bar), ": ", s.message()), t.pub.pc);
  };
  auto waiters = [&] {
    std::vector<int> ids;
    for (const ThreadState& u : threads_) {
      if (u.state == State::kMbarrierWait && u.wait_bar == bar) ids.push_back(u.tid);
    }
    return ids;
  };
  auto decode = [&]() -> Mbarrier {
    absl::StatusOr<Mbarrier> m = DecodeMbarrier(*word);
    if (!m.ok()) fail(m.status());
    return *m;
  };
  auto store = [&](const Mbarrier& m, bool completed) {
    *word = EncodeMbarrier(m);
    if (!completed) return;
    for (ThreadState& u : threads_) {
      if (u.state == State::kMbarrierWait && u.wait_bar == bar) Release(u);
    }
  };
  auto parity_of = [&](bool token) -> uint32_t {
    if (!token) return static_cast<uint32_t>(arg & 1);
    absl::StatusOr<uint32_t> p = MbarrierTokenParity(arg);
    if (!p.ok()) fail(p.status());
    return *p;
  };
  switch (op) {
    case tl::host::kMbarInit:
    case tl::host::kMbarInval: {
      if (TmaPendingOn(bar)) {
        fail(absl::FailedPreconditionError(
            absl::StrCat(op == tl::host::kMbarInit ? "mbarrier_init" : "mbarrier_inval",
                         " while a TMA load completes on it")));
      }
      if (std::vector<int> w = waiters(); !w.empty()) {
        fail(absl::FailedPreconditionError(
            absl::StrCat(op == tl::host::kMbarInit ? "mbarrier_init" : "mbarrier_inval",
                         " while threads ", Ranges(w), " wait on it")));
      }
      if (op == tl::host::kMbarInval) {
        decode();
        *word = 0;
        return 0;
      }
      if (arg == 0 || arg > kMbarrierMaxCount) {
        fail(absl::FailedPreconditionError(absl::StrCat("mbarrier_init with an expected count of ",
                                                        arg, " (1 to ", kMbarrierMaxCount, ")")));
      }
      Mbarrier m;
      m.pending = m.expected = static_cast<uint32_t>(arg);
      *word = EncodeMbarrier(m);
      return 0;
    }
    case tl::host::kMbarArrive:
    case tl::host::kMbarArriveExpectTx: {
      Mbarrier m = decode();
      const uint64_t token = MbarrierToken(m);
      uint32_t count = static_cast<uint32_t>(arg);
      if (op == tl::host::kMbarArriveExpectTx) {
        absl::StatusOr<bool> done = MbarrierAddTx(m, static_cast<int64_t>(arg));
        if (!done.ok()) fail(done.status());
        count = 1;
      }
      absl::StatusOr<bool> done = MbarrierArrive(m, count);
      if (!done.ok()) fail(done.status());
      store(m, *done);
      return token;
    }
    case tl::host::kMbarExpectTx:
    case tl::host::kMbarCompleteTx: {
      Mbarrier m = decode();
      const int64_t n = static_cast<int64_t>(static_cast<uint32_t>(arg));
      absl::StatusOr<bool> done = MbarrierAddTx(m, op == tl::host::kMbarExpectTx ? n : -n);
      if (!done.ok()) fail(done.status());
      store(m, *done);
      return 0;
    }
    case tl::host::kMbarTestWait:
    case tl::host::kMbarTestWaitParity: {
      const uint32_t parity = parity_of(op == tl::host::kMbarTestWait);
      LandTma(t, bar);
      decode();
      Release(t);  // let the block's other threads run first: a spin loop progresses
      Yield(t);
      t.state = State::kRunning;
      return decode().phase != parity ? 1 : 0;
    }
    case tl::host::kMbarTryWait:
    case tl::host::kMbarTryWaitParity: {
      const uint32_t parity = parity_of(op == tl::host::kMbarTryWait);
      LandTma(t, bar);
      while (decode().phase == parity) {
        t.state = State::kMbarrierWait;
        t.wait_bar = bar;
        t.wait_parity = parity;
        Yield(t);  // released when a phase of this barrier completes
        t.state = State::kRunning;
        t.wait_bar = nullptr;
      }
      return 1;
    }
    default:
      Trap(t,
           absl::StrCat("unknown mbarrier operation ", op, " (device library / runtime mismatch)"));
  }
}

absl::Status BlockRunner::Impl::DiagnoseSync() const {
  std::vector<int> exited, at_barrier, at_collective;
  for (const ThreadState& u : threads_) {
    if (u.state == State::kDone) exited.push_back(u.tid);
    if (u.state == State::kBarrier) at_barrier.push_back(u.tid);
    if (u.state == State::kCollective || u.state == State::kVote) at_collective.push_back(u.tid);
  }
  auto others = [&](const std::vector<int>& skip_vote_lanes) {
    std::vector<std::string> parts;
    if (!exited.empty()) parts.push_back(absl::StrCat("threads ", Ranges(exited), " have exited"));
    if (!at_barrier.empty()) {
      parts.push_back(absl::StrCat("threads ", Ranges(at_barrier), " wait at syncthreads"));
    }
    std::vector<int> coll;
    for (int id : at_collective) {
      if (std::find(skip_vote_lanes.begin(), skip_vote_lanes.end(), id) == skip_vote_lanes.end()) {
        coll.push_back(id);
      }
    }
    if (!coll.empty()) {
      parts.push_back(absl::StrCat("threads ", Ranges(coll), " wait at warp collectives"));
    }
    return parts.empty() ? std::string("no other thread is left") : absl::StrJoin(parts, ", ");
  };
  // mbarrier waits that no thread is left to complete.
  std::map<const void*, std::vector<int>> waits;
  for (const ThreadState& u : threads_) {
    if (u.state == State::kMbarrierWait) waits[u.wait_bar].push_back(u.tid);
  }
  if (!waits.empty()) {
    std::vector<std::string> parts;
    for (const auto& [bar, ids] : waits) {
      absl::StatusOr<Mbarrier> m = DecodeMbarrier(*static_cast<const uint64_t*>(bar));
      parts.push_back(absl::StrCat("threads ", Ranges(ids), " wait on ", BarrierName(bar), " (",
                                   m.ok() ? DescribeMbarrier(*m) : "invalid", ")",
                                   At(threads_[ids.front()].pub.pc)));
    }
    return absl::AbortedError(absl::StrCat("deadlock in ", Where(), ": ",
                                           absl::StrJoin(parts, "; "), "; ", others({}),
                                           ", so no thread can complete the phase"));
  }
  // Votes whose member lanes never all arrive.
  for (const ThreadState& u : threads_) {
    if (u.state != State::kVote) continue;
    const WarpState& warp = warps_[u.warp];
    std::vector<int> waiting, missing;
    for (int l = 0; l < warp.size; ++l) {
      if (((u.vote_mask >> l) & 1) == 0) continue;
      const ThreadState& v = threads_[warp.first + l];
      (v.state == State::kVote && v.vote_mask == u.vote_mask ? waiting : missing).push_back(l);
    }
    return absl::AbortedError(absl::StrFormat(
        "%s, warp %d: lanes %s wait at a vote with member mask 0x%x but lanes %s of the mask "
        "never arrive (%s)%s",
        Where(), u.warp, Ranges(waiting), u.vote_mask, Ranges(missing), others({}), At(u.pub.pc)));
  }
  return absl::OkStatus();
}

}  // namespace tilec::host
