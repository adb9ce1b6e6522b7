#include "compiler/cache/disk_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/cache/digest.h"

namespace tilec::cache {
namespace {

constexpr char kEntryMagic[] = "tilec-cache-entry 1";

absl::Status ErrnoStatus(const std::string& what, const std::string& path) {
  int e = errno;
  std::string msg = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(msg);
  if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(msg);
  if (e == ENOSPC || e == EDQUOT || e == EFBIG) return absl::ResourceExhaustedError(msg);
  return absl::UnavailableError(msg);
}

// An flock(2) on dir/lock held for the object's lifetime.
class FileLock {
 public:
  static absl::StatusOr<FileLock> Take(const std::string& path, bool exclusive) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("cannot open the cache lock", path);
    while (::flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
      if (errno == EINTR) continue;
      absl::Status s = ErrnoStatus("cannot lock", path);
      ::close(fd);
      return s;
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileLock(const FileLock&) = delete;
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path);
  std::string out;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoStatus("cannot read", path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", dir);
  ::fsync(fd);
  ::close(fd);
  return absl::OkStatus();
}

// Writes `bytes` to tmp/, fsyncs, renames to `final_path`, fsyncs its folder.
absl::Status WriteAtomically(const std::string& dir, const std::string& final_dir,
                             const std::string& final_path, const std::string& bytes) {
  std::string tmpl = absl::StrCat(dir, "/tmp/w.XXXXXX");
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  std::string tmp(name.data());
  if (fd < 0) return ErrnoStatus("cannot create a temporary file in", dir + "/tmp");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoStatus("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    absl::Status s = ErrnoStatus("cannot flush", tmp);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    absl::Status s = ErrnoStatus("cannot rename into", final_path);
    ::unlink(tmp.c_str());
    return s;
  }
  return FsyncDir(final_dir);
}

struct Entry {
  std::string digest;
  int64_t size = 0;
  std::string metadata_json;
};

std::string EncodeEntry(const std::string& digest, int64_t size, const std::string& metadata,
                        const std::string& key_text) {
  return absl::StrCat(kEntryMagic, "\ndigest ", digest, "\nsize ", size, "\nmetadata_sha256 ",
                      Sha256Hex(metadata), "\nmetadata_bytes ", metadata.size(), "\nkey_bytes ",
                      key_text.size(), "\n", metadata, key_text);
}

// nullopt when the entry is malformed or its metadata does not match its hash.
std::optional<Entry> DecodeEntry(const std::string& text) {
  std::vector<std::string> fields;
  size_t pos = 0;
  for (int i = 0; i < 6; ++i) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return std::nullopt;
    fields.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  auto value = [&](int i, std::string_view name) -> std::optional<std::string> {
    std::string prefix = std::string(name) + " ";
    if (fields[i].rfind(prefix, 0) != 0) return std::nullopt;
    return fields[i].substr(prefix.size());
  };
  if (fields[0] != kEntryMagic) return std::nullopt;
  auto digest = value(1, "digest");
  auto size = value(2, "size");
  auto meta_sha = value(3, "metadata_sha256");
  auto meta_bytes = value(4, "metadata_bytes");
  auto key_bytes = value(5, "key_bytes");
  Entry e;
  int64_t mb = 0, kb = 0;
  if (!digest || !size || !meta_sha || !meta_bytes || !key_bytes || !IsHexDigest(*digest) ||
      !absl::SimpleAtoi(*size, &e.size) || !absl::SimpleAtoi(*meta_bytes, &mb) ||
      !absl::SimpleAtoi(*key_bytes, &kb) || mb < 0 || kb < 0 ||
      text.size() - pos != static_cast<size_t>(mb + kb)) {
    return std::nullopt;
  }
  e.digest = *digest;
  e.metadata_json = text.substr(pos, static_cast<size_t>(mb));
  if (Sha256Hex(e.metadata_json) != *meta_sha) return std::nullopt;
  return e;
}

void SetMtime(const std::string& path, absl::Time t) {
  timespec ts[2];
  ts[0] = absl::ToTimespec(t);
  ts[1] = ts[0];
  ::utimensat(AT_FDCWD, path.c_str(), ts, 0);
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return names;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DiskStore>> DiskStore::Open(std::string dir, int64_t budget_bytes,
                                                           Clock* clock) {
  if (budget_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache budget must be positive, got ", budget_bytes, " bytes"));
  }
  for (const std::string& sub :
       {std::string(), std::string("/blobs"), std::string("/keys"), std::string("/tmp")}) {
    std::string path = dir + sub;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus("cannot create the cache folder", path);
    }
  }
  std::unique_ptr<DiskStore> store(new DiskStore(std::move(dir), budget_bytes, clock));
  absl::StatusOr<FileLock> lock = FileLock::Take(store->dir_ + "/lock", /*exclusive=*/true);
  if (!lock.ok()) return lock.status();
  // Leftovers of writers that died mid-write: every writer holds the lock
  // exclusively from creating its temporary file to renaming it, so under
  // this lock whatever tmp/ holds belongs to no live writer.
  for (const std::string& name : ListDir(store->dir_ + "/tmp")) {
    ::unlink((store->dir_ + "/tmp/" + name).c_str());
  }
  if (absl::Status s = store->EvictOverBudget(""); !s.ok()) return s;
  return store;
}

void DiskStore::RemoveEntry(const std::string& key, const std::string& digest) {
  ::unlink(absl::StrCat(dir_, "/keys/", key).c_str());
  if (IsHexDigest(digest)) ::unlink(absl::StrCat(dir_, "/blobs/", digest).c_str());
}

bool DiskStore::Touch(const std::string& key) {
  if (!IsHexDigest(key)) return false;
  const std::string path = absl::StrCat(dir_, "/keys/", key);
  timespec ts[2];
  ts[0] = absl::ToTimespec(clock_->Now());
  ts[1] = ts[0];
  if (::utimensat(AT_FDCWD, path.c_str(), ts, 0) != 0) return false;
  hits_.fetch_add(1);
  return true;
}

std::string DiskStore::BlobStamp(const std::string& digest) {
  struct stat st;
  if (!IsHexDigest(digest) || ::stat(absl::StrCat(dir_, "/blobs/", digest).c_str(), &st) != 0) {
    return "";
  }
  return absl::StrCat(st.st_size, ":", st.st_ino, ":", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
}

absl::StatusOr<std::optional<StoredArtifact>> DiskStore::Get(const std::string& key) {
  if (!IsHexDigest(key)) return absl::InvalidArgumentError("cache key is not a hex SHA-256");
  std::string entry_path = absl::StrCat(dir_, "/keys/", key);
  std::optional<Entry> entry;
  std::string bytes;
  bool corrupt = false;
  {
    absl::StatusOr<FileLock> lock = FileLock::Take(dir_ + "/lock", /*exclusive=*/false);
    if (!lock.ok()) return lock.status();
    absl::StatusOr<std::string> text = ReadFile(entry_path);
    if (absl::IsNotFound(text.status())) {
      misses_.fetch_add(1);
      return std::nullopt;
    }
    if (!text.ok()) return text.status();
    entry = DecodeEntry(*text);
    if (entry) {
      absl::StatusOr<std::string> blob = ReadFile(absl::StrCat(dir_, "/blobs/", entry->digest));
      if (!blob.ok() && !absl::IsNotFound(blob.status())) return blob.status();
      if (blob.ok() && static_cast<int64_t>(blob->size()) == entry->size &&
          Sha256Hex(*blob) == entry->digest) {
        bytes = *std::move(blob);
      } else {
        corrupt = true;  // truncated, altered, or its blob went missing
      }
    } else {
      corrupt = true;
    }
  }
  if (corrupt) {
    absl::StatusOr<FileLock> lock = FileLock::Take(dir_ + "/lock", /*exclusive=*/true);
    if (!lock.ok()) return lock.status();
    RemoveEntry(key, entry ? entry->digest : std::string());
    corrupt_.fetch_add(1);
    misses_.fetch_add(1);
    return std::nullopt;
  }
  SetMtime(entry_path, clock_->Now());
  hits_.fetch_add(1);
  return StoredArtifact{entry->digest, std::move(bytes), std::move(entry->metadata_json)};
}

absl::StatusOr<std::string> DiskStore::Put(const std::string& key, const std::string& key_text,
                                           const std::string& bytes,
                                           const std::string& metadata_json) {
  if (!IsHexDigest(key)) return absl::InvalidArgumentError("cache key is not a hex SHA-256");
  std::string digest = Sha256Hex(bytes);
  absl::StatusOr<FileLock> lock = FileLock::Take(dir_ + "/lock", /*exclusive=*/true);
  if (!lock.ok()) return lock.status();
  std::string blob_path = absl::StrCat(dir_, "/blobs/", digest);
  const bool blob_existed = ::access(blob_path.c_str(), F_OK) == 0;
  if (absl::Status s = WriteAtomically(dir_, dir_ + "/blobs", blob_path, bytes); !s.ok()) return s;
  std::string entry_path = absl::StrCat(dir_, "/keys/", key);
  if (absl::Status s = WriteAtomically(
          dir_, dir_ + "/keys", entry_path,
          EncodeEntry(digest, static_cast<int64_t>(bytes.size()), metadata_json, key_text));
      !s.ok()) {
    // No entry refers to a blob written just now: remove it rather than
    // leave it orphaned (one that existed may be another entry's).
    if (!blob_existed) ::unlink(blob_path.c_str());
    return s;
  }
  SetMtime(entry_path, clock_->Now());
  if (absl::Status s = EvictOverBudget(key); !s.ok()) return s;
  return digest;
}

absl::StatusOr<std::string> DiskStore::GetBlob(const std::string& digest) {
  if (!IsHexDigest(digest)) {
    // Quote a bounded prefix: the digest comes from the request.
    return absl::InvalidArgumentError(absl::StrCat(
        "artifact digest must be 64 lowercase hex digits, got ", digest.size(), " characters ('",
        digest.substr(0, 80), digest.size() > 80 ? "...'" : "'", ")"));
  }
  std::string path = absl::StrCat(dir_, "/blobs/", digest);
  {
    absl::StatusOr<FileLock> lock = FileLock::Take(dir_ + "/lock", /*exclusive=*/false);
    if (!lock.ok()) return lock.status();
    absl::StatusOr<std::string> blob = ReadFile(path);
    if (absl::IsNotFound(blob.status())) {
      return absl::NotFoundError(absl::StrCat("no artifact ", digest, " in the cache"));
    }
    if (!blob.ok()) return blob.status();
    if (Sha256Hex(*blob) == digest) return blob;
  }
  absl::StatusOr<FileLock> lock = FileLock::Take(dir_ + "/lock", /*exclusive=*/true);
  if (!lock.ok()) return lock.status();
  ::unlink(path.c_str());
  corrupt_.fetch_add(1);
  return absl::NotFoundError(
      absl::StrCat("artifact ", digest, " was corrupt in the cache and has been evicted"));
}

absl::Status DiskStore::EvictOverBudget(const std::string& keep) {
  struct Item {
    std::string key, digest;
    int64_t size;
    timespec mtime;
  };
  std::vector<Item> items;
  std::vector<std::string> corrupt_keys;  // their blob is unknown: no sweep
  int64_t total = 0;
  for (const std::string& key : ListDir(dir_ + "/keys")) {
    std::string path = absl::StrCat(dir_, "/keys/", key);
    struct stat st;
    if (!IsHexDigest(key) || ::stat(path.c_str(), &st) != 0) continue;
    absl::StatusOr<std::string> text = ReadFile(path);
    std::optional<Entry> e = text.ok() ? DecodeEntry(*text) : std::nullopt;
    if (!e) {
      corrupt_keys.push_back(key);  // evicted when it is read
      continue;
    }
    items.push_back({key, e->digest, e->size, st.st_mtim});
    total += e->size;
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec
                                            : a.mtime.tv_nsec < b.mtime.tv_nsec;
  });
  int64_t entries = static_cast<int64_t>(items.size());
  std::vector<bool> removed(items.size(), false);
  for (size_t i = 0; i < items.size() && total > budget_; ++i) {
    const Item& it = items[i];
    if (it.key == keep) continue;
    // A blob shared by another live entry stays while that entry refers to it.
    bool shared = false;
    for (size_t j = 0; j < items.size(); ++j) {
      shared |= j != i && !removed[j] && items[j].digest == it.digest;
    }
    RemoveEntry(it.key, shared ? std::string() : it.digest);
    removed[i] = true;
    total -= it.size;
    --entries;
    evictions_.fetch_add(1);
  }
  // Blobs no live entry refers to (their entry could not be written, or a
  // writer died between the two renames) are swept; under the exclusive
  // lock no Put is between its blob and its entry.
  std::set<std::string> live;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!removed[i]) live.insert(items[i].digest);
  }
  for (const std::string& name : ListDir(dir_ + "/blobs")) {
    if (IsHexDigest(name) && live.count(name) == 0 && corrupt_keys.empty()) {
      ::unlink(absl::StrCat(dir_, "/blobs/", name).c_str());
      orphans_.fetch_add(1);
    }
  }
  bytes_.store(total);
  entries_.store(entries);
  return absl::OkStatus();
}

StoreStats DiskStore::Stats() {
  return StoreStats{hits_.load(),  misses_.load(),  evictions_.load(), corrupt_.load(),
                    bytes_.load(), entries_.load(), orphans_.load()};
}

}  // namespace tilec::cache
