#include "server/scheduler.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace tilec::server {

Scheduler::Scheduler(int threads, int max_queue, std::string name)
    : max_queue_(max_queue), name_(std::move(name)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

Scheduler::~Scheduler() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

absl::Status Scheduler::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the server is shutting down");
  if (static_cast<int64_t>(queue_.size()) >= max_queue_) {
    return absl::ResourceExhaustedError(absl::StrCat("the server's ", name_, " is full (",
                                                     max_queue_,
                                                     " requests waiting); retry in a few seconds"));
  }
  queue_.push_back(std::move(task));
  return absl::OkStatus();
}

void Scheduler::Loop() {
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

int64_t Scheduler::queue_depth() {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

int64_t Scheduler::running() {
  absl::MutexLock lock(&mu_);
  return running_;
}

}  // namespace tilec::server
