// CompileCore and RecommendCore without gRPC or a real compiler: a fake
// Compiler records the jobs it is given, so the tests see the program the
// core hands on (bound by recommendation or as requested) and its hash.
#include "server/compile_core.h"

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "compiler/ir/hash.h"
#include "compiler/recommend/auto_bind.h"
#include "gtest/gtest.h"
#include "server/recommend_core.h"

namespace tilec::server {
namespace {

std::string GemmText() {
  std::ifstream in(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

tilec::v1::TileLangSource Gemm(const std::vector<std::pair<std::string, std::string>>& binds,
                               const std::vector<std::string>& unbound) {
  tilec::v1::TileLangSource src;
  src.set_path("examples/gemm.py");
  src.set_text(GemmText());
  src.set_function("matmul");
  for (const auto& [k, v] : binds) {
    tilec::v1::Binding* b = src.add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  for (const std::string& u : unbound) src.add_unbound(u);
  return src;
}

const std::vector<std::pair<std::string, std::string>> kSizes = {
    {"M", "256"}, {"N", "128"}, {"K", "64"}};
const std::vector<std::string> kTiles = {"block_M", "block_N", "block_K", "threads",
                                         "num_stages"};

// Returns the program's hash as the artifact, and keeps every job.
class RecordingCompiler : public cache::Compiler {
 public:
  absl::StatusOr<cache::Artifact> Compile(const cache::CompileJob& job) override {
    absl::MutexLock lock(&mu_);
    jobs_.push_back(job);
    cache::Artifact a;
    a.bytes = job.program_hash + job.target;
    a.metadata_json = "{}";
    return a;
  }
  std::vector<cache::CompileJob> jobs() {
    absl::MutexLock lock(&mu_);
    return jobs_;
  }

 private:
  absl::Mutex mu_;
  std::vector<cache::CompileJob> jobs_;
};

TEST(CompileCore, UnboundTileParametersAreBoundPerTargetByItsProfile) {
  RecordingCompiler compiler;
  CompileCore core(&compiler, CoreLimits{});
  tilec::v1::CompileRequest req;
  *req.mutable_source() = Gemm(kSizes, kTiles);
  req.add_targets("sm_90a");
  req.add_targets("sm_80");
  absl::StatusOr<tilec::v1::CompileResponse> resp =
      core.Compile(req, absl::Now() + absl::Seconds(60), nullptr);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->results_size(), 2);
  std::vector<cache::CompileJob> jobs = compiler.jobs();
  ASSERT_EQ(jobs.size(), 2u);
  const char* profiles[] = {"h100_sxm", "a100"};
  for (int i = 0; i < 2; ++i) {
    const tilec::v1::CompileResult& r = resp->results(i);
    EXPECT_EQ(r.profile(), profiles[i]);
    ASSERT_EQ(r.config_size(), 5) << r.DebugString();
    EXPECT_FALSE(recommend::HasUnboundTileParams(*jobs[i].program));
    EXPECT_EQ(jobs[i].program_hash, ir::ProgramHash(*jobs[i].program));
    EXPECT_EQ(r.program_hash(), jobs[i].program_hash);
    EXPECT_NE(r.program_hash(), resp->program_hash());
    // The same config bound with -D is the same program (the same cache key).
    std::vector<std::pair<std::string, std::string>> binds = kSizes;
    for (const tilec::v1::NamedValue& v : r.config()) {
      binds.emplace_back(v.name(), std::to_string(v.value()));
    }
    tilec::v1::CompileRequest explicit_req;
    *explicit_req.mutable_source() = Gemm(binds, {});
    explicit_req.add_targets(r.target());
    absl::StatusOr<tilec::v1::CompileResponse> again =
        core.Compile(explicit_req, absl::InfiniteFuture(), nullptr);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->program_hash(), r.program_hash());
    EXPECT_EQ(again->results(0).program_hash(), r.program_hash());
    EXPECT_EQ(again->results(0).config_size(), 0);
    EXPECT_EQ(again->results(0).digest(), r.digest());
  }
  // The top recommendation of the profile, as Recommend ranks it.
  RecommendCore rec(CoreLimits{}, recommend::BuiltinProfiles());
  tilec::v1::RecommendRequest rreq;
  *rreq.mutable_source() = Gemm(kSizes, kTiles);
  rreq.set_profile("a100");
  rreq.set_top_k(1);
  absl::StatusOr<tilec::v1::RecommendResponse> top = rec.Recommend(rreq, absl::InfiniteFuture());
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->program_hash(), resp->program_hash());
  EXPECT_EQ(top->recommendations(0).config().size(), resp->results(1).config().size());
  for (int i = 0; i < resp->results(1).config_size(); ++i) {
    EXPECT_EQ(top->recommendations(0).config(i).value(), resp->results(1).config(i).value());
  }
}

TEST(CompileCore, LookupAnswersHitsAndPreparesMissesOnce) {
  // The lookup the server runs on its request threads: a miss comes back
  // prepared (parsed and bound, the search done once), and compiling the
  // prepared request gives what Compile gives; a hit comes back whole.
  RecordingCompiler compiler;
  CompileCore core(&compiler, CoreLimits{});
  std::map<std::string, cache::Artifact> cached;
  core.SetLookup(
      [&](const cache::CompileJob& job) -> absl::StatusOr<std::optional<cache::Artifact>> {
        auto it = cached.find(job.program_hash + job.target);
        if (it == cached.end()) return std::nullopt;
        cache::Artifact a = it->second;
        a.cache_hit = true;
        return a;
      });
  tilec::v1::CompileRequest req;
  *req.mutable_source() = Gemm(kSizes, kTiles);
  req.add_targets("sm_80");
  std::shared_ptr<const CompileCore::Prepared> prepared;
  auto miss = core.Lookup(req, absl::Now() + absl::Seconds(60), nullptr, &prepared);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->has_value());
  ASSERT_NE(prepared, nullptr);
  ASSERT_EQ(prepared->jobs.size(), 1u);
  EXPECT_FALSE(recommend::HasUnboundTileParams(*prepared->jobs[0].program));
  EXPECT_TRUE(compiler.jobs().empty());  // a lookup never compiles
  auto compiled = core.Compile(*prepared);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto direct = core.Compile(req, absl::Now() + absl::Seconds(60), nullptr);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(compiled->DebugString(), direct->DebugString());
  const cache::CompileJob& job = prepared->jobs[0];
  cache::Artifact a;
  a.bytes = job.program_hash + job.target;
  cached[job.program_hash + job.target] = a;
  auto hit = core.Lookup(req, absl::Now() + absl::Seconds(60), nullptr, &prepared);
  ASSERT_TRUE(hit.ok() && hit->has_value()) << hit.status();
  EXPECT_TRUE((*hit)->results(0).cache_hit());
  EXPECT_EQ((*hit)->results(0).digest(), direct->results(0).digest());
  // The request's own errors come back from the lookup.
  tilec::v1::CompileRequest bad = req;
  bad.clear_targets();
  EXPECT_TRUE(absl::IsInvalidArgument(
      core.Lookup(bad, absl::InfiniteFuture(), nullptr, &prepared).status()));
}

TEST(CompileCore, ProfileOverrideMustMatchTheTarget) {
  RecordingCompiler compiler;
  CompileCore core(&compiler, CoreLimits{});
  tilec::v1::CompileRequest req;
  *req.mutable_source() = Gemm(kSizes, kTiles);
  req.add_targets("sm_90a");
  req.mutable_options()->set_profile("h200");
  absl::StatusOr<tilec::v1::CompileResponse> resp =
      core.Compile(req, absl::InfiniteFuture(), nullptr);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->results(0).profile(), "h200");
  req.mutable_options()->set_profile("mi300x");
  resp = core.Compile(req, absl::InfiniteFuture(), nullptr);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(resp.status().message().find("mi300x is for gfx942, not for the target sm_90a"),
            std::string::npos)
      << resp.status();
  req.mutable_options()->set_profile("b200");
  resp = core.Compile(req, absl::InfiniteFuture(), nullptr);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(resp.status().message().find("h100_sxm"), std::string::npos) << resp.status();
  // Past the deadline, recommendation stops and nothing is compiled.
  req.mutable_options()->clear_profile();
  size_t before = compiler.jobs().size();
  resp = core.Compile(req, absl::Now() - absl::Seconds(1), nullptr);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded) << resp.status();
  EXPECT_EQ(compiler.jobs().size(), before);
}

