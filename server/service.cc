#include "server/service.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/wire.h"
#include "server/service_internal.h"

namespace tilec::server {
namespace {

// Whether a search taken from the queue is still wanted: CANCELLED for a call
// cancelled meanwhile (or a server stopping), DEADLINE_EXCEEDED past the
// call's deadline; OK to search.
absl::Status LateForItsSearch(const CallCancellation& cancel, absl::Time deadline) {
  if (cancel.cancelled()) {
    return absl::CancelledError("the call was cancelled while it waited for a search thread");
  }
  if (absl::Now() >= deadline) {
    return absl::DeadlineExceededError(
        "the call's deadline passed while it waited for a search "
        "thread; the server is busy, retry later");
  }
  return absl::OkStatus();
}

// A unary call's reactor that owns the parsed request and the response,
// records metrics, relays cancellation and deletes itself when done.
template <class Request, class Response>
class UnaryReactor : public grpc::ServerUnaryReactor {
 public:
  UnaryReactor(ServerMetrics* metrics, std::string method, const std::atomic<bool>* stopping,
               grpc::ByteBuffer* out)
      : metrics_(metrics),
        method_(std::move(method)),
        start_(absl::Now()),
        cancel_(std::make_shared<CallCancellation>(stopping)),
        out_(out) {
    metrics_->RpcStarted(method_, "unary");
  }
  void FinishWith(const absl::Status& status) {
    metrics_->RpcHandled(method_, "unary", status.code(),
                         absl::ToDoubleSeconds(absl::Now() - start_));
    if (status.ok()) Serialize(response, out_);
    Finish(ToGrpc(status));
  }
  // Succeeds with `bytes`, a response serialized before.
  void FinishWithBytes(const std::string& bytes) {
    metrics_->RpcHandled(method_, "unary", absl::StatusCode::kOk,
                         absl::ToDoubleSeconds(absl::Now() - start_));
    SetBytes(bytes, out_);
    Finish(grpc::Status::OK);
  }
  void OnCancel() override { cancel_->Cancel(); }
  void OnDone() override { delete this; }
  std::shared_ptr<CallCancellation> cancel() { return cancel_; }

  Request request;
  Response response;

 private:
  ServerMetrics* metrics_;
  std::string method_;
  absl::Time start_;
  std::shared_ptr<CallCancellation> cancel_;
  grpc::ByteBuffer* out_;
};

class ArtifactWriter : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  ArtifactWriter(const ServiceDeps& deps, grpc::CallbackServerContext* context,
                 const grpc::ByteBuffer* in)
      : deps_(deps), start_(absl::Now()) {
    deps_.metrics->RpcStarted("GetArtifact", "server_stream");
    if (deps_.auth != nullptr) {
      absl::Status s = deps_.auth->Check(Authorization(context), Access::kRead);
      if (!s.ok()) {
        Done(s);
        return;
      }
    }
    tilec::v1::GetArtifactRequest parsed;
    if (absl::Status s = ParseRequest(*in, &parsed); !s.ok()) {
      Done(s);
      return;
    }
    const tilec::v1::GetArtifactRequest* request = &parsed;
    absl::StatusOr<std::string> blob = ReadArtifact(deps_, request->digest());
    if (!blob.ok()) {
      Done(blob.status());
      return;
    }
    bytes_ = *std::move(blob);
    chunk_ = request->chunk_bytes() > 0 ? std::min(request->chunk_bytes(), deps_.max_chunk_bytes)
                                        : deps_.max_chunk_bytes;
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Done(absl::CancelledError("the client stopped reading"));
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (offset_ >= static_cast<int64_t>(bytes_.size()) && offset_ > 0) {
      Done(absl::OkStatus());
      return;
    }
    int64_t n = std::min<int64_t>(chunk_, static_cast<int64_t>(bytes_.size()) - offset_);
    chunk_msg_.set_offset(offset_);
    chunk_msg_.set_total_bytes(static_cast<int64_t>(bytes_.size()));
    chunk_msg_.set_data(bytes_.substr(static_cast<size_t>(offset_), static_cast<size_t>(n)));
    offset_ += std::max<int64_t>(n, 1);  // an empty artifact is one empty chunk
    Serialize(chunk_msg_, &chunk_bytes_);
    StartWrite(&chunk_bytes_);
  }
  void Done(const absl::Status& s) {
    deps_.metrics->RpcHandled("GetArtifact", "server_stream", s.code(),
                              absl::ToDoubleSeconds(absl::Now() - start_));
    Finish(ToGrpc(s));
  }

  const ServiceDeps& deps_;
  absl::Time start_;
  std::string bytes_;
  int64_t chunk_ = 0;
  int64_t offset_ = 0;
  tilec::v1::ArtifactChunk chunk_msg_;
  grpc::ByteBuffer chunk_bytes_;
};

}  // namespace

