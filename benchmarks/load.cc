// Load and slow clients against one real tilecd: many clients at once, each
// with a connection of its own, sending a mix of cache hits and misses (cold
// compiles) for a fixed time, beside idle connections (TCP open, nothing
// sent), half handshakes (part of the HTTP/2 preface) and artifact streams
// that are started and never read. Clients wait for their connection to be
// ready (gRPC's wait_for_ready). A probe client asks for a hit every
// 250 ms throughout: its slowest answer says whether anyone was starved.
//
//   tilec_load [--tilecd PATH] [--clients N] [--seconds S] [--miss_percent P]
//              [--hit_programs K] [--idle I] [--stalled S] [--settle_s T]
//              [--expect_clean] [-- tilecd flags ...]
//
// Reports each status's count (RESOURCE_EXHAUSTED with and without the
// retry hint), hit latency, the probe's slowest answer, and tilecd's resident
// memory, open file descriptors and threads before the load, at their peak
// and `--settle_s` after it. With --expect_clean it exits 1 unless every
// answer is OK or RESOURCE_EXHAUSTED with a retry hint, the probe always
// answered within 2 s, and the descriptors went back to within 16 of
// before. benchmarks/load.sh runs it; ctest runs a short version.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "benchmarks/bench_process.h"
#include "grpcpp/grpcpp.h"
#include "proto/tilec/v1/service.grpc.pb.h"
#include "tests/testing/loopback.h"

namespace {

using Clock = std::chrono::steady_clock;
using tilec::bench::GemmRequest;
using tilec::bench::NewStub;

struct Usage {
  double rss_mb = 0;
  int fds = 0, threads = 0;
};

Usage UsageOf(pid_t pid) {
  Usage u;
  std::string status = tilec::bench::ReadText("/proc/" + std::to_string(pid) + "/status");
  for (const char* key : {"VmRSS:", "Threads:"}) {
    size_t at = status.find(key);
    if (at == std::string::npos) continue;
    double v = std::atof(status.c_str() + at + std::string(key).size());
    if (std::string(key) == "VmRSS:") u.rss_mb = v / 1024;
    else u.threads = static_cast<int>(v);
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++u.fds;
  }
  return u;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string tilecd = TILECD_BINARY;
  std::string text = tilec::bench::ReadText(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py");
  int clients = 1000, miss_percent = 5, hit_programs = 16, idle = 200, stalled = 50;
  double seconds = 60, settle_s = 5;
  bool expect_clean = false;
  std::vector<std::string> server_flags;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tilec_load: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--") {
      server_flags.assign(argv + i + 1, argv + argc);
      break;
    } else if (a == "--tilecd") {
      tilecd = value();
    } else if (a == "--clients") {
      clients = std::atoi(value().c_str());
    } else if (a == "--seconds") {
      seconds = std::atof(value().c_str());
    } else if (a == "--miss_percent") {
      miss_percent = std::atoi(value().c_str());
    } else if (a == "--hit_programs") {
      hit_programs = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--idle") {
      idle = std::atoi(value().c_str());
    } else if (a == "--stalled") {
      stalled = std::atoi(value().c_str());
    } else if (a == "--settle_s") {
      settle_s = std::atof(value().c_str());
    } else if (a == "--expect_clean") {
      expect_clean = true;
    } else {
      std::fprintf(stderr, "tilec_load: unknown flag %s (see benchmarks/load.cc)\n", a.c_str());
      return 2;
    }
  }
  ::signal(SIGPIPE, SIG_IGN);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string work = tilec::bench::MakeTempDir("tilec_load");
  const int port = tilec::bench::FreePort();
  std::vector<std::string> args = {tilecd, "--cache_dir=" + work + "/cache", "--host=127.0.0.1",
                                   "--port=" + std::to_string(port), "--metrics_port=-1"};
  args.insert(args.end(), server_flags.begin(), server_flags.end());
  const pid_t server = tilec::bench::Spawn(args, /*quiet=*/true);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  auto probe_stub = NewStub(address);
  bool up = false;
  for (int i = 0; i < 400 && !up; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    tilec::v1::StatsResponse st;
    up = probe_stub->Stats(&ctx, {}, &st).ok();
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!up) {
    std::fprintf(stderr, "tilec_load: tilecd did not start (%s)\n", tilecd.c_str());
    tilec::bench::Stop(server);
    return 1;
  }
  // The hit programs, compiled once before the load; their digests feed the
  // stalled streams.
  std::vector<std::string> digests;
  for (int k = 0; k < hit_programs; ++k) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
    tilec::v1::CompileResponse resp;
    grpc::Status s = probe_stub->Compile(&ctx, GemmRequest(text, 256 + k, "sm_80"), &resp);
    if (!s.ok()) {
      std::fprintf(stderr, "tilec_load: warming compile failed: %s\n", s.error_message().c_str());
      tilec::bench::Stop(server);
      return 1;
    }
    digests.push_back(resp.results(0).digest());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const Usage before = UsageOf(server);

