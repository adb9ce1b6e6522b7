// Artifact bytes from tilecd's GetArtifact stream, for the worker's
// ArtifactCache (which verifies them).
#ifndef TILEC_WORKER_GRPC_FETCH_H_
#define TILEC_WORKER_GRPC_FETCH_H_

#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"
#include "worker/artifact_cache.h"

namespace tilec::worker {

// A fetcher calling GetArtifact on `channel` with `token` (when set) under
// a deadline of `timeout_s`; the call's status keeps its code.
ArtifactCache::Fetcher GrpcFetcher(std::shared_ptr<grpc::Channel> channel, std::string token,
                                   double timeout_s = 120);

}  // namespace tilec::worker

#endif  // TILEC_WORKER_GRPC_FETCH_H_
