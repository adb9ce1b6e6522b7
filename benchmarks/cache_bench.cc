// Cache benchmark: tilecd's cache hits against a raw Redis GET of a blob of
// the same size, on this machine, in the same run.
//
//   cache_bench [--tilecd PATH] [--redis PATH] [--seconds S] [--example FILE]
//
// Starts a redis-server on 127.0.0.1 (no persistence) and three real tilecd
// on 127.0.0.1 (fresh cache folders), all on free ports: A and B share the
// Redis as a fleet (--redis), A also serves the hit path (--http_port), N
// has neither the fleet nor the remembered responses (--memo_entries=0:
// every hit runs the frontend). Reports:
// - cold compile latency: Compile of GEMMs not yet in the cache (each a new
//   program), per target, through the whole pipeline in a child process;
// - cache-hit latency p50/p99 and throughput at 1, 16 and 256 concurrent
//   clients for (a) Compile of a cached program (frontend, hash, verified
//   cache read) and (b) GetArtifact of its cubin (verified read, streamed);
// - the same asked by key: Compile by program hash over gRPC, and over the
//   hit path (HTTP/1.1) a compile by hash and the artifact;
// - the same for Redis GET of a blob of the cubin's size (hiredis, one
//   connection per client), and each tilecd row's throughput as a ratio of
//   it;
// - the hit path and Redis at 256 clients in an open loop (a fixed offered
//   load, latency counted from when each request was due);
// - the fleet: a program compiled through A, asked of B (a first hit there,
//   served from the shared tier), with B's compile count (0 expected).
// Every client is a thread with its own connection; latencies are per
// request, wall time on the client. Each row also says the CPU time per
// request of the answering server process and of the clients (this
// process), user plus system: on a machine the clients share, the sum is
// what bounds throughput. Not run by ctest.
#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/bench_process.h"
#include "client/hit_client.h"
#include "grpcpp/grpcpp.h"
#include "proto/tilec/v1/service.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using tilec::bench::FreePort;
using tilec::bench::MakeTempDir;
using tilec::bench::ReadText;
using tilec::bench::Spawn;
using tilec::bench::Stop;

struct Sample {
  double p50_us = 0, p99_us = 0, per_second = 0;
  int64_t requests = 0, errors = 0;
  // CPU time per request: of the server process, and of this one (the
  // clients), user plus system.
  double server_cpu_us = 0, client_cpu_us = 0;
};

