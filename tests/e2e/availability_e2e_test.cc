// End to end for the protections of docs/security.md, each on a real tilecd
// (127.0.0.1, free ports) with the real pipeline in its compile children:
// hits beside slow misses, the bounded compile queue, a full disk,
// unparseable and oversized requests, the public surfaces (health,
// reflection, metrics), TLS flags, and bounded recommendation searches
// (refused past the limit, stopped by SIGTERM).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/proto_convert.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "tests/e2e/cli_process.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

// matmul with M = m, leaving the dtypes and flags at their defaults.
tilec::v1::CompileRequest DefaultDtypeGemmRequest(int m) {
  tilec::v1::CompileRequest req;
  auto* src = req.mutable_source();
  src->set_path("examples/gemm.py");
  src->set_text(ReadFile(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py"));
  src->set_function("matmul");
  const std::pair<const char*, std::string> binds[] = {
      {"M", std::to_string(m)}, {"N", "128"},      {"K", "64"},        {"block_M", "64"},
      {"block_N", "64"},        {"block_K", "32"}, {"threads", "128"}, {"num_stages", "2"}};
  for (const auto& [k, v] : binds) {
    auto* b = src->add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  req.add_targets("sm_80");
  return req;
}

// A call with raw request bytes to `method`; the status, and the response
// bytes in `response`.
grpc::Status RawCall(Tilecd& d, const std::string& method, const std::string& request,
                     std::string* response = nullptr) {
  grpc::GenericStub stub(d.channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Slice slice(request);
  grpc::ByteBuffer in(&slice, 1), out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &in, &out,
                 [&](grpc::Status s) { done.set_value(std::move(s)); });
  grpc::Status s = done.get_future().get();
  if (response != nullptr) {
    std::vector<grpc::Slice> slices;
    if (out.Valid() && out.Dump(&slices).ok()) {
      for (const grpc::Slice& sl : slices) {
        response->append(reinterpret_cast<const char*>(sl.begin()), sl.size());
      }
    }
  }
  return s;
}

// Each miss is a distinct program (M differs), compiled for real.
TEST(AvailabilityE2E, HitsAnswerWhileMissesWaitAndTheCompileQueueIsBounded) {
  std::string cache = MakeTempDir("cache");
  Tilecd d;
  // One compile at a time, two request threads: before misses moved off the
  // request threads, two queued misses held both and the hit waited.
  ASSERT_TRUE(
      d.Start(cache, {"--jobs=1", "--threads=2", "--compile_queue=3", "--metrics_port=-1"}));
  tilec::v1::CompileResponse first;
  absl::Time t0 = absl::Now();
  ASSERT_TRUE(Compile(d, DefaultDtypeGemmRequest(128), &first).ok());
  const double compile_s = absl::ToDoubleSeconds(absl::Now() - t0);
  std::printf("one compile: %.2f s\n", compile_s);

  constexpr int kMisses = 8;  // 1 compiling + 1 waiting for the slot + 3 queued; 3 refused
  std::vector<grpc::Status> status(kMisses);
  std::vector<std::string> pushback(kMisses);
  std::atomic<int> finished{0};
  std::vector<std::thread> misses;
  for (int i = 0; i < kMisses; ++i) {
    misses.emplace_back([&, i] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(170));
      tilec::v1::CompileResponse resp;
      status[i] = d.stub()->Compile(&ctx, DefaultDtypeGemmRequest(256 + 64 * i), &resp);
      auto it = ctx.GetServerTrailingMetadata().find("grpc-retry-pushback-ms");
      if (it != ctx.GetServerTrailingMetadata().end()) {
        pushback[i] = std::string(it->second.data(), it->second.size());
      }
      finished.fetch_add(1);
    });
  }
  absl::SleepFor(absl::Milliseconds(300));
  tilec::v1::CompileResponse hit;
  t0 = absl::Now();
  grpc::Status hs = Compile(d, DefaultDtypeGemmRequest(128), &hit);
  const double hit_s = absl::ToDoubleSeconds(absl::Now() - t0);
  const int misses_done_at_hit = finished.load();
  for (auto& t : misses) t.join();
  ASSERT_TRUE(hs.ok()) << hs.error_message();
  EXPECT_TRUE(hit.results(0).cache_hit());
  std::printf("hit beside %d queued misses: %.3f s\n", kMisses, hit_s);
  EXPECT_LT(hit_s, 1.0);
  int refused = 0, ok = 0;
  for (int i = 0; i < kMisses; ++i) {
    if (status[i].ok()) {
      ++ok;
      continue;
    }
    ++refused;
    EXPECT_EQ(status[i].error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << status[i].error_message();
    EXPECT_TRUE(absl::StrContains(status[i].error_message(), "compile queue is full"))
        << status[i].error_message();
    EXPECT_TRUE(absl::StrContains(status[i].error_message(), "retry")) << status[i].error_message();
    EXPECT_EQ(pushback[i], "2000");
  }
  EXPECT_GE(refused, 1);
  EXPECT_GE(ok, 3);
  // The hit came back while misses were still compiling.
  EXPECT_LT(misses_done_at_hit, ok + refused);
}

TEST(AvailabilityE2E, AFullDiskStillReturnsTheArtifact) {
  std::string cache = MakeTempDir("cache");
  Tilecd d;
  d.fsize_limit = 4096;  // every cubin is larger: the cache cannot store it
  ASSERT_TRUE(d.Start(cache));
  tilec::v1::CompileResponse resp;
  grpc::Status s = Compile(d, DefaultDtypeGemmRequest(128), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const tilec::v1::CompileResult& r = resp.results(0);
  EXPECT_TRUE(absl::StrContains(r.store_error(), "could not store")) << r.store_error();
  EXPECT_TRUE(absl::StrContains(r.store_error(), cache)) << r.store_error();
  EXPECT_EQ(static_cast<int64_t>(r.artifact().size()), r.size_bytes());
  EXPECT_EQ(cache::Sha256Hex(r.artifact()), r.digest());
  // Not in the cache, and the metrics say so.
  grpc::ClientContext ctx;
  tilec::v1::GetArtifactRequest get;
  get.set_digest(r.digest());
  auto reader = d.stub()->GetArtifact(&ctx, get);
  tilec::v1::ArtifactChunk chunk;
  while (reader->Read(&chunk)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
  std::string metrics = HttpGet(d.metrics_port(), "/metrics");
  EXPECT_TRUE(absl::StrContains(metrics, "tilec_cache_store_errors_total 1")) << metrics;
  // The CLI writes what the response holds, into a folder it creates.
  std::string out = MakeTempDir("out") + "/new/sub";
  RunResult cli = RunTilec({"compile",  "examples/gemm.py",
                            "--fn",     "matmul",
                            "-D",       "M=128",
                            "-D",       "N=128",
                            "-D",       "K=64",
                            "-D",       "block_M=64",
                            "-D",       "block_N=64",
                            "-D",       "block_K=32",
                            "-D",       "threads=128",
                            "-D",       "num_stages=2",
                            "--target", "sm_80",
                            "--server", d.address(),
                            "--out",    out});
  EXPECT_EQ(cli.code, 0) << cli.err;
  EXPECT_TRUE(absl::StrContains(cli.err, "could not store")) << cli.err;
  EXPECT_EQ(cache::Sha256Hex(ReadFile(out + "/matmul.sm_80.cubin")), r.digest());
}

// The embedded CLI with a cache it cannot use: the artifact's blob replaced
// by a folder. The compile still writes its cubin (from the response), and
// no message speaks of a server (before: exit 69 "server unreachable").
TEST(AvailabilityE2E, EmbeddedCacheErrorsAreNotAServerUnreachable) {
  std::string cache = MakeTempDir("local");
  const std::vector<std::string> args = {"compile",  "examples/gemm.py",
                                         "--fn",     "matmul",
                                         "-D",       "M=128",
                                         "-D",       "N=128",
                                         "-D",       "K=64",
                                         "-D",       "block_M=64",
                                         "-D",       "block_N=64",
                                         "-D",       "block_K=32",
                                         "--target", "sm_80",
                                         "--json",   "--cache_dir",
                                         cache};
  RunResult first = RunTilec(args);
  ASSERT_EQ(first.code, 0) << first.err;
  const size_t at = first.out.find("\"digest\":\"");
  ASSERT_NE(at, std::string::npos) << first.out;
  const std::string digest = first.out.substr(at + 10, 64);
  std::string blob = cache + "/blobs/" + digest;
  ASSERT_EQ(::unlink(blob.c_str()), 0) << blob;
  ASSERT_EQ(::mkdir(blob.c_str(), 0755), 0);
  std::string out = MakeTempDir("out") + "/o";
  std::vector<std::string> again = args;
  again.insert(again.end(), {"--out", out});
  RunResult second = RunTilec(again);
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.err.find("unreachable"), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("server"), std::string::npos) << second.err;
  EXPECT_EQ(cache::Sha256Hex(ReadFile(out + "/matmul.sm_80.cubin")), digest);
}

TEST(AvailabilityE2E, UnparseableAndOversizedRequestsGetAMessage) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  // Not a protocol buffer: INVALID_ARGUMENT naming the message type (gRPC's
  // own parsing said UNIMPLEMENTED with no message).
  for (const char* method : {"/tilec.v1.Tilec/Compile", "/tilec.v1.Tilec/Recommend",
                             "/tilec.v1.Tilec/Stats", "/tilec.v1.Tilec/GetArtifact"}) {
    grpc::Status s = RawCall(d, method, std::string("\xff\xff\xff\xff", 4));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_TRUE(absl::StrContains(s.error_message(), "is not a valid tilec.v1."))
        << method << ": " << s.error_message();
  }
  // A 1 MB digest: the error does not echo it, and the reply arrives.
  grpc::ClientContext ctx;
  tilec::v1::GetArtifactRequest get;
  get.set_digest(std::string(1 << 20, 'f'));
  auto reader = d.stub()->GetArtifact(&ctx, get);
  tilec::v1::ArtifactChunk chunk;
  while (reader->Read(&chunk)) {
  }
  grpc::Status s = reader->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message().size();
  EXPECT_LT(s.error_message().size(), 1000u);
  // A good request still works on the same server.
  grpc::ClientContext sctx;
  tilec::v1::StatsResponse st;
  EXPECT_TRUE(d.stub()->Stats(&sctx, {}, &st).ok());
}

TEST(AvailabilityE2E, HealthIsPublicReflectionIsOffUnlessAsked) {
  std::string dir = MakeTempDir("tokens");
  std::ofstream(dir + "/tokens") << "good-token\n";
  // list_services (field 7, an empty string).
  const std::string list_services("\x3a\x00", 2);
  const std::string reflection = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
  {
    Tilecd d;
    ASSERT_TRUE(
        d.Start(MakeTempDir("cache"), {"--tokens_file=" + dir + "/tokens", "--metrics_port=-1"}));
    RunResult health = RunTilec({"health", "--server", d.address()});
    EXPECT_EQ(health.code, 0) << health.err;  // no token: load balancers probe it
    EXPECT_EQ(health.out, "SERVING\n");
    grpc::Status s = RawCall(d, reflection, list_services);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED) << s.error_message();
  }
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--reflection", "--metrics_port=-1"}));
  std::string response;
  grpc::Status s = RawCall(d, reflection, list_services, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(absl::StrContains(response, "tilec.v1.Tilec"));
}

// A TCP connection to 127.0.0.1:`port` that sends `bytes` and stays open.
int OpenIdle(int port, const std::string& bytes) {
  const int fd = tilec::testing::ConnectLoopback(port);
  if (fd < 0) return -1;
  if (!bytes.empty()) (void)::write(fd, bytes.data(), bytes.size());
  return fd;
}

// The local address (hex, as /proc/net/tcp writes it) `port` listens on.
std::string ListeningAddress(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  while (std::getline(in, line)) {
    // "  0: 0100007F:1F90 00000000:0000 0A ..." (0A: LISTEN)
    size_t colon = line.find(want);
    if (colon == std::string::npos || line.find(" 0A ") == std::string::npos) continue;
    size_t start = line.rfind(' ', colon) + 1;
    return line.substr(start, colon - start);
  }
  return "";
}

TEST(AvailabilityE2E, MetricsListenOnLoopbackAndSlowClientsDoNotBlockScraping) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--host=0.0.0.0"}));
  EXPECT_EQ(ListeningAddress(d.metrics_port()), "0100007F");  // 127.0.0.1, not 0.0.0.0
  // Four clients that never finish their request: each holds an HTTP
  // thread until the request timeout.
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(OpenIdle(d.metrics_port(), i % 2 ? "GET /met" : ""));
  absl::SleepFor(absl::Milliseconds(200));
  absl::Time t0 = absl::Now();
  std::string text = HttpGet(d.metrics_port(), "/metrics");
  const double scrape_s = absl::ToDoubleSeconds(absl::Now() - t0);
  for (int fd : idle) ::close(fd);
  std::printf("scrape beside 4 idle clients: %.3f s\n", scrape_s);
  EXPECT_LT(scrape_s, 1.0);
  EXPECT_TRUE(absl::StrContains(text, "tilec_cache_store_errors_total")) << text;
}

TEST(AvailabilityE2E, TlsFlagsNameWhatIsMissing) {
  std::string dir = MakeTempDir("tls");
  std::ofstream(dir + "/cert.pem") << "not used\n";
  struct Case {
    std::vector<std::string> flags;
    std::string expected;
  };
  const Case cases[] = {
      {{"--tls_cert=" + dir + "/cert.pem"}, "--tls_key is missing"},
      {{"--tls_key=" + dir + "/cert.pem"}, "--tls_cert is missing"},
      {{"--tls_cert=" + dir + "/cert.pem", "--tls_key=" + dir + "/nope.pem"},
       "--tls_key: cannot read '" + dir + "/nope.pem': No such file"},
      // The hit path is plain HTTP: not beside a server whose gRPC is TLS.
      {{"--tls_cert=" + dir + "/cert.pem", "--tls_key=" + dir + "/cert.pem", "--http_port=0"},
       "--http_port serves plain HTTP and the server has TLS"},
  };
  for (const Case& c : cases) {
    std::string cmd = absl::StrCat(TILECD_BINARY, " --cache_dir=", MakeTempDir("cache"),
                                   " --port=0 --metrics_port=-1 ");
    for (const std::string& f : c.flags) absl::StrAppend(&cmd, f, " ");
    absl::StrAppend(&cmd, "2>&1");
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    int rc = ::pclose(p);
    EXPECT_EQ(WEXITSTATUS(rc), 2) << out;
    EXPECT_TRUE(absl::StrContains(out, c.expected)) << out;
  }
}

// The GEMM as a wire-form program with its five tile parameters unbound and
// `count` declared candidates each.
tilec::v1::RecommendRequest RecommendWithCandidates(int count) {
  frontend::Bindings b;
  for (const auto& [k, v] :
       {std::pair<std::string, std::string>{"M", "4096"}, {"N", "4096"}, {"K", "4096"}}) {
    b.Set(k, v);
  }
  b.unbound = {"block_M", "block_N", "block_K", "threads", "num_stages"};
  auto program = frontend::CompileTileLang(
      {"examples/gemm.py", ReadFile(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py")}, "matmul",
      b);
  EXPECT_TRUE(program.ok()) << program.status();
  for (ir::TileParam& tp : program->tile_params) {
    if (tp.value || !tp.var) continue;
    const std::string& name = tp.var->name;
    const int64_t step = name == "threads" ? 32 : name == "num_stages" ? 1 : 16;
    tp.candidates.clear();
    for (int64_t i = 1; i <= count; ++i) tp.candidates.push_back(i * step);
  }
  tilec::v1::RecommendRequest req;
  *req.mutable_program() = ir::ToProto(*program);
  req.set_profile("h100_sxm");
  return req;
}

TEST(AvailabilityE2E, ARecommendOverTheSpaceLimitIsRefusedAtOnce) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  tilec::v1::RecommendRequest req = RecommendWithCandidates(400);  // 400^5 = 1e13 configs
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  tilec::v1::RecommendResponse resp;
  absl::Time t0 = absl::Now();
  grpc::Status s = d.stub()->Recommend(&ctx, req, &resp);
  const double took = absl::ToDoubleSeconds(absl::Now() - t0);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "block_M 400 x block_N 400"))
      << s.error_message();
  EXPECT_LT(took, 2.0);
  // Compile binds unbound parameters by the same search, with the same limit.
  tilec::v1::CompileRequest creq;
  *creq.mutable_program() = req.program();
  creq.add_targets("sm_90a");
  tilec::v1::CompileResponse cresp;
  t0 = absl::Now();
  s = Compile(d, creq, &cresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "search space is too large"))
      << s.error_message();
  EXPECT_LT(absl::ToDoubleSeconds(absl::Now() - t0), 2.0);
}

