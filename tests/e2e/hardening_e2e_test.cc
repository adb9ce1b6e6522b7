// End to end, with a real tilecd on loopback: no name a client sends reaches
// generated source; a builder that makes builtins work per element stops
// within its budget while the server answers health and stops on SIGTERM;
// searches inside Compile are admitted through the bounded search queue, the
// excess refused at once with a retry hint.
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/proto_convert.h"
#include "gtest/gtest.h"
#include "tests/e2e/cli_process.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

const std::vector<std::string> kTargets = {"sm_80", "sm_90a", "gfx942"};

// examples/gemm.py's matmul bound for M, N, K = `m`, 128, 64 (or left
// unbound where `unbound` says) as a program in wire form.
ir::Program Gemm(int m, std::set<std::string> unbound = {}) {
  frontend::Bindings b;
  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"M", std::to_string(m)},
                                                        {"N", "128"},
                                                        {"K", "64"},
                                                        {"block_M", "64"},
                                                        {"block_N", "64"},
                                                        {"block_K", "32"},
                                                        {"num_stages", "2"},
                                                        {"threads", "128"}}) {
    if (!unbound.count(k)) b.Set(k, v);
  }
  b.unbound = std::move(unbound);
  absl::StatusOr<ir::Program> p = frontend::CompileTileLang(
      {"examples/gemm.py", ReadFile(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py")}, "matmul",
      b);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : ir::Program{};
}

tilec::v1::CompileRequest WireRequest(const ir::Program& p, const std::string& target) {
  tilec::v1::CompileRequest req;
  *req.mutable_program() = ir::ToProto(p);
  req.add_targets(target);
  return req;
}

tilec::v1::CompileRequest SourceRequest(const std::string& text, const std::string& fn,
                                        const std::string& target) {
  tilec::v1::CompileRequest req;
  req.mutable_source()->set_path("probe.py");
  req.mutable_source()->set_text(text);
  req.mutable_source()->set_function(fn);
  req.add_targets(target);
  return req;
}

const std::string kMarker = "__device__ int marker = 42;";

// Names a client might send, each with something that would mean more than
// a name in C++ source.
std::vector<std::string> HostileNames() {
  return {"k\n" + kMarker + "\n//", "k\r" + kMarker,        "a\"b", "x*/" + kMarker + "/*",
          "#include </etc/passwd>", std::string("k\0x", 3), "k\\",  "a b"};
}

class HardeningE2E : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(d_.Start(MakeTempDir("cache"), {"--allow_prelude=false"})); }
  Tilecd d_;
};

