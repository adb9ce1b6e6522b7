// A tiny tilecd for the worker's tests: a real gRPC server on loopback
// implementing only WorkerSession (each test scripts it) and GetArtifact
// (from an in-memory map, in chunks with offsets).
#ifndef TILEC_TESTS_WORKER_FAKE_TILECD_H_
#define TILEC_TESTS_WORKER_FAKE_TILECD_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/tilec/v1/service.grpc.pb.h"

namespace tilec::testing {

using SessionStream = grpc::ServerReaderWriter<tilec::v1::WorkerCommand, tilec::v1::WorkerMessage>;
// One session, as the test scripts it; `index` counts sessions from 0.
using SessionScript = std::function<grpc::Status(int index, grpc::ServerContext*, SessionStream*)>;

class FakeTilecd final : public tilec::v1::Tilec::Service {
 public:
  // Listens on 127.0.0.1 (a free port).
  explicit FakeTilecd(SessionScript script);
  ~FakeTilecd() override;

  std::string address() const { return address_; }
  std::shared_ptr<grpc::Channel> Channel() const;
  // Serves `bytes` to GetArtifact under `digest`.
  void AddArtifact(const std::string& digest, const std::string& bytes);
  int artifact_calls() const { return artifact_calls_.load(); }
  // The bearer token of the last call ("" when none).
  std::string last_token() const;

  grpc::Status WorkerSession(grpc::ServerContext* ctx, SessionStream* stream) override;
  grpc::Status GetArtifact(grpc::ServerContext* ctx, const tilec::v1::GetArtifactRequest* req,
                           grpc::ServerWriter<tilec::v1::ArtifactChunk>* writer) override;

 private:
  void NoteToken(grpc::ServerContext* ctx);

  SessionScript script_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::atomic<int> sessions_{0};
  std::atomic<int> artifact_calls_{0};
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> artifacts_ ABSL_GUARDED_BY(mu_);
  std::string last_token_ ABSL_GUARDED_BY(mu_);
};

// The worker's next message; false when the stream ended.
inline bool Next(SessionStream* stream, tilec::v1::WorkerMessage* m) { return stream->Read(m); }

tilec::v1::WorkerCommand Welcome(double heartbeat_seconds);

}  // namespace tilec::testing

#endif  // TILEC_TESTS_WORKER_FAKE_TILECD_H_