TEST(AvailabilityE2E, SearchesDoNotHoldRequestThreads) {
  // One request thread, one search thread and room for one waiting search:
  // a read token's long searches neither delay a cache hit nor queue
  // without bound.
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--threads=1", "--search_threads=1",
                                             "--search_queue=1", "--metrics_port=-1"}));
  tilec::v1::CompileResponse first;
  ASSERT_TRUE(Compile(d, DefaultDtypeGemmRequest(128), &first).ok());
  tilec::v1::RecommendRequest req = RecommendWithCandidates(16);  // ~20 s each
  std::shared_ptr<tilec::v1::Tilec::Stub> stub = tilec::v1::Tilec::NewStub(d.channel());
  constexpr int kSearches = 3;
  std::vector<grpc::Status> status(kSearches);
  std::vector<std::thread> searches;
  for (int i = 0; i < kSearches; ++i) {
    searches.emplace_back([stub, req, &status, i] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      tilec::v1::RecommendResponse resp;
      status[i] = stub->Recommend(&ctx, req, &resp);
    });
    absl::SleepFor(absl::Milliseconds(100));
  }
  absl::SleepFor(absl::Milliseconds(300));
  tilec::v1::CompileResponse hit;
  absl::Time t0 = absl::Now();
  grpc::Status hs = Compile(d, DefaultDtypeGemmRequest(128), &hit);
  const double hit_s = absl::ToDoubleSeconds(absl::Now() - t0);
  std::printf("hit beside %d searches: %.3f s\n", kSearches, hit_s);
  ASSERT_TRUE(hs.ok()) << hs.error_message();
  EXPECT_TRUE(hit.results(0).cache_hit());
  EXPECT_LT(hit_s, 1.0);
  EXPECT_GE(d.Terminate(absl::Seconds(30)), 0);  // the searches are cancelled
  for (auto& t : searches) t.join();
  int refused = 0;
  for (const grpc::Status& s : status) {
    if (s.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) continue;
    ++refused;
    EXPECT_TRUE(absl::StrContains(s.error_message(), "search queue is full")) << s.error_message();
  }
  EXPECT_EQ(refused, 1);
}

