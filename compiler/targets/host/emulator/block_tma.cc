// The block runner's TMA loads (tl/tma.h): cp.async.bulk.tensor from global
// memory through a tensor map into shared memory, completing transactions on
// an mbarrier. A load is checked when it is issued (the map, the box against
// the destination, the barrier) and lands as late as the hardware may: when a
// thread waits on or tests its barrier, or at once when threads already wait
// on it (EmulatorOptions::tma_land_early: at once, always). Loads still pending when the block ends were never waited for, an
// error (the GPU may write the shared memory of the next block).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler/targets/host/emulator/block_impl.h"
#include "compiler/targets/host/emulator/mbarrier.h"
#include "compiler/targets/host/tensor_map.h"

namespace tilec::host {

uint64_t BlockRunner::Impl::CheckTmaBox(ThreadState& t, const tl::host::TmaLoadIn& in,
                                        const char* what) {
  const tl::host::TensorMapDesc& map = *in.map;
  if (map.magic != tl::host::kTensorMapMagic) {
    Trap(t, absl::StrCat(what, " through a tensor map the runtime did not make"), t.pub.pc);
  }
  if (absl::Status s = CheckTensorMap(map, what); !s.ok()) {
    Trap(t, std::string(s.message()), t.pub.pc);
  }
  if (in.rank != static_cast<int32_t>(map.rank)) {
    Trap(t, absl::StrCat("a ", in.rank, "-d ", what, " through a tensor map of rank ", map.rank),
         t.pub.pc);
  }
  uint64_t bytes = map.elem_bytes;
  for (uint32_t d = 0; d < map.rank; ++d) bytes *= map.box[d];
  CheckShared(t, in.smem, bytes, what);
  const int64_t offset = static_cast<uint8_t*>(in.smem) - smem_;
  // The ISA asks 128 bytes; the swizzle pattern repeats every 8 rows of its
  // span, which a box must start on to be laid out as it names.
  const int64_t align = map.swizzle_bytes == 0 ? 128 : 8 * map.swizzle_bytes;
  if (offset % align != 0) {
    Trap(t,
         absl::StrCat(what, " at shared offset ", offset, " is not ", align, "-byte aligned",
                      map.swizzle_bytes ? " (its swizzle's period)" : ""),
         t.pub.pc);
  }
  return bytes;
}

void BlockRunner::Impl::TmaLoad(ThreadState& t, const tl::host::TmaLoadIn& in) {
  const uint64_t bytes = CheckTmaBox(t, in, "TMA load");
  BarrierWord(t, in.bar);
  absl::StatusOr<Mbarrier> m = DecodeMbarrier(*static_cast<const uint64_t*>(in.bar));
  if (!m.ok()) Trap(t, absl::StrCat(BarrierName(in.bar), ": ", m.status().message()), t.pub.pc);
  PendingTma p;
  p.map = *in.map;
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

void BlockRunner::Impl::TransferBox(ThreadState& t, const tl::host::TensorMapDesc& m, uint8_t* smem,
                                    const int32_t* coords, bool store) {
  const uint32_t e = m.elem_bytes;
  const uint32_t rank = m.rank;
  uint32_t count = 1;
  for (uint32_t d = 1; d < rank; ++d) count *= m.box[d];
  const uint32_t row_bytes = m.box[0] * e;
  const uint32_t base = static_cast<uint32_t>(smem - smem_);
  for (uint32_t row = 0; row < count; ++row) {
    // This row of the box along dims 1.., and whether it is inside the tensor.
    bool inside = true;
    uint64_t offset = 0;
    uint32_t rest = row;
    for (uint32_t d = 1; d < rank; ++d) {
      const int64_t g = int64_t{coords[d]} + rest % m.box[d];
      rest /= m.box[d];
      inside = inside && g >= 0 && g < static_cast<int64_t>(m.dims[d]);
      offset += static_cast<uint64_t>(g) * m.strides[d];
    }
    // The columns of the row inside the tensor: [lo, hi) of the box.
    const int64_t c0 = coords[0];
    const int64_t lo = inside ? std::max<int64_t>(0, -c0) : 0;
    const int64_t hi =
        inside ? std::min<int64_t>(m.box[0], static_cast<int64_t>(m.dims[0]) - c0) : 0;
    auto* g = static_cast<uint8_t*>(const_cast<void*>(m.base)) + offset;
    if (hi > lo) {
      CheckGlobal(t, g + (c0 + lo) * e, (hi - lo) * e, store ? "TMA store destination"
                                                             : "TMA load source");
    }
    for (uint32_t c = 0; c < m.box[0]; ++c) {
      uint8_t* s = smem_ + TmaSwizzle(base + row * row_bytes + c * e, m.swizzle_bytes);
      const bool in = static_cast<int64_t>(c) >= lo && static_cast<int64_t>(c) < hi;
      if (store) {
        if (in) {
          AsyncRead(t, s, e, t.pub.pc);
          std::memcpy(g + (c0 + c) * e, s, e);
        }
      } else {
        if (in) {
          std::memcpy(s, g + (c0 + c) * e, e);
        } else {
          std::memset(s, 0, e);
        }
        SmemWritten(s, e, -1);  // the async proxy: no fence needed
      }
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
    TransferBox(t, p.map, p.smem, p.coords, /*store=*/false);
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

void BlockRunner::Impl::TmaStore(ThreadState& t, const tl::host::TmaLoadIn* in, int32_t wait) {
  if (in != nullptr) {
    CheckTmaBox(t, *in, "TMA store");
    TmaStoreOp op;
    op.map = *in->map;
    op.smem = static_cast<uint8_t*>(in->smem);
    for (int d = 0; d < in->rank; ++d) op.coords[d] = in->coords[d];
    op.pc = t.pub.pc;
    t.store_open.push_back(op);
    return;
  }
  if (wait < 0) {  // commit
    t.store_groups.push_back(std::move(t.store_open));
    t.store_open.clear();
    return;
  }
  while (t.store_groups.size() > static_cast<size_t>(wait)) {
    for (const TmaStoreOp& op : t.store_groups.front()) {
      TransferBox(t, op.map, op.smem, op.coords, /*store=*/true);
    }
    t.store_groups.pop_front();
  }
}

bool BlockRunner::Impl::TmaPendingOn(const void* bar) const {
  for (const PendingTma& p : tma_pending_) {
    if (p.bar == bar) return true;
  }
  return false;
}

absl::Status BlockRunner::Impl::TmaLeftPending() const {
  for (const ThreadState& u : threads_) {
    if (u.store_open.empty() && u.store_groups.empty()) continue;
    const TmaStoreOp& op = u.store_open.empty() ? u.store_groups.front().front() : u.store_open.front();
    return absl::AbortedError(absl::StrCat(
        Where(u), ": a TMA store from shared offset ", op.smem - smem_,
        " was never waited for (tma_store_commit, then tma_store_wait)", At(op.pc)));
  }
  if (tma_pending_.empty()) return absl::OkStatus();
  const PendingTma& p = tma_pending_.front();
  return absl::AbortedError(absl::StrCat(
      Where(), ": ", tma_pending_.size(), " TMA load(s) never waited for; the first, into shared ",
      "offset ", p.smem - smem_, ", completes on ", BarrierName(p.bar), At(p.pc)));
}

}  // namespace tilec::host