std::string ClipMessage(absl::string_view message) {
  if (message.size() <= kMaxStatusMessageBytes) return std::string(message);
  constexpr size_t kTail = kMaxStatusMessageBytes / 4;
  constexpr size_t kHead = kMaxStatusMessageBytes - kTail - 64;
  return absl::StrCat(message.substr(0, kHead), "\n... (", message.size() - kHead - kTail,
                      " bytes omitted) ...\n", message.substr(message.size() - kTail));
}

absl::StatusOr<std::string> ReadArtifact(const ServiceDeps& deps, const std::string& digest) {
  absl::StatusOr<std::string> blob = deps.store->GetBlob(digest);
  if (!blob.ok() && blob.status().code() == absl::StatusCode::kNotFound && deps.shared != nullptr &&
      deps.shared->available()) {
    absl::StatusOr<std::string> s = deps.shared->GetBlob(digest);
    if (s.ok()) blob = std::move(s);
  }
  return blob;
}

void SignResults(const cache::Signer* signer, tilec::v1::CompileResponse* response) {
  if (signer == nullptr) return;
  for (tilec::v1::CompileResult& res : *response->mutable_results()) {
    res.set_signature(
        signer->Sign(cache::ArtifactStatement(res.cache_key(), res.digest(), res.metadata_json())));
  }
}

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), ClipMessage(status.message()));
}

grpc::ServerUnaryReactor* TilecService::Compile(grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  auto* reactor = new UnaryReactor<tilec::v1::CompileRequest, tilec::v1::CompileResponse>(
      deps_.metrics, "Compile", deps_.stopping, out);
  if (deps_.auth != nullptr) {
    absl::Status s = deps_.auth->Check(Authorization(context), Access::kCompile);
    if (!s.ok()) {
      reactor->FinishWith(s);
      return reactor;
    }
  }
  const std::string request_bytes = RequestBytes(*in);
  // A request answered before with cached artifacts only: answered here
  // with the bytes sent then, without parsing the request, the frontend or
  // a thread hand-off.
  ResponseMemo* memo = deps_.memo;
  std::string memo_key;
  if (memo != nullptr) {
    memo_key = ResponseMemo::KeyOf(request_bytes);
    if (std::optional<std::string> bytes = memo->Get(memo_key)) {
      reactor->FinishWithBytes(*bytes);
      return reactor;
    }
  }
  if (absl::Status s = ParseRequestBytes(request_bytes, &reactor->request); !s.ok()) {
    reactor->FinishWith(s);
    return reactor;
  }
  const tilec::v1::CompileRequest* request = &reactor->request;
  tilec::v1::CompileResponse* response = &reactor->response;
  absl::Time deadline = DeadlineOf(context);
  CompileCore* core = deps_.core;
  Scheduler* compiles = deps_.compile_scheduler;
  // A response is signed (when the server has a key), remembered, sent.
  const cache::Signer* signer = deps_.signer;
  auto deliver = [=](tilec::v1::CompileResponse r) {
    SignResults(signer, &r);
    if (memo != nullptr) memo->Put(memo_key, r);
    *response = std::move(r);
    reactor->FinishWith(absl::OkStatus());
  };
  // Asked by hash: the caches answer, or NOT_FOUND (the client sends the
  // program then); nothing else happens on this thread.
  if (request->input_case() == tilec::v1::CompileRequest::kProgramHash) {
    absl::StatusOr<tilec::v1::CompileResponse> r = core->LookupByHash(*request);
    if (deps_.hash_lookups != nullptr) deps_.hash_lookups->fetch_add(1);
    if (r.ok() && deps_.hash_hits != nullptr) deps_.hash_hits->fetch_add(1);
    if (r.ok()) {
      deliver(*std::move(r));
    } else {
      reactor->FinishWith(r.status());
    }
    return reactor;
  }
  // A request thread parses the request and answers what the cache holds; a
  // request that must search first (unbound tile parameters, no tuning
  // record) waits in the search queue, in order with Recommend's searches,
  // or is refused at once when that queue is full; a miss moves to the
  // compile queue with its prepared jobs. So request threads never search
  // or wait for a compile slot, a hit never waits behind a miss, and nothing
  // is parsed or searched twice.
  Scheduler* searches =
      deps_.search_scheduler != nullptr ? deps_.search_scheduler : deps_.scheduler;
  absl::Status queued = deps_.scheduler->Submit([=] {
    absl::StatusOr<std::shared_ptr<const CompileCore::Parsed>> parsed =
        core->Parse(*request, deadline, reactor->cancel());
    if (!parsed.ok()) {
      reactor->FinishWith(parsed.status());
      return;
    }
    auto bind_and_lookup = [=, parsed = *parsed] {
      // Waited past its deadline, or cancelled meanwhile: no search for nobody.
      if (absl::Status late = LateForItsSearch(*reactor->cancel(), deadline); !late.ok()) {
        reactor->FinishWith(late);
        return;
      }
      std::shared_ptr<const CompileCore::Prepared> prepared;
      absl::StatusOr<std::optional<tilec::v1::CompileResponse>> hit =
          core->Lookup(*parsed, &prepared);
      if (hit.ok() && hit->has_value()) return deliver(**std::move(hit));
      if (!hit.ok()) {
        reactor->FinishWith(hit.status());
        return;
      }
      auto compile = [=] {
        absl::StatusOr<tilec::v1::CompileResponse> r = core->Compile(*prepared);
        if (r.ok()) return deliver(*std::move(r));
        reactor->FinishWith(r.status());
      };
      if (compiles == nullptr) return compile();
      absl::Status compile_queued = compiles->Submit(compile);
      if (!compile_queued.ok()) {
        context->AddTrailingMetadata("grpc-retry-pushback-ms", kRetryPushbackMs);
        reactor->FinishWith(compile_queued);
      }
    };
    if (!parsed.value()->needs_search) return bind_and_lookup();
    absl::Status search_queued = searches->Submit(bind_and_lookup);
    if (!search_queued.ok()) {
      context->AddTrailingMetadata("grpc-retry-pushback-ms", kRetryPushbackMs);
      reactor->FinishWith(search_queued);
    }
  });
  if (!queued.ok()) {
    context->AddTrailingMetadata("grpc-retry-pushback-ms", kRetryPushbackMs);
    reactor->FinishWith(queued);
  }
  return reactor;
}

