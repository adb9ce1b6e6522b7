// End to end for recommendation on a real tilecd (127.0.0.1): the Recommend
// RPC (ranked, deterministic, errors, metrics), Compile binding unbound tile
// parameters by recommendation (and the cache hit of the same config bound
// explicitly), and the tilec CLI printing the same table against the server
// and embedded.
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/e2e/cli_process.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

const std::vector<std::string> kGemmTiles = {"block_M", "block_N", "block_K", "threads",
                                             "num_stages"};

tilec::v1::TileLangSource GemmSource(const std::map<std::string, std::string>& extra) {
  tilec::v1::TileLangSource src;
  src.set_path("examples/gemm.py");
  src.set_text(ReadFile(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py"));
  src.set_function("matmul");
  std::map<std::string, std::string> binds = {{"M", "256"}, {"N", "128"}, {"K", "64"}};
  for (const auto& [k, v] : extra) binds[k] = v;
  for (const auto& [k, v] : binds) {
    tilec::v1::Binding* b = src.add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  return src;
}

// The GEMM with every tile parameter left to recommendation.
tilec::v1::TileLangSource UnboundGemm() {
  tilec::v1::TileLangSource src = GemmSource({});
  for (const std::string& t : kGemmTiles) src.add_unbound(t);
  return src;
}

grpc::Status Recommend(Tilecd& d, const tilec::v1::RecommendRequest& req,
                       tilec::v1::RecommendResponse* resp) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return d.stub()->Recommend(&ctx, req, resp);
}

TEST(RecommendE2E, RankedDeterministicErrorsAndMetrics) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache")));
  tilec::v1::RecommendRequest req;
  *req.mutable_source() = UnboundGemm();
  req.set_profile("h100_sxm");
  req.set_top_k(4);
  tilec::v1::RecommendResponse first, second;
  grpc::Status s = Recommend(d, req, &first);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(first.profile(), "h100_sxm");
  EXPECT_EQ(first.program_hash().size(), 64u);
  ASSERT_EQ(first.recommendations_size(), 4);
  EXPECT_GE(first.configs(), 4);
  EXPECT_LE(first.lowered(), first.configs() - first.over_limits());
  EXPECT_LE(first.rejected_by_lowering(), first.lowered());
  EXPECT_EQ(first.searched_size(), static_cast<int>(kGemmTiles.size()) - first.deduced_size());
  for (int i = 0; i < first.recommendations_size(); ++i) {
    const tilec::v1::RankedConfig& c = first.recommendations(i);
    EXPECT_EQ(c.rank(), i + 1);
    EXPECT_GT(c.predicted_us(), 0);
    EXPECT_FALSE(c.limiter().empty());
    EXPECT_FALSE(c.reason().empty());
    ASSERT_EQ(c.config_size(), static_cast<int>(kGemmTiles.size()));
    ASSERT_FALSE(c.kernels().empty());
    EXPECT_GT(c.kernels(0).shared_bytes(), 0);
    EXPECT_GT(c.kernels(0).registers(), 0);
    EXPECT_LE(c.kernels(0).shared_bytes(), 232448);  // H100's per-block limit
    if (i > 0) {
      EXPECT_LE(first.recommendations(i - 1).predicted_us(), c.predicted_us());
    }
  }
  // The same request twice: the same answer.
  s = Recommend(d, req, &second);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(first.SerializeAsString(), second.SerializeAsString());
  // An A100 ranks within its own, smaller, shared memory.
  req.set_profile("a100");
  tilec::v1::RecommendResponse a100;
  ASSERT_TRUE(Recommend(d, req, &a100).ok());
  EXPECT_EQ(a100.profile(), "a100");
  for (const tilec::v1::RankedConfig& c : a100.recommendations()) {
    EXPECT_LE(c.kernels(0).shared_bytes(), 166912);
  }

  // An unknown profile: INVALID_ARGUMENT listing the known ones.
  req.set_profile("h1000");
  tilec::v1::RecommendResponse none;
  s = Recommend(d, req, &none);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  for (const char* id : {"h1000", "a100", "h100_sxm", "h200", "mi300x", "mi250x"}) {
    EXPECT_NE(s.error_message().find(id), std::string::npos) << s.error_message();
  }
  // A bad program: INVALID_ARGUMENT with file:line:col.
  req.set_profile("h100_sxm");
  req.mutable_source()->set_path("bad.py");
  req.mutable_source()->set_text("def matmul(M):\n    x = (1 +\n");
  s = Recommend(d, req, &none);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Located(s.error_message(), "bad.py")) << s.error_message();
  // -U on a name the function does not take.
  *req.mutable_source() = UnboundGemm();
  req.mutable_source()->add_unbound("blocks_M");
  s = Recommend(d, req, &none);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("-U blocks_M names no parameter"), std::string::npos)
      << s.error_message();

  // Counted in the gRPC metrics like the other methods.
  std::string metrics = HttpGet(d.metrics_port(), "/metrics");
  EXPECT_NE(metrics.find("grpc_method=\"Recommend\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("grpc_code=\"INVALID_ARGUMENT\""), std::string::npos);
}

