// A Compiler decorator that serves artifacts from a DiskStore by cache key
// (cache_key.h) and stores what the inner compiler produces. Only successful
// compiles are stored; errors are returned as they are and never cached.
// A store read or write that fails for I/O reasons does not fail the
// request: the compile's result is returned, and the failure counted,
// logged to stderr (with the store's folder and the errno text), and, for a
// write, named in Artifact::store_error so that the caller can hand the
// bytes back itself (the artifact is not in the cache).
#ifndef TILEC_COMPILER_CACHE_CACHING_COMPILER_H_
#define TILEC_COMPILER_CACHE_CACHING_COMPILER_H_

#include <atomic>
#include <memory>
#include <optional>

#include "compiler/cache/cache_key.h"
#include "compiler/cache/compiler.h"
#include "compiler/cache/disk_store.h"

namespace tilec::cache {

class CachingCompiler : public Compiler {
 public:
  CachingCompiler(std::unique_ptr<Compiler> inner, DiskStore* store, ToolchainInfo toolchain)
      : inner_(std::move(inner)), store_(store), toolchain_(std::move(toolchain)) {}

  absl::StatusOr<Artifact> Compile(const CompileJob& job) override;

  // The cached artifact for `job` (cache_hit set) or nullopt on a miss,
  // without compiling; a failed read is counted and logged, and an error.
  absl::StatusOr<std::optional<Artifact>> Lookup(const CompileJob& job);

  int64_t store_errors() const { return store_errors_.load(); }

 private:
  std::unique_ptr<Compiler> inner_;
  DiskStore* store_;
  ToolchainInfo toolchain_;
  std::atomic<int64_t> store_errors_{0};
};

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_CACHING_COMPILER_H_