  std::atomic<bool> stop{false};
  std::mutex mu;
  std::map<std::string, int64_t> counts;  // status (and retry hint) -> answers
  std::vector<double> hit_ms;
  std::atomic<int> next_miss{100000};
  Usage peak = before;
  std::thread sampler([&] {
    while (!stop.load()) {
      Usage u = UsageOf(server);
      std::lock_guard<std::mutex> lock(mu);
      peak.rss_mb = std::max(peak.rss_mb, u.rss_mb);
      peak.fds = std::max(peak.fds, u.fds);
      peak.threads = std::max(peak.threads, u.threads);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  // Idle connections and half handshakes: sockets that never finish.
  std::vector<int> idle_fds;
  for (int i = 0; i < idle; ++i) {
    int fd = tilec::testing::ConnectLoopback(port);
    if (fd < 0) continue;
    if (i % 2 == 1) (void)::write(fd, "PRI * HTTP/2.0\r\n", 16);  // the preface, cut short
    idle_fds.push_back(fd);
  }
  // Streams started and never read.
  struct Stalled {
    std::unique_ptr<tilec::v1::Tilec::Stub> stub;
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::ClientReader<tilec::v1::ArtifactChunk>> reader;
  };
  std::vector<Stalled> stalls;
  for (int i = 0; i < stalled; ++i) {
    Stalled st;
    st.stub = NewStub(address);
    st.ctx = std::make_unique<grpc::ClientContext>();
    tilec::v1::GetArtifactRequest req;
    req.set_digest(digests[static_cast<size_t>(i) % digests.size()]);
    req.set_chunk_bytes(64);
    st.reader = st.stub->GetArtifact(st.ctx.get(), req);
    stalls.push_back(std::move(st));
  }
  double probe_max_ms = 0;
  int64_t probes = 0, probe_failures = 0;
  std::thread probe([&] {
    while (!stop.load()) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      tilec::v1::CompileResponse resp;
      Clock::time_point t0 = Clock::now();
      grpc::Status s = probe_stub->Compile(&ctx, GemmRequest(text, 256, "sm_80"), &resp);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      probe_max_ms = std::max(probe_max_ms, ms);
      ++probes;
      if (!s.ok() || !resp.results(0).cache_hit()) ++probe_failures;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  const Clock::time_point start = Clock::now();
  const Clock::time_point end = start + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = NewStub(address);
      std::mt19937 rng(static_cast<uint32_t>(c));
      std::map<std::string, int64_t> mine;
      std::vector<double> my_hits;
      while (Clock::now() < end) {
        const bool miss = static_cast<int>(rng() % 100) < miss_percent;
        const int m = miss ? next_miss.fetch_add(1) : 256 + static_cast<int>(rng() % digests.size());
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
        // As long-lived clients do: a connection being (re)established is
        // waited for, not failed at once; one that never comes up ends as
        // DEADLINE_EXCEEDED, an error.
        ctx.set_wait_for_ready(true);
        tilec::v1::CompileResponse resp;
        Clock::time_point t0 = Clock::now();
        grpc::Status s = stub->Compile(&ctx, GemmRequest(text, m, "sm_80"), &resp);
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        std::string key = (miss ? "miss " : "hit ") +
                          absl::StatusCodeToString(static_cast<absl::StatusCode>(s.error_code()));
        if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          const auto& trailers = ctx.GetServerTrailingMetadata();
          bool hint = trailers.find("grpc-retry-pushback-ms") != trailers.end();
          key += hint ? " (with retry hint)" : " (NO retry hint)";
          // A client honouring back-pressure waits before its next call.
          std::this_thread::sleep_for(std::chrono::milliseconds(hint ? 2000 : 100));
        } else if (!s.ok()) {
          key += ": " + s.error_message().substr(0, 160);
        }
        ++mine[key];
        if (!miss && s.ok()) my_hits.push_back(ms);
      }
      std::lock_guard<std::mutex> lock(mu);
      for (const auto& [k, v] : mine) counts[k] += v;
      hit_ms.insert(hit_ms.end(), my_hits.begin(), my_hits.end());
    });
  }
  for (std::thread& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  stop.store(true);
  sampler.join();
  probe.join();
  for (int fd : idle_fds) ::close(fd);
  for (Stalled& st : stalls) st.ctx->TryCancel();
  stalls.clear();
  std::this_thread::sleep_for(std::chrono::duration<double>(settle_s));
  const Usage after = UsageOf(server);

  int64_t total = 0, unclean = 0;
  std::printf("tilecd flags:");
  for (const std::string& f : server_flags) std::printf(" %s", f.c_str());
  std::printf("\n%d clients for %.1f s (%d%% misses, %d hit programs), %zu idle or half-open "
              "connections, %d stalled artifact streams\n",
              clients, wall, miss_percent, hit_programs, idle_fds.size(), stalled);
  for (const auto& [k, v] : counts) {
    std::printf("  %-60s %10lld\n", k.c_str(), static_cast<long long>(v));
    total += v;
    const bool clean = k.find(" OK") != std::string::npos ||
                       k.find("RESOURCE_EXHAUSTED (with retry hint)") != std::string::npos;
    if (!clean) unclean += v;
  }
  std::printf("answers %lld (%.0f/s), not OK and not back-pressure: %lld\n",
              static_cast<long long>(total), static_cast<double>(total) / wall,
              static_cast<long long>(unclean));
  std::printf("hit latency ms: p50 %.1f  p99 %.1f  max %.1f\n", Percentile(hit_ms, 0.5),
              Percentile(hit_ms, 0.99), Percentile(hit_ms, 1.0));
  std::printf("probe (a hit every 250 ms on its own connection): %lld asked, %lld failed, "
              "slowest %.0f ms\n",
              static_cast<long long>(probes), static_cast<long long>(probe_failures), probe_max_ms);
  std::printf("tilecd            RSS MB   fds  threads\n");
  std::printf("  before         %7.0f %5d %8d\n", before.rss_mb, before.fds, before.threads);
  std::printf("  peak           %7.0f %5d %8d\n", peak.rss_mb, peak.fds, peak.threads);
  std::printf("  %4.0f s after    %7.0f %5d %8d\n", settle_s, after.rss_mb, after.fds,
              after.threads);
  tilec::bench::Stop(server);
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
  if (!expect_clean) return 0;
  bool ok = true;
  if (unclean > 0) {
    std::printf("FAIL: %lld answers were neither OK nor back-pressure\n",
                static_cast<long long>(unclean));
    ok = false;
  }
  if (probe_failures > 0 || probe_max_ms > 2000) {
    std::printf("FAIL: the probe was starved (%lld failed, slowest %.0f ms)\n",
                static_cast<long long>(probe_failures), probe_max_ms);
    ok = false;
  }
  if (after.fds > before.fds + 16) {
    std::printf("FAIL: tilecd holds %d descriptors after the load, %d before\n", after.fds,
                before.fds);
    ok = false;
  }
  return ok ? 0 : 1;
}
