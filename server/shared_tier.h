// The shared tier of the artifact cache: one Redis that a fleet of tilecd
// shares, so that the fleet compiles each kernel once.
//
// Keys (prefix "tilec:" by default):
//   idx:<cache key>   "<artifact digest>\n<sha256 of the metadata>\n<signature or ->\n
//                     <metadata JSON>" (the Ed25519 signature of
//                     cache::ArtifactStatement, hex; "-" unsigned)
//   blob:<digest>     the artifact's bytes, named by their SHA-256
//   lock:<cache key>  the fencing token of the server compiling it (SET NX PX)
//   fence             the counter fencing tokens are drawn from (INCR; a token
//                     is the count shifted left 24 bits and 24 random bits)
//   tuning:<key>      a tuning record (TuningRecord bytes), by TuningDb key
// and the channel done:<cache key>, published when an artifact is stored.
//
// Every read is verified: a blob against its digest, an entry's metadata
// against its SHA-256. A corrupt entry or blob is deleted, counted and
// reported as a miss, never served.
//
// Degraded, never down: any Redis error (refused connection, timeout, an
// error reply) marks the tier down for `retry_after`; meanwhile every call
// returns UNAVAILABLE at once without touching the network, and callers
// serve from their disk and compile themselves. The first call after that
// tries again.
//
// Single-flight across servers: a server that misses draws a fencing token
// and takes lock:<key> with a time to live; while it compiles, a refresher
// extends the lock (only while it still holds the token). Others subscribe
// to done:<key> and sleep until it is published or the lock expires (a dead
// holder's lock does), then look again. The holder stores blob and entry,
// then publishes and releases its lock in one script (the release only when
// the lock still holds its token).
#ifndef TILEC_SERVER_SHARED_TIER_H_
#define TILEC_SERVER_SHARED_TIER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/cache/cache_key.h"
#include "compiler/cache/compiler.h"
#include "compiler/cache/signing.h"
#include "server/redis_tls.h"

struct redisContext;

namespace tilec::server {

struct SharedTierOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  // A file with Redis credentials: "password", or "user password" (ACL).
  std::string password_file;
  // TLS to Redis's tls-port (server/redis_tls.h); off: plaintext.
  bool tls = false;
  RedisTlsOptions tls_options;
  std::string prefix = "tilec:";
  absl::Duration connect_timeout = absl::Milliseconds(250);
  absl::Duration io_timeout = absl::Seconds(2);
  absl::Duration lock_ttl = absl::Seconds(10);
  absl::Duration retry_after = absl::Seconds(1);
  // Signed entries (compiler/cache/signing.h): Put signs with `signer`;
  // with a `verifier`, Get refuses an entry without a valid signature (a
  // miss, counted as rejected), so that only holders of the fleet's key can
  // place artifacts there. Both may be null.
  const cache::Signer* signer = nullptr;
  const cache::Verifier* verifier = nullptr;
};

struct SharedTierCounters {
  int64_t hits = 0, misses = 0, corrupt = 0, errors = 0, stores = 0;
  int64_t rejected = 0;  // entries whose signature did not verify
  int64_t locks_taken = 0, waits = 0, wakeups = 0;
  bool up = false;  // the last contact succeeded
};

// One entry of the shared tier.
struct SharedEntry {
  std::string digest, bytes, metadata_json;
};

class SharedTier {
 public:
  // Parses "HOST:PORT" for options.host/port and reads the credentials;
  // Redis need not be up (the tier starts degraded and tries on first use).
  static absl::StatusOr<std::unique_ptr<SharedTier>> Create(SharedTierOptions options);
  ~SharedTier();

  // The entry stored under `key`, verified; nullopt on a miss (a corrupt
  // entry or blob is deleted and counted as corrupt and missed).
  // UNAVAILABLE while the tier is down.
  absl::StatusOr<std::optional<SharedEntry>> Get(const std::string& key);
  // The blob named `digest`, verified; NOT_FOUND when absent or corrupt.
  absl::StatusOr<std::string> GetBlob(const std::string& digest);
  // Stores blob and entry; then, with a token, publishes done:<key> and
  // releases the lock if it still holds `token` (0: no lock to release).
  absl::Status Put(const std::string& key, const std::string& bytes,
                   const std::string& metadata_json, int64_t token);

