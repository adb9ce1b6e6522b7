// A fixed pool of threads running submitted work in FIFO order, with a
// bounded queue: when `max_queue` tasks are already waiting, Submit refuses
// with RESOURCE_EXHAUSTED instead of letting the backlog grow without limit
// (the message names the queue, its bound, and asks to retry).
// Destruction finishes the queued tasks, then joins the threads.
#ifndef TILEC_SERVER_SCHEDULER_H_
#define TILEC_SERVER_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace tilec::server {

class Scheduler {
 public:
  // `name` names the queue in the RESOURCE_EXHAUSTED message.
  Scheduler(int threads, int max_queue, std::string name = "request queue");
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  absl::Status Submit(std::function<void()> task);

  int64_t queue_depth();  // tasks waiting for a thread
  int64_t running();      // tasks running now

 private:
  void Loop();

  const int max_queue_;
  const std::string name_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int64_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_SCHEDULER_H_
