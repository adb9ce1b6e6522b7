// The worker's side of the WorkerSession stream with tilecd, reconnecting.
//
// A session: WorkerHello first; the server answers WorkerWelcome
// {heartbeat_seconds} and a WorkerHeartbeat goes out every half of that
// (from a helper thread; every write to the stream holds one mutex). Jobs
// run one at a time on the reading thread: MeasureStarted at once, then the
// runner, then MeasureResult.
//
// Sessions end and are retried with backoff (0.2 s doubling to 5 s; reset
// once a session was welcomed) when the server ends them OK or with a
// status a restart or the network gives (ShouldReconnect). Any other status
// (PERMISSION_DENIED or INVALID_ARGUMENT for a refused profile, a bad token)
// is logged and ends the loop: Run returns 1.
//
// Drain() (SIGTERM/SIGINT): WorkerDraining goes out, the current job
// finishes and is reported, then the worker half-closes (WritesDone); the
// session ends when the server finishes it, or after close_grace_s the
// worker cancels it. Run returns 0. A job read after the half-close is not
// run (the server sees the session end and requeues it).
#ifndef TILEC_WORKER_SESSION_H_
#define TILEC_WORKER_SESSION_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/tilec/v1/service.grpc.pb.h"
#include "worker/measure.h"

namespace tilec::worker {

struct SessionOptions {
  std::shared_ptr<grpc::Channel> channel;
  std::string token;  // sent as "authorization: Bearer <token>" when set
  tilec::v1::WorkerHello hello;
  double backoff_initial_s = 0.2;
  double backoff_max_s = 5;
  double close_grace_s = 10;  // after the half-close, before cancelling
};

// True for the ends of a session that a reconnect may cure: OK (the server
// closed it), UNAVAILABLE (restart, network), CANCELLED, ABORTED,
// DEADLINE_EXCEEDED and UNKNOWN (a connection lost mid-stream).
bool ShouldReconnect(grpc::StatusCode code);

class WorkerLoop {
 public:
  // `runner` must outlive the loop.
  WorkerLoop(SessionOptions options, JobRunner* runner);

  // Sessions until Drain() (0) or a session refused by the server (1).
  int Run();

  // Thread-safe and idempotent; returns at once.
  void Drain();

  // Sessions opened so far (tests).
  int sessions() const;

 private:
  enum class End { kDrained, kRetry, kRefused };
  using Stream = grpc::ClientReaderWriter<tilec::v1::WorkerMessage, tilec::v1::WorkerCommand>;

  End OneSession(bool* welcomed, grpc::Status* status);
  void Helper();  // heartbeats and the half-close watchdog of one session
  void HandleJob(const tilec::v1::MeasureJob& job);
  // Writes `m` unless the stream is half-closed; false when it could not.
  bool Write(const tilec::v1::WorkerMessage& m) ABSL_LOCKS_EXCLUDED(mu_);
  void HalfCloseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SessionOptions options_;
  JobRunner* const runner_;
  std::unique_ptr<tilec::v1::Tilec::Stub> stub_;

  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  int sessions_ ABSL_GUARDED_BY(mu_) = 0;
  // The current session.
  grpc::ClientContext* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  Stream* stream_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool session_over_ ABSL_GUARDED_BY(mu_) = false;
  bool job_running_ ABSL_GUARDED_BY(mu_) = false;
  bool half_closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time half_closed_at_ ABSL_GUARDED_BY(mu_);
  double heartbeat_s_ ABSL_GUARDED_BY(mu_) = 0;  // 0 until welcomed
};

}  // namespace tilec::worker

#endif  // TILEC_WORKER_SESSION_H_
