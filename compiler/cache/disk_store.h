// The local content-addressed artifact store: artifacts on disk under one
// directory, found by cache key, named by the SHA-256 of their bytes.
//
// Layout under `dir`:
//   blobs/<sha256>   artifact bytes
//   keys/<key>       the entry: artifact digest and size, the metadata JSON,
//                    its SHA-256, and the encoded key it was stored under
//   tmp/             files being written (emptied when the store opens)
//   lock             flock(2): shared for reads, exclusive for writes and
//                    evictions, so several processes (two servers, a server
//                    and the CLI) can share the directory.
//
// Guarantees:
// - Atomic writes: each file is written to tmp/, fsync'ed, renamed into
//   place, and the directory fsync'ed; the blob first, the entry last, so an
//   entry never points at a missing or partial blob after a crash. A blob
//   whose entry could not be written (a full disk) is removed at once; blobs
//   no entry refers to (a writer killed between the two) are swept when the
//   store opens and after every Put (counted in `orphans_swept`).
// - Every read verifies: an entry's metadata against its recorded SHA-256
//   and the blob's bytes against its name. A corrupt or truncated entry is
//   evicted and reported as a miss (counted in `corrupt`), never returned.
// - LRU under a byte budget: a hit refreshes the entry's time (the injected
//   clock, stored as the entry file's mtime, so the order survives
//   restarts); a Put that leaves the store over budget evicts the least
//   recently used entries first (never the one just written).
// - Entries survive restarts: the store keeps no state outside the directory
//   other than counters.
#ifndef TILEC_COMPILER_CACHE_DISK_STORE_H_
#define TILEC_COMPILER_CACHE_DISK_STORE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/cache/clock.h"

namespace tilec::cache {

struct StoredArtifact {
  std::string digest;  // Sha256Hex(bytes)
  std::string bytes;
  std::string metadata_json;
};

struct StoreStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t evictions = 0;  // by the byte budget
  int64_t corrupt = 0;    // entries found corrupt and evicted
  int64_t bytes = 0;      // artifact bytes on disk (as of the last scan)
  int64_t entries = 0;
  int64_t orphans_swept = 0;  // blobs no entry referred to, removed
};

class DiskStore {
 public:
  // Opens (creating if needed) the store at `dir`. INVALID_ARGUMENT for a
  // non-positive budget; the errno's status when the folder is unusable.
  static absl::StatusOr<std::unique_ptr<DiskStore>> Open(std::string dir, int64_t budget_bytes,
                                                         Clock* clock = RealClock::Get());

  // The entry stored under `key` (a hex digest), or nullopt on a miss.
  // Errors only for I/O failures other than a missing or corrupt entry.
  absl::StatusOr<std::optional<StoredArtifact>> Get(const std::string& key);

  // Stores `bytes` and `metadata_json` under `key`; `key_text` (the encoded
  // key) is kept in the entry for inspection. Returns the artifact digest.
  absl::StatusOr<std::string> Put(const std::string& key, const std::string& key_text,
                                  const std::string& bytes, const std::string& metadata_json);

  // Whether an entry is stored under `key`; if so refreshes its LRU time and
  // counts a hit, without reading or verifying it (one utimensat): for
  // callers that remember what the entry holds (server/response_memo.h).
  bool Touch(const std::string& key);
  // The identity of blob `digest` as stored ("size:inode:mtime"), "" when
  // absent: a blob rewritten or modified in place changes it.
  std::string BlobStamp(const std::string& digest);

  // The artifact named `digest`, verified; NOT_FOUND when absent, and a
  // corrupt blob is removed and NOT_FOUND.
  absl::StatusOr<std::string> GetBlob(const std::string& digest);

  StoreStats Stats();
  const std::string& dir() const { return dir_; }

 private:
  DiskStore(std::string dir, int64_t budget, Clock* clock)
      : dir_(std::move(dir)), budget_(budget), clock_(clock) {}
  // Scans keys/ for total bytes and entry count; evicts LRU entries beyond
  // the budget, sparing `keep`; sweeps unreferenced blobs (not while an
  // unreadable entry might refer to one). Call under the exclusive lock.
  absl::Status EvictOverBudget(const std::string& keep);
  void RemoveEntry(const std::string& key, const std::string& digest);

  std::string dir_;
  int64_t budget_;
  Clock* clock_;
  std::atomic<int64_t> hits_{0}, misses_{0}, evictions_{0}, corrupt_{0}, orphans_{0};
  std::atomic<int64_t> bytes_{0}, entries_{0};
};

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_DISK_STORE_H_
