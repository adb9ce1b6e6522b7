// The budget of staging: how much work evaluating a TileLang builder may do,
// for how long, and whether it has been asked to stop.
//
// Work is counted in steps: one per expression or statement evaluated, and
// one per item that a value operation builds or visits (sorted(), sum(),
// list concatenation and repetition, comparison and containment of
// sequences, str methods...), so that a builtin doing much work per call
// costs what it does. The budget is per call of CompileTileLang and lives on
// the calling thread; value operations charge it through ChargeStaging.
#ifndef TILEC_COMPILER_FRONTEND_STAGING_BUDGET_H_
#define TILEC_COMPILER_FRONTEND_STAGING_BUDGET_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tilec::frontend {

// Bounds an embedding sets on staging (tilecd: its --staging_timeout_s, the
// call's deadline, its cancellation and the server's shutdown).
struct StagingLimits {
  // Staging stops with DEADLINE_EXCEEDED once this time has passed.
  absl::Time deadline = absl::InfiniteFuture();
  // Says why the deadline is what it is, for the message
  // ("this server stages a program for at most 10 s (--staging_timeout_s)").
  std::string deadline_reason = {};
  // Asked every few thousand steps; true stops staging with CANCELLED.
  std::function<bool()> stop = {};
};

// Steps one CompileTileLang call may take.
inline constexpr int64_t kStagingSteps = 2'000'000;
// Steps an item of a list, tuple or dict costs when it is built. A staging
// value is about 370 bytes, so one staging holds at most 500,000 built
// items (about 190 MB) however it keeps them.
inline constexpr int64_t kStepsPerItemBuilt = 4;

class StagingBudget {
 public:
  // Becomes the budget of the calling thread until destroyed.
  StagingBudget(const StagingLimits& limits, int64_t steps = kStagingSteps);
  ~StagingBudget();
  StagingBudget(const StagingBudget&) = delete;
  StagingBudget& operator=(const StagingBudget&) = delete;

  // Adds `steps` of work. Fails, and keeps failing, once the steps are spent
  // (INVALID_ARGUMENT), the deadline has passed (DEADLINE_EXCEEDED) or stop
  // says so (CANCELLED). The message says what, not where: callers locate it.
  absl::Status Charge(int64_t steps);

  // The budget of the calling thread, or nullptr.
  static StagingBudget* Current();

 private:
  absl::Status Check();

  const StagingLimits& limits_;
  const int64_t steps_;
  int64_t used_ = 0;
  int64_t next_check_ = 0;  // `used_` at which the clock and stop are read next
  absl::Status failed_;
  StagingBudget* previous_;
};

// Charges the calling thread's budget, if it has one.
inline absl::Status ChargeStaging(int64_t steps) {
  StagingBudget* b = StagingBudget::Current();
  return b == nullptr ? absl::OkStatus() : b->Charge(steps);
}

// Charges a substring search of a `needle` in a `haystack`, which compares up
// to haystack * needle characters.
inline absl::Status ChargeSearch(size_t haystack, size_t needle) {
  return ChargeStaging(static_cast<int64_t>(haystack / 16 + haystack * needle / 256));
}

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_STAGING_BUDGET_H_
