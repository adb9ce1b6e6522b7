#include "server/service.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/wire.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace tilec::server {
namespace {

std::string Authorization(grpc::CallbackServerContext* context) {
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return "";
  return std::string(it->second.data(), it->second.size());
}

absl::Time DeadlineOf(grpc::CallbackServerContext* context) {
  std::chrono::system_clock::time_point d = context->deadline();
  if (d == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(d);
}

// A unary call's reactor that records metrics, relays cancellation and
// deletes itself when done.
class UnaryReactor : public grpc::ServerUnaryReactor {
 public:
  UnaryReactor(ServerMetrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)), start_(absl::Now()),
        cancel_(std::make_shared<cache::Cancellation>()) {
    metrics_->RpcStarted(method_, "unary");
  }
  void FinishWith(absl::Status status) {
    if (status.ok() && before_finish_) status = before_finish_();
    metrics_->RpcHandled(method_, "unary", status.code(),
                         absl::ToDoubleSeconds(absl::Now() - start_));
    Finish(ToGrpc(status));
  }
  // Runs before a successful call finishes (a raw method serializes its
  // response there); an error it returns replaces OK.
  void BeforeFinish(std::function<absl::Status()> f) { before_finish_ = std::move(f); }
  void OnCancel() override { cancel_->Cancel(); }
  void OnDone() override { delete this; }
  std::shared_ptr<cache::Cancellation> cancel() { return cancel_; }

 private:
  ServerMetrics* metrics_;
  std::string method_;
  absl::Time start_;
  std::shared_ptr<cache::Cancellation> cancel_;
  std::function<absl::Status()> before_finish_;
};

// A raw unary call's messages, owned by its reactor.
template <typename Request, typename Response>
struct RawCall {
  Request request;
  Response response;
};

// Parses a raw request with the recursion limit programs need.
absl::Status ParseRequest(const grpc::ByteBuffer* raw, google::protobuf::MessageLite* request,
                          absl::string_view method) {
  grpc::ByteBuffer copy(*raw);  // the reader takes a mutable buffer; the copy shares slices
  grpc::ProtoBufferReader reader(&copy);
  if (ir::ParseWire(&reader, request)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the ", method, " request does not parse as a tilec.v1.", method,
      "Request: it is malformed, or nests messages more than ", ir::kWireRecursionLimit,
      " deep (programs may nest statements and expressions at most ", ir::kMaxNesting,
      " deep)"));
}

template <typename Response>
std::function<absl::Status()> SerializeInto(const Response* response, grpc::ByteBuffer* out) {
  return [response, out] {
    bool own = false;
    grpc::Status s = grpc::SerializationTraits<Response>::Serialize(*response, out, &own);
    return s.ok() ? absl::OkStatus()
                  : absl::InternalError("compiler bug: cannot serialize the response");
  };
}

class ArtifactWriter : public grpc::ServerWriteReactor<tilec::v1::ArtifactChunk> {
 public:
  ArtifactWriter(const ServiceDeps& deps, grpc::CallbackServerContext* context,
                 const tilec::v1::GetArtifactRequest* request)
      : deps_(deps), start_(absl::Now()) {
    deps_.metrics->RpcStarted("GetArtifact", "server_stream");
    if (deps_.auth != nullptr) {
      absl::Status s = deps_.auth->Check(Authorization(context), Access::kRead);
      if (!s.ok()) {
        Done(s);
        return;
      }
    }
    absl::StatusOr<std::string> blob = deps_.store->GetBlob(request->digest());
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
    StartWrite(&chunk_msg_);
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
};

}  // namespace

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

grpc::ServerUnaryReactor* TilecService::Compile(grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* raw_request,
                                                grpc::ByteBuffer* raw_response) {
  auto* reactor = new UnaryReactor(deps_.metrics, "Compile");
  if (deps_.auth != nullptr) {
    absl::Status s = deps_.auth->Check(Authorization(context), Access::kCompile);
    if (!s.ok()) {
      reactor->FinishWith(s);
      return reactor;
    }
  }
  auto call = std::make_shared<RawCall<tilec::v1::CompileRequest, tilec::v1::CompileResponse>>();
  if (absl::Status s = ParseRequest(raw_request, &call->request, "Compile"); !s.ok()) {
    reactor->FinishWith(s);
    return reactor;
  }
  const tilec::v1::CompileRequest* request = &call->request;
  tilec::v1::CompileResponse* response = &call->response;
  reactor->BeforeFinish([call, f = SerializeInto(response, raw_response)] { return f(); });
  absl::Time deadline = DeadlineOf(context);
  CompileCore* core = deps_.core;
  absl::Status queued = deps_.scheduler->Submit([=] {
    absl::StatusOr<tilec::v1::CompileResponse> r =
        core->Compile(*request, deadline, reactor->cancel());
    if (r.ok()) *response = *std::move(r);
    reactor->FinishWith(r.status());
  });
  if (!queued.ok()) reactor->FinishWith(queued);
  return reactor;
}

grpc::ServerUnaryReactor* TilecService::Recommend(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* raw_request,
                                                  grpc::ByteBuffer* raw_response) {
  auto* reactor = new UnaryReactor(deps_.metrics, "Recommend");
  if (deps_.auth != nullptr) {
    absl::Status s = deps_.auth->Check(Authorization(context), Access::kRead);
    if (!s.ok()) {
      reactor->FinishWith(s);
      return reactor;
    }
  }
  if (deps_.recommend == nullptr) {
    reactor->FinishWith(absl::UnimplementedError("this server does not serve Recommend"));
    return reactor;
  }
  auto call =
      std::make_shared<RawCall<tilec::v1::RecommendRequest, tilec::v1::RecommendResponse>>();
  if (absl::Status s = ParseRequest(raw_request, &call->request, "Recommend"); !s.ok()) {
    reactor->FinishWith(s);
    return reactor;
  }
  const tilec::v1::RecommendRequest* request = &call->request;
  tilec::v1::RecommendResponse* response = &call->response;
  reactor->BeforeFinish([call, f = SerializeInto(response, raw_response)] { return f(); });
  absl::Time deadline = DeadlineOf(context);
  const RecommendCore* core = deps_.recommend;
  absl::Status queued = deps_.scheduler->Submit([=] {
    absl::StatusOr<tilec::v1::RecommendResponse> r = core->Recommend(*request, deadline);
    if (r.ok()) *response = *std::move(r);
    reactor->FinishWith(r.status());
  });
  if (!queued.ok()) reactor->FinishWith(queued);
  return reactor;
}

grpc::ServerWriteReactor<tilec::v1::ArtifactChunk>* TilecService::GetArtifact(
    grpc::CallbackServerContext* context, const tilec::v1::GetArtifactRequest* request) {
  return new ArtifactWriter(deps_, context, request);
}

grpc::ServerUnaryReactor* TilecService::Stats(grpc::CallbackServerContext* context,
                                              const tilec::v1::StatsRequest* request,
                                              tilec::v1::StatsResponse* response) {
  auto* reactor = new UnaryReactor(deps_.metrics, "Stats");
  if (deps_.auth != nullptr) {
    absl::Status s = deps_.auth->Check(Authorization(context), Access::kRead);
    if (!s.ok()) {
      reactor->FinishWith(s);
      return reactor;
    }
  }
  *response = deps_.stats();
  reactor->FinishWith(absl::OkStatus());
  return reactor;
}

}  // namespace tilec::server
