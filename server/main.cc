// tilecd: the tilec compile server.
//
//   tilecd --cache_dir DIR [--host 127.0.0.1] [--port 0] [--port_file F]
//          [--metrics_port 0|-1] [--metrics_host 127.0.0.1] [--metrics_port_file F]
//          [--tokens_file F] [--tls_cert F --tls_key F] [--reflection]
//          [--jobs N] [--threads N] [--queue N] [--compile_queue N]
//          [--search_timeout_s S] [--search_threads N] [--search_queue N]
//          [--staging_timeout_s S]
//          [--max_streams N] [--max_memory_mb M] [--max_connection_age_s S]
//          [--compile_timeout_s S] [--compile_memory_mb M] [--cache_bytes B]
//          [--profiles DIR] [--allow_prelude] [--compile_user nobody]
//          [--compile_sandbox] [--http_port P [--http_port_file F] [--http_host H]]
//          [--redis HOST:PORT [--redis_credentials_file F] [--redis_lock_ttl_s S]
//           [--redis_timeout_ms MS] [--redis_retry_s S] [--redis_prefix P]
//           [--redis_tls] [--redis_tls_ca F] [--redis_tls_cert F --redis_tls_key F]
//           [--redis_tls_server_name N]]
//
// With --redis, a fleet of tilecd shares artifacts (and tuning records)
// through one Redis: server/shared_tier.h. The local --cache_dir stays the
// first tier.
//
// Port 0 picks a free port; the port chosen is written to --port_file (and
// the metrics port to --metrics_port_file) once the server listens. The
// hidden first argument `compile-child` runs the compile child instead
// (compile_child.h): tilecd execs itself for every compile.
#if defined(__SANITIZE_ADDRESS__)
#define TILECD_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TILECD_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef TILECD_ADDRESS_SANITIZER
#define TILECD_ADDRESS_SANITIZER 0
#endif

#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "compiler/cache/cache_key.h"
#include "compiler/cache/caching_compiler.h"
#include "compiler/cache/cuda_compiler.h"
#include "compiler/cache/disk_store.h"
#include "compiler/cache/single_flight.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "prometheus/exposer.h"
#include "server/auth.h"
#include "server/compile_child.h"
#include "server/compile_core.h"
#include "server/hit_path.h"
#include "server/hit_server.h"
#include "server/metrics.h"
#include "server/metrics_compiler.h"
#include "server/recommend_core.h"
#include "server/scheduler.h"
#include "server/service.h"
#include "server/shared_tier.h"
#include "server/subprocess_compiler.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "address to listen on");
ABSL_FLAG(int, port, 0, "gRPC port; 0 picks a free one");
ABSL_FLAG(std::string, port_file, "", "write the gRPC port here once listening");
ABSL_FLAG(int, metrics_port, 0, "Prometheus metrics HTTP port; 0 picks a free one, -1 disables");
ABSL_FLAG(std::string, metrics_host, "127.0.0.1",
          "address the metrics endpoint listens on (plain HTTP, no token: loopback by default)");
ABSL_FLAG(int, metrics_threads, 8, "metrics HTTP threads (slow clients each hold one)");
ABSL_FLAG(int, metrics_timeout_ms, 2000,
          "metrics HTTP: a request not received within this is dropped");
ABSL_FLAG(bool, reflection, false,
          "serve gRPC server reflection (lists every service and message; no token needed)");