TEST(RecommendCore, ErrorsSayWhatIsWrong) {
  RecommendCore core(CoreLimits{}, recommend::BuiltinProfiles());
  tilec::v1::RecommendRequest req;
  *req.mutable_source() = Gemm(kSizes, kTiles);
  req.set_profile("h1000");
  absl::StatusOr<tilec::v1::RecommendResponse> r = core.Recommend(req, absl::InfiniteFuture());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  for (const char* id : {"a100", "h100_pcie", "h100_sxm", "h200", "host_emulator", "mi250x",
                         "mi300x"}) {
    EXPECT_NE(r.status().message().find(id), std::string::npos) << r.status();
  }
  req.set_profile("mi300x");
  req.set_top_k(-1);
  r = core.Recommend(req, absl::InfiniteFuture());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  req.set_top_k(0);  // the default, 5
  r = core.Recommend(req, absl::InfiniteFuture());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->recommendations_size(), kDefaultTopK);
  EXPECT_EQ(r->profile(), "mi300x");
  r = core.Recommend(req, absl::Now() - absl::Seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  // A program whose only config is over every limit: FAILED_PRECONDITION.
  *req.mutable_source() = Gemm({{"M", "256"}, {"N", "128"}, {"K", "64"}, {"block_M", "256"},
                                {"block_N", "256"}, {"block_K", "256"}, {"num_stages", "4"}},
                               {"threads"});
  r = core.Recommend(req, absl::InfiniteFuture());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("no valid config"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace tilec::server
