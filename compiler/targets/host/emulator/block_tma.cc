// The block runner's TMA loads (tl/tma.h): cp.async.bulk.tensor from global
// memory through a tensor map into shared memory, completing transactions on
// an mbarrier. A load is checked when it is issued (the map, the box against
// the destination, the barrier) and lands as late as the hardware may: when a
// thread waits on or tests its barrier, or at once when threads already wait
// on it (EmulatorOptions::tma_land_early: at once, always). Loads still pending when the block ends were never waited for, an
// error (the GPU may write the shared memory of the next block).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler/targets/host/emulator/block_impl.h"
#include "compiler/targets/host/emulator/mbarrier.h"
#include "compiler/targets/host/tensor_map.h"

namespace tilec::host {

void BlockRunner::Impl::TmaLoad(ThreadState& t, const tl::host::TmaLoadIn& in) {
  const tl::host::TensorMapDesc& map = *in.map;
  if (map.magic != tl::host::kTensorMapMagic) {
    Trap(t, "TMA load through a tensor map the runtime did not make", t.pub.pc);
  }
  if (absl::Status s = CheckTensorMap(map, "a TMA load"); !s.ok()) {
    Trap(t, std::string(s.message()), t.pub.pc);
  }
  if (in.rank != static_cast<int32_t>(map.rank)) {
    Trap(t, absl::StrCat("a ", in.rank, "-d TMA load through a tensor map of rank ", map.rank),
         t.pub.pc);
  }
  uint64_t bytes = map.elem_bytes;
  for (uint32_t d = 0; d < map.rank; ++d) bytes *= map.box[d];
  CheckShared(t, in.smem, bytes, "TMA load destination");
  const int64_t offset = static_cast<uint8_t*>(in.smem) - smem_;
  // The ISA asks 128 bytes; the swizzle pattern repeats every 8 rows of its
  // span, which a destination must start on to get the layout it names.
  const int64_t align = map.swizzle_bytes == 0 ? 128 : 8 * map.swizzle_bytes;
  if (offset % align != 0) {
    Trap(t,
         absl::StrCat("TMA load destination at shared offset ", offset, " is not ", align,
                      "-byte aligned", map.swizzle_bytes ? " (its swizzle's period)" : ""),
         t.pub.pc);
  }
  BarrierWord(t, in.bar);
  absl::StatusOr<Mbarrier> m = DecodeMbarrier(*static_cast<const uint64_t*>(in.bar));
  if (!m.ok()) Trap(t, absl::StrCat(BarrierName(in.bar), ": ", m.status().message()), t.pub.pc);
  PendingTma p;
  p.map = map;
  p.smem = static_cast<uint8_t*>(in.smem);
  p.bar = in.bar;
  p.bytes = bytes;
  for (int d = 0; d < in.rank; ++d) p.coords[d] = in.coords[d];
  p.pc = t.pub.pc;
  tma_pending_.push_back(p);
  if (grid_.tma_land_early) {
    LandTma(t, in.bar);
    return;
  }
  for (const ThreadState& u : threads_) {
    if (u.state == State::kMbarrierWait && u.wait_bar == in.bar) {
      LandTma(t, in.bar);
      break;
    }
  }
}

void BlockRunner::Impl::LandTma(ThreadState& t, void* bar) {
  std::vector<PendingTma> keep;
  std::vector<PendingTma> land;
  for (PendingTma& p : tma_pending_) (p.bar == bar ? land : keep).push_back(p);
  if (land.empty()) return;
  tma_pending_ = std::move(keep);
  for (const PendingTma& p : land) {
    const tl::host::TensorMapDesc& m = p.map;
    const uint32_t e = m.elem_bytes;
    const uint32_t rank = m.rank;
    uint32_t count = 1;
    for (uint32_t d = 1; d < rank; ++d) count *= m.box[d];
    const uint32_t row_bytes = m.box[0] * e;
    const uint32_t base = static_cast<uint32_t>(p.smem - smem_);
    for (uint32_t row = 0; row < count; ++row) {
      // Index of this row of the box along dims 1.., and whether it is inside.
      int64_t g[tl::host::kTensorMapMaxRank] = {};
      bool inside = true;
      uint64_t src = 0;
      uint32_t rest = row;
      for (uint32_t d = 1; d < rank; ++d) {
        g[d] = int64_t{p.coords[d]} + rest % m.box[d];
        rest /= m.box[d];
        inside = inside && g[d] >= 0 && g[d] < static_cast<int64_t>(m.dims[d]);
        src += static_cast<uint64_t>(g[d]) * m.strides[d];
      }
      // The columns of the row inside the tensor: [lo, hi) of the box.
      const int64_t c0 = p.coords[0];
      const int64_t lo = inside ? std::max<int64_t>(0, -c0) : 0;
      const int64_t hi = inside ? std::min<int64_t>(m.box[0], static_cast<int64_t>(m.dims[0]) - c0)
                                : 0;
      const auto* gsrc = static_cast<const uint8_t*>(m.base) + src;
      if (hi > lo) CheckGlobal(t, gsrc + (c0 + lo) * e, (hi - lo) * e, "TMA load source");
      for (uint32_t c = 0; c < m.box[0]; ++c) {
        const uint32_t linear = base + row * row_bytes + c * e;
        uint8_t* dst = smem_ + TmaSwizzle(linear, m.swizzle_bytes);
        if (static_cast<int64_t>(c) >= lo && static_cast<int64_t>(c) < hi) {
          std::memcpy(dst, gsrc + (c0 + c) * e, e);
        } else {
          std::memset(dst, 0, e);
        }
        SmemWritten(dst, e);
      }
    }
    uint64_t* word = static_cast<uint64_t*>(bar);
    absl::StatusOr<Mbarrier> mb = DecodeMbarrier(*word);
    if (!mb.ok()) {
      Trap(t, absl::StrCat(BarrierName(bar), " of a TMA load: ", mb.status().message()), p.pc);
    }
    absl::StatusOr<bool> done = MbarrierAddTx(*mb, -static_cast<int64_t>(p.bytes));
    if (!done.ok()) {
      Trap(t, absl::StrCat(BarrierName(bar), ": a TMA load's ", p.bytes, " bytes: ",
                           done.status().message()),
           p.pc);
    }
    *word = EncodeMbarrier(*mb);
    if (*done) {
      for (ThreadState& u : threads_) {
        if (u.state == State::kMbarrierWait && u.wait_bar == bar) Release(u);
      }
    }
  }
}

bool BlockRunner::Impl::TmaPendingOn(const void* bar) const {
  for (const PendingTma& p : tma_pending_) {
    if (p.bar == bar) return true;
  }
  return false;
}

absl::Status BlockRunner::Impl::TmaLeftPending() const {
  if (tma_pending_.empty()) return absl::OkStatus();
  const PendingTma& p = tma_pending_.front();
  return absl::AbortedError(absl::StrCat(
      Where(), ": ", tma_pending_.size(), " TMA load(s) never waited for; the first, into shared ",
      "offset ", p.smem - smem_, ", completes on ", BarrierName(p.bar), At(p.pc)));
}

}  // namespace tilec::host