TEST(RecommendE2E, CompileBindsTheTopRecommendationAndTheSameConfigHits) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  tilec::v1::RecommendRequest rec;
  *rec.mutable_source() = UnboundGemm();
  rec.set_profile("a100");
  rec.set_top_k(1);
  tilec::v1::RecommendResponse top;
  ASSERT_TRUE(Recommend(d, rec, &top).ok());
  ASSERT_EQ(top.recommendations_size(), 1);

  tilec::v1::CompileRequest req;
  *req.mutable_source() = UnboundGemm();
  req.add_targets("sm_80");
  tilec::v1::CompileResponse unbound;
  grpc::Status s = Compile(d, req, &unbound);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(unbound.results_size(), 1);
  const tilec::v1::CompileResult& r = unbound.results(0);
  EXPECT_FALSE(r.cache_hit());
  EXPECT_EQ(r.profile(), "a100");
  EXPECT_EQ(unbound.program_hash(), top.program_hash());
  EXPECT_NE(r.program_hash(), unbound.program_hash());
  // The config chosen is the top recommendation, and the metadata says so.
  std::map<std::string, std::string> chosen;
  ASSERT_EQ(r.config_size(), top.recommendations(0).config_size());
  for (int i = 0; i < r.config_size(); ++i) {
    EXPECT_EQ(r.config(i).name(), top.recommendations(0).config(i).name());
    EXPECT_EQ(r.config(i).value(), top.recommendations(0).config(i).value());
    chosen[r.config(i).name()] = std::to_string(r.config(i).value());
    EXPECT_NE(r.metadata_json().find("\"" + r.config(i).name() +
                                     "\": " + std::to_string(r.config(i).value())),
              std::string::npos)
        << r.metadata_json();
  }
  EXPECT_DOUBLE_EQ(r.predicted_us(), top.recommendations(0).predicted_us());

  // The same config bound explicitly (-D): the same program, a cache hit.
  tilec::v1::CompileRequest explicit_req;
  *explicit_req.mutable_source() = GemmSource(chosen);
  explicit_req.add_targets("sm_80");
  tilec::v1::CompileResponse bound;
  s = Compile(d, explicit_req, &bound);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(bound.results_size(), 1);
  EXPECT_TRUE(bound.results(0).cache_hit());
  EXPECT_EQ(bound.results(0).digest(), r.digest());
  EXPECT_EQ(bound.results(0).cache_key(), r.cache_key());
  EXPECT_EQ(bound.program_hash(), r.program_hash());
  EXPECT_EQ(bound.results(0).config_size(), 0);  // nothing left to choose
  EXPECT_EQ(bound.results(0).profile(), "");

  // A profile of another arch is refused, naming both.
  req.mutable_options()->set_profile("h100_sxm");
  tilec::v1::CompileResponse refused;
  s = Compile(d, req, &refused);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("h100_sxm is for sm_90a, not for the target sm_80"),
            std::string::npos)
      << s.error_message();
}

