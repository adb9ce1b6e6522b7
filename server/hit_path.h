// What the hit path (server/hit_server.h, tilecd --http_port) serves:
// cache hits by key, read-only, as remote build caches do.
//
//   GET /v1/compile/<program_hash>?target=sm_90a[&target=...][&line_info=1]
//       [&max_registers=N]
//     The CompileResponse (application/x-protobuf) a Compile request naming
//     the program by hash (CompileRequest.program_hash) gets: every target
//     a cache hit, signed as gRPC's; 404 when some target is not cached
//     (the client then sends the program over gRPC). Needs a compile token.
//   GET /v1/artifacts/<digest>
//     The artifact's bytes (application/octet-stream), verified against the
//     digest; 404 when neither tier has it. Needs a read token.
//
// With --tokens_file, `Authorization: Bearer <token>` as gRPC's metadata
// (401 without a known token, 403 for a read token asking to compile).
// Errors are text/plain: 400 a malformed key or query, 503 the request
// queue full (Retry-After), 500 an internal error (a bug).
//
// From memory on the loop thread: a remembered response (ResponseMemo, its
// entries still stored) and artifacts read before (a bounded LRU of blobs,
// each served while the file on disk is the one verified: same size,
// inode and modification time). Anything else (a disk read and its
// verification, the shared tier) runs on the request Scheduler and answers
// later, so a slow disk or Redis never holds the loop.
#ifndef TILEC_SERVER_HIT_PATH_H_
#define TILEC_SERVER_HIT_PATH_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "server/hit_server.h"
#include "server/lru_map.h"
#include "server/service.h"

namespace tilec::server {

// What the hit path adds to the gRPC service's parts (ServiceDeps: the core,
// stores, memo, signer, tokens, request threads and lookup counters).
struct HitPathOptions {
  size_t blob_cache_bytes = size_t{256} << 20;  // the artifacts kept in memory
  // Requests handled, and those answered from memory on the loop thread;
  // may be null.
  std::atomic<int64_t>* requests = nullptr;
  std::atomic<int64_t>* from_memory = nullptr;
};

class HitPath {
 public:
  HitPath(ServiceDeps deps, HitPathOptions options)
      : deps_(std::move(deps)), options_(options), blobs_(options.blob_cache_bytes) {}
  // Waits for the work it handed to the Scheduler (whose threads outlive
  // it); their replies then go nowhere once the HitServer has stopped.
  ~HitPath();

  // The HitHandler of tilecd's HitServer.
  std::optional<HitReply> Handle(const HitRequest& request, HitResponder later);

 private:
  std::optional<HitReply> Compile(const HitRequest& request, absl::string_view hash,
                                  HitResponder later);
  std::optional<HitReply> Artifact(absl::string_view digest, HitResponder later);
  // The artifact read (verified) from the disk store or the shared tier,
  // kept in memory when the disk's file is the one read.
  HitReply ReadAndRemember(const std::string& digest);
  std::shared_ptr<const std::string> Remembered(const std::string& digest);
  void Remember(const std::string& digest, const std::string& stamp,
                std::shared_ptr<const std::string> bytes);
  std::optional<HitReply> Later(HitResponder later, std::function<HitReply()> work);

  ServiceDeps deps_;
  HitPathOptions options_;
  std::mutex pending_mu_;
  std::condition_variable pending_done_;
  int64_t pending_ = 0;  // tasks handed to the Scheduler, not yet finished

  struct Blob {
    std::string stamp;
    std::shared_ptr<const std::string> bytes;
  };
  std::mutex mu_;
  LruMap<Blob> blobs_;  // within options_.blob_cache_bytes
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_HIT_PATH_H_
