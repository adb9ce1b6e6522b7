#include "client/embedded.h"

#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/cache_key.h"
#include "compiler/cache/caching_compiler.h"
#include "compiler/cache/cuda_compiler.h"
#include "compiler/cache/disk_store.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/recommend/profile.h"
#include "server/compile_core.h"
#include "server/recommend_core.h"

namespace tilec::cli {
namespace {

// The CLI's own process: larger inputs than a shared server accepts.
constexpr server::CoreLimits kLocalLimits{int64_t{64} << 20, int64_t{256} << 20};

class LocalCompiler : public EmbeddedCompiler {
 public:
  explicit LocalCompiler(std::unique_ptr<cache::DiskStore> store)
      : store_(std::move(store)),
        caching_(std::make_unique<cache::CudaCompiler>(), store_.get(),
                 cache::CurrentToolchain()),
        core_(&caching_, kLocalLimits) {}

  absl::StatusOr<tilec::v1::CompileResponse> Compile(const tilec::v1::CompileRequest& request,
                                                     absl::Time deadline) override {
    return core_.Compile(request, deadline, nullptr);
  }

  absl::StatusOr<std::string> Artifact(const std::string& digest) override {
    return store_->GetBlob(digest);
  }

 private:
  std::unique_ptr<cache::DiskStore> store_;
  cache::CachingCompiler caching_;
  server::CompileCore core_;
};

}  // namespace

absl::StatusOr<tilec::v1::RecommendResponse> RecommendEmbedded(
    const tilec::v1::RecommendRequest& request, const std::string& profiles_dir,
    absl::Time deadline) {
  absl::StatusOr<std::vector<recommend::HardwareProfile>> profiles =
      recommend::LoadProfiles(profiles_dir);
  if (!profiles.ok()) return profiles.status();
  server::RecommendCore core(kLocalLimits, *std::move(profiles));
  return core.Recommend(request, deadline);
}

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("TILEC_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return absl::StrCat(x, "/tilec");
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return absl::StrCat(h, "/.cache/tilec");
  }
  return "";
}

absl::StatusOr<std::unique_ptr<EmbeddedCompiler>> EmbeddedCompiler::Open(
    const std::string& cache_dir, int64_t cache_bytes) {
  if (cache_dir.empty()) {
    return absl::InvalidArgumentError(
        "no cache folder: pass --cache_dir DIR or set TILEC_CACHE_DIR (or HOME)");
  }
  absl::StatusOr<std::unique_ptr<cache::DiskStore>> store =
      cache::DiskStore::Open(cache_dir, cache_bytes);
  if (!store.ok()) {
    return absl::Status(store.status().code(), absl::StrCat("the local cache ", cache_dir, ": ",
                                                            store.status().message()));
  }
  return std::make_unique<LocalCompiler>(*std::move(store));
}

}  // namespace tilec::cli