TEST(AvailabilityE2E, AClientThatCancelsStopsItsSearch) {
  // One search thread: a cancelled 20-second search must free it at once,
  // or the next Recommend waits for it.
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--search_threads=1", "--metrics_port=-1"}));
  grpc::ClientContext ctx;
  tilec::v1::RecommendResponse resp;
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(500));
    ctx.TryCancel();
  });
  grpc::Status s = d.stub()->Recommend(&ctx, RecommendWithCandidates(16), &resp);
  canceller.join();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_message();
  tilec::v1::RecommendResponse small;
  grpc::ClientContext ctx2;
  ctx2.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
  absl::Time t0 = absl::Now();
  grpc::Status next = d.stub()->Recommend(&ctx2, RecommendWithCandidates(2), &small);
  const double next_s = absl::ToDoubleSeconds(absl::Now() - t0);
  std::printf("Recommend after a cancelled search: %.3f s\n", next_s);
  EXPECT_TRUE(next.ok()) << next.error_message();
  EXPECT_LT(next_s, 3.0);
}

TEST(AvailabilityE2E, SigtermDuringALongSearchExitsPromptly) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  // 16^5 = 1048576 configs: within the limit, many seconds of search.
  tilec::v1::RecommendRequest req = RecommendWithCandidates(16);
  std::shared_ptr<tilec::v1::Tilec::Stub> stub = tilec::v1::Tilec::NewStub(d.channel());
  std::thread client([stub, req] {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    tilec::v1::RecommendResponse resp;
    (void)stub->Recommend(&ctx, req, &resp);
  });
  absl::SleepFor(absl::Milliseconds(700));
  double exit_s = d.Terminate(absl::Seconds(30));
  client.join();
  std::printf("SIGTERM to exit during a search: %.3f s\n", exit_s);
  EXPECT_GE(exit_s, 0) << "tilecd did not exit within 30 s of SIGTERM";
  EXPECT_LT(exit_s, 3.0);
}

}  // namespace
}  // namespace tilec::e2e