// User plus system CPU seconds of process `pid` (this process for 0).
double CpuSeconds(pid_t pid) {
  if (pid == 0) {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  std::string stat = tilec::bench::ReadText("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Runs `op` from `clients` threads for `seconds`; `make` builds each
// client's state (its connection) and returns its operation. `server` is
// the process answering (for its CPU time). With `offered` > 0 (requests
// per second, all clients together), each client sends on a fixed schedule
// instead of as soon as its last answer came (open loop), and a request's
// latency counts from when it was due, so a server that falls behind is
// charged for the wait.
Sample Measure(int clients, double seconds, pid_t server,
               const std::function<std::function<bool()>()>& make, double offered = 0) {
  std::vector<std::function<bool()>> ops;
  for (int i = 0; i < clients; ++i) ops.push_back(make());
  for (auto& op : ops) op();  // warm each connection
  std::vector<std::vector<double>> lat(clients);
  std::atomic<int64_t> errors{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const double server_cpu = CpuSeconds(server), client_cpu = CpuSeconds(0);
  Clock::time_point start = Clock::now();
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      const auto every = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(offered > 0 ? clients / offered : 0));
      Clock::time_point due = start + every * i / clients;  // spread over one period
      while (!stop.load(std::memory_order_relaxed)) {
        Clock::time_point t0 = Clock::now();
        if (offered > 0) {
          std::this_thread::sleep_until(due);
          if (stop.load(std::memory_order_relaxed)) break;
          t0 = due;
          due += every;
        }
        bool ok = ops[i]();
        lat[i].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (!ok) errors.fetch_add(1);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& t : threads) t.join();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double server_used = CpuSeconds(server) - server_cpu;
  const double client_used = CpuSeconds(0) - client_cpu;
  std::vector<double> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  Sample s;
  s.requests = static_cast<int64_t>(all.size());
  s.errors = errors.load();
  if (!all.empty()) {
    s.p50_us = all[all.size() / 2];
    s.p99_us = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  s.per_second = static_cast<double>(all.size()) / wall;
  if (!all.empty()) {
    s.server_cpu_us = 1e6 * server_used / static_cast<double>(all.size());
    s.client_cpu_us = 1e6 * client_used / static_cast<double>(all.size());
  }
  return s;
}

using tilec::bench::GemmRequest;
using tilec::bench::NewStub;

void Row(const char* what, int clients, const Sample& s) {
  std::printf("%-28s %8d %12.1f %12.1f %14.0f %10lld %7lld %11.1f %11.1f\n", what, clients,
              s.p50_us, s.p99_us, s.per_second, static_cast<long long>(s.requests),
              static_cast<long long>(s.errors), s.server_cpu_us, s.client_cpu_us);
}

}  // namespace

int main(int argc, char** argv) {
  std::string tilecd = TILECD_BINARY, redis = "/usr/bin/redis-server";
  std::string example = std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py";
  double seconds = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--tilecd")
      tilecd = argv[i + 1];
    else if (a == "--redis")
      redis = argv[i + 1];
    else if (a == "--seconds")
      seconds = std::atof(argv[i + 1]);
    else if (a == "--example")
      example = argv[i + 1];
    else {
      std::fprintf(stderr, "cache_bench: unknown flag %s (see benchmarks/cache_bench.cc)\n",
                   a.c_str());
      return 2;
    }
  }
  std::signal(SIGPIPE, SIG_IGN);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string work = MakeTempDir("tilec_cache_bench");
  std::string text = ReadText(example);
  int port = FreePort(), redis_port = FreePort(), port_b = FreePort(), port_n = FreePort();
  const int http_port = FreePort();  // A's hit path
  pid_t redis_pid =
      Spawn({redis, "--port", std::to_string(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"},
            /*quiet=*/true);
  const std::string redis_flag = "--redis=127.0.0.1:" + std::to_string(redis_port);
  // The figures compare serving paths; signatures are off as before.
  const std::string unsigned_flag = "--allow_unsigned_shared_tier";
  auto start = [&](int p, const std::string& cache, std::vector<std::string> extra) {
    std::vector<std::string> args = {tilecd,
                                     "--cache_dir=" + work + "/" + cache,
                                     "--host=127.0.0.1",
                                     "--port=" + std::to_string(p),
                                     "--metrics_port=-1",
                                     "--threads=300",
                                     "--queue=4096"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Spawn(args, /*quiet=*/true);
  };
  pid_t server = start(port, "cache_a",
                       {redis_flag, unsigned_flag, "--http_port=" + std::to_string(http_port)});
  pid_t server_b = start(port_b, "cache_b", {redis_flag, unsigned_flag});
  pid_t server_n = start(port_n, "cache_n", {"--memo_entries=0"});
  auto stop_all = [&] {
    for (pid_t p : {server, server_b, server_n, redis_pid}) Stop(p);
  };
  std::string address = "127.0.0.1:" + std::to_string(port);
  std::string address_b = "127.0.0.1:" + std::to_string(port_b);
  std::string address_n = "127.0.0.1:" + std::to_string(port_n);
  auto stub = NewStub(address);
  auto stub_b = NewStub(address_b);
  auto stub_n = NewStub(address_n);
  // Wait for the servers.
  for (auto* s : {stub.get(), stub_b.get(), stub_n.get()}) {
    bool up = false;
    for (int i = 0; i < 200 && !up; ++i) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
      tilec::v1::StatsResponse st;
      up = s->Stats(&ctx, {}, &st).ok();
      if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!up) {
      std::fprintf(stderr, "cache_bench: tilecd did not start (%s)\n", tilecd.c_str());
      stop_all();
      return 1;
    }
  }

  // Cold compiles: distinct programs (different M), so every one misses.
  std::printf("cold compile latency (GEMM 128x128x32 tiles, N=K=1024, child process)\n");
  std::string digest;
  int64_t blob_size = 0;
  tilec::v1::CompileRequest hit_request;
  std::string hit_hash;  // the program's hash, for requests by key
  for (const char* target : {"sm_80", "sm_90a"}) {
    std::vector<double> ms;
    for (int i = 0; i < 3; ++i) {
      tilec::v1::CompileRequest req = GemmRequest(text, 1024 + 128 * i, target);
      grpc::ClientContext ctx;
      tilec::v1::CompileResponse resp;
      Clock::time_point t0 = Clock::now();
      grpc::Status s = stub->Compile(&ctx, req, &resp);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      if (!s.ok() || resp.results(0).cache_hit()) {
        std::fprintf(stderr, "cache_bench: cold compile failed: %s\n", s.error_message().c_str());
        stop_all();
        return 1;
      }
      digest = resp.results(0).digest();
      blob_size = resp.results(0).size_bytes();
      hit_request = req;
      hit_hash = resp.results(0).program_hash();
    }
    std::sort(ms.begin(), ms.end());
    std::printf("  %-7s p50 %8.1f ms   min %8.1f ms   max %8.1f ms   (3 programs)\n", target, ms[1],
                ms[0], ms[2]);
  }

  // The fleet: each program compiled through A above, asked of B once.
  {
    std::vector<double> ms;
    int shared_hits = 0;
    for (const char* target : {"sm_80", "sm_90a"}) {
      for (int i = 0; i < 3; ++i) {
        grpc::ClientContext ctx;
        tilec::v1::CompileResponse resp;
        Clock::time_point t0 = Clock::now();
        grpc::Status s = stub_b->Compile(&ctx, GemmRequest(text, 1024 + 128 * i, target), &resp);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (s.ok() && resp.results(0).cache_hit()) ++shared_hits;
      }
    }
    std::sort(ms.begin(), ms.end());
    grpc::ClientContext ctx;
    tilec::v1::StatsResponse st;
    (void)stub_b->Stats(&ctx, {}, &st);
    std::printf(
        "\nfleet: the 6 programs above asked of server B (sharing A's Redis): %d hits, p50 %.2f "
        "ms, max %.2f ms; B compiled %lld, served %lld from the shared tier\n",
        shared_hits, ms[ms.size() / 2], ms.back(), static_cast<long long>(st.compiles()),
        static_cast<long long>(st.shared_tier_hits()));
  }
  {  // N's cache gets the hit program too.
    grpc::ClientContext ctx;
    tilec::v1::CompileResponse resp;
    (void)stub_n->Compile(&ctx, hit_request, &resp);
  }

  // The Redis reference: a random blob of the cubin's size.
  redisContext* setup = nullptr;
  for (int i = 0; i < 100; ++i) {
    setup = redisConnect("127.0.0.1", redis_port);
    if (setup != nullptr && setup->err == 0) break;
    if (setup != nullptr) redisFree(setup);
    setup = nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (setup == nullptr) {
    std::fprintf(stderr, "cache_bench: redis-server did not start (%s)\n", redis.c_str());
    stop_all();
    return 1;
  }
  uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  std::string blob(static_cast<size_t>(blob_size), '\0');
  for (char& c : blob) c = static_cast<char>(rng());
  redisReply* r =
      static_cast<redisReply*>(redisCommand(setup, "SET tilec_blob %b", blob.data(), blob.size()));
  if (r != nullptr) freeReplyObject(r);
  redisFree(setup);

  std::printf("\ncache hits: artifact %lld bytes, %.1f s per row, blob seed %llu\n",
              static_cast<long long>(blob_size), seconds, static_cast<unsigned long long>(seed));
  std::printf("%-28s %8s %12s %12s %14s %10s %7s %11s %11s\n", "operation", "clients", "p50 us",
              "p99 us", "requests/s", "requests", "errors", "server cpu", "client cpu");
  std::printf("(cpu: microseconds of CPU per request, the server's process and the clients')\n");
  // The hit path (server/hit_path.h): the same two answers over HTTP/1.1,
  // one kept-alive connection per client. The artifact's bytes are not
  // hashed here (tilec compile --hit does), as the Redis row's are not.
  using MakeClient = std::function<std::function<bool()>()>;
  const std::string http_address = "127.0.0.1:" + std::to_string(http_port);
  const std::vector<std::string> hit_targets(hit_request.targets().begin(),
                                             hit_request.targets().end());
  const MakeClient http_compile_client = [&]() -> std::function<bool()> {
    auto c = std::make_shared<tilec::cli::HitClient>(http_address, "");
    return [c, &hit_hash, &hit_targets]() {
      auto r = tilec::cli::HitCompile(*c, hit_hash, hit_targets, false, 0);
      return r.ok() && r->results_size() == 1 && r->results(0).cache_hit();
    };
  };
  const MakeClient http_get_client = [&]() -> std::function<bool()> {
    auto c = std::make_shared<tilec::cli::HitClient>(http_address, "");
    const std::string target = "/v1/artifacts/" + digest;
    return [c, target, blob_size]() {
      auto r = c->Get(target);
      return r.ok() && r->status == 200 && static_cast<int64_t>(r->body.size()) == blob_size;
    };
  };
  std::vector<redisContext*> redis_conns;
  const MakeClient redis_client = [&]() -> std::function<bool()> {
    redisContext* c = redisConnect("127.0.0.1", redis_port);
    redis_conns.push_back(c);
    return [c, blob_size]() {
      if (c == nullptr || c->err != 0) return false;
      redisReply* reply = static_cast<redisReply*>(redisCommand(c, "GET tilec_blob"));
      bool ok = reply != nullptr && reply->type == REDIS_REPLY_STRING &&
                static_cast<int64_t>(reply->len) == blob_size;
      if (reply != nullptr) freeReplyObject(reply);
      return ok;
    };
  };
  auto close_redis = [&] {
    for (redisContext* c : redis_conns) {
      if (c != nullptr) redisFree(c);
    }
    redis_conns.clear();
  };
  for (int clients : {1, 16, 256}) {
    auto compile_hits = [&](const std::string& where, pid_t pid) {
      return Measure(clients, seconds, pid, [&]() -> std::function<bool()> {
        auto s = std::shared_ptr<tilec::v1::Tilec::Stub>(NewStub(where));
        return [s, &hit_request]() {
          grpc::ClientContext ctx;
          tilec::v1::CompileResponse resp;
          return s->Compile(&ctx, hit_request, &resp).ok() && resp.results(0).cache_hit();
        };
      });
    };
    Sample compile_hit = compile_hits(address, server);
    Row("tilecd Compile (hit)", clients, compile_hit);
    Sample compile_hit_b = compile_hits(address_b, server_b);
    Row("tilecd B Compile (hit)", clients, compile_hit_b);
    Sample compile_hit_n = compile_hits(address_n, server_n);
    Row("tilecd Compile (hit, no memo)", clients, compile_hit_n);
    // Asked by key (CompileRequest.program_hash), as tilec compile does
    // first: no source in the request, no frontend on the server.
    tilec::v1::CompileRequest by_hash;
    by_hash.set_program_hash(hit_hash);
    *by_hash.mutable_targets() = hit_request.targets();
    Sample compile_by_hash = Measure(clients, seconds, server, [&]() -> std::function<bool()> {
      auto s = std::shared_ptr<tilec::v1::Tilec::Stub>(NewStub(address));
      return [s, &by_hash]() {
        grpc::ClientContext ctx;
        tilec::v1::CompileResponse resp;
        return s->Compile(&ctx, by_hash, &resp).ok() && resp.results_size() == 1;
      };
    });
    Row("tilecd Compile by hash (hit)", clients, compile_by_hash);
    Sample get = Measure(clients, seconds, server, [&]() -> std::function<bool()> {
      auto s = std::shared_ptr<tilec::v1::Tilec::Stub>(NewStub(address));
      return [s, &digest, blob_size]() {
        grpc::ClientContext ctx;
        tilec::v1::GetArtifactRequest req;
        req.set_digest(digest);
        auto reader = s->GetArtifact(&ctx, req);
        tilec::v1::ArtifactChunk chunk;
        int64_t got = 0;
        while (reader->Read(&chunk)) got += static_cast<int64_t>(chunk.data().size());
        return reader->Finish().ok() && got == blob_size;
      };
    });
    Row("tilecd GetArtifact", clients, get);
    Sample http_compile = Measure(clients, seconds, server, http_compile_client);
    Row("hit path compile by hash", clients, http_compile);
    Sample http_get = Measure(clients, seconds, server, http_get_client);
    Row("hit path artifact", clients, http_get);
    Sample redis_get = Measure(clients, seconds, redis_pid, redis_client);
    Row("redis GET (same size)", clients, redis_get);
    auto ratio = [&](const Sample& s) {
      return redis_get.per_second > 0 ? s.per_second / redis_get.per_second : 0.0;
    };
    std::printf(
        "  ratio to redis GET at %d clients: Compile hit %.2fx, B %.2fx, no memo %.2fx, by hash "
        "%.2fx, GetArtifact %.2fx; hit path: compile by hash %.2fx, artifact %.2fx\n",
        clients, ratio(compile_hit), ratio(compile_hit_b), ratio(compile_hit_n),
        ratio(compile_by_hash), ratio(get), ratio(http_compile), ratio(http_get));
    close_redis();
  }

  // Open loop: 256 clients sending on a schedule, together `offered` per
  // second (about half what Redis answers here in the closed loop), each
  // latency counted from when the request was due.
  const double offered = 10000;
  std::printf("\n256 clients, open loop at %.0f requests/s in all (latency from when due)\n",
              offered);
  Row("hit path compile by hash", 256, Measure(256, seconds, server, http_compile_client, offered));
  Row("hit path artifact", 256, Measure(256, seconds, server, http_get_client, offered));
  Row("redis GET (same size)", 256, Measure(256, seconds, redis_pid, redis_client, offered));
  close_redis();
  stop_all();
  std::string rm = "rm -rf " + work;
  return std::system(rm.c_str()) == 0 ? 0 : 1;
}