  // Takes lock:<key>: the fencing token when taken, nullopt when another
  // holds it.
  absl::StatusOr<std::optional<int64_t>> TryLock(const std::string& key);
  // Extends the lock's time to live if it still holds `token`.
  absl::Status Refresh(const std::string& key, int64_t token);
  // Releases the lock if it holds `token`, and wakes the waiters.
  absl::Status Unlock(const std::string& key, int64_t token);
  // Sleeps until done:<key> is published, the lock is gone or expires, or
  // `until`; then the caller looks again. True when woken by a publish.
  absl::StatusOr<bool> Wait(const std::string& key, absl::Time until);

  // Tuning records by TuningDb key (bytes of a TuningRecord).
  absl::StatusOr<std::optional<std::string>> GetTuning(const std::string& key);
  absl::Status PutTuning(const std::string& key, const std::string& record);

  // Whether a call would try Redis now (up, or its retry time has come).
  bool available() const;
  // PING, so that health and metrics follow Redis without waiting for a
  // request: while up, when nothing touched Redis for a second; while down,
  // once the retry time has come.
  void Probe();
  SharedTierCounters counters() const;
  const SharedTierOptions& options() const { return options_; }
  std::string Describe() const;  // "redis 127.0.0.1:6379", "... (TLS)"

 private:
  explicit SharedTier(SharedTierOptions o);
  struct Conn;
  // A connection from the pool (a new one when none is idle), and back.
  absl::StatusOr<std::unique_ptr<Conn>> Take();
  void Give(std::unique_ptr<Conn> c);
  absl::StatusOr<std::unique_ptr<Conn>> Connect();
  // Runs `argv` on a pooled connection; an error marks the tier down.
  struct Reply;
  absl::StatusOr<Reply> Command(const std::vector<std::string>& argv);
  absl::Status Down(const absl::Status& why);
  absl::Status Unavailable() const;
  void Up();

  SharedTierOptions options_;
  std::string user_, password_;
  std::unique_ptr<RedisTls> tls_;  // with options_.tls
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Conn>> idle_;
  absl::Time retry_at_ = absl::InfinitePast();
  absl::Time last_ok_ = absl::InfinitePast();
  std::atomic<bool> up_{false};
  std::atomic<bool> failure_reported_{false};
  std::atomic<int64_t> hits_{0}, misses_{0}, corrupt_{0}, errors_{0}, stores_{0}, rejected_{0};
  std::atomic<int64_t> locks_taken_{0}, waits_{0}, wakeups_{0};
};

// A Compiler decorator between the local disk cache and the compiler: a
// miss on disk looks in the shared tier, then compiles under the fleet-wide
// lock and stores the result there. Any shared-tier failure falls back to
// compiling here, so that no request fails because Redis is down.
class SharedTierCompiler : public cache::Compiler {
 public:
  SharedTierCompiler(std::unique_ptr<cache::Compiler> inner, SharedTier* tier,
                     cache::ToolchainInfo toolchain)
      : inner_(std::move(inner)), tier_(tier), toolchain_(std::move(toolchain)) {}
  absl::StatusOr<cache::Artifact> Compile(const cache::CompileJob& job) override;
  // The shared tier's artifact for `job`, without compiling or locking;
  // nullopt on a miss or while the tier is down.
  std::optional<cache::Artifact> Lookup(const cache::CompileJob& job);

 private:
  absl::StatusOr<cache::Artifact> CompileHolding(const cache::CompileJob& job,
                                                 const std::string& key, int64_t token);
  std::unique_ptr<cache::Compiler> inner_;
  SharedTier* tier_;
  cache::ToolchainInfo toolchain_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_SHARED_TIER_H_
