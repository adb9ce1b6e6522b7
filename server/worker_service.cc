// The GPU-worker side of the Tilec service: WorkerSession (a tilec-worker's
// bidirectional stream, adapted to WorkerPool) and Autotune (AutotuneCore on
// its own thread, its progress streamed back).
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/recommend/profile.h"
#include "server/service.h"
#include "server/service_internal.h"

namespace tilec::server {
namespace {

// A device can serve a profile when its architecture is the profile's: the
// emulator serves the host profile; a CUDA device of compute capability X.Y
// an sm_XY or sm_XYa profile.
absl::Status CheckDeviceMatchesProfile(const tilec::v1::WorkerHello& hello,
                                       const std::vector<recommend::HardwareProfile>& profiles) {
  absl::StatusOr<recommend::HardwareProfile> p = recommend::FindProfile(profiles, hello.profile());
  if (!p.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker ", hello.worker_id(), ": profile: ", p.status().message()));
  }
  if (hello.profile() != p->id()) {
    return absl::InvalidArgumentError(absl::StrCat("worker ", hello.worker_id(), ": announce the profile by its id (",
                                                   p->id(), "), not an alias"));
  }
  std::string arch = p->arch();
  if (!arch.empty() && arch.back() == 'a') arch.pop_back();
  const std::string& have = hello.device().arch();
  const bool ok = p->arch() == "host" ? hello.device().device() == "emulator" : have == arch;
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker ", hello.worker_id(), ": its device ", hello.device().name(), " (",
        have.empty() ? "unknown arch" : have, ") does not match profile ", p->id(), " (",
        p->arch(), ")"));
  }
  return absl::OkStatus();
}

class SessionReactor;

// What the pool holds: forwards to the reactor while it lives.
class SessionLink : public WorkerLink {
 public:
  explicit SessionLink(SessionReactor* r) : reactor_(r) {}
  void Send(const tilec::v1::WorkerCommand& command) override;
  void Close(const absl::Status& reason) override;
  void Detach() {
    std::lock_guard<std::mutex> lock(mu_);
    reactor_ = nullptr;
  }

 private:
  std::mutex mu_;
  SessionReactor* reactor_;
};

class SessionReactor
    : public grpc::ServerBidiReactor<tilec::v1::WorkerMessage, tilec::v1::WorkerCommand> {
 public:
  SessionReactor(const ServiceDeps& deps, grpc::CallbackServerContext* context)
      : deps_(deps), peer_(context->peer()), link_(std::make_shared<SessionLink>(this)) {
    deps_.metrics->RpcStarted("WorkerSession", "bidi_stream");
    if (deps_.pool == nullptr) {
      End(absl::UnimplementedError("this server has no worker pool"));
      return;
    }
    if (deps_.auth != nullptr) {
      absl::Status s = deps_.auth->Check(Authorization(context), Access::kCompile);
      if (!s.ok()) {
        End(s);
        return;
      }
    }
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the worker closed its side (or the call broke)
      if (id_ != 0) deps_.pool->OnDisconnect(id_);
      id_ = 0;
      End(absl::OkStatus());
      return;
    }
    if (id_ == 0) {
      if (!in_.has_hello()) {
        End(absl::InvalidArgumentError("a worker session starts with WorkerHello"));
        return;
      }
      if (absl::Status s = CheckDeviceMatchesProfile(in_.hello(), deps_.profiles); !s.ok()) {
        End(s);
        return;
      }
      absl::StatusOr<int64_t> id = deps_.pool->Register(in_.hello(), peer_, link_);
      if (!id.ok()) {
        End(id.status());
        return;
      }
      id_ = *id;
      tilec::v1::WorkerCommand welcome;
      welcome.mutable_welcome()->set_heartbeat_seconds(
          absl::ToDoubleSeconds(deps_.pool->options().heartbeat_interval));
      Send(welcome);
    } else {
      deps_.pool->OnMessage(id_, in_);
    }
    StartRead(&in_);
  }

  void Send(const tilec::v1::WorkerCommand& command) {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    out_.push_back(command);
    if (!writing_) {
      writing_ = true;
      StartWrite(&out_.front());
    }
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    out_.pop_front();
    if (!ok || finished_) {
      writing_ = false;
      return;
    }
    if (!out_.empty()) {
      StartWrite(&out_.front());
    } else {
      writing_ = false;
    }
  }

  void End(const absl::Status& status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_) return;
      finished_ = true;
    }
    deps_.metrics->RpcHandled("WorkerSession", "bidi_stream", status.code(),
                              absl::ToDoubleSeconds(absl::Now() - start_));
    Finish(ToGrpc(status));
  }

  void OnDone() override {
    link_->Detach();
    if (id_ != 0) deps_.pool->OnDisconnect(id_);
    delete this;
  }

 private:
  const ServiceDeps& deps_;
  std::string peer_;
  std::shared_ptr<SessionLink> link_;
  absl::Time start_ = absl::Now();
  int64_t id_ = 0;  // the pool's handle once registered
  tilec::v1::WorkerMessage in_;
  std::mutex mu_;
  std::deque<tilec::v1::WorkerCommand> out_;
  bool writing_ = false;
  bool finished_ = false;
};

