#include "worker/grpc_fetch.h"

#include <chrono>
#include <cstdint>

#include "proto/tilec/v1/service.grpc.pb.h"

namespace tilec::worker {

ArtifactCache::Fetcher GrpcFetcher(std::shared_ptr<grpc::Channel> channel, std::string token,
                                   double timeout_s) {
  std::shared_ptr<tilec::v1::Tilec::Stub> stub = tilec::v1::Tilec::NewStub(channel);
  return [stub, token, timeout_s](const std::string& digest) -> absl::StatusOr<std::string> {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    tilec::v1::GetArtifactRequest req;
    req.set_digest(digest);
    std::unique_ptr<grpc::ClientReader<tilec::v1::ArtifactChunk>> reader =
        stub->GetArtifact(&ctx, req);
    std::string bytes;
    tilec::v1::ArtifactChunk chunk;
    bool in_order = true;
    while (reader->Read(&chunk)) {
      in_order &= chunk.offset() == static_cast<int64_t>(bytes.size());
      bytes += chunk.data();
    }
    grpc::Status s = reader->Finish();
    if (!s.ok())
      return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
    if (!in_order) {
      return absl::DataLossError("GetArtifact sent chunks out of order (offsets do not follow)");
    }
    return bytes;
  };
}

}  // namespace tilec::worker
