// The embedded compiler: `tilec compile` without a server runs the same
// pipeline tilecd serves, in this process, through a local artifact cache.
//
//   request -> server::CompileCore (frontend, verify, limits, binding
//   unbound tile parameters by recommendation, one job per target) ->
//   cache::CachingCompiler (DiskStore under `cache_dir`) ->
//   cache::CudaCompiler (inference, emitter, NVRTC)
//
// The cache directory has the same layout and locking as a server's (several
// CLI processes, or a CLI and a tilecd, may share one). The default is
// $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec.
// Compile errors keep the compiler's status codes, exactly as the server
// returns them. `tilec recommend` without a server runs the server's
// Recommend core (server::RecommendCore) the same way (RecommendEmbedded).
#ifndef TILEC_CLIENT_EMBEDDED_H_
#define TILEC_CLIENT_EMBEDDED_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::cli {

// The local cache folder by the rule above; "" when none of the variables
// is set.
std::string DefaultCacheDir();

// The Recommend RPC in this process, on the built-in profiles and those of
// `profiles_dir` (when not empty); the same response and errors as tilecd's.
absl::StatusOr<tilec::v1::RecommendResponse> RecommendEmbedded(
    const tilec::v1::RecommendRequest& request, const std::string& profiles_dir,
    absl::Time deadline);

class EmbeddedCompiler {
 public:
  // Opens (creating) the cache at `cache_dir` with an LRU budget of
  // `cache_bytes`; errors name the folder.
  static absl::StatusOr<std::unique_ptr<EmbeddedCompiler>> Open(const std::string& cache_dir,
                                                                int64_t cache_bytes);
  virtual ~EmbeddedCompiler() = default;

  // Compiles every target of `request`; results say whether they were cache
  // hits and carry the artifacts' digests.
  virtual absl::StatusOr<tilec::v1::CompileResponse> Compile(
      const tilec::v1::CompileRequest& request, absl::Time deadline) = 0;

  // The verified bytes of the artifact named `digest` (NOT_FOUND if absent).
  virtual absl::StatusOr<std::string> Artifact(const std::string& digest) = 0;
};

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_EMBEDDED_H_
