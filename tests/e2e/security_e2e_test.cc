// End to end, what a client can do to tilecd with a hostile or pathological
// program (issue 22, defects 1, 3, 7 and 9): every limit and every refusal is
// the same embedded (frontend + verifier + the in-process CUDA compiler, as
// `tilec compile` without a server) and served (a real tilecd on loopback,
// its compile children sandboxed).
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/cache/cuda_compiler.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

constexpr char kHeader[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n";

// A 128-element kernel `k` over A and B whose body (inside T.Kernel, one
// level of indentation given by the caller) is `body`.
std::string Kernel(const std::string& body, const std::string& kernel_args = "1, threads=128") {
  return absl::StrCat(kHeader,
                      "@T.prim_func\n"
                      "def k(A: T.Tensor((128,), \"float32\"), B: T.Tensor((128,), \"float32\")):\n"
                      "    with T.Kernel(",
                      kernel_args, ") as bx:\n", body);
}

std::string Indent(int levels) { return std::string(4 * levels, ' '); }

// B[i] = A[i] + A[i] + ... (`terms` terms)
std::string DeepSum(int terms) {
  std::string sum = "A[i]";
  for (int t = 1; t < terms; ++t) sum += " + A[i]";
  return Kernel(
      absl::StrCat(Indent(2), "for i in T.Parallel(128):\n", Indent(3), "B[i] = ", sum, "\n"));
}

// `loops` nested loops: serial ones around a T.Parallel.
std::string DeepLoops(int loops) {
  std::string body;
  for (int l = 0; l + 1 < loops; ++l) {
    absl::StrAppend(&body, Indent(2 + l), "for j", l, " in T.serial(2):\n");
  }
  absl::StrAppend(&body, Indent(loops + 1), "for i in T.Parallel(128):\n", Indent(loops + 2),
                  "B[i] = A[i] + 1.0\n");
  return Kernel(body);
}

// `ifs` nested ifs on the block index around a T.Parallel.
std::string DeepIfs(int ifs) {
  std::string body;
  for (int l = 0; l < ifs; ++l) absl::StrAppend(&body, Indent(2 + l), "if bx < ", 100 - l, ":\n");
  absl::StrAppend(&body, Indent(ifs + 2), "for i in T.Parallel(128):\n", Indent(ifs + 3),
                  "B[i] = A[i]\n");
  return Kernel(body);
}

tilec::v1::CompileRequest SourceRequest(const std::string& text, const std::string& fn = "k") {
  tilec::v1::CompileRequest req;
  req.mutable_source()->set_path("probe.py");
  req.mutable_source()->set_text(text);
  req.mutable_source()->set_function(fn);
  req.add_targets("sm_80");
  return req;
}

// The embedded compile of `text`: frontend, verifier, NVRTC in this process.
absl::Status Embedded(const std::string& text, const std::string& fn = "k") {
  absl::StatusOr<ir::Program> p =
      frontend::CompileTileLang({"probe.py", text}, fn, frontend::Bindings{});
  if (!p.ok()) return p.status();
  if (absl::Status s = ir::Verify(*p); !s.ok()) return s;
  cache::CompileJob job;
  job.program = std::make_shared<const ir::Program>(*std::move(p));
  job.target = "sm_80";
  cache::CudaCompiler compiler;
  return compiler.Compile(job).status();
}

// The served compile's status; the message without the "sm_80: " a
// per-target failure carries.
grpc::Status Served(Tilecd& d, const tilec::v1::CompileRequest& req) {
  tilec::v1::CompileResponse resp;
  return Compile(d, req, &resp);
}

std::string Stripped(const std::string& m) { return m.rfind("sm_80: ", 0) == 0 ? m.substr(7) : m; }

class SecurityE2E : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(d_.Start(MakeTempDir("cache"))); }
  Tilecd d_;
};

TEST_F(SecurityE2E, DeepButValidProgramsCompileEmbeddedAndServed) {
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"sum of 41 terms", DeepSum(41)},
                                                        {"23 nested loops", DeepLoops(23)},
                                                        {"30 nested ifs", DeepIfs(30)}}) {
    absl::Status embedded = Embedded(text);
    EXPECT_TRUE(embedded.ok()) << name << ": " << embedded;
    grpc::Status served = Served(d_, SourceRequest(text));
    EXPECT_TRUE(served.ok()) << name << ": " << served.error_code() << " "
                             << served.error_message();
  }
}

