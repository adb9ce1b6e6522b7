// The worker's artifact binaries by digest: a folder of files named by their
// SHA-256 (64 lowercase hex digits), filled from the server (GetArtifact) on
// a miss. Every read is verified: a file whose bytes do not hash to its name
// (a torn write, a disk error, tampering) is removed and fetched again, and
// fetched bytes that do not hash to the digest asked for are refused
// (DATA_LOSS) and never stored. Files are written to a temporary name and
// renamed, so workers sharing a folder (one per GPU of a host) never see a
// partial file.
//
//   ArtifactCache cache(dir, [&](const std::string& d) { return Fetch(d); });
//   absl::StatusOr<std::string> cubin = cache.Get(job.artifact_digest());
#ifndef TILEC_WORKER_ARTIFACT_CACHE_H_
#define TILEC_WORKER_ARTIFACT_CACHE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace tilec::worker {

// $XDG_CACHE_HOME/tilec-worker, else $HOME/.cache/tilec-worker, else
// /tmp/tilec-worker.
std::string DefaultWorkerCacheDir();

class ArtifactCache {
 public:
  // The bytes of the artifact `digest` from the server.
  using Fetcher = std::function<absl::StatusOr<std::string>(const std::string& digest)>;

  ArtifactCache(std::string dir, Fetcher fetch) : dir_(std::move(dir)), fetch_(std::move(fetch)) {}

  // Creates the folder (with its parents); INTERNAL naming it on failure.
  absl::Status Init();

  // The bytes whose SHA-256 is `digest`. INVALID_ARGUMENT for a digest that
  // is not 64 lowercase hex digits; DATA_LOSS when the server's bytes hash
  // to something else; the fetcher's error when it fails. A fetched artifact
  // that cannot be stored is still returned (the failure is logged).
  absl::StatusOr<std::string> Get(const std::string& digest);

  struct Counters {
    int64_t hits = 0;     // verified reads from the folder
    int64_t fetches = 0;  // successful fetches
    int64_t corrupt = 0;  // files removed because they did not hash to their name
  };
  Counters counters() const;
  const std::string& dir() const { return dir_; }
  std::string PathFor(const std::string& digest) const { return dir_ + "/" + digest; }

 private:
  const std::string dir_;
  const Fetcher fetch_;
  mutable absl::Mutex mu_;
  Counters counters_ ABSL_GUARDED_BY(mu_);
  int64_t temp_counter_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tilec::worker

#endif  // TILEC_WORKER_ARTIFACT_CACHE_H_