std::vector<std::string> RecommendArgs() {
  return {"recommend", "examples/gemm.py", "--fn", "matmul", "-D", "M=256", "-D", "N=128",
          "-D", "K=64", "-U", "threads", "-U", "num_stages", "--target", "h100", "--top", "3"};
}

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(RecommendE2E, CliPrintsTheSameTableServedAndEmbedded) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1"}));
  RunResult served = RunTilec(With(RecommendArgs(), {"--server", d.address()}));
  ASSERT_EQ(served.code, 0) << served.err;
  RunResult embedded = RunTilec(RecommendArgs());
  ASSERT_EQ(embedded.code, 0) << embedded.err;
  EXPECT_EQ(served.out, embedded.out);
  EXPECT_NE(served.out.find("matmul on h100_sxm"), std::string::npos) << served.out;
  EXPECT_NE(served.out.find("searched threads in"), std::string::npos) << served.out;
  EXPECT_NE(served.out.find("searched num_stages in"), std::string::npos) << served.out;
  EXPECT_NE(served.out.find("\n   3  "), std::string::npos) << served.out;  // three ranks
  RunResult served_json = RunTilec(With(RecommendArgs(), {"--server", d.address(), "--json"}));
  RunResult embedded_json = RunTilec(With(RecommendArgs(), {"--json"}));
  ASSERT_EQ(served_json.code, 0) << served_json.err;
  EXPECT_EQ(served_json.out, embedded_json.out);
  EXPECT_NE(served_json.out.find("\"rank\": 3"), std::string::npos) << served_json.out;

  // The same errors either way: an unknown profile is a program error (1).
  RunResult bad_served = RunTilec({"recommend", "examples/gemm.py", "--fn", "matmul", "--target",
                                   "h1000", "--server", d.address()});
  RunResult bad_embedded =
      RunTilec({"recommend", "examples/gemm.py", "--fn", "matmul", "--target", "h1000"});
  EXPECT_EQ(bad_served.code, 1) << bad_served.err;
  EXPECT_EQ(bad_embedded.code, 1) << bad_embedded.err;
  EXPECT_EQ(bad_served.err, bad_embedded.err);
  EXPECT_NE(bad_served.err.find("mi300x"), std::string::npos) << bad_served.err;
}

TEST(RecommendE2E, CliLeavesParametersUnboundWithU) {
  std::vector<std::string> parse = {"parse", "examples/gemm.py", "--fn", "matmul", "-D", "M=256",
                                    "-D",    "N=128", "-D", "K=64", "-D", "block_M=64",
                                    "-D",    "block_N=64", "-D", "block_K=32", "--print"};
  RunResult bound = RunTilec(parse);
  ASSERT_EQ(bound.code, 0) << bound.err;
  RunResult unbound = RunTilec(With(parse, {"-U", "threads"}));
  ASSERT_EQ(unbound.code, 0) << unbound.err;
  EXPECT_NE(bound.out, unbound.out);
  EXPECT_NE(unbound.out.find("threads"), std::string::npos) << unbound.out;
  // -U with -D of the same name, and -U of an unknown name: located errors.
  RunResult both = RunTilec(With(parse, {"-U", "block_M"}));
  EXPECT_EQ(both.code, 1) << both.err;
  EXPECT_TRUE(Located(both.err, "examples/gemm.py")) << both.err;
  EXPECT_NE(both.err.find("both bound"), std::string::npos) << both.err;
  // run needs every tile parameter bound.
  std::vector<std::string> run = parse;
  run[0] = "run";
  run.back() = "--interp";
  RunResult ran = RunTilec(run);
  EXPECT_EQ(ran.code, 0) << ran.err;
  RunResult refused = RunTilec(With(run, {"-U", "threads"}));
  EXPECT_EQ(refused.code, 1) << refused.err;
  EXPECT_NE(refused.err.find("leaves threads unbound"), std::string::npos) << refused.err;
}

TEST(RecommendE2E, EmbeddedCompileNamesTheChosenConfig) {
  std::string cache = MakeTempDir("local_cache");
  std::vector<std::string> args = {"compile", "examples/gemm.py", "--fn", "matmul", "-D",
                                   "M=256", "-D", "N=128", "-D", "K=64", "-U", "threads",
                                   "-U", "num_stages", "--target", "sm_80", "--cache_dir", cache};
  RunResult first = RunTilec(args);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("config chosen by recommendation: "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("(profile a100, predicted"), std::string::npos) << first.out;
  for (const char* name : {"block_M=", "block_N=", "block_K=", "threads=", "num_stages="}) {
    EXPECT_NE(first.out.find(name), std::string::npos) << name << "\n" << first.out;
  }
  RunResult again = RunTilec(args);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("cache hit"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace tilec::e2e