TEST_F(SecurityE2E, NestingPastTheLimitIsTheSameErrorBothWays) {
  const std::string text = DeepSum(ir::kMaxNesting + 20);
  absl::Status embedded = Embedded(text);
  ASSERT_TRUE(absl::IsInvalidArgument(embedded)) << embedded;
  EXPECT_NE(embedded.message().find("nest more than 256"), absl::string_view::npos) << embedded;
  grpc::Status served = Served(d_, SourceRequest(text));
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Stripped(served.error_message()), std::string(embedded.message()));

  // The same program in wire form: the wire parser takes it, the verifier
  // refuses it with the same message.
  absl::StatusOr<ir::Program> p =
      frontend::CompileTileLang({"probe.py", text}, "k", frontend::Bindings{});
  ASSERT_TRUE(p.ok()) << p.status();
  tilec::v1::CompileRequest wire;
  *wire.mutable_program() = ir::ToProto(*p);
  wire.add_targets("sm_80");
  served = Served(d_, wire);
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Stripped(served.error_message()), std::string(embedded.message()));
}

TEST_F(SecurityE2E, MessagesNestedPastTheParserLimitAreInvalidArgumentWithAMessage) {
  absl::StatusOr<ir::Program> p =
      frontend::CompileTileLang({"probe.py", DeepSum(400)}, "k", frontend::Bindings{});
  ASSERT_TRUE(p.ok()) << p.status();
  tilec::v1::CompileRequest wire;
  *wire.mutable_program() = ir::ToProto(*p);
  wire.add_targets("sm_80");
  grpc::Status served = Served(d_, wire);
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);  // the verifier's
  EXPECT_NE(served.error_message().find("nest more than"), std::string::npos);
  // Deeper than the frontend builds: made in IR directly, a sum nesting
  // twice as deep as the wire parser's limit.
  ir::Buffer b = ir::MakeBuffer("S", ir::DType::kFloat32, {ir::IntImm(4)}, ir::Scope::kLocal);
  ir::Expr sum = ir::Load(b, {ir::IntImm(0)});
  for (int i = 0; i < ir::kWireRecursionLimit; ++i) {
    sum = ir::Binary(ir::BinaryOp::kAdd, sum, ir::Load(b, {ir::IntImm(0)}));
  }
  auto kernel = std::make_shared<ir::KernelNode>();
  kernel->grid = {ir::IntImm(1)};
  kernel->block_vars = {ir::MakeVar("bx")};
  kernel->threads = ir::IntImm(32);
  kernel->body = ir::Seq({ir::Allocate(b), ir::Store(b, {ir::IntImm(0)}, sum)});
  ir::Program q;
  q.name = "deep";
  q.body = ir::Seq({kernel});
  *wire.mutable_program() = ir::ToProto(q);
  served = Served(d_, wire);
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(served.error_message().find("nests messages more than"), std::string::npos)
      << served.error_message();
  // Recommend reads programs the same way.
  tilec::v1::RecommendRequest recommend;
  *recommend.mutable_program() = ir::ToProto(q);
  recommend.set_profile("h100_sxm");
  grpc::ClientContext ctx;
  tilec::v1::RecommendResponse recommended;
  served = d_.stub()->Recommend(&ctx, recommend, &recommended);
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(served.error_message().find("is not a valid tilec.v1.RecommendRequest"),
            std::string::npos)
      << served.error_message();
}

TEST_F(SecurityE2E, PreludeCannotReadServerFiles) {
  const std::vector<std::string> preludes = {
      R"(#include \"/etc/passwd\")",
      R"(# /*x*/ include \"/etc/passwd\")",
      R"(#inc\\\nlude \"/etc/passwd\")",
      R"(%:include \"/proc/self/environ\")",
      R"(#if __has_include(\"/etc/shadow\")\n#endif)",
      R"(#line 1 \"/etc/passwd\"\nint x = ;)",
  };
  for (const std::string& prelude : preludes) {
    const std::string text =
        Kernel(absl::StrCat(Indent(2), "for i in T.Parallel(128):\n", Indent(3), "B[i] = A[i]\n"),
               absl::StrCat("1, threads=128, prelude=\"", prelude, "\""));
    absl::Status embedded = Embedded(text);
    EXPECT_TRUE(absl::IsInvalidArgument(embedded)) << prelude << ": " << embedded;
    grpc::Status served = Served(d_, SourceRequest(text));
    EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << prelude;
    const std::string m = served.error_message();
    EXPECT_NE(m.find("kernel 0 > prelude:"), std::string::npos) << prelude << ": " << m;
    EXPECT_EQ(m.find("root:"), std::string::npos) << m;
    EXPECT_EQ(Stripped(m), std::string(embedded.message()));
  }
}