ABSL_FLAG(std::string, metrics_port_file, "", "write the metrics port here once listening");
ABSL_FLAG(std::string, cache_dir, "", "artifact cache directory (required)");
ABSL_FLAG(int64_t, cache_bytes, int64_t{10} << 30, "cache byte budget (LRU eviction)");
ABSL_FLAG(std::string, tokens_file, "",
          "bearer tokens, `<token> [compile|read]` per line; read again on SIGHUP");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate chain (enables TLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM server private key");
ABSL_FLAG(int, jobs, 2, "compiles (child processes) at once");
ABSL_FLAG(int, threads, 64, "request threads (waiting on compiles, the cache, single-flight)");
ABSL_FLAG(int, queue, 1024, "requests waiting for a thread before RESOURCE_EXHAUSTED");
ABSL_FLAG(int, compile_queue, 256,
          "compiles (cache misses) waiting for a compile thread before RESOURCE_EXHAUSTED");
ABSL_FLAG(int, search_threads, 4, "threads running Recommend searches");
ABSL_FLAG(int, search_queue, 64,
          "Recommend requests waiting for a search thread before RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_streams, 32, "concurrent HTTP/2 streams (calls) per connection (0: gRPC's)");
ABSL_FLAG(int64_t, max_memory_mb, 1024,
          "gRPC's memory quota for connections and calls (resource quota); 0: none");
ABSL_FLAG(double, max_connection_age_s, 3600,
          "connections are closed gracefully after this long (0: never)");
ABSL_FLAG(double, handshake_timeout_s, 10,
          "a connection that has not finished its TLS and HTTP/2 handshake this long after it "
          "opened is closed");
ABSL_FLAG(double, max_connection_idle_s, 600,
          "a connection with no call for this long is closed (0: never)");
ABSL_FLAG(double, compile_timeout_s, 300, "wall-time limit of one compile");
ABSL_FLAG(int64_t, compile_memory_mb, 4096, "address-space limit of one compile (0: none)");
ABSL_FLAG(int64_t, max_source_bytes, 1 << 20, "largest TileLang source accepted");
ABSL_FLAG(int64_t, max_message_bytes, 8 << 20, "largest request message accepted");
ABSL_FLAG(double, search_timeout_s, 60,
          "longest recommendation search (Recommend, Compile with unbound tile parameters), "
          "whatever the call's deadline");
ABSL_FLAG(double, staging_timeout_s, 10,
          "longest a request's TileLang builder may run in the frontend (staging), whatever the "
          "call's deadline");
ABSL_FLAG(double, shutdown_grace_s, 1,
          "on SIGTERM, how long gRPC may take to deliver the answers of the calls being "
          "cancelled and close connections");
ABSL_FLAG(int64_t, chunk_bytes, 1 << 20, "largest GetArtifact chunk");
ABSL_FLAG(bool, allow_prelude, true,
          "accept programs carrying inline device source (T.Kernel prelude=); even when "
          "accepted, a prelude may not use #include and the like");
ABSL_FLAG(std::string, compile_user, "nobody",
          "when tilecd runs as root, compile children run as this user (empty: as root)");
ABSL_FLAG(bool, compile_sandbox, true,
          "run compile children without network and with Landlock file-system limits where "
          "the kernel allows");
ABSL_FLAG(double, worker_heartbeat_s, 1, "how often GPU workers must send a heartbeat");
ABSL_FLAG(double, worker_timeout_s, 5,
          "a GPU worker silent this long is dropped and its jobs go to another");
ABSL_FLAG(int, autotunes, 4, "autotunes running at once (each a thread waiting on workers)");
ABSL_FLAG(std::string, profiles, "",
          "more hardware profiles (*.textproto) for Recommend and for binding unbound tile "
          "parameters on Compile; one with a built-in id replaces it");
ABSL_FLAG(int64_t, memo_entries, 65536,
          "Compile responses remembered for repeated requests (answered without the frontend "
          "while their artifacts stay cached); 0: none");
ABSL_FLAG(int, http_port, -1,
          "the hit path's HTTP/1.1 port (server/hit_path.h: cache hits by key, read-only, "
          "tokens as gRPC's, no TLS); 0 picks a free one, -1 disables");
ABSL_FLAG(std::string, http_host, "", "address the hit path listens on; empty: --host");
ABSL_FLAG(std::string, http_port_file, "", "write the hit path's port here once listening");
ABSL_FLAG(int, http_threads, 1, "the hit path's event loops");
ABSL_FLAG(int, http_max_connections, 4096, "hit path connections open at once; more are closed");
ABSL_FLAG(double, http_idle_s, 60,
          "a hit path connection idle, or slow to send its request or read a reply, this long "
          "is closed");
ABSL_FLAG(int64_t, http_blob_cache_mb, 256, "artifacts the hit path keeps in memory");
ABSL_FLAG(std::string, redis, "",
          "HOST:PORT of the Redis the fleet shares artifacts and tuning records through; "
          "empty: this server's disk only");
ABSL_FLAG(std::string, redis_credentials_file, "",
          "file holding the Redis password, or `user password` for an ACL user");
ABSL_FLAG(bool, redis_tls, false,
          "talk TLS to Redis's tls-port (implied by any --redis_tls_* file flag); roots: "
          "--redis_tls_ca, else the system's");
ABSL_FLAG(std::string, redis_tls_ca, "", "PEM roots that Redis's certificate must chain to");
ABSL_FLAG(std::string, redis_tls_cert, "",
          "PEM client certificate for Redis (its tls-auth-clients); needs --redis_tls_key");
ABSL_FLAG(std::string, redis_tls_key, "", "PEM private key of --redis_tls_cert");
ABSL_FLAG(std::string, redis_tls_server_name, "",
          "the name Redis's certificate must carry; empty: the host of --redis");
ABSL_FLAG(double, redis_lock_ttl_s, 10,
          "time to live of a fleet-wide compile lock (refreshed while the compile runs; a dead "
          "server's lock expires after this)");
ABSL_FLAG(int, redis_timeout_ms, 2000, "Redis connect and command timeout");
ABSL_FLAG(double, redis_retry_s, 1,
          "after a Redis failure, serve degraded (disk and local compiles) this long before "
          "trying Redis again");
ABSL_FLAG(std::string, redis_prefix, "tilec:", "prefix of every Redis key tilecd writes");
ABSL_FLAG(std::string, signing_key, "",
          "Ed25519 private key (PEM) that signs every artifact this server stores in the shared "
          "tier and every Compile result; its public key verifies what is read from the tier");
ABSL_FLAG(std::vector<std::string>, verify_keys, {},
          "more Ed25519 keys (PEM, public or private; comma-separated files) whose signatures "
          "the shared tier accepts (key rotation); any --signing_key or --verify_keys makes the "
          "tier refuse unsigned entries");
ABSL_FLAG(bool, allow_unsigned_shared_tier, false,
          "with --redis and neither --signing_key nor --verify_keys, accept entries of the shared "
          "tier that no key signed (anyone who can write to that Redis can then hand this "
          "server's clients an artifact); without this flag such a server refuses to start");

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }
std::atomic<bool> g_reload{false};  // SIGHUP: read the token file again
void OnHangup(int) { g_reload.store(true); }

std::string ReadFileOrDie(const std::string& flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "tilecd: %s: cannot read '%s': %s\n", flag.c_str(), path.c_str(),
                 std::strerror(errno));
    std::exit(2);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WritePortFile(const std::string& path, int port) {
  if (path.empty()) return;
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  // Debian builds Abseil with assertions on, so every absl::Mutex feeds a
  // global deadlock-detection graph (a lock shared by all threads): about a
  // tenth of a cache hit's CPU. The tests keep it; the server does not.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (argc >= 2 && std::string(argv[1]) == tilec::server::kCompileChildCommand) {
    return tilec::server::RunCompileChild();
  }
  absl::SetProgramUsageMessage("the tilec compile server; see server/main.cc");
  // --help is a request, not an error: print the flags of this file and
  // succeed (Abseil's own handling exits 1).
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-help" || a == "-h") {
      absl::flags_internal::FlagsHelp(std::cout, "server/main.cc",
                                      absl::flags_internal::HelpFormat::kHumanReadable,
                                      absl::ProgramUsageMessage());
      return 0;
    }
  }
  absl::ParseCommandLine(argc, argv);
  using namespace tilec;  // NOLINT: main wires the parts together
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGHUP, OnHangup);
  // Every connection holds a descriptor: take the hard limit on open files
  // (the soft one is often 1024, a thousand clients).
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  ::getrlimit(RLIMIT_NOFILE, &files);

  std::string cache_dir = absl::GetFlag(FLAGS_cache_dir);
  if (cache_dir.empty()) {
    std::fprintf(stderr, "tilecd: --cache_dir is required\n");
    return 2;
  }
  auto store = cache::DiskStore::Open(cache_dir, absl::GetFlag(FLAGS_cache_bytes));
  if (!store.ok()) {
    std::fprintf(stderr, "tilecd: %s\n", store.status().ToString().c_str());
    return 2;
  }
  std::unique_ptr<server::TokenAuth> auth;
  if (!absl::GetFlag(FLAGS_tokens_file).empty()) {
    auto a = server::TokenAuth::FromFile(absl::GetFlag(FLAGS_tokens_file));
    if (!a.ok()) {
      std::fprintf(stderr, "tilecd: %s\n", std::string(a.status().message()).c_str());
      return 2;
    }
    auth = *std::move(a);
  }

  server::ServerMetrics metrics;
  server::SubprocessOptions sub;
  sub.child_argv = {"/proc/self/exe", server::kCompileChildCommand};
  sub.memory_limit_bytes = absl::GetFlag(FLAGS_compile_memory_mb) << 20;
