// The tilec.v1.Tilec gRPC service on the callback API. Handlers are thin:
// they check the bearer token, adapt proto to the core (CompileCore, the
// DiskStore, the stats source), and map absl::Status to grpc::Status 1:1.
// Compile work runs on the Scheduler (a full queue is RESOURCE_EXHAUSTED);
// a cancelled call cancels its compile; the call's deadline bounds it.
// Recommend runs on the Scheduler too (it is CPU work of 10-50 ms, kept off
// gRPC's threads), under the call's deadline; read tokens may call it.
// Compile and Recommend carry a program, so they are raw methods: the handler
// parses the request itself with the recursion limit programs need
// (ir::ParseWire), and a request that does not parse is INVALID_ARGUMENT with
// a message (gRPC's own parser would answer UNIMPLEMENTED with none).
// GetArtifact streams the verified blob in chunks of chunk_bytes (the
// request's, capped by the server's), so artifacts larger than the message
// size limit stream fine.
#ifndef TILEC_SERVER_SERVICE_H_
#define TILEC_SERVER_SERVICE_H_

#include <functional>

#include "compiler/cache/disk_store.h"
#include "proto/tilec/v1/service.grpc.pb.h"
#include "server/auth.h"
#include "server/compile_core.h"
#include "server/metrics.h"
#include "server/recommend_core.h"
#include "server/scheduler.h"

namespace tilec::server {

struct ServiceDeps {
  CompileCore* core = nullptr;
  const RecommendCore* recommend = nullptr;
  cache::DiskStore* store = nullptr;
  Scheduler* scheduler = nullptr;
  ServerMetrics* metrics = nullptr;
  const TokenAuth* auth = nullptr;  // null: no authentication
  std::function<tilec::v1::StatsResponse()> stats;
  int64_t max_chunk_bytes = 1 << 20;
};

class TilecService final
    : public tilec::v1::Tilec::WithRawCallbackMethod_Compile<
          tilec::v1::Tilec::WithRawCallbackMethod_Recommend<tilec::v1::Tilec::CallbackService>> {
 public:
  explicit TilecService(ServiceDeps deps) : deps_(std::move(deps)) {}

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<tilec::v1::ArtifactChunk>* GetArtifact(
      grpc::CallbackServerContext* context,
      const tilec::v1::GetArtifactRequest* request) override;
  grpc::ServerUnaryReactor* Recommend(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const tilec::v1::StatsRequest* request,
                                  tilec::v1::StatsResponse* response) override;

 private:
  ServiceDeps deps_;
};

// absl and gRPC status codes are the same numbers; the message is kept.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace tilec::server

#endif  // TILEC_SERVER_SERVICE_H_
