#include "compiler/cache/caching_compiler.h"

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tilec::cache {

absl::StatusOr<std::optional<Artifact>> CachingCompiler::Lookup(const CompileJob& job) {
  std::string digest = MakeCacheKey(job, toolchain_).Digest();
  absl::StatusOr<std::optional<StoredArtifact>> hit = store_->Get(digest);
  if (!hit.ok()) {
    store_errors_.fetch_add(1);
    std::fprintf(stderr, "tilec: cache read of %s in %s failed: %s\n", digest.c_str(),
                 store_->dir().c_str(), std::string(hit.status().message()).c_str());
    return hit.status();
  }
  if (!hit->has_value()) return std::nullopt;
  Artifact a;
  a.bytes = std::move((*hit)->bytes);
  a.metadata_json = std::move((*hit)->metadata_json);
  a.cache_hit = true;
  a.cache_key = digest;
  return a;
}

absl::StatusOr<Artifact> CachingCompiler::Compile(const CompileJob& job) {
  CacheKey key = MakeCacheKey(job, toolchain_);
  std::string digest = key.Digest();
  absl::StatusOr<std::optional<Artifact>> hit = Lookup(job);
  if (hit.ok() && hit->has_value()) return **std::move(hit);
  absl::StatusOr<Artifact> compiled = inner_->Compile(job);
  if (!compiled.ok()) return compiled.status();
  compiled->cache_key = digest;
  absl::StatusOr<std::string> put =
      store_->Put(digest, key.Encode(), compiled->bytes, compiled->metadata_json);
  if (!put.ok()) {
    store_errors_.fetch_add(1);
    compiled->store_error = absl::StrCat("the cache in ", store_->dir(),
                                         " could not store the artifact: ", put.status().message());
    std::fprintf(stderr, "tilec: %s\n", compiled->store_error.c_str());
  }
  return compiled;
}

}  // namespace tilec::cache
