#include "compiler/cache/single_flight.h"

#include <optional>
#include <utility>

#include "absl/time/clock.h"

namespace tilec::cache {

namespace {

bool Cancelled(const CompileJob& job) { return job.cancel != nullptr && job.cancel->cancelled(); }

}  // namespace

struct SingleFlightCompiler::Flight {
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  std::optional<absl::StatusOr<Artifact>> result ABSL_GUARDED_BY(mu);
  int followers ABSL_GUARDED_BY(mu) = 0;
  int gave_up ABSL_GUARDED_BY(mu) = 0;  // followers that stopped waiting
};

namespace {

// Cancels the shared compile once the leader and every follower gave up.
class FlightCancellation : public Cancellation {
 public:
  FlightCancellation(std::shared_ptr<const Cancellation> leader, absl::Mutex* mu,
                     const int* followers, const int* gave_up)
      : leader_(std::move(leader)), mu_(mu), followers_(followers), gave_up_(gave_up) {}
  bool cancelled() const override {
    if (Cancellation::cancelled()) return true;
    if (leader_ == nullptr || !leader_->cancelled()) return false;
    absl::MutexLock lock(mu_);
    return *gave_up_ == *followers_;
  }

 private:
  std::shared_ptr<const Cancellation> leader_;
  absl::Mutex* mu_;
  const int* followers_;
  const int* gave_up_;
};

}  // namespace

absl::StatusOr<Artifact> SingleFlightCompiler::Compile(const CompileJob& job) {
  std::string key = key_of_(job);
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = flights_.find(key);
    if (it == flights_.end()) {
      flight = std::make_shared<Flight>();
      flights_.emplace(key, flight);
      leader = true;
    } else {
      flight = it->second;
    }
    if (!leader) {
      absl::MutexLock flock(&flight->mu);
      ++flight->followers;
    }
  }

  if (leader) {
    CompileJob inner_job = job;
    inner_job.cancel = std::make_shared<FlightCancellation>(
        job.cancel, &flight->mu, &flight->followers, &flight->gave_up);
    absl::StatusOr<Artifact> result = inner_->Compile(inner_job);
    {
      absl::MutexLock lock(&mu_);
      flights_.erase(key);
    }
    absl::MutexLock flock(&flight->mu);
    flight->result = result;
    flight->done = true;
    if (Cancelled(job)) return absl::CancelledError("the compile request was cancelled");
    return result;
  }

  // A follower: wait for the leader, checking our own cancel and deadline.
  joined_.fetch_add(1);
  absl::MutexLock flock(&flight->mu);
  while (!flight->done) {
    bool gave_up = Cancelled(job) || absl::Now() >= job.deadline;
    if (gave_up) {
      ++flight->gave_up;
      if (Cancelled(job)) return absl::CancelledError("the compile request was cancelled");
      return absl::DeadlineExceededError("the deadline passed while waiting for the compile");
    }
    flight->mu.AwaitWithTimeout(absl::Condition(&flight->done), absl::Milliseconds(20));
  }
  absl::StatusOr<Artifact> result = *flight->result;
  if (result.ok()) result->shared = true;
  return result;
}

}  // namespace tilec::cache
