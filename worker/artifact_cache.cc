#include "worker/artifact_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"

namespace tilec::worker {
namespace {

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return false;
  *out = ss.str();
  return true;
}

absl::Status WriteAtomically(const std::string& path, const std::string& temp,
                             const std::string& bytes) {
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      return absl::InternalError(absl::StrCat("cannot write ", temp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    return absl::InternalError(absl::StrCat("cannot rename ", temp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DefaultWorkerCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return absl::StrCat(xdg, "/tilec-worker");
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return absl::StrCat(home, "/.cache/tilec-worker");
  }
  return "/tmp/tilec-worker";
}

absl::Status ArtifactCache::Init() {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_)) {
    return absl::InternalError(absl::StrCat(
        "artifact cache folder ", dir_,
        ": cannot create it: ", ec ? ec.message() : "a file of that name is in the way"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ArtifactCache::Get(const std::string& digest) {
  if (!cache::IsHexDigest(digest)) {
    return absl::InvalidArgumentError(
        absl::StrCat("artifact digest '", digest, "' is not 64 lowercase hex digits"));
  }
  const std::string path = PathFor(digest);
  std::string bytes;
  if (ReadWhole(path, &bytes)) {
    if (cache::Sha256Hex(bytes) == digest) {
      absl::MutexLock lock(&mu_);
      ++counters_.hits;
      return bytes;
    }
    std::fprintf(stderr, "tilec-worker: %s does not hash to its name; removed, fetching again\n",
                 path.c_str());
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    absl::MutexLock lock(&mu_);
    ++counters_.corrupt;
  }
  absl::StatusOr<std::string> fetched = fetch_(digest);
  if (!fetched.ok()) {
    return absl::Status(fetched.status().code(), absl::StrCat("fetching artifact ", digest, ": ",
                                                              fetched.status().message()));
  }
  if (const std::string got = cache::Sha256Hex(*fetched); got != digest) {
    return absl::DataLossError(absl::StrCat("artifact ", digest, " from the server hashes to ", got,
                                            " (", fetched->size(), " bytes); refused"));
  }
  std::string temp;
  {
    absl::MutexLock lock(&mu_);
    ++counters_.fetches;
    temp = absl::StrCat(dir_, "/.", digest, ".tmp.", ::getpid(), ".", temp_counter_++);
  }
  if (absl::Status st = WriteAtomically(path, temp, *fetched); !st.ok()) {
    std::fprintf(stderr, "tilec-worker: warning: artifact %s not cached: %s\n", digest.c_str(),
                 std::string(st.message()).c_str());
  }
  return fetched;
}

ArtifactCache::Counters ArtifactCache::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

}  // namespace tilec::worker
