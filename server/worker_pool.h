// The pool of GPU workers (tilec-worker sessions) and the measurement jobs
// leased to them.
//
// Workers register with the hardware profile their device matches; a job is
// for one profile and goes to an idle worker of it. Leases:
//  - a job offered to a worker is leased when the worker says it started it
//    (MeasureStarted); the lease's deadline counts from then, never from when
//    the job was queued; a job offered but not started within the heartbeat
//    timeout goes back to the queue;
//  - a worker that disconnects or misses heartbeats for heartbeat_timeout is
//    dropped: its jobs go back to the queue (for another worker);
//  - a lease past its deadline is expired: the job goes back to the queue,
//    and a result that later arrives for it is ignored (each offer has its
//    own lease number);
//  - a job that was running on two workers that died is poisoned: it fails
//    with ABORTED and is not retried.
// Tick() applies the timeouts; a background thread calls it every 100 ms.
// The clock is injected so tests control time.
#ifndef TILEC_SERVER_WORKER_POOL_H_
#define TILEC_SERVER_WORKER_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/cache/clock.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::server {

struct PoolOptions {
  absl::Duration heartbeat_interval = absl::Seconds(1);  // told to workers
  absl::Duration heartbeat_timeout = absl::Seconds(5);
  int poison_after_deaths = 2;
  bool background_ticker = true;
};

// What the pool sends a worker; implemented by the session's reactor.
class WorkerLink {
 public:
  virtual ~WorkerLink() = default;
  virtual void Send(const tilec::v1::WorkerCommand& command) = 0;
  // Ends the session (the worker is dropped), with the reason.
  virtual void Close(const absl::Status& reason) = 0;
};

struct MeasureOutcome {
  tilec::v1::MeasureResult result;
  tilec::v1::WorkerStatus worker;  // who measured it
};

struct PoolCounters {
  int64_t jobs_submitted = 0, jobs_completed = 0, jobs_requeued = 0, jobs_poisoned = 0,
          leases_expired = 0, workers_lost = 0;
  int64_t jobs_queued = 0, workers = 0, workers_busy = 0;  // now
};

class WorkerPool {
 public:
  explicit WorkerPool(PoolOptions options = {}, cache::Clock* clock = cache::RealClock::Get());
  ~WorkerPool();

  // Sessions. Register returns the worker's handle, or an error for the
  // session to end with (a worker id already connected).
  absl::StatusOr<int64_t> Register(const tilec::v1::WorkerHello& hello, const std::string& peer,
                                   std::shared_ptr<WorkerLink> link);
  void OnMessage(int64_t worker, const tilec::v1::WorkerMessage& message);
  void OnDisconnect(int64_t worker);

  using Done = std::function<void(absl::StatusOr<MeasureOutcome>)>;
  // Queues `job` (its job_id and lease are set here) for a worker of
  // `profile`; `done` runs once, on a pool or session thread, never under
  // the caller's locks.
  // Returns the job's id.
  std::string Submit(const std::string& profile, tilec::v1::MeasureJob job, Done done);
  // Fails those of `job_ids` that have not finished (a cancelled autotune):
  // their `done` gets CANCELLED before this returns.
  void Cancel(const std::vector<std::string>& job_ids);

  int WorkersFor(const std::string& profile) const;
  std::vector<tilec::v1::WorkerStatus> Workers() const;
  PoolCounters counters() const;
  const PoolOptions& options() const { return options_; }

  void Tick();

 private:
  struct Worker {
    tilec::v1::WorkerStatus status;
    std::shared_ptr<WorkerLink> link;
    absl::Time last_seen;
    std::string job;  // the job it holds, "" when idle
    bool draining = false;
  };
  struct Job {
    std::string profile;
    tilec::v1::MeasureJob job;
    Done done;
    int64_t worker = 0;  // 0: queued
    bool started = false;
    absl::Time offered_at, deadline;
    int deaths = 0;  // workers that died running it
  };

  void DispatchLocked(std::vector<std::function<void()>>& after);
  void RequeueLocked(const std::string& id, bool worker_died,
                     std::vector<std::function<void()>>& after);
  void DropWorkerLocked(int64_t worker, const absl::Status& why,
                        std::vector<std::function<void()>>& after);
  void UpdateStateLocked(Worker& w);

  PoolOptions options_;
  cache::Clock* clock_;
  mutable std::mutex mu_;
  std::map<int64_t, Worker> workers_;
  std::map<std::string, Job> jobs_;
  std::deque<std::string> queue_;
  int64_t next_worker_ = 1;
  uint64_t next_lease_ = 1;
  int64_t next_job_ = 1;
  PoolCounters counters_;

  std::mutex ticker_mu_;
  std::condition_variable ticker_cv_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_WORKER_POOL_H_
