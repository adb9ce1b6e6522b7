// The tilec.v1.Tilec gRPC service on the callback API. Handlers are thin:
// they check the bearer token, adapt proto to the core (CompileCore, the
// DiskStore, the stats source), and map absl::Status to grpc::Status 1:1.
// Compile requests run on the request Scheduler, which answers cache hits
// (CompileCore::Lookup); a miss moves to the compile Scheduler. Either queue
// full is RESOURCE_EXHAUSTED naming it, with a grpc-retry-pushback-ms
// trailer. A cancelled call cancels its compile; the call's deadline bounds
// it; a server shutting down (`stopping`) cancels every running one.
// Recommend runs on the search Scheduler (CPU work, kept off gRPC's and the
// request threads), under the call's deadline and the server's search
// timeout; read tokens may call it.
// GetArtifact streams the verified blob in chunks of chunk_bytes (the
// request's, capped by the server's), so artifacts larger than the message
// size limit stream fine.
#ifndef TILEC_SERVER_SERVICE_H_
#define TILEC_SERVER_SERVICE_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"
#include "compiler/cache/disk_store.h"
#include "compiler/cache/signing.h"
#include "proto/tilec/v1/service.grpc.pb.h"
#include "server/auth.h"
#include "server/autotune_core.h"
#include "server/compile_core.h"
#include "server/metrics.h"
#include "server/recommend_core.h"
#include "server/response_memo.h"
#include "server/scheduler.h"
#include "server/shared_tier.h"
#include "server/worker_pool.h"

namespace tilec::server {

struct ServiceDeps {
  CompileCore* core = nullptr;
  const RecommendCore* recommend = nullptr;
  cache::DiskStore* store = nullptr;
  // The fleet's shared tier, or null: GetArtifact reads a blob this server
  // has not stored from it.
  SharedTier* shared = nullptr;
  // Remembered responses of repeated Compile requests, or null
  // (server/response_memo.h).
  ResponseMemo* memo = nullptr;
  // Signs every Compile result (CompileResult.signature), or null.
  const cache::Signer* signer = nullptr;
  // Counters of Compile requests by program hash, and of their hits.
  std::atomic<int64_t>* hash_lookups = nullptr;
  std::atomic<int64_t>* hash_hits = nullptr;
  Scheduler* scheduler = nullptr;  // request threads: parsing, cache hits, Recommend
  // Compiles that missed the cache: their own threads and bounded queue, so
  // that a miss waiting for a compile slot never holds a request thread.
  // Null: compiles run on the request threads.
  Scheduler* compile_scheduler = nullptr;
  // Recommend's searches (CPU work up to CoreLimits::search_timeout): their
  // own threads and bounded queue, so that searches a read token asks for
  // never hold request threads. Null: on the request threads.
  Scheduler* search_scheduler = nullptr;
  ServerMetrics* metrics = nullptr;
  const TokenAuth* auth = nullptr;  // null: no authentication
  std::function<tilec::v1::StatsResponse()> stats;
  int64_t max_chunk_bytes = 1 << 20;
  // Raised when the server shuts down: every running search and compile
  // stops (CANCELLED), so shutdown never waits on one. May be null.
  const std::atomic<bool>* stopping = nullptr;
  // GPU workers and autotuning; null: WorkerSession and Autotune answer
  // UNIMPLEMENTED.
  WorkerPool* pool = nullptr;
  AutotuneCore* autotune = nullptr;
  std::vector<recommend::HardwareProfile> profiles;  // the profiles workers may serve
  int max_autotunes = 4;                             // running at once; more are RESOURCE_EXHAUSTED
};

// Every method takes its request as raw bytes and parses it itself, so that
// an unparseable request is INVALID_ARGUMENT with a message (gRPC's own
// parsing answers UNIMPLEMENTED with none); Compile and Recommend carry a
// program and parse with the recursion limit programs need (ir::ParseWire).
// WorkerSession is typed: only tilec-worker speaks it.
using RawTilecService = tilec::v1::Tilec::WithRawCallbackMethod_Compile<
    tilec::v1::Tilec::WithRawCallbackMethod_GetArtifact<
        tilec::v1::Tilec::WithRawCallbackMethod_Stats<
            tilec::v1::Tilec::WithRawCallbackMethod_Recommend<
                tilec::v1::Tilec::WithRawCallbackMethod_Autotune<
                    tilec::v1::Tilec::WithCallbackMethod_WorkerSession<
                        tilec::v1::Tilec::Service>>>>>>;

class TilecService final : public RawTilecService {
 public:
  explicit TilecService(ServiceDeps deps) : deps_(std::move(deps)) {}

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* GetArtifact(grpc::CallbackServerContext* context,
                                                          const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* Recommend(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request,
                                  grpc::ByteBuffer* response) override;
  // worker_service.cc
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Autotune(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request) override;
  grpc::ServerBidiReactor<tilec::v1::WorkerMessage, tilec::v1::WorkerCommand>* WorkerSession(
      grpc::CallbackServerContext* context) override;

 private:
  ServiceDeps deps_;
};

// The longest status message sent: it travels in a trailer, and clients
// refuse trailers past 8 KiB (gRPC's default), which would lose the reply.
inline constexpr size_t kMaxStatusMessageBytes = 6000;

// `message` cut to its head and tail, kMaxStatusMessageBytes in all, naming
// how much was left out.
std::string ClipMessage(absl::string_view message);

// The artifact named `digest`, verified: from the disk store, else (absent
// there) from the shared tier while it is up. NOT_FOUND when neither has it.
absl::StatusOr<std::string> ReadArtifact(const ServiceDeps& deps, const std::string& digest);

// Signs every result of `response` with `signer` (null: leaves them).
void SignResults(const cache::Signer* signer, tilec::v1::CompileResponse* response);

// absl and gRPC status codes are the same numbers; the message is kept,
// clipped (ClipMessage) so that an error echoing request data stays
// deliverable.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace tilec::server

#endif  // TILEC_SERVER_SERVICE_H_