#if TILECD_ADDRESS_SANITIZER
  // AddressSanitizer reserves terabytes of address space for its shadow at
  // start: under any RLIMIT_AS the compile child could not start.
  if (sub.memory_limit_bytes > 0) {
    std::fprintf(stderr,
                 "tilecd: built with AddressSanitizer, whose shadow memory does not fit any "
                 "address-space limit: --compile_memory_mb is not applied\n");
    sub.memory_limit_bytes = 0;
  }
#endif
  sub.time_limit = absl::Seconds(absl::GetFlag(FLAGS_compile_timeout_s));
  sub.max_parallel = absl::GetFlag(FLAGS_jobs);
  sub.sandbox.user = absl::GetFlag(FLAGS_compile_user);
  sub.sandbox.isolate_network = absl::GetFlag(FLAGS_compile_sandbox);
  sub.sandbox.restrict_files = absl::GetFlag(FLAGS_compile_sandbox);
  auto subprocess = std::make_unique<server::SubprocessCompiler>(sub);
  server::SubprocessCompiler* subprocess_ptr = subprocess.get();
  std::fprintf(stderr, "tilecd: compile children run with: %s\n",
               subprocess_ptr->DescribeProtections().c_str());
  auto measured = std::make_unique<server::MetricsCompiler>(std::move(subprocess), &metrics);
  server::MetricsCompiler* measured_ptr = measured.get();
  cache::ToolchainInfo tools = cache::CurrentToolchain();
  // The shared tier sits between the disk cache and the compiler: a disk
  // miss looks in Redis, then compiles under the fleet-wide lock.
  std::unique_ptr<cache::Compiler> below_disk = std::move(measured);
  // Signing: the key signs; it and --verify_keys verify what the tier holds.
  std::unique_ptr<cache::Signer> signer;
  std::unique_ptr<cache::Verifier> verifier;
  {
    std::vector<std::string> verify = absl::GetFlag(FLAGS_verify_keys);
    if (!absl::GetFlag(FLAGS_signing_key).empty()) {
      auto s = cache::Signer::FromFile(absl::GetFlag(FLAGS_signing_key));
      if (!s.ok()) {
        std::fprintf(stderr, "tilecd: --signing_key: %s\n",
                     std::string(s.status().message()).c_str());
        return 2;
      }
      signer = *std::move(s);
      verify.insert(verify.begin(), absl::GetFlag(FLAGS_signing_key));
    }
    if (!verify.empty()) {
      auto v = cache::Verifier::FromFiles(verify);
      if (!v.ok()) {
        std::fprintf(stderr, "tilecd: --verify_keys: %s\n",
                     std::string(v.status().message()).c_str());
        return 2;
      }
      verifier = *std::move(v);
    }
  }
  std::unique_ptr<server::SharedTier> shared;
  server::SharedTierCompiler* shared_ptr = nullptr;
  if (!absl::GetFlag(FLAGS_redis).empty() && verifier == nullptr &&
      !absl::GetFlag(FLAGS_allow_unsigned_shared_tier)) {
    std::fprintf(stderr,
                 "tilecd: --redis without --signing_key or --verify_keys would serve whatever "
                 "the shared tier holds, unsigned and possibly forged; give a key, or "
                 "--allow_unsigned_shared_tier to accept unsigned entries knowingly\n");
    return 2;
  }
  const char* shared_signing = verifier != nullptr ? "signed entries only" : "unsigned accepted";
  if (!absl::GetFlag(FLAGS_redis).empty()) {
    server::SharedTierOptions o;
    o.signer = signer.get();
    o.verifier = verifier.get();
    const std::string addr = absl::GetFlag(FLAGS_redis);
    const size_t colon = addr.rfind(':');
    if (colon == std::string::npos || colon == 0 ||
        !absl::SimpleAtoi(addr.substr(colon + 1), &o.port) || o.port <= 0 || o.port > 65535) {
      std::fprintf(stderr, "tilecd: --redis takes HOST:PORT, got '%s'\n", addr.c_str());
      return 2;
    }
    o.host = addr.substr(0, colon);
    o.password_file = absl::GetFlag(FLAGS_redis_credentials_file);
    o.tls_options.ca_file = absl::GetFlag(FLAGS_redis_tls_ca);
    o.tls_options.cert_file = absl::GetFlag(FLAGS_redis_tls_cert);
    o.tls_options.key_file = absl::GetFlag(FLAGS_redis_tls_key);
    o.tls_options.server_name = absl::GetFlag(FLAGS_redis_tls_server_name);
    o.tls = absl::GetFlag(FLAGS_redis_tls) || !o.tls_options.ca_file.empty() ||
            !o.tls_options.cert_file.empty() || !o.tls_options.key_file.empty() ||
            !o.tls_options.server_name.empty();
    o.prefix = absl::GetFlag(FLAGS_redis_prefix);
    o.lock_ttl = absl::Seconds(absl::GetFlag(FLAGS_redis_lock_ttl_s));
    o.connect_timeout = o.io_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_redis_timeout_ms));
    o.retry_after = absl::Seconds(absl::GetFlag(FLAGS_redis_retry_s));
    if (o.lock_ttl < absl::Milliseconds(100)) {
      std::fprintf(stderr, "tilecd: --redis_lock_ttl_s must be at least 0.1\n");
      return 2;
    }
    auto t = server::SharedTier::Create(o);
    if (!t.ok()) {
      std::fprintf(stderr, "tilecd: --redis: %s\n", std::string(t.status().message()).c_str());
      return 2;
    }
    shared = *std::move(t);
    auto c =
        std::make_unique<server::SharedTierCompiler>(std::move(below_disk), shared.get(), tools);
    shared_ptr = c.get();
    below_disk = std::move(c);
  }
  auto caching =
      std::make_unique<cache::CachingCompiler>(std::move(below_disk), store->get(), tools);
  cache::CachingCompiler* caching_ptr = caching.get();
  cache::SingleFlightCompiler single_flight(
      std::move(caching),
      [tools](const cache::CompileJob& job) { return cache::MakeCacheKey(job, tools).Digest(); });
  auto profiles = recommend::LoadProfiles(absl::GetFlag(FLAGS_profiles));
  if (!profiles.ok()) {
    std::fprintf(stderr, "tilecd: --profiles: %s\n",
                 std::string(profiles.status().message()).c_str());
    return 2;
  }
  server::CoreLimits limits;
  limits.max_source_bytes = absl::GetFlag(FLAGS_max_source_bytes);
  limits.max_program_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  limits.search_timeout = absl::Seconds(absl::GetFlag(FLAGS_search_timeout_s));
  limits.staging_timeout = absl::Seconds(absl::GetFlag(FLAGS_staging_timeout_s));
  limits.allow_prelude = absl::GetFlag(FLAGS_allow_prelude);
  server::CompileCore core(&single_flight, limits, *profiles);
  server::ResponseMemo memo(
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_memo_entries))),
      [&store](const std::string& key) { return (*store)->Touch(key); },
      [&store](const std::string& digest) { return (*store)->BlobStamp(digest); });
  server::RecommendCore recommend_core(limits, *profiles);
  core.SetLookup(
      [&](const cache::CompileJob& job) -> absl::StatusOr<std::optional<cache::Artifact>> {
        absl::StatusOr<std::optional<cache::Artifact>> hit = caching_ptr->Lookup(job);
        if (!hit.ok() || hit->has_value() || shared_ptr == nullptr) return hit;
        std::optional<cache::Artifact> s = shared_ptr->Lookup(job);
        if (s) {  // read-through: the next hit is on this server's disk
          cache::CacheKey key = cache::MakeCacheKey(job, tools);
          (void)(*store)->Put(s->cache_key, key.Encode(), s->bytes, s->metadata_json);
        }
        return s;
      });

  // GPU workers, autotuning and the tuning database (<cache_dir>/tuning).
  server::PoolOptions pool_options;
  pool_options.heartbeat_interval = absl::Seconds(absl::GetFlag(FLAGS_worker_heartbeat_s));
  pool_options.heartbeat_timeout = absl::Seconds(absl::GetFlag(FLAGS_worker_timeout_s));
  server::WorkerPool pool(pool_options);
  auto tuning_db = server::TuningDb::Open(cache_dir + "/tuning");
  if (!tuning_db.ok()) {
    std::fprintf(stderr, "tilecd: %s\n", std::string(tuning_db.status().message()).c_str());
    return 1;
  }
  (*tuning_db)->SetShared(shared.get());
  server::AutotuneDeps autotune_deps;
  autotune_deps.compiler = &single_flight;
  autotune_deps.pool = &pool;
  autotune_deps.db = tuning_db->get();
  autotune_deps.profiles = *profiles;
  autotune_deps.limits = limits;
  autotune_deps.compiler_version = tools.compiler_version;
  autotune_deps.nvrtc_version = tools.nvrtc_version;
  autotune_deps.signer = signer.get();
  server::AutotuneCore autotune_core(autotune_deps);
  core.SetTuned(
      [&autotune_core](const std::string& program_hash,
                       const std::string& profile_id) -> std::optional<server::CompileCore::Tuned> {
        std::optional<tilec::v1::TuningRecord> r = autotune_core.Lookup(program_hash, profile_id);
        if (!r || r->best_size() == 0) return std::nullopt;
        server::CompileCore::Tuned t;
        for (const tilec::v1::NamedValue& v : r->best()) t.config[v.name()] = v.value();
        if (r->candidates_size() > 0) t.measured_ms = r->candidates(0).median_ms();
        return t;
      });
  // Twice the compile slots: a thread may wait on an identical compile in
  // flight (single-flight) while another compile runs.
  server::Scheduler compile_scheduler(2 * std::max(1, absl::GetFlag(FLAGS_jobs)),
                                      absl::GetFlag(FLAGS_compile_queue), "compile queue");
  server::Scheduler search_scheduler(std::max(1, absl::GetFlag(FLAGS_search_threads)),
                                     absl::GetFlag(FLAGS_search_queue), "search queue");
  // Declared last, destroyed first: its tasks may still hand misses to the
  // compile queue while it drains.
  server::Scheduler scheduler(absl::GetFlag(FLAGS_threads), absl::GetFlag(FLAGS_queue));

  std::atomic<int64_t> hit_path_requests{0}, hit_path_from_memory{0};
  auto snapshot = [&]() {
    cache::StoreStats st = (*store)->Stats();
    server::Snapshot s;
    s.cache_hits = st.hits;
    s.cache_misses = st.misses;
    s.cache_evictions = st.evictions;
    s.cache_corrupt = st.corrupt;
    s.cache_bytes = st.bytes;
    s.cache_entries = st.entries;
    s.cache_store_errors = caching_ptr->store_errors();
    s.cache_orphans_swept = st.orphans_swept;
    s.queue_depth = scheduler.queue_depth() + compile_scheduler.queue_depth() +
                    search_scheduler.queue_depth() + subprocess_ptr->waiting();
    s.single_flight_joined = single_flight.joined();
    s.memo_hits = memo.hits();
    s.hit_path_requests = hit_path_requests.load();
    s.hit_path_from_memory = hit_path_from_memory.load();
    const server::PoolCounters c = pool.counters();
    s.workers = c.workers;
    s.workers_busy = c.workers_busy;
    s.workers_lost = c.workers_lost;
    s.jobs_submitted = c.jobs_submitted;
    s.jobs_completed = c.jobs_completed;
    s.jobs_requeued = c.jobs_requeued;
    s.jobs_poisoned = c.jobs_poisoned;
    s.jobs_queued = c.jobs_queued;
    s.leases_expired = c.leases_expired;
    if (shared) s.shared = shared->counters();
    return s;
  };
  metrics.SetSnapshot(snapshot);

  server::ServiceDeps deps;
  deps.core = &core;
  deps.recommend = &recommend_core;
  deps.store = store->get();
  deps.shared = shared.get();
  deps.signer = signer.get();
  std::atomic<int64_t> hash_lookups{0}, hash_hits{0};
  deps.hash_lookups = &hash_lookups;
  deps.hash_hits = &hash_hits;
  deps.memo = absl::GetFlag(FLAGS_memo_entries) > 0 ? &memo : nullptr;
  deps.scheduler = &scheduler;
  deps.compile_scheduler = &compile_scheduler;
  deps.search_scheduler = &search_scheduler;
  deps.metrics = &metrics;
  deps.auth = auth.get();
  deps.max_chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
  deps.stopping = &g_stop;  // SIGTERM cancels every running search and compile
  deps.pool = &pool;
  deps.autotune = &autotune_core;
  deps.profiles = *profiles;
  deps.max_autotunes = absl::GetFlag(FLAGS_autotunes);
  deps.stats = [&]() {
    server::Snapshot s = snapshot();
    tilec::v1::StatsResponse r;
    r.set_compiles(measured_ptr->compiles());
    r.set_compile_failures(measured_ptr->failures());
    r.set_cache_hits(s.cache_hits);
    r.set_cache_misses(s.cache_misses);
    r.set_cache_evictions(s.cache_evictions);
    r.set_cache_corrupt(s.cache_corrupt);
    r.set_cache_bytes(s.cache_bytes);
    r.set_cache_entries(s.cache_entries);
    r.set_single_flight_joined(s.single_flight_joined);
    r.set_compiles_in_flight(measured_ptr->in_flight());
    r.set_queue_depth(s.queue_depth);
    r.set_compiler_version(tools.compiler_version);
    r.set_compile_sandbox(subprocess_ptr->DescribeProtections());
    for (tilec::v1::WorkerStatus& w : pool.Workers()) *r.add_workers() = std::move(w);
    const server::PoolCounters c = pool.counters();
    r.set_jobs_submitted(c.jobs_submitted);
    r.set_jobs_completed(c.jobs_completed);
    r.set_jobs_requeued(c.jobs_requeued);
    r.set_jobs_poisoned(c.jobs_poisoned);
    r.set_leases_expired(c.leases_expired);
    r.set_tuning_records((*tuning_db)->Count());
    r.set_hash_lookups(hash_lookups.load());
    r.set_hash_hits(hash_hits.load());
    if (s.shared) {
      r.set_shared_tier(s.shared->up ? "up" : "degraded");
      r.set_shared_tier_signing(shared_signing);
      r.set_shared_tier_hits(s.shared->hits);
      r.set_shared_tier_misses(s.shared->misses);
      r.set_shared_tier_corrupt(s.shared->corrupt);
      r.set_shared_tier_stores(s.shared->stores);
      r.set_shared_tier_locks_taken(s.shared->locks_taken);
      r.set_shared_tier_rejected(s.shared->rejected);
    }
    return r;
  };
  server::TilecService service(deps);

  std::unique_ptr<prometheus::Exposer> exposer;
  if (absl::GetFlag(FLAGS_metrics_port) >= 0) {
    // civetweb's defaults (2 threads, 30 s request timeout) let two idle
    // connections block scraping; more threads and a short timeout do not.
    exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports",
        absl::StrCat(absl::GetFlag(FLAGS_metrics_host), ":", absl::GetFlag(FLAGS_metrics_port)),
        "num_threads", absl::StrCat(absl::GetFlag(FLAGS_metrics_threads)), "request_timeout_ms",
        absl::StrCat(absl::GetFlag(FLAGS_metrics_timeout_ms)), "enable_keep_alive", "no"});
    exposer->RegisterCollectable(metrics.registry());
    exposer->RegisterCollectable(metrics.snapshot_collector());
  }

  grpc::EnableDefaultHealthCheckService(true);
  if (absl::GetFlag(FLAGS_reflection)) {
    // gRPC's reflection library registers itself with every ServerBuilder
    // when it is loaded (a static initializer), so tilecd does not link it
    // and loads it only when asked.
    if (::dlopen(TILECD_GRPC_REFLECTION_LIBRARY, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::fprintf(stderr, "tilecd: --reflection: cannot load %s: %s\n",
                   TILECD_GRPC_REFLECTION_LIBRARY, ::dlerror());
      return 2;
    }
  }
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (absl::GetFlag(FLAGS_tls_cert).empty() != absl::GetFlag(FLAGS_tls_key).empty()) {
    std::fprintf(stderr, "tilecd: TLS needs both --tls_cert and --tls_key; %s is missing\n",
                 absl::GetFlag(FLAGS_tls_cert).empty() ? "--tls_cert" : "--tls_key");
    return 2;
  }
  if (!absl::GetFlag(FLAGS_tls_cert).empty() && absl::GetFlag(FLAGS_http_port) >= 0) {
    std::fprintf(stderr,
                 "tilecd: --http_port serves plain HTTP and the server has TLS (--tls_cert): "
                 "tokens and artifacts would cross the network unencrypted; serve the hit "
                 "path behind a TLS proxy of its own, or leave it off\n");
    return 2;
  }
  if (!absl::GetFlag(FLAGS_tls_cert).empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({ReadFileOrDie("--tls_key", absl::GetFlag(FLAGS_tls_key)),
                                      ReadFileOrDie("--tls_cert", absl::GetFlag(FLAGS_tls_cert))});
    creds = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_port)),
                           creds, &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(absl::GetFlag(FLAGS_max_message_bytes)));
  // HTTP/2 abuse (CVE-2023-44487 rapid reset and floods of streams): this
  // gRPC (1.51) has no rapid-reset fix of its own; these bound what one
  // connection and all of them together may hold. docs/security.md has the
  // measured effect and the residual risk.
  if (absl::GetFlag(FLAGS_max_streams) > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, absl::GetFlag(FLAGS_max_streams));
  }
  if (absl::GetFlag(FLAGS_max_connection_age_s) > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               static_cast<int>(absl::GetFlag(FLAGS_max_connection_age_s) * 1000));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, 30000);
  }
  // Connections that never finish their handshake, or stay open with no
  // call, would keep their descriptors until the maximum age.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(absl::GetFlag(FLAGS_handshake_timeout_s) * 1000));
  if (absl::GetFlag(FLAGS_max_connection_idle_s) > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                               static_cast<int>(absl::GetFlag(FLAGS_max_connection_idle_s) * 1000));
  }
  if (absl::GetFlag(FLAGS_max_memory_mb) > 0) {
    grpc::ResourceQuota quota("tilecd");
    quota.Resize(static_cast<size_t>(absl::GetFlag(FLAGS_max_memory_mb)) << 20);
    builder.SetResourceQuota(quota);
  }
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "tilecd: cannot listen on %s:%d\n", absl::GetFlag(FLAGS_host).c_str(),
                 absl::GetFlag(FLAGS_port));
    return 1;
  }
  // The hit path: declared after everything it uses, so it stops first.
  std::unique_ptr<server::HitPath> hit_path;
  std::unique_ptr<server::HitServer> hit_server;
  if (absl::GetFlag(FLAGS_http_port) >= 0) {
    server::HitPathOptions h;
    h.blob_cache_bytes =
        static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_http_blob_cache_mb))) << 20;
    h.requests = &hit_path_requests;
    h.from_memory = &hit_path_from_memory;
    hit_path = std::make_unique<server::HitPath>(deps, h);
    server::HitServerOptions o;
    o.host = absl::GetFlag(FLAGS_http_host).empty() ? absl::GetFlag(FLAGS_host)
                                                    : absl::GetFlag(FLAGS_http_host);
    o.port = absl::GetFlag(FLAGS_http_port);
    o.threads = absl::GetFlag(FLAGS_http_threads);
    o.max_connections = absl::GetFlag(FLAGS_http_max_connections);
    o.idle_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_idle_s));
    absl::StatusOr<std::unique_ptr<server::HitServer>> started = server::HitServer::Start(
        o, [p = hit_path.get()](const server::HitRequest& r, server::HitResponder later) {
          return p->Handle(r, std::move(later));
        });
    if (!started.ok()) {
      std::fprintf(stderr, "tilecd: --http_port: %s\n",
                   std::string(started.status().message()).c_str());
      return 1;
    }
    hit_server = *std::move(started);
    WritePortFile(absl::GetFlag(FLAGS_http_port_file), hit_server->port());
  }
  int metrics_port = exposer ? exposer->GetListeningPorts().at(0) : -1;
  WritePortFile(absl::GetFlag(FLAGS_metrics_port_file), metrics_port);
  WritePortFile(absl::GetFlag(FLAGS_port_file), port);
  std::fprintf(stderr,
               "tilecd: listening on %s:%d (metrics on %d, hit path on %d), cache %s%s%s%s%s, "
               "compiler %s, up to %llu open files\n",
               absl::GetFlag(FLAGS_host).c_str(), port, metrics_port,
               hit_server ? hit_server->port() : -1, cache_dir.c_str(), shared ? " + shared " : "",
               shared ? shared->Describe().c_str() : "", shared ? ", " : "",
               shared ? shared_signing : "", tools.compiler_version.c_str(),
               static_cast<unsigned long long>(files.rlim_cur));
  // Health: "" (the server) is SERVING while it runs; with --redis,
  // "tilec.SharedTier" is SERVING while Redis answers and NOT_SERVING while
  // the server runs degraded (disk and local compiles).
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  int shared_state = -1;
  absl::Time trimmed = absl::Now();
  while (!g_stop.load()) {
    // glibc keeps what a burst of connections freed (a load peak, a flood);
    // give it back to the system every 10 s.
    if (absl::Now() - trimmed > absl::Seconds(10)) {
      ::malloc_trim(0);
      trimmed = absl::Now();
    }
    if (g_reload.exchange(false) && auth) {
      absl::Status reloaded = auth->Reload();
      if (reloaded.ok()) {
        std::fprintf(stderr, "tilecd: SIGHUP: %zu tokens from %s\n", auth->size(),
                     absl::GetFlag(FLAGS_tokens_file).c_str());
      } else {
        std::fprintf(stderr, "tilecd: SIGHUP: the old tokens stay: %s\n",
                     std::string(reloaded.message()).c_str());
      }
    }
    if (shared) {
      shared->Probe();
      const int up = shared->counters().up ? 1 : 0;
      if (health != nullptr && up != shared_state) {
        health->SetServingStatus("tilec.SharedTier", up == 1);
        shared_state = up;
      }
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  // g_stop is every call's cancellation too: running searches and compiles
  // are stopping already.
  const absl::Time stopping = absl::Now();
  std::fprintf(stderr, "tilecd: shutting down\n");
  // gRPC's graceful shutdown waits for clients to close their connections
  // until this deadline, then cancels what is left.
  server->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(absl::Seconds(
                                                          absl::GetFlag(FLAGS_shutdown_grace_s))));
  std::fprintf(stderr, "tilecd: gRPC stopped after %.3f s\n",
               absl::ToDoubleSeconds(absl::Now() - stopping));
  return 0;
}
