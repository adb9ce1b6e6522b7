// tilecd: the tilec compile server.
//
//   tilecd --cache_dir DIR [--host 127.0.0.1] [--port 0] [--port_file F]
//          [--metrics_port 0|-1] [--metrics_port_file F] [--tokens_file F]
//          [--tls_cert F --tls_key F] [--jobs N] [--threads N] [--queue N]
//          [--compile_timeout_s S] [--compile_memory_mb M] [--cache_bytes B]
//          [--profiles DIR] [--allow_prelude] [--compile_user nobody]
//          [--compile_sandbox]
//
// Port 0 picks a free port; the port chosen is written to --port_file (and
// the metrics port to --metrics_port_file) once the server listens. The
// hidden first argument `compile-worker` runs the compile worker instead
// (worker.h): tilecd execs itself for every compile.
#include <signal.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/cache/cache_key.h"
#include "compiler/cache/caching_compiler.h"
#include "compiler/cache/disk_store.h"
#include "compiler/cache/single_flight.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "prometheus/exposer.h"
#include "server/auth.h"
#include "server/compile_core.h"
#include "server/metrics.h"
#include "server/metrics_compiler.h"
#include "server/recommend_core.h"
#include "server/scheduler.h"
#include "server/service.h"
#include "server/subprocess_compiler.h"
#include "server/worker.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "address to listen on");
ABSL_FLAG(int, port, 0, "gRPC port; 0 picks a free one");
ABSL_FLAG(std::string, port_file, "", "write the gRPC port here once listening");
ABSL_FLAG(int, metrics_port, 0, "Prometheus metrics HTTP port; 0 picks a free one, -1 disables");
ABSL_FLAG(std::string, metrics_port_file, "", "write the metrics port here once listening");
ABSL_FLAG(std::string, cache_dir, "", "artifact cache directory (required)");
ABSL_FLAG(int64_t, cache_bytes, int64_t{10} << 30, "cache byte budget (LRU eviction)");
ABSL_FLAG(std::string, tokens_file, "", "bearer tokens, `<token> [compile|read]` per line");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate chain (enables TLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM server private key");
ABSL_FLAG(int, jobs, 2, "compiles (child processes) at once");
ABSL_FLAG(int, threads, 64, "request threads (waiting on compiles, the cache, single-flight)");
ABSL_FLAG(int, queue, 1024, "requests waiting for a thread before RESOURCE_EXHAUSTED");
ABSL_FLAG(double, compile_timeout_s, 300, "wall-time limit of one compile");
ABSL_FLAG(int64_t, compile_memory_mb, 4096, "address-space limit of one compile (0: none)");
ABSL_FLAG(int64_t, max_source_bytes, 1 << 20, "largest TileLang source accepted");
ABSL_FLAG(int64_t, max_message_bytes, 8 << 20, "largest request message accepted");
ABSL_FLAG(int64_t, chunk_bytes, 1 << 20, "largest GetArtifact chunk");
ABSL_FLAG(bool, allow_prelude, true,
          "accept programs carrying inline device source (T.Kernel prelude=); even when "
          "accepted, a prelude may not use #include and the like");
ABSL_FLAG(std::string, compile_user, "nobody",
          "when tilecd runs as root, compile children run as this user (empty: as root)");
ABSL_FLAG(bool, compile_sandbox, true,
          "run compile children without network and with Landlock file-system limits where "
          "the kernel allows");
ABSL_FLAG(std::string, profiles, "",
          "more hardware profiles (*.textproto) for Recommend and for binding unbound tile "
          "parameters on Compile; one with a built-in id replaces it");

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "tilecd: cannot read %s\n", path.c_str());
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
  if (argc >= 2 && std::string(argv[1]) == tilec::server::kCompileWorkerCommand) {
    return tilec::server::RunCompileWorker();
  }
  absl::SetProgramUsageMessage("the tilec compile server; see server/main.cc");
  absl::ParseCommandLine(argc, argv);
  using namespace tilec;  // NOLINT: main wires the parts together
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);

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
  sub.worker_argv = {"/proc/self/exe", server::kCompileWorkerCommand};
  sub.memory_limit_bytes = absl::GetFlag(FLAGS_compile_memory_mb) << 20;
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
  cache::ToolchainInfo tools{cache::CompilerVersion(), cuda::NvrtcVersion(),
                             cache::DeviceHeadersHash()};
  auto caching =
      std::make_unique<cache::CachingCompiler>(std::move(measured), store->get(), tools);
  cache::SingleFlightCompiler single_flight(
      std::move(caching), [tools](const cache::CompileJob& job) {
        return cache::MakeCacheKey(job, tools).Digest();
      });
  auto profiles = recommend::LoadProfiles(absl::GetFlag(FLAGS_profiles));
  if (!profiles.ok()) {
    std::fprintf(stderr, "tilecd: --profiles: %s\n",
                 std::string(profiles.status().message()).c_str());
    return 2;
  }
  server::CoreLimits limits{absl::GetFlag(FLAGS_max_source_bytes),
                            absl::GetFlag(FLAGS_max_message_bytes)};
  limits.allow_prelude = absl::GetFlag(FLAGS_allow_prelude);
  server::CompileCore core(&single_flight, limits, *profiles);
  server::RecommendCore recommend_core(limits, *profiles);
  server::Scheduler scheduler(absl::GetFlag(FLAGS_threads), absl::GetFlag(FLAGS_queue));

  auto snapshot = [&]() {
    cache::StoreStats st = (*store)->Stats();
    server::Snapshot s;
    s.cache_hits = st.hits;
    s.cache_misses = st.misses;
    s.cache_evictions = st.evictions;
    s.cache_corrupt = st.corrupt;
    s.cache_bytes = st.bytes;
    s.cache_entries = st.entries;
    s.queue_depth = scheduler.queue_depth() + subprocess_ptr->waiting();
    s.single_flight_joined = single_flight.joined();
    return s;
  };
  metrics.SetSnapshot(snapshot);

  server::ServiceDeps deps;
  deps.core = &core;
  deps.recommend = &recommend_core;
  deps.store = store->get();
  deps.scheduler = &scheduler;
  deps.metrics = &metrics;
  deps.auth = auth.get();
  deps.max_chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
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
    return r;
  };
  server::TilecService service(deps);

  std::unique_ptr<prometheus::Exposer> exposer;
  if (absl::GetFlag(FLAGS_metrics_port) >= 0) {
    exposer = std::make_unique<prometheus::Exposer>(
        absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_metrics_port)));
    exposer->RegisterCollectable(metrics.registry());
    exposer->RegisterCollectable(metrics.snapshot_collector());
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!absl::GetFlag(FLAGS_tls_cert).empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({ReadFileOrDie(absl::GetFlag(FLAGS_tls_key)),
                                      ReadFileOrDie(absl::GetFlag(FLAGS_tls_cert))});
    creds = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(
      absl::StrCat(absl::GetFlag(FLAGS_host), ":", absl::GetFlag(FLAGS_port)), creds, &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(absl::GetFlag(FLAGS_max_message_bytes)));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "tilecd: cannot listen on %s:%d\n", absl::GetFlag(FLAGS_host).c_str(),
                 absl::GetFlag(FLAGS_port));
    return 1;
  }
  int metrics_port = exposer ? exposer->GetListeningPorts().at(0) : -1;
  WritePortFile(absl::GetFlag(FLAGS_metrics_port_file), metrics_port);
  WritePortFile(absl::GetFlag(FLAGS_port_file), port);
  std::fprintf(stderr, "tilecd: listening on %s:%d (metrics on %d), cache %s, compiler %s\n",
               absl::GetFlag(FLAGS_host).c_str(), port, metrics_port, cache_dir.c_str(),
               tools.compiler_version.c_str());
  while (!g_stop.load()) absl::SleepFor(absl::Milliseconds(100));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return 0;
}