TEST_F(HardeningE2E, NamesThatAreNotIdentifiersAreRefusedOnEveryTarget) {
  const ir::Program base = Gemm(128);
  for (const std::string& name : HostileNames()) {
    for (const std::string& target : kTargets) {
      // The program's name, a buffer's, and a variable's (names the emitter
      // writes into declarations and comments), as the wire form carries them.
      for (int where = 0; where < 3; ++where) {
        tilec::v1::CompileRequest req = WireRequest(base, target);
        tilec::v1::Program* wire = req.mutable_program();
        if (where == 0) wire->set_name(name);
        if (where == 1) {
          ASSERT_GT(wire->buffers_size(), 0);
          wire->mutable_buffers(wire->buffers_size() - 1)->set_name(name);
        }
        if (where == 2) {
          ASSERT_GT(wire->vars_size(), 0);
          wire->mutable_vars(wire->vars_size() - 1)->set_name(name);
        }
        tilec::v1::CompileResponse resp;
        grpc::Status s = Compile(d_, req, &resp);
        EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
            << target << " " << where << ": " << s.error_code() << " " << s.error_message();
        // The name is quoted escaped: one line, no NUL.
        EXPECT_EQ(s.error_message().find_first_of(std::string("\n\r\0", 3)), std::string::npos)
            << s.error_message();
        EXPECT_FALSE(absl::StrContains(s.error_message(), "compiler bug")) << s.error_message();
        EXPECT_EQ(resp.results_size(), 0);
      }
    }
  }
  // The same names through TileLang source: a symbol name is the only name
  // a string can give.
  for (const std::string& target : kTargets) {
    tilec::v1::CompileResponse resp;
    grpc::Status s = Compile(d_,
                             SourceRequest("import tilelang.language as T\n"
                                           "@T.prim_func\n"
                                           "def k(A: T.Tensor((T.dynamic(\"n\\n" +
                                               kMarker +
                                               "\\n//\"),), \"float32\")):\n"
                                               "    with T.Kernel(1, threads=32) as bx:\n"
                                               "        A[0] = 1.0\n",
                                           "k", target),
                             &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_TRUE(absl::StrContains(s.error_message(), "probe.py:3:")) << s.error_message();
    EXPECT_TRUE(absl::StrContains(s.error_message(), "is not an identifier")) << s.error_message();
  }
}

TEST_F(HardeningE2E, NonAsciiNamesAreSpelledAndNoByteOfThemIsInTheArtifact) {
  const std::string alpha = "\xce\xb1";  // α
  const std::string text =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def k" +
      alpha + "(" + alpha +
      ": T.Tensor((256,), \"float32\")):\n"
      "    with T.Kernel(2, threads=128) as bx:\n"
      "        for i in T.Parallel(128):\n"
      "            " +
      alpha + "[bx * 128 + i] = " + alpha + "[bx * 128 + i] * 2.0\n";
  for (const std::string& target : kTargets) {
    tilec::v1::CompileResponse resp;
    grpc::Status s = Compile(d_, SourceRequest(text, "k" + alpha, target), &resp);
    ASSERT_TRUE(s.ok()) << target << ": " << s.error_message();
    ASSERT_EQ(resp.results_size(), 1);
    const std::string& meta = resp.results(0).metadata_json();
    EXPECT_FALSE(absl::StrContains(meta, alpha)) << target;
    EXPECT_TRUE(absl::StrContains(meta, "_xce_xb1")) << target;
    std::string bytes;
    ASSERT_TRUE(GetArtifact(d_, resp.results(0).digest(), &bytes).ok());
    EXPECT_FALSE(absl::StrContains(bytes, alpha)) << target;
  }
}

// A builder that runs `loop` (4-space indented) at staging time, then
// returns a one-element kernel.
std::string BuilderSource(const std::string& loop) {
  return "import tilelang.language as T\n"
         "def build():\n" +
         loop +
         "    @T.prim_func\n"
         "    def k(A: T.Tensor((4,), \"float32\")):\n"
         "        with T.Kernel(1, threads=32) as bx:\n"
         "            A[0] = 1.0\n"
         "    return k\n";
}

// sorted() of 60,000 items a thousand times: one step each before, minutes
// of one core; now it pays per element and stops within the budget.
const std::string kSortingBuilder = BuilderSource(
    "    xs = list(range(60000))\n"
    "    for _ in range(1000):\n"
    "        ys = sorted(xs)\n");

// Within the step budget, but long: a loop of plain arithmetic.
const std::string kSlowBuilder = BuilderSource(
    "    x = 0\n"
    "    for i in range(400):\n"
    "        for j in range(1000):\n"
    "            x = (x + i * j) % 7\n");

// Compile's status, and in `*seconds` how long the call took.
grpc::Status TimedCompile(Tilecd& d, const tilec::v1::CompileRequest& req, double* seconds) {
  tilec::v1::CompileResponse resp;
  const absl::Time start = absl::Now();
  grpc::Status s = Compile(d, req, &resp);
  *seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return s;
}

TEST_F(HardeningE2E, ABuilderThatSortsOverAndOverStopsWithinItsBudget) {
  double took = 0;
  grpc::Status s = TimedCompile(d_, SourceRequest(kSortingBuilder, "build", "sm_80"), &took);
  std::printf("sorted() builder refused in %.3f s\n", took);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "step budget")) << s.error_message();
  EXPECT_LT(took, 5.0);
}

TEST(HardeningStagingE2E, StagingStopsAtTheServersTime) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--staging_timeout_s=0.05"}));
  // A builder that stages for a few hundred milliseconds within its step
  // budget, over the server's 50 ms: DEADLINE_EXCEEDED naming the flag.
  double took = 0;
  grpc::Status s = TimedCompile(d, SourceRequest(kSlowBuilder, "build", "sm_80"), &took);
  std::printf("slow builder under --staging_timeout_s=0.05: %.3f s\n", took);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--staging_timeout_s")) << s.error_message();
  EXPECT_LT(took, 1.0);
}