void SessionLink::Send(const tilec::v1::WorkerCommand& command) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reactor_ != nullptr) reactor_->Send(command);
}

void SessionLink::Close(const absl::Status& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reactor_ != nullptr) reactor_->End(reason);
}

// Streams an autotune's progress; the autotune runs on its own thread and
// the call finishes when it has returned and every message is written.
class AutotuneWriter : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  AutotuneWriter(const ServiceDeps& deps, grpc::CallbackServerContext* context,
                 const grpc::ByteBuffer* in)
      : deps_(deps), cancel_(std::make_shared<CallCancellation>(deps.stopping)) {
    deps_.metrics->RpcStarted("Autotune", "server_stream");
    if (deps_.autotune == nullptr) {
      Done(absl::UnimplementedError("this server does not autotune"));
      return;
    }
    if (deps_.auth != nullptr) {
      absl::Status s = deps_.auth->Check(Authorization(context), Access::kCompile);
      if (!s.ok()) {
        Done(s);
        return;
      }
    }
    if (absl::Status s = ParseRequest(*in, &request_); !s.ok()) {
      Done(s);
      return;
    }
    if (running_.fetch_add(1) >= deps_.max_autotunes) {
      running_.fetch_sub(1);
      context->AddTrailingMetadata("grpc-retry-pushback-ms", kRetryPushbackMs);
      Done(absl::ResourceExhaustedError(absl::StrCat(
          deps_.max_autotunes, " autotunes are running (tilecd --autotunes); retry later")));
      return;
    }
    const absl::Time deadline = DeadlineOf(context);
    std::thread([this, deadline] {
      absl::Status st = deps_.autotune->Autotune(
          request_, deadline, cancel_,
          [this](const tilec::v1::AutotuneProgress& p) { Write(p); });
      running_.fetch_sub(1);
      Done(st);
    }).detach();
  }

  void OnCancel() override { cancel_->Cancel(); }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      out_.pop_front();
      if (!ok) {
        broken_ = true;
        out_.clear();
      }
      if (!out_.empty()) {
        StartWrite(&out_.front());
        return;
      }
      writing_ = false;
      if (!final_ || finished_) return;
      finished_ = true;
    }
    FinishNow();  // outside the lock: OnDone may follow at once
  }

  void OnDone() override { delete this; }

 private:
  void Write(const tilec::v1::AutotuneProgress& p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_ || final_) return;
    grpc::ByteBuffer buffer;
    Serialize(p, &buffer);
    out_.push_back(std::move(buffer));
    if (!writing_) {
      writing_ = true;
      StartWrite(&out_.front());
    }
  }

  void Done(const absl::Status& status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_ = status;
      final_ = true;
      if (writing_ || finished_) return;
      finished_ = true;
    }
    FinishNow();
  }

  void FinishNow() {
    deps_.metrics->RpcHandled("Autotune", "server_stream", status_.code(),
                              absl::ToDoubleSeconds(absl::Now() - start_));
    Finish(ToGrpc(status_));
  }

  static inline std::atomic<int> running_{0};
  const ServiceDeps& deps_;
  std::shared_ptr<CallCancellation> cancel_;
  tilec::v1::AutotuneRequest request_;
  absl::Time start_ = absl::Now();
  std::mutex mu_;
  std::deque<grpc::ByteBuffer> out_;
  bool writing_ = false, final_ = false, finished_ = false, broken_ = false;
  absl::Status status_;
};

}  // namespace

grpc::ServerBidiReactor<tilec::v1::WorkerMessage, tilec::v1::WorkerCommand>*
TilecService::WorkerSession(grpc::CallbackServerContext* context) {
  return new SessionReactor(deps_, context);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TilecService::Autotune(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* in) {
  return new AutotuneWriter(deps_, context, in);
}

}  // namespace tilec::server
