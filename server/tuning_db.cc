#include "server/tuning_db.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "server/leftovers.h"
#include "server/shared_tier.h"

namespace tilec::server {

absl::StatusOr<std::unique_ptr<TuningDb>> TuningDb::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the tuning database folder ", dir, ": ", ec.message()));
  }
  // Temporary files of a tilecd killed mid-write ("<key>.tuning.tmp.<pid>.<n>").
  RemoveLeftoversOfDeadProcesses(dir, ".tmp.", /*at_start=*/false);
  return std::unique_ptr<TuningDb>(new TuningDb(dir));
}

std::string TuningDb::KeyText(const std::string& program_hash, const std::string& profile_id,
                              const std::map<std::string, int64_t>& dyn_dims,
                              const std::string& compiler_version,
                              const std::string& nvrtc_version) {
  std::string dims;
  for (const auto& [name, value] : dyn_dims) absl::StrAppend(&dims, name, "=", value, ";");
  return absl::StrCat("tuning.v1\nprogram=", program_hash, "\ndyn_dims=", dims,
                      "\nprofile=", profile_id, "\ncompiler=", compiler_version,
                      "\nnvrtc=", nvrtc_version, "\n");
}

std::string TuningDb::PathFor(const std::string& key) const {
  return (std::filesystem::path(dir_) / (key + ".tuning")).string();
}

absl::StatusOr<std::optional<tilec::v1::TuningRecord>> TuningDb::Get(
    const std::string& key_text) const {
  const std::string key = cache::Sha256Hex(key_text);
  std::ifstream in(PathFor(key), std::ios::binary);
  if (!in) {
    if (shared_ == nullptr || !shared_->available()) return std::nullopt;
    absl::StatusOr<std::optional<std::string>> s = shared_->GetTuning(key);
    tilec::v1::TuningRecord record;
    if (!s.ok() || !s->has_value() || !record.ParseFromString(**s) ||
        record.key_text() != key_text) {
      return std::nullopt;  // absent, or not the record asked for: ignored
    }
    (void)const_cast<TuningDb*>(this)->PutLocal(record);
    return record;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  tilec::v1::TuningRecord record;
  if (!record.ParseFromString(bytes.str()) || record.key_text() != key_text) {
    std::fprintf(stderr, "tilecd: tuning record %s is damaged; ignoring it\n",
                 PathFor(key).c_str());
    return std::nullopt;
  }
  return record;
}

absl::Status TuningDb::Put(tilec::v1::TuningRecord record) {
  record.set_key(cache::Sha256Hex(record.key_text()));
  if (shared_ != nullptr && shared_->available()) {
    (void)shared_->PutTuning(record.key(), record.SerializeAsString());
  }
  return PutLocal(record);
}

absl::Status TuningDb::PutLocal(const tilec::v1::TuningRecord& record) {
  static std::atomic<uint64_t> counter{0};
  const std::string path = PathFor(record.key());
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter++);
  const std::string bytes = record.SerializeAsString();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot write ", tmp));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return absl::ResourceExhaustedError(absl::StrCat("cannot write ", tmp, " (disk full?)"));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return absl::ResourceExhaustedError(absl::StrCat("cannot store the tuning record ", path));
  }
  return absl::OkStatus();
}

int64_t TuningDb::Count() const {
  int64_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    if (e.path().extension() == ".tuning") ++n;
  }
  return n;
}

}  // namespace tilec::server
