#include "compiler/frontend/staging_budget.h"

#include "absl/strings/str_cat.h"

namespace tilec::frontend {
namespace {

thread_local StagingBudget* current_budget = nullptr;

// Steps between two readings of the clock and of stop: a few hundred
// microseconds of staging.
constexpr int64_t kCheckEvery = 4096;

}  // namespace

StagingBudget::StagingBudget(const StagingLimits& limits, int64_t steps)
    : limits_(limits), steps_(steps), previous_(current_budget) {
  current_budget = this;
}

StagingBudget::~StagingBudget() { current_budget = previous_; }

StagingBudget* StagingBudget::Current() { return current_budget; }

absl::Status StagingBudget::Charge(int64_t steps) {
  if (!failed_.ok()) return failed_;
  used_ += steps;
  if (used_ > steps_) {
    failed_ = absl::InvalidArgumentError(absl::StrCat(
        "staging evaluation exceeded its step budget of ", steps_,
        " steps (an endless loop, or builtins working on big sequences over and over?)"));
    return failed_;
  }
  if (used_ < next_check_) return absl::OkStatus();
  next_check_ = used_ + kCheckEvery;
  failed_ = Check();
  return failed_;
}

absl::Status StagingBudget::Check() {
  if (limits_.stop && limits_.stop()) {
    return absl::CancelledError(
        "staging the program was stopped: the call was cancelled or the "
        "server is shutting down");
  }
  if (absl::Now() > limits_.deadline) {
    return absl::DeadlineExceededError(absl::StrCat(
        "staging the program ran out of time",
        limits_.deadline_reason.empty() ? "" : absl::StrCat(": ", limits_.deadline_reason)));
  }
  return absl::OkStatus();
}

}  // namespace tilec::frontend
