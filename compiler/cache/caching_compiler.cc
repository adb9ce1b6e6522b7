#include "compiler/cache/caching_compiler.h"

#include <optional>
#include <utility>

namespace tilec::cache {

absl::StatusOr<Artifact> CachingCompiler::Compile(const CompileJob& job) {
  CacheKey key = MakeCacheKey(job, toolchain_);
  std::string digest = key.Digest();
  absl::StatusOr<std::optional<StoredArtifact>> hit = store_->Get(digest);
  if (!hit.ok()) store_errors_.fetch_add(1);
  if (hit.ok() && hit->has_value()) {
    Artifact a;
    a.bytes = std::move((*hit)->bytes);
    a.metadata_json = std::move((*hit)->metadata_json);
    a.cache_hit = true;
    a.cache_key = digest;
    return a;
  }
  absl::StatusOr<Artifact> compiled = inner_->Compile(job);
  if (!compiled.ok()) return compiled.status();
  compiled->cache_key = digest;
  if (!store_->Put(digest, key.Encode(), compiled->bytes, compiled->metadata_json).ok()) {
    store_errors_.fetch_add(1);
  }
  return compiled;
}

}  // namespace tilec::cache