TEST_F(SecurityE2E, PreludeThatDoesNotCompileIsTheUsersError) {
  const std::string text =
      Kernel(absl::StrCat(Indent(2), "for i in T.Parallel(128):\n", Indent(3), "B[i] = A[i]\n"),
             "1, threads=128, prelude=\"__device__ int broken( { return 0; }\"");
  absl::Status embedded = Embedded(text);
  EXPECT_TRUE(absl::IsInvalidArgument(embedded)) << embedded;
  grpc::Status served = Served(d_, SourceRequest(text));
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << served.error_message();
  EXPECT_NE(served.error_message().find("kernel 0 > prelude:1: the prelude does not compile"),
            std::string::npos)
      << served.error_message();
  EXPECT_EQ(served.error_message().find("compiler bug"), std::string::npos);
}

TEST_F(SecurityE2E, ServerCanRefuseInlineSource) {
  Tilecd strict;
  ASSERT_TRUE(strict.Start(MakeTempDir("cache"), {"--allow_prelude=false"}));
  const std::string body =
      absl::StrCat(Indent(2), "for i in T.Parallel(128):\n", Indent(3), "B[i] = A[i]\n");
  const std::string with_prelude =
      Kernel(body, "1, threads=128, prelude=\"__device__ int one() { return 1; }\"");
  grpc::Status served = Served(strict, SourceRequest(with_prelude));
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(served.error_message().find("does not accept inline device source"), std::string::npos);
  EXPECT_TRUE(Served(strict, SourceRequest(Kernel(body))).ok());
  EXPECT_TRUE(Served(d_, SourceRequest(with_prelude)).ok());  // the default accepts it
}

TEST_F(SecurityE2E, StatsSayWhichProtectionsCompileChildrenHave) {
  ASSERT_TRUE(Served(d_, SourceRequest(DeepSum(2))).ok());
  grpc::ClientContext ctx;
  tilec::v1::StatsResponse r;
  ASSERT_TRUE(d_.stub()->Stats(&ctx, {}, &r).ok());
  EXPECT_EQ(r.compile_sandbox().rfind("empty environment", 0), 0) << r.compile_sandbox();
  EXPECT_NE(r.compile_sandbox().find("parent-death signal"), std::string::npos);
}

TEST_F(SecurityE2E, HugeNamesAreRefusedBothWays) {
  const std::string huge(100000, 'f');
  // The function to compile.
  const std::string text = DeepSum(2);
  absl::Status embedded = Embedded(text, huge);
  EXPECT_TRUE(absl::IsInvalidArgument(embedded)) << embedded.code();
  EXPECT_LT(embedded.message().size(), 400u);
  grpc::Status served = Served(d_, SourceRequest(text, huge));
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(served.error_message(), std::string(embedded.message()));
  // A 100,000-character kernel-building function and buffer name in source.
  std::string long_fn = absl::StrCat(kHeader, "@T.prim_func\ndef ", huge,
                                     "(A: T.Tensor((128,), \"float32\")):\n"
                                     "    with T.Kernel(1, threads=128) as bx:\n"
                                     "        A[0] = 1.0\n");
  embedded = Embedded(long_fn, huge);
  EXPECT_TRUE(absl::IsInvalidArgument(embedded));
  served = Served(d_, SourceRequest(long_fn, "k"));
  EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(served.error_message().find("100000 characters long"), std::string::npos)
      << served.error_message().substr(0, 300);
  EXPECT_LT(served.error_message().size(), 1000u);
  // The program, a parameter and a buffer name in wire form.
  absl::StatusOr<ir::Program> p =
      frontend::CompileTileLang({"probe.py", DeepSum(2)}, "k", frontend::Bindings{});
  ASSERT_TRUE(p.ok());
  for (int field = 0; field < 2; ++field) {
    tilec::v1::CompileRequest wire;
    *wire.mutable_program() = ir::ToProto(*p);
    wire.add_targets("sm_80");
    if (field == 0) {
      wire.mutable_program()->set_name(huge);
    } else {
      wire.mutable_program()->mutable_buffers(0)->set_name(huge);
    }
    served = Served(d_, wire);
    EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field;
    EXPECT_NE(served.error_message().find("is 100000 characters long"), std::string::npos)
        << served.error_message().substr(0, 300);
    EXPECT_LT(served.error_message().size(), 400u);
  }
}

