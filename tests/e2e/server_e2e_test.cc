// End to end: a real tilecd on 127.0.0.1 (free ports), the real pipeline in
// its compile children, the real cache on disk.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "compiler/cache/digest.h"
#include "compiler/cache/disk_store.h"
#include "gtest/gtest.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

std::string Fetch(Tilecd& d, const std::string& digest, int64_t chunk, int* chunks) {
  grpc::ClientContext ctx;
  tilec::v1::GetArtifactRequest req;
  req.set_digest(digest);
  req.set_chunk_bytes(chunk);
  auto reader = d.stub()->GetArtifact(&ctx, req);
  std::string bytes;
  tilec::v1::ArtifactChunk c;
  *chunks = 0;
  while (reader->Read(&c)) {
    EXPECT_EQ(c.offset(), static_cast<int64_t>(bytes.size()));
    bytes += c.data();
    ++*chunks;
  }
  EXPECT_TRUE(reader->Finish().ok());
  return bytes;
}

TEST(ServerE2E, CompileHitRestartCorruptAndStream) {
  std::string cache = MakeTempDir("cache");
  tilec::v1::CompileResponse first, second;
  std::string digest;
  {
    Tilecd d;
    ASSERT_TRUE(d.Start(cache, {"--metrics_port=-1"}));
    grpc::Status s = Compile(d, GemmRequest(128, {"sm_80"}), &first);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(first.results_size(), 1);
    EXPECT_FALSE(first.results(0).cache_hit());
    digest = first.results(0).digest();
    ASSERT_TRUE(Compile(d, GemmRequest(128, {"sm_80"}), &second).ok());
    EXPECT_TRUE(second.results(0).cache_hit());
    EXPECT_EQ(second.results(0).digest(), digest);
    EXPECT_EQ(Stats(d).compiles(), 1);
    int chunks = 0;
    std::string bytes = Fetch(d, digest, 4096, &chunks);
    EXPECT_EQ(cache::Sha256Hex(bytes), digest);
    EXPECT_EQ(static_cast<int64_t>(bytes.size()), first.results(0).size_bytes());
    EXPECT_GT(chunks, 1);
    EXPECT_EQ(bytes.substr(1, 3), "ELF");
  }
  {
    Tilecd d;  // a restart on the same cache
    ASSERT_TRUE(d.Start(cache, {"--metrics_port=-1"}));
    tilec::v1::CompileResponse again;
    ASSERT_TRUE(Compile(d, GemmRequest(128, {"sm_80"}), &again).ok());
    EXPECT_TRUE(again.results(0).cache_hit());
    EXPECT_EQ(Stats(d).compiles(), 0);
    // Corrupt the blob: the next request recompiles, never serves it.
    {
      std::fstream f(cache + "/blobs/" + digest, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(100);
      f.put('\x5a');
      f.put('\xa5');
    }
    ASSERT_TRUE(Compile(d, GemmRequest(128, {"sm_80"}), &again).ok());
    EXPECT_FALSE(again.results(0).cache_hit());
    EXPECT_EQ(again.results(0).digest(), digest);
    tilec::v1::StatsResponse st = Stats(d);
    EXPECT_EQ(st.compiles(), 1);
    EXPECT_EQ(st.cache_corrupt(), 1);
  }
  {
    // An artifact over the 4 MiB default message size streams intact. The
    // test writes it as a second process sharing the cache directory would.
    auto store = cache::DiskStore::Open(cache, int64_t{1} << 30);
    ASSERT_TRUE(store.ok());
    uint64_t seed = std::random_device{}();
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng(seed);
    std::string big(6 << 20, '\0');
    for (char& c : big) c = static_cast<char>(rng() | 1);
    auto big_digest = (*store)->Put(cache::Sha256Hex("big"), "", big, "{}");
    ASSERT_TRUE(big_digest.ok());
    Tilecd d;
    ASSERT_TRUE(d.Start(cache, {"--metrics_port=-1"}));
    int chunks = 0;
    std::string got = Fetch(d, *big_digest, 0, &chunks);
    EXPECT_EQ(got.size(), big.size());
    EXPECT_TRUE(got == big);
    EXPECT_GE(chunks, 6);
  }
}

TEST(ServerE2E, SixtyFourIdenticalRequestsCompileOnceAndMetricsMove) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache")));
  constexpr int kN = 64;
  std::vector<grpc::Status> status(kN);
  std::vector<tilec::v1::CompileResponse> resp(kN);
  std::vector<std::thread> threads;
  for (int i = 0; i < kN; ++i) {
    threads.emplace_back(
        [&, i] { status[i] = Compile(d, GemmRequest(256, {"sm_90a"}), &resp[i]); });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(status[i].ok()) << status[i].error_message();
    EXPECT_EQ(resp[i].results(0).digest(), resp[0].results(0).digest());
  }
  tilec::v1::StatsResponse st = Stats(d);
  EXPECT_EQ(st.compiles(), 1);
  EXPECT_EQ(st.single_flight_joined() + st.cache_hits(), kN - 1);

  std::string text = HttpGet(d.metrics_port(), "/metrics");
  EXPECT_NE(text.find("grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Compile\","
                      "grpc_service=\"tilec.v1.Tilec\",grpc_type=\"unary\"} 64"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tilec_compiles_total{code=\"OK\",target=\"sm_90a\"} 1"), std::string::npos);
  std::string metrics_file = MakeTempDir("metrics") + "/metrics.txt";
  std::ofstream(metrics_file) << text;
  if (::access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  std::string cmd = "/usr/bin/promtool check metrics < " + metrics_file + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  EXPECT_EQ(::pclose(p), 0) << out;
}

TEST(ServerE2E, BadProgramIsInvalidArgumentWithLocation) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  tilec::v1::CompileRequest req = GemmRequest(128, {"sm_80"});
  req.mutable_source()->set_path("bad.py");
  req.mutable_source()->set_text("def matmul(M):\n    x = (1 +\n");
  tilec::v1::CompileResponse resp;
  grpc::Status s = Compile(d, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("bad.py:", 0), 0u) << s.error_message();
  req = GemmRequest(128, {"sm_75"});
  EXPECT_EQ(Compile(d, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Stats(d).compiles(), 0);
}

// A compile past its time or memory limit fails with a clear status while a
// request beside it (a cache hit) succeeds and the server keeps serving.
TEST(ServerE2E, CompileKilledByItsLimitFailsAlone) {
  std::string cache = MakeTempDir("cache");
  {
    Tilecd d;  // puts the M=128 program in the cache
    ASSERT_TRUE(d.Start(cache, {"--metrics_port=-1"}));
    tilec::v1::CompileResponse resp;
    grpc::Status s = Compile(d, GemmRequest(128, {"sm_80"}), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  struct Limit {
    std::string flag;
    grpc::StatusCode code;
    std::string message;
  };
  const Limit limits[] = {
      {"--compile_timeout_s=0.05", grpc::StatusCode::DEADLINE_EXCEEDED, "time limit"},
      {"--compile_memory_mb=100", grpc::StatusCode::RESOURCE_EXHAUSTED, "memory limit"},
  };
  for (const Limit& limit : limits) {
    SCOPED_TRACE(limit.flag);
    Tilecd d;
    ASSERT_TRUE(d.Start(cache, {limit.flag, "--metrics_port=-1"}));
    tilec::v1::CompileResponse killed_resp, hit_resp;
    grpc::Status killed, hit;
    std::thread a([&] { killed = Compile(d, GemmRequest(256, {"sm_80"}), &killed_resp); });
    std::thread b([&] { hit = Compile(d, GemmRequest(128, {"sm_80"}), &hit_resp); });
    a.join();
    b.join();
    EXPECT_EQ(killed.error_code(), limit.code) << killed.error_message();
    EXPECT_NE(killed.error_message().find(limit.message), std::string::npos)
        << killed.error_message();
    ASSERT_TRUE(hit.ok()) << hit.error_message();
    EXPECT_TRUE(hit_resp.results(0).cache_hit());
    tilec::v1::StatsResponse st = Stats(d);  // still serving
    EXPECT_EQ(st.compiles(), 1);
    EXPECT_EQ(st.compile_failures(), 1);
    EXPECT_EQ(st.cache_hits(), 1);
  }
}

// A request whose deadline passes before its compile can finish (30 ms; the
// pipeline alone takes longer) gets DEADLINE_EXCEEDED, and its compile is
// stopped: nothing is left running and nothing is stored.
TEST(ServerE2E, ClientDeadlineStopsTheCompile) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(30));
  tilec::v1::CompileResponse resp;
  grpc::Status s = d.stub()->Compile(&ctx, GemmRequest(512, {"sm_80"}), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  tilec::v1::StatsResponse st;
  for (int i = 0; i < 100; ++i) {
    st = Stats(d);
    if (st.compiles_in_flight() == 0 && st.queue_depth() == 0) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(st.compiles_in_flight(), 0);
  EXPECT_EQ(st.cache_entries(), 0);
  EXPECT_EQ(st.compile_failures(), st.compiles());
}

// A tilecd serving `tokens` (a token file's text, at the returned path).
std::string StartWithTokens(Tilecd& d, const std::string& tokens) {
  const std::string path = MakeTempDir("tokens") + "/tokens";
  std::ofstream(path) << tokens;
  EXPECT_TRUE(d.Start(MakeTempDir("cache"), {"--tokens_file=" + path, "--metrics_port=-1"}));
  return path;
}

// The code of a Compile with `token` ("" for none) of a request the server
// refuses before compiling (an unknown target): INVALID_ARGUMENT once past
// authentication.
grpc::StatusCode CompileWith(Tilecd& d, const std::string& token) {
  tilec::v1::CompileResponse resp;
  return Compile(d, GemmRequest(128, {"sm_75"}), &resp, token).error_code();
}

TEST(ServerE2E, TokensAreChecked) {
  Tilecd d;
  StartWithTokens(d, "good-token\nreader-token read\n");
  EXPECT_EQ(CompileWith(d, ""), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(CompileWith(d, "bad-token"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(CompileWith(d, "reader-token"), grpc::StatusCode::PERMISSION_DENIED);
  // A good token gets through to the request's own error.
  EXPECT_EQ(CompileWith(d, "good-token"), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext ctx;
  tilec::v1::StatsResponse st;
  EXPECT_EQ(d.stub()->Stats(&ctx, {}, &st).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

// SIGHUP reads the token file again: a removed token is refused and a new
// one accepted without a restart; a broken file leaves the tokens in force.
TEST(ServerE2E, TokensReloadOnSighup) {
  Tilecd d;
  const std::string tokens = StartWithTokens(d, "first-token\n");
  EXPECT_EQ(CompileWith(d, "first-token"), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(CompileWith(d, "second-token"), grpc::StatusCode::UNAUTHENTICATED);
  // The server picks the change up within its 100 ms loop after the signal.
  auto wait_for = [&](const std::string& token, grpc::StatusCode want) {
    for (int i = 0; i < 100; ++i) {
      if (CompileWith(d, token) == want) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  };
  std::ofstream(tokens) << "second-token\n";
  ASSERT_TRUE(d.Signal(SIGHUP));
  EXPECT_TRUE(wait_for("second-token", grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(CompileWith(d, "first-token"), grpc::StatusCode::UNAUTHENTICATED);
  std::ofstream(tokens) << "third-token admin\n";
  ASSERT_TRUE(d.Signal(SIGHUP));
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(CompileWith(d, "second-token"), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(CompileWith(d, "third-token"), grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace tilec::e2e
