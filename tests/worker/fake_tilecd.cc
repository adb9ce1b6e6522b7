#include "tests/worker/fake_tilecd.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tilec::testing {

FakeTilecd::FakeTilecd(SessionScript script) : script_(std::move(script)) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
  address_ = absl::StrCat("127.0.0.1:", port);
}

FakeTilecd::~FakeTilecd() {
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

std::shared_ptr<grpc::Channel> FakeTilecd::Channel() const {
  return grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
}

void FakeTilecd::AddArtifact(const std::string& digest, const std::string& bytes) {
  absl::MutexLock lock(&mu_);
  artifacts_[digest] = bytes;
}

std::string FakeTilecd::last_token() const {
  absl::MutexLock lock(&mu_);
  return last_token_;
}

void FakeTilecd::NoteToken(grpc::ServerContext* ctx) {
  auto it = ctx->client_metadata().find("authorization");
  absl::MutexLock lock(&mu_);
  last_token_ =
      it == ctx->client_metadata().end() ? "" : std::string(it->second.data(), it->second.size());
}

grpc::Status FakeTilecd::WorkerSession(grpc::ServerContext* ctx, SessionStream* stream) {
  NoteToken(ctx);
  return script_(sessions_++, ctx, stream);
}

grpc::Status FakeTilecd::GetArtifact(grpc::ServerContext* ctx,
                                     const tilec::v1::GetArtifactRequest* req,
                                     grpc::ServerWriter<tilec::v1::ArtifactChunk>* writer) {
  NoteToken(ctx);
  ++artifact_calls_;
  std::string bytes;
  {
    absl::MutexLock lock(&mu_);
    auto it = artifacts_.find(req->digest());
    if (it == artifacts_.end())
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such artifact");
    bytes = it->second;
  }
  constexpr size_t kChunk = 1000;
  for (size_t off = 0; off < bytes.size(); off += kChunk) {
    tilec::v1::ArtifactChunk chunk;
    chunk.set_offset(static_cast<int64_t>(off));
    chunk.set_data(bytes.substr(off, kChunk));
    chunk.set_total_bytes(static_cast<int64_t>(bytes.size()));
    writer->Write(chunk);
  }
  return grpc::Status::OK;
}

tilec::v1::WorkerCommand Welcome(double heartbeat_seconds) {
  tilec::v1::WorkerCommand c;
  c.mutable_welcome()->set_heartbeat_seconds(heartbeat_seconds);
  return c;
}

}  // namespace tilec::testing
