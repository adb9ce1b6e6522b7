#include "worker/session.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"

namespace tilec::worker {
namespace {

using tilec::v1::WorkerCommand;
using tilec::v1::WorkerMessage;

std::string Describe(const grpc::Status& s) {
  return absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(s.error_code())),
                      s.error_message().empty() ? "" : ": ", s.error_message());
}

}  // namespace

bool ShouldReconnect(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::UNKNOWN:
    // The server still holds this id's previous session (it has not yet seen
    // that connection drop): try again after the backoff.
    case grpc::StatusCode::ALREADY_EXISTS: return true;
    default: return false;
  }
}

WorkerLoop::WorkerLoop(SessionOptions options, JobRunner* runner)
    : options_(std::move(options)),
      runner_(runner),
      stub_(tilec::v1::Tilec::NewStub(options_.channel)) {}

int WorkerLoop::sessions() const {
  absl::MutexLock lock(&mu_);
  return sessions_;
}

bool WorkerLoop::Write(const WorkerMessage& m) {
  absl::MutexLock lock(&mu_);
  if (stream_ == nullptr || half_closed_) return false;
  return stream_->Write(m);
}

void WorkerLoop::HalfCloseLocked() {
  if (stream_ == nullptr || half_closed_) return;
  stream_->WritesDone();
  half_closed_ = true;
  half_closed_at_ = absl::Now();
  cv_.SignalAll();
}

void WorkerLoop::Drain() {
  absl::MutexLock lock(&mu_);
  if (draining_) return;
  draining_ = true;
  cv_.SignalAll();
  if (stream_ == nullptr || half_closed_) return;
  WorkerMessage m;
  m.mutable_draining();
  stream_->Write(m);
  if (!job_running_) HalfCloseLocked();
}

void WorkerLoop::Helper() {
  absl::MutexLock lock(&mu_);
  absl::Time next_beat = absl::InfiniteFuture();
  bool cancelled = false;
  while (!session_over_) {
    const absl::Time now = absl::Now();
    absl::Time wake = absl::InfiniteFuture();
    if (half_closed_ && !cancelled) {
      const absl::Time give_up = half_closed_at_ + absl::Seconds(options_.close_grace_s);
      if (now >= give_up) {
        std::fprintf(stderr,
                     "tilec-worker: the server did not end the session %.1f s after the "
                     "worker closed it; cancelling\n",
                     options_.close_grace_s);
        ctx_->TryCancel();
        cancelled = true;
      } else {
        wake = give_up;
      }
    }
    if (heartbeat_s_ > 0 && !half_closed_) {
      if (next_beat == absl::InfiniteFuture()) next_beat = now + absl::Seconds(heartbeat_s_ / 2);
      if (now >= next_beat) {
        WorkerMessage m;
        m.mutable_heartbeat();
        stream_->Write(m);  // a failure shows on the reading side
        next_beat = now + absl::Seconds(heartbeat_s_ / 2);
      }
      wake = std::min(wake, next_beat);
    }
    cv_.WaitWithDeadline(&mu_, wake);
  }
}

void WorkerLoop::HandleJob(const tilec::v1::MeasureJob& job) {
  {
    absl::MutexLock lock(&mu_);
    if (half_closed_) {
      std::fprintf(stderr, "tilec-worker: job %s not run: the worker is shutting down\n",
                   job.job_id().c_str());
      return;
    }
    job_running_ = true;
  }
  WorkerMessage started;
  started.mutable_started()->set_job_id(job.job_id());
  started.mutable_started()->set_lease(job.lease());
  Write(started);
  WorkerMessage result;
  *result.mutable_result() = runner_->Run(job);
  Write(result);
  absl::MutexLock lock(&mu_);
  job_running_ = false;
  if (draining_) HalfCloseLocked();
}

WorkerLoop::End WorkerLoop::OneSession(bool* welcomed, grpc::Status* status) {
  grpc::ClientContext ctx;
  if (!options_.token.empty()) ctx.AddMetadata("authorization", "Bearer " + options_.token);
  std::unique_ptr<Stream> stream = stub_->WorkerSession(&ctx);
  {
    absl::MutexLock lock(&mu_);
    ++sessions_;
    ctx_ = &ctx;
    stream_ = stream.get();
    session_over_ = job_running_ = half_closed_ = false;
    heartbeat_s_ = 0;
  }
  std::thread helper([this] { Helper(); });
  WorkerMessage hello;
  *hello.mutable_hello() = options_.hello;
  if (Write(hello)) {
    absl::MutexLock lock(&mu_);
    if (draining_ && !half_closed_) {  // Drain() came before the stream existed
      WorkerMessage m;
      m.mutable_draining();
      stream_->Write(m);
      HalfCloseLocked();
    }
  }
  WorkerCommand cmd;
  while (stream->Read(&cmd)) {
    if (cmd.has_welcome()) {
      absl::MutexLock lock(&mu_);
      heartbeat_s_ = cmd.welcome().heartbeat_seconds() > 0 ? cmd.welcome().heartbeat_seconds() : 10;
      *welcomed = true;
      cv_.SignalAll();
    } else if (cmd.has_job()) {
      HandleJob(cmd.job());
    }
  }
  {
    absl::MutexLock lock(&mu_);
    session_over_ = true;
    cv_.SignalAll();
  }
  helper.join();
  *status = stream->Finish();
  absl::MutexLock lock(&mu_);
  ctx_ = nullptr;
  stream_ = nullptr;
  if (draining_) return End::kDrained;
  return ShouldReconnect(status->error_code()) ? End::kRetry : End::kRefused;
}

int WorkerLoop::Run() {
  double backoff = options_.backoff_initial_s;
  std::string last_failure;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (draining_) return 0;
    }
    bool welcomed = false;
    grpc::Status status;
    const End end = OneSession(&welcomed, &status);
    if (end == End::kDrained) {
      std::fprintf(stderr, "tilec-worker: drained; session ended (%s)\n", Describe(status).c_str());
      return 0;
    }
    if (end == End::kRefused) {
      std::fprintf(stderr, "tilec-worker: the server ended the session: %s\n",
                   Describe(status).c_str());
      return 1;
    }
    if (welcomed) {
      backoff = options_.backoff_initial_s;
      last_failure.clear();
    }
    // A server that stays down is logged once, not at every retry.
    if (const std::string why = Describe(status); why != last_failure) {
      std::fprintf(stderr, "tilec-worker: session ended (%s); reconnecting (backoff from %.2f s)\n",
                   why.c_str(), backoff);
      last_failure = why;
    }
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + absl::Seconds(backoff);
    while (!draining_) {
      if (cv_.WaitWithDeadline(&mu_, deadline)) break;
    }
    if (draining_) return 0;
    backoff = std::min(backoff * 2, options_.backoff_max_s);
  }
}

}  // namespace tilec::worker
