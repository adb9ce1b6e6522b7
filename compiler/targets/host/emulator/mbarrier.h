// The mbarrier state machine of the PTX ISA, on the 8-byte object in shared
// memory (the emulator keeps the whole state in those bytes, so a barrier
// lives exactly as long as the memory holding it):
//
//   init(count)       expected = pending = count (1 .. 2^20 - 1), phase 0, tx 0
//   arrive(count)     pending -= count (more than pending is an error)
//   expect_tx(n)      tx += n (0 .. 2^20 - 1 per operation)
//   complete_tx(n)    tx -= n
// After each of those, a phase whose pending count and tx-count are both zero
// completes: the phase advances (its parity flips), pending = expected.
// tx-count stays within +-(2^20 - 1). A word that init did not write (or that
// inval cleared, or that the block's poison fill left) is not a barrier.
//
// Pure functions: the emulator's block runner does the waiting.
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATOR_MBARRIER_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATOR_MBARRIER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tilec::host {

struct Mbarrier {
  uint32_t phase = 0;  // completed phases, modulo 2 (the parity)
  uint32_t pending = 0;
  uint32_t expected = 0;
  int32_t tx = 0;
};

inline constexpr uint32_t kMbarrierMaxCount = (1u << 20) - 1;

// The state in `word`; FAILED_PRECONDITION when it holds no initialised barrier.
absl::StatusOr<Mbarrier> DecodeMbarrier(uint64_t word);
uint64_t EncodeMbarrier(const Mbarrier& m);

// The token arrive returns for the phase of `m`, and the phase parity a token
// names (FAILED_PRECONDITION for a value that is not a token).
uint64_t MbarrierToken(const Mbarrier& m);
absl::StatusOr<uint32_t> MbarrierTokenParity(uint64_t token);

// Applies an arrival of `count` and/or a tx-count change (expect: +tx,
// complete: -tx) to `m`; returns whether the phase completed.
// FAILED_PRECONDITION names the rule broken.
absl::StatusOr<bool> MbarrierArrive(Mbarrier& m, uint32_t count);
absl::StatusOr<bool> MbarrierAddTx(Mbarrier& m, int64_t delta);

// "phase 1, 3 of 4 arrivals pending, tx-count 0" for messages.
std::string DescribeMbarrier(const Mbarrier& m);

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATOR_MBARRIER_H_