grpc::ServerUnaryReactor* TilecService::Recommend(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* in,
                                                  grpc::ByteBuffer* out) {
  auto* reactor = new UnaryReactor<tilec::v1::RecommendRequest, tilec::v1::RecommendResponse>(
      deps_.metrics, "Recommend", deps_.stopping, out);
  if (deps_.auth != nullptr) {
    absl::Status s = deps_.auth->Check(Authorization(context), Access::kRead);
    if (!s.ok()) {
      reactor->FinishWith(s);
      return reactor;
    }
  }
  if (absl::Status s = ParseRequest(*in, &reactor->request); !s.ok()) {
    reactor->FinishWith(s);
    return reactor;
  }
  const tilec::v1::RecommendRequest* request = &reactor->request;
  tilec::v1::RecommendResponse* response = &reactor->response;
  if (deps_.recommend == nullptr) {
    reactor->FinishWith(absl::UnimplementedError("this server does not serve Recommend"));
    return reactor;
  }
  absl::Time deadline = DeadlineOf(context);
  const RecommendCore* core = deps_.recommend;
  const AutotuneCore* autotune = deps_.autotune;
  Scheduler* searches =
      deps_.search_scheduler != nullptr ? deps_.search_scheduler : deps_.scheduler;
  absl::Status queued = searches->Submit([=] {
    std::shared_ptr<CallCancellation> cancel = reactor->cancel();
    if (absl::Status late = LateForItsSearch(*cancel, deadline); !late.ok()) {
      reactor->FinishWith(late);
      return;
    }
    absl::StatusOr<tilec::v1::RecommendResponse> r =
        core->Recommend(*request, deadline, [cancel] { return cancel->cancelled(); });
    if (r.ok() && autotune != nullptr) {
      std::map<std::string, int64_t> dims;
      for (const tilec::v1::NamedValue& d : request->dyn_dims()) dims[d.name()] = d.value();
      autotune->AnnotateMeasured(&*r, dims);
    }
    if (r.ok()) *response = *std::move(r);
    reactor->FinishWith(r.status());
  });
  if (!queued.ok()) {
    context->AddTrailingMetadata("grpc-retry-pushback-ms", kRetryPushbackMs);
    reactor->FinishWith(queued);
  }
  return reactor;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TilecService::GetArtifact(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* in) {
  return new ArtifactWriter(deps_, context, in);
}

grpc::ServerUnaryReactor* TilecService::Stats(grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* in, grpc::ByteBuffer* out) {
  auto* reactor = new UnaryReactor<tilec::v1::StatsRequest, tilec::v1::StatsResponse>(
      deps_.metrics, "Stats", deps_.stopping, out);
  if (deps_.auth != nullptr) {
    absl::Status s = deps_.auth->Check(Authorization(context), Access::kRead);
    if (!s.ok()) {
      reactor->FinishWith(s);
      return reactor;
    }
  }
  if (absl::Status s = ParseRequest(*in, &reactor->request); !s.ok()) {
    reactor->FinishWith(s);
    return reactor;
  }
  reactor->response = deps_.stats();
  reactor->FinishWith(absl::OkStatus());
  return reactor;
}

}  // namespace tilec::server
