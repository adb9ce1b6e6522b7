#include "compiler/targets/host/emulator/mbarrier.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tilec::host {
namespace {

// Layout of the word: pending in bits 0-19, expected in 20-39, tx-count in
// 40-60 (21-bit two's complement), the phase parity in bit 61, and 0b10 in
// bits 62-63 marking an initialised barrier (neither zeroed memory nor the
// 0xFF poison looks like one).
constexpr uint64_t kMarker = uint64_t{2} << 62;
constexpr uint64_t kMarkerMask = uint64_t{3} << 62;
constexpr uint64_t kTokenMarker = uint64_t{0x7B} << 56;
constexpr int32_t kMaxTx = (1 << 20) - 1;

absl::Status Complete(Mbarrier& m, bool* completed) {
  *completed = m.pending == 0 && m.tx == 0;
  if (*completed) {
    m.phase ^= 1;
    m.pending = m.expected;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Mbarrier> DecodeMbarrier(uint64_t word) {
  if ((word & kMarkerMask) != kMarker) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the 8 bytes (0x%016x) hold no initialised mbarrier (mbarrier_init was not called, or "
        "mbarrier_inval was, or the memory was overwritten)",
        word));
  }
  Mbarrier m;
  m.pending = static_cast<uint32_t>(word & 0xFFFFF);
  m.expected = static_cast<uint32_t>((word >> 20) & 0xFFFFF);
  const uint32_t tx = static_cast<uint32_t>((word >> 40) & 0x1FFFFF);
  m.tx = (tx & 0x100000) ? static_cast<int32_t>(tx) - (1 << 21) : static_cast<int32_t>(tx);
  m.phase = static_cast<uint32_t>((word >> 61) & 1);
  return m;
}

uint64_t EncodeMbarrier(const Mbarrier& m) {
  const uint64_t tx = static_cast<uint64_t>(static_cast<uint32_t>(m.tx) & 0x1FFFFF);
  return kMarker | (uint64_t{m.phase & 1} << 61) | (tx << 40) |
         (uint64_t{m.expected & 0xFFFFF} << 20) | uint64_t{m.pending & 0xFFFFF};
}

uint64_t MbarrierToken(const Mbarrier& m) { return kTokenMarker | (m.phase & 1); }

absl::StatusOr<uint32_t> MbarrierTokenParity(uint64_t token) {
  if ((token & ~uint64_t{1}) != kTokenMarker) {
    return absl::FailedPreconditionError(
        absl::StrFormat("0x%016x is not a token returned by an mbarrier arrive", token));
  }
  return static_cast<uint32_t>(token & 1);
}

absl::StatusOr<bool> MbarrierArrive(Mbarrier& m, uint32_t count) {
  if (count == 0 || count > kMbarrierMaxCount) {
    return absl::FailedPreconditionError(
        absl::StrCat("an arrive count of ", count, " (1 to ", kMbarrierMaxCount, ")"));
  }
  if (count > m.pending) {
    return absl::FailedPreconditionError(absl::StrCat(
        count, " arrivals on a barrier with ", m.pending, " pending (", DescribeMbarrier(m), ")"));
  }
  m.pending -= count;
  bool completed = false;
  if (absl::Status s = Complete(m, &completed); !s.ok()) return s;
  return completed;
}

absl::StatusOr<bool> MbarrierAddTx(Mbarrier& m, int64_t delta) {
  if (delta < -kMaxTx || delta > kMaxTx) {
    return absl::FailedPreconditionError(absl::StrCat("a transaction count of ",
                                                      delta < 0 ? -delta : delta, " (0 to ", kMaxTx,
                                                      " per operation)"));
  }
  const int64_t tx = int64_t{m.tx} + delta;
  if (tx < -kMaxTx || tx > kMaxTx) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the tx-count would become ", tx, ", outside +-", kMaxTx, " (", DescribeMbarrier(m), ")"));
  }
  m.tx = static_cast<int32_t>(tx);
  bool completed = false;
  if (absl::Status s = Complete(m, &completed); !s.ok()) return s;
  return completed;
}

std::string DescribeMbarrier(const Mbarrier& m) {
  return absl::StrCat("phase parity ", m.phase, ", ", m.pending, " of ", m.expected,
                      " arrivals pending, tx-count ", m.tx);
}

}  // namespace tilec::host