TEST(HardeningStagingE2E, WhileSortingBuildersStageHealthAnswersAndSigtermStops) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  // Eight clients sending the sorting builder over and over, as fast as
  // they are answered.
  std::shared_ptr<tilec::v1::Tilec::Stub> stub = tilec::v1::Tilec::NewStub(d.channel());
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, refused_by_budget{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      while (!stop) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        tilec::v1::CompileResponse r;
        tilec::v1::CompileRequest req =
            SourceRequest(absl::StrCat(kSortingBuilder, "# client ", c, " ", answered.load(), "\n"),
                          "build", "sm_80");
        grpc::Status s = stub->Compile(&ctx, req, &r);
        if (s.error_code() == grpc::StatusCode::UNAVAILABLE) break;  // the server stopped
        ++answered;
        if (absl::StrContains(s.error_message(), "step budget")) ++refused_by_budget;
      }
    });
  }
  // Until the first stagings have been refused by their budget (each takes
  // about 0.8 s alone; eight share the cores); the clients go on staging.
  for (int i = 0; i < 600 && refused_by_budget.load() == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  double slowest = 0;
  for (int i = 0; i < 3; ++i) {
    const absl::Time asked = absl::Now();
    RunResult health = RunTilec({"health", "--server", d.address(), "--timeout_s", "5"});
    slowest = std::max(slowest, absl::ToDoubleSeconds(absl::Now() - asked));
    EXPECT_EQ(health.code, 0) << health.out << health.err;
  }
  std::printf(
      "health beside 8 sorting builders: slowest %.3f s; %d answered so far, %d by the "
      "step budget\n",
      slowest, answered.load(), refused_by_budget.load());
  EXPECT_LT(slowest, 1.0);
  EXPECT_GT(refused_by_budget.load(), 0);
  const double exit_s = d.Terminate(absl::Seconds(30));
  stop = true;
  for (auto& t : clients) t.join();
  std::printf("SIGTERM to exit while they stage: %.3f s\n", exit_s);
  EXPECT_GE(exit_s, 0) << "tilecd did not exit within 30 s of SIGTERM";
  EXPECT_LT(exit_s, 2.0);
}

TEST(HardeningOverloadE2E, SeventyUnboundCompilesCompleteOrAreRefusedWithARetryHint) {
  // One search thread and room for eight waiting searches: of 70 Compiles
  // that each search before compiling, those admitted complete, the rest
  // are refused at once, none times out.
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"),
                      {"--search_threads=1", "--search_queue=8", "--jobs=2", "--threads=8"}));
  constexpr int kCalls = 70;
  std::vector<tilec::v1::CompileRequest> requests;
  for (int i = 0; i < kCalls; ++i) {
    ir::Program p = Gemm(256 + 64 * i, {"block_M", "block_N", "block_K", "num_stages", "threads"});
    for (ir::TileParam& tp : p.tile_params) {
      if (tp.value || !tp.var) continue;
      const std::string& name = tp.var->name;
      const int64_t step = name == "threads" ? 32 : name == "num_stages" ? 1 : 16;
      tp.candidates.clear();
      for (int64_t c = 1; c <= 7; ++c) tp.candidates.push_back(c * step);  // 7^5 configs
    }
    requests.push_back(WireRequest(p, "sm_80"));
  }
  std::shared_ptr<tilec::v1::Tilec::Stub> stub = tilec::v1::Tilec::NewStub(d.channel());
  std::vector<grpc::Status> status(kCalls);
  std::vector<std::string> pushback(kCalls);
  std::vector<double> seconds(kCalls);
  std::vector<std::thread> clients;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kCalls; ++i) {
    clients.emplace_back([&, i] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(170));
      tilec::v1::CompileResponse resp;
      status[i] = stub->Compile(&ctx, requests[i], &resp);
      seconds[i] = absl::ToDoubleSeconds(absl::Now() - start);
      auto t = ctx.GetServerTrailingMetadata().find("grpc-retry-pushback-ms");
      if (t != ctx.GetServerTrailingMetadata().end())
        pushback[i] = std::string(t->second.data(), t->second.size());
    });
  }
  for (auto& c : clients) c.join();
  int ok = 0, refused = 0;
  double slowest_refusal = 0, last_done = 0;
  for (int i = 0; i < kCalls; ++i) {
    if (status[i].ok()) {
      ++ok;
      last_done = std::max(last_done, seconds[i]);
      continue;
    }
    EXPECT_EQ(status[i].error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << i << ": " << status[i].error_code() << " " << status[i].error_message();
    if (status[i].error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) continue;
    ++refused;
    slowest_refusal = std::max(slowest_refusal, seconds[i]);
    EXPECT_TRUE(absl::StrContains(status[i].error_message(), "queue is full"))
        << status[i].error_message();
    EXPECT_EQ(pushback[i], "2000") << i;
  }
  std::printf(
      "70 unbound compiles: %d compiled (last after %.2f s), %d refused (slowest "
      "refusal %.2f s)\n",
      ok, last_done, refused, slowest_refusal);
  EXPECT_GE(ok, 9);  // the one searching and the eight waiting
  EXPECT_GT(refused, 0);
  EXPECT_EQ(ok + refused, kCalls);
  EXPECT_LT(slowest_refusal, 5.0);
}

}  // namespace
}  // namespace tilec::e2e