TEST_F(SecurityE2E, OutOfRangeLiteralsAndGridsAreLocatedInvalidArgument) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Kernel(absl::StrCat(Indent(2), "for i in T.Parallel(128):\n", Indent(3),
                           "B[i] = A[i] * 1e300\n")),
       "float literal 1e+300 is out of range for float32"},
      {Kernel(absl::StrCat(Indent(2), "for i in T.Parallel(128):\n", Indent(3),
                           "B[i] = A[i] * 1e-320\n")),
       "underflows to 0 in float32"},
      {Kernel(absl::StrCat(Indent(2), "for i in T.Parallel(128):\n", Indent(3), "B[i] = A[i]\n"),
              "72057594037927936, threads=128"),
       "kernel 0: grid extent 0 is 72057594037927936"},
  };
  for (const auto& [text, expected] : cases) {
    absl::Status embedded = Embedded(text);
    EXPECT_TRUE(absl::IsInvalidArgument(embedded)) << embedded;
    EXPECT_NE(embedded.message().find(expected), absl::string_view::npos) << embedded;
    grpc::Status served = Served(d_, SourceRequest(text));
    EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << served.error_message();
    EXPECT_EQ(Stripped(served.error_message()), std::string(embedded.message()));
  }
}

// The frontend reads nothing but the source it is given: an import is a
// name (a module beside the source is never read), and calls that would
// read files or run commands are located errors, embedded and served alike,
// with nothing run. (The frontend and IR libraries call no such function at
// all: ctest frontend_and_ir_do_no_io.)
TEST_F(SecurityE2E, ImportsAreNamesAndFileOrProcessCallsNeverRun) {
  const std::string dir = MakeTempDir("imports");
  std::ofstream(dir + "/helper.py") << "SIZE = 64\n";
  const std::string marker = dir + "/ran";
  auto kernel = [](const std::string& module_code, const std::string& extent) {
    return absl::StrCat(kHeader, module_code,
                        "\n@T.prim_func\n"
                        "def k(A: T.Tensor((128,), \"float32\"), B: T.Tensor((128,), \"float32\")):\n"
                        "    with T.Kernel(1, threads=128) as bx:\n"
                        "        for i in T.Parallel(",
                        extent, "):\n            B[i] = A[i]\n");
  };
  const std::pair<std::string, std::string> cases[] = {
      {kernel("from helper import SIZE\n", "SIZE"), "got module `helper.SIZE`"},
      {kernel("import helper\n", "helper.SIZE"), "helper.SIZE"},
      {kernel("N = len(open(\"/etc/passwd\").read())\n", "N"), "name `open` is not defined"},
      {kernel(absl::StrCat("import os\nN = os.system(\"touch ", marker, "\")\n"), "N"),
       "`os.system` is not supported by tilec"},
      {kernel(absl::StrCat("N = __import__(\"os\").system(\"touch ", marker, "\")\n"), "N"),
       "__import__"},
      {kernel("N = exec(\"import os\")\n", "N"), "exec"},
  };
  for (const auto& [text, expected] : cases) {
    tilec::v1::CompileRequest req = SourceRequest(text);
    req.mutable_source()->set_path(dir + "/k.py");
    absl::Status embedded = Embedded(text);
    EXPECT_TRUE(absl::IsInvalidArgument(embedded)) << embedded << "\n" << text;
    EXPECT_NE(embedded.message().find(expected), absl::string_view::npos) << embedded;
    grpc::Status served = Served(d_, req);
    EXPECT_EQ(served.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << served.error_message();
    EXPECT_NE(served.error_message().find(expected), std::string::npos) << served.error_message();
    EXPECT_EQ(served.error_message().find("root:"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// Digests and hashes from clients are names in the cache only when they are
// 64 hex digits: paths are refused before any file is opened.
TEST_F(SecurityE2E, DigestsAndHashesNeverBecomePaths) {
  for (const std::string& digest :
       {std::string("../../../../etc/passwd"), std::string("/etc/passwd"), std::string(".."),
        std::string("blobs/../keys"), std::string(64, '.'),
        absl::StrCat("../", std::string(61, 'a'))}) {
    std::string bytes;
    grpc::Status s = GetArtifact(d_, digest, &bytes);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << digest << ": "
                                                                  << s.error_message();
    EXPECT_TRUE(bytes.empty()) << digest;
    tilec::v1::CompileRequest by_hash;
    by_hash.set_program_hash(digest);
    by_hash.add_targets("sm_80");
    tilec::v1::CompileResponse resp;
    grpc::Status h = Compile(d_, by_hash, &resp);
    EXPECT_FALSE(h.ok()) << digest;
    EXPECT_EQ(h.error_message().find("root:"), std::string::npos);
  }
}

// The metrics (plain HTTP, no token) say counts, never what clients sent:
// no token, source text, function or file name, cache folder or target a
// client invented (which would also grow the label set without bound).
TEST(SecurityMetricsE2E, MetricsSayNothingAClientSent) {
  const std::string dir = MakeTempDir("metrics_tokens");
  const std::string token = "tok-9f3c1a-secret";
  std::ofstream(dir + "/tokens") << token << "\n";
  const std::string cache = MakeTempDir("metrics_cache");
  Tilecd d;
  ASSERT_TRUE(d.Start(cache, {"--tokens_file=" + dir + "/tokens"}));
  const std::string marker = "MARKER_7d41e0";
  tilec::v1::CompileRequest good = SourceRequest(
      absl::StrCat("# ", marker, "\n",
                   Kernel("        for i in T.Parallel(128):\n            B[i] = A[i]\n")));
  good.mutable_source()->set_path(marker + "/probe.py");
  tilec::v1::CompileResponse resp;
  EXPECT_TRUE(Compile(d, good, &resp, token).ok());
  tilec::v1::CompileRequest bad = good;
  bad.set_targets(0, "sm_" + marker);
  EXPECT_FALSE(Compile(d, bad, &resp, token).ok());
  tilec::v1::CompileRequest broken = good;
  broken.mutable_source()->set_function(marker);
  EXPECT_FALSE(Compile(d, broken, &resp, token).ok());
  EXPECT_FALSE(Compile(d, good, &resp, "not-" + token).ok());
  const std::string metrics = HttpGet(d.metrics_port(), "/metrics");
  ASSERT_NE(metrics.find("tilec_cache_hits_total"), std::string::npos) << metrics;
  for (const std::string& secret : {token, marker, cache, dir}) {
    EXPECT_EQ(metrics.find(secret), std::string::npos) << secret << " in\n" << metrics;
  }
  // Label keys: a closed set.
  const std::set<std::string> allowed = {"grpc_type", "grpc_service", "grpc_method", "grpc_code",
                                         "code", "target", "le", "quantile"};
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t open = line.find('{'), close = line.find('}');
    if (open == std::string::npos || close == std::string::npos) continue;
    for (absl::string_view pair : absl::StrSplit(line.substr(open + 1, close - open - 1), ',')) {
      const std::string key(pair.substr(0, pair.find('=')));
      EXPECT_TRUE(allowed.count(key)) << "label " << key << " in " << line;
      if (key == "target") {
        EXPECT_TRUE(absl::StrContains(pair, "\"sm_80\"") || absl::StrContains(pair, "\"sm_90a\""))
            << line;
      }
    }
  }
}

TEST(SecurityMemoryE2E, RunningOutOfTheMemoryLimitIsResourceExhausted) {
  // Whatever point of the compile the limit hits (loading the child, NVRTC
  // itself), the client hears RESOURCE_EXHAUSTED, never a compiler bug.
  int exhausted = 0;
  for (int mb : {48, 64, 96, 160, 256, 384}) {
    Tilecd d;
    ASSERT_TRUE(d.Start(MakeTempDir("cache"), {absl::StrCat("--compile_memory_mb=", mb)}));
    grpc::Status s = Served(d, SourceRequest(DeepSum(8)));
    EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
        << mb << " MiB: " << s.error_code() << " " << s.error_message();
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
      EXPECT_NE(s.error_message().find("memory limit"), std::string::npos) << s.error_message();
      // The limit is what to change, not the toolkit's path.
      EXPECT_EQ(s.error_message().find("CUDA_HOME"), std::string::npos) << s.error_message();
    }
  }
  EXPECT_GT(exhausted, 0) << "no limit was tight enough: the test proves nothing";
}

}  // namespace
}  // namespace tilec::e2e
