#include "compiler/recommend/recommend.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/recommend/bind.h"
#include "gtest/gtest.h"
#include "tests/compiler/recommend/recommend_test_util.h"

namespace tilec::recommend {
namespace {

using testing::ParseExample;

HardwareProfile Profile(const std::string& target) {
  return *FindProfile(BuiltinProfiles(), target);
}

std::string Describe(const Recommendation& r) {
  std::string out = absl::StrCat("#", r.rank, " ", r.predicted_us, "us ", r.limiter, " [");
  for (const auto& [k, v] : r.config) absl::StrAppend(&out, k, "=", v, " ");
  return absl::StrCat(out, "] ", r.reason);
}

// A GEMM with every tile parameter free except the ones named.
ir::Program Gemm(const std::set<std::string>& unbind = {"block_M", "block_N", "block_K", "threads",
                                                        "num_stages"}) {
  auto p = ParseExample("gemm_f16_nn_small", unbind);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

// ---------------------------------------------------------------------------
// Limits, per profile: a config is evaluated, then the profile is cut to one
// unit under what it needs.

class LimitTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LimitTest, OneByteOverTheSharedMemoryLimitIsRejected) {
  HardwareProfile p = Profile(GetParam());
  ir::Program program = Gemm({"block_M", "block_N", "block_K"});
  Config config{{"block_M", 64}, {"block_N", 64}, {"block_K", 32}};
  auto fits = EvaluateConfig(program, p, config, {});
  ASSERT_TRUE(fits.ok()) << fits.status();
  const int64_t need = fits->kernels[0].shared_bytes;
  // A: 64x32, B: 32x64, both double-buffered (num_stages=2), C: 64x64, f16,
  // live only after the loop that reads A and B, so it takes their bytes
  // (inference/shared_plan.h).
  EXPECT_EQ(need, std::max(2 * (64 * 32 * 2) * 2, 64 * 64 * 2));
  p.set_shared_memory_per_block_bytes(need);
  EXPECT_TRUE(EvaluateConfig(program, p, config, {}).ok());
  p.set_shared_memory_per_block_bytes(need - 1);
  auto over = EvaluateConfig(program, p, config, {});
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(absl::StrContains(over.status().message(), "shared memory")) << over.status();
  // The whole search also never returns it.
  RecommendOptions options;
  options.validate_all = true;
  options.top_k = 1000;
  auto all = Recommend(program, p, options);
  ASSERT_TRUE(all.ok()) << all.status();
  for (const Recommendation& r : *all) {
    EXPECT_LE(r.kernels[0].shared_bytes, need - 1) << Describe(r);
    EXPECT_NE(r.config, config);
  }
}

TEST_P(LimitTest, ThreadsOverTheLimitAreRejected) {
  HardwareProfile p = Profile(GetParam());
  ir::Program program = Gemm({"threads"});
  const int64_t w = p.warp_size();
  EXPECT_TRUE(EvaluateConfig(program, p, {{"threads", 2 * w}}, {}).ok());
  p.set_max_threads_per_block(static_cast<int32_t>(w));
  auto over = EvaluateConfig(program, p, {{"threads", 2 * w}}, {});
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(absl::StrContains(over.status().message(), "threads")) << over.status();
  auto recs = Recommend(program, p, {});
  ASSERT_TRUE(recs.ok()) << recs.status();
  for (const Recommendation& r : *recs) EXPECT_EQ(r.config.at("threads"), w) << Describe(r);
}

TEST_P(LimitTest, RegistersOverTheLimitAreRejected) {
  HardwareProfile p = Profile(GetParam());
  ir::Program program = Gemm({"block_M", "block_N"});
  Config config{{"block_M", 64}, {"block_N", 64}};
  auto fits = EvaluateConfig(program, p, config, {});
  ASSERT_TRUE(fits.ok()) << fits.status();
  const int64_t regs = fits->kernels[0].registers;
  EXPECT_TRUE(fits->kernels[0].registers_from_plan);
  // 64x64 f32 accumulator over 128 threads: 32 registers, plus the rest.
  EXPECT_GE(regs, 32 + kRegisterOverhead);
  p.set_max_registers_per_thread(static_cast<int32_t>(regs));
  EXPECT_TRUE(EvaluateConfig(program, p, config, {}).ok());
  p.set_max_registers_per_thread(static_cast<int32_t>(regs - 1));
  auto over = EvaluateConfig(program, p, config, {});
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(absl::StrContains(over.status().message(), "spill")) << over.status();
}

// A kernel chaining T.gemms (attention, decode) may use three quarters of
// the per-thread registers: its softmax temporaries are not in the estimate.
TEST_P(LimitTest, GemmChainsKeepRegisterHeadroom) {
  HardwareProfile p = Profile(GetParam());
  KernelStats k;
  k.threads = 2 * p.warp_size();
  k.registers = p.max_registers_per_thread();
  k.gemms = 1;
  EXPECT_EQ(SpillFreeRegisters(p, k), p.max_registers_per_thread());
  EXPECT_TRUE(CheckLimits(k, p).ok()) << CheckLimits(k, p);
  k.gemms = 2;
  EXPECT_EQ(SpillFreeRegisters(p, k), p.max_registers_per_thread() * 3 / 4);
  absl::Status over = CheckLimits(k, p);
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(absl::StrContains(over.message(), "chain of T.gemms")) << over;
  k.registers = SpillFreeRegisters(p, k);
  EXPECT_TRUE(CheckLimits(k, p).ok()) << CheckLimits(k, p);
  // The GQA decode kernel counts its two T.gemms.
  auto decode = testing::ParseExample("gqa_decode_small", {});
  ASSERT_TRUE(decode.ok()) << decode.status();
  auto stats = AnalyzeKernels(*decode, p, {}, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ((*stats)[0].gemms, 2);
}

TEST_P(LimitTest, ABlockThatFitsNoSmIsRejected) {
  HardwareProfile p = Profile(GetParam());
  ir::Program program = Gemm({"block_M", "block_N", "block_K"});
  Config config{{"block_M", 64}, {"block_N", 64}, {"block_K", 32}};
  auto fits = EvaluateConfig(program, p, config, {});
  ASSERT_TRUE(fits.ok()) << fits.status();
  // The per-SM shared memory minus the per-block reservation is what counts.
  p.set_shared_memory_per_sm_bytes(fits->kernels[0].shared_bytes +
                                   p.shared_memory_reserved_per_block_bytes() - 1);
  p.set_shared_memory_per_block_bytes(
      std::min<int64_t>(p.shared_memory_per_block_bytes(), p.shared_memory_per_sm_bytes()));
  auto over = EvaluateConfig(program, p, config, {});
  ASSERT_FALSE(over.ok());
}

INSTANTIATE_TEST_SUITE_P(Profiles, LimitTest,
                         ::testing::Values("h100_sxm", "h100_pcie", "h200", "a100", "mi300x",
                                           "mi250x", "host_emulator"));

TEST(RecommendTest, AmdWavefrontsNeedWholeWaves) {
  ir::Program program = Gemm({"threads"});
  auto half = EvaluateConfig(program, Profile("mi300x"), {{"threads", 32}}, {});
  ASSERT_FALSE(half.ok());
  EXPECT_TRUE(absl::StrContains(half.status().message(), "64-lane")) << half.status();
}

// ---------------------------------------------------------------------------
// Determinism and ranking.

void ExpectSame(const std::vector<Recommendation>& a, const std::vector<Recommendation>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].config, b[i].config) << i;
    EXPECT_EQ(a[i].predicted_us, b[i].predicted_us) << i;
    EXPECT_EQ(a[i].limiter, b[i].limiter) << i;
    EXPECT_EQ(a[i].reason, b[i].reason) << i;
    EXPECT_EQ(a[i].rank, static_cast<int>(i) + 1);
  }
}

TEST(RecommendTest, DeterministicAcrossRunsAndParses) {
  ir::Program first = Gemm(), second = Gemm();
  for (const char* target : {"h100", "mi300x"}) {
    RecommendOptions options;
    options.top_k = 8;
    auto a = Recommend(first, Profile(target), options);
    auto b = Recommend(first, Profile(target), options);
    auto c = Recommend(second, Profile(target), options);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status() << b.status() << c.status();
    ASSERT_EQ(a->size(), 8u);
    ExpectSame(*a, *b);
    ExpectSame(*a, *c);
    for (size_t i = 1; i < a->size(); ++i) {
      EXPECT_LE((*a)[i - 1].predicted_us, (*a)[i].predicted_us);
    }
  }
}

TEST(RecommendTest, SmallProblemsAreFlaggedByWaves) {
  // 128x128 output: at most 64 blocks for 132 SMs.
  auto recs = Recommend(Gemm(), Profile("h100"), {});
  ASSERT_TRUE(recs.ok()) << recs.status();
  for (const Recommendation& r : *recs) {
    EXPECT_EQ(r.limiter, "waves") << Describe(r);
    EXPECT_TRUE(absl::StrContains(r.reason, "SMs")) << r.reason;
  }
}

TEST(RecommendTest, LargeGemmPrefersTilesThatReuseData) {
  // 4096^3: 16x16 tiles move 8x the traffic of 128x128 ones for the same
  // flops; the model ranks the big tiles first.
  auto program = ParseExample("gemm_f16_nn_small", {"block_M", "block_N"},
                              {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}});
  ASSERT_TRUE(program.ok()) << program.status();
  RecommendOptions options;
  options.validate_all = true;
  options.top_k = 100;
  auto report = RecommendWithReport(*program, Profile("h100"), options);
  ASSERT_TRUE(report.ok()) << report.status();
  const auto& recs = report->recommendations;
  ASSERT_FALSE(recs.empty());
  std::printf("%s\n", Describe(recs[0]).c_str());
  double t16 = 0, t128 = 0;
  for (const Recommendation& r : recs) {
    if (r.config.at("block_M") == 16 && r.config.at("block_N") == 16) t16 = r.predicted_us;
    if (r.config.at("block_M") == 128 && r.config.at("block_N") == 128) t128 = r.predicted_us;
  }
  ASSERT_GT(t16, 0);
  ASSERT_GT(t128, 0);
  EXPECT_GT(t16, t128);
  EXPECT_GE(recs[0].config.at("block_M") * recs[0].config.at("block_N"), 64 * 64);
}

// On Hopper, T.gemm is wgmma: a warpgroup's instruction reads its B columns
// once per 64 rows of A, not once per warp. A 128x256 tile (two warpgroups,
// m64n256 each) then reads fewer operand bytes per flop than 256x128 (two
// m64n128 per warpgroup); counted per warp, as mma.sync reads, it looked 1.5x
// slower, and the h200 ranking went against the measured one (Spearman -0.19
// over the top 8 on an H200: benchmarks/results/2026-11-27-h200-two-blocks).
TEST(RecommendTest, WgmmaTilesAreNotChargedMmaSyncOperandReads) {
  auto program = ParseExample("gemm_f16_nn_small", {"block_M", "block_N"},
                              {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}, {"block_K", "64"},
                               {"num_stages", "4"}, {"threads", "256"}});
  ASSERT_TRUE(program.ok()) << program.status();
  RecommendOptions options;
  options.validate_all = true;
  options.top_k = 100;
  auto report = RecommendWithReport(*program, Profile("h200"), options);
  ASSERT_TRUE(report.ok()) << report.status();
  const Recommendation* wide = nullptr;
  const Recommendation* tall = nullptr;
  for (const Recommendation& r : report->recommendations) {
    if (r.config.at("block_M") == 128 && r.config.at("block_N") == 256) wide = &r;
    if (r.config.at("block_M") == 256 && r.config.at("block_N") == 128) tall = &r;
  }
  ASSERT_NE(wide, nullptr);
  ASSERT_NE(tall, nullptr);
  std::printf("%s\n%s\n", Describe(*wide).c_str(), Describe(*tall).c_str());
  EXPECT_LE(wide->predicted_us, tall->predicted_us);
  EXPECT_FALSE(absl::StrContains(wide->reason, "shared-memory-bound")) << wide->reason;
}

// ---------------------------------------------------------------------------
// The examples with their block sizes left unbound.

struct ExampleSpec {
  const char* case_name;
  std::set<std::string> unbind;
};

class ExampleTest : public ::testing::TestWithParam<std::tuple<ExampleSpec, std::string>> {};

TEST_P(ExampleTest, RecommendsValidConfigs) {
  const auto& [spec, target] = GetParam();
  auto program = ParseExample(spec.case_name, spec.unbind);
  ASSERT_TRUE(program.ok()) << program.status();
  HardwareProfile p = Profile(target);
  auto report = RecommendWithReport(*program, p, {});
  ASSERT_TRUE(report.ok()) << report.status();
  const auto& recs = report->recommendations;
  ASSERT_FALSE(recs.empty());
  std::printf("%s on %s: %lld configs, %lld over limits, %lld lowered, %lld rejected\n",
              spec.case_name, target.c_str(), static_cast<long long>(report->configs),
              static_cast<long long>(report->over_limits), static_cast<long long>(report->lowered),
              static_cast<long long>(report->rejected_by_lowering));
  for (const Recommendation& r : recs) {
    std::printf("  %s\n", Describe(r).c_str());
    for (const std::string& name : spec.unbind) EXPECT_TRUE(r.config.count(name)) << name;
    // Valid by lowering, and within every limit.
    auto again = EvaluateConfig(*program, p, r.config, {});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->predicted_us, r.predicted_us);
    for (const KernelStats& k : r.kernels) {
      EXPECT_TRUE(CheckLimits(k, p).ok());
      EXPECT_TRUE(k.registers_from_plan);
    }
    EXPECT_FALSE(r.reason.empty());
    EXPECT_GT(r.predicted_us, kLaunchOverheadUs);
  }
}

// ---------------------------------------------------------------------------
// Bounds: a hostile request cannot make the search unbounded in time or
// memory.

// The GEMM with `count` declared candidates for each of its five tile
// parameters (whole warps for threads, multiples of 16 for sizes).
ir::Program GemmWithCandidates(int64_t count) {
  ir::Program p = Gemm();
  for (ir::TileParam& tp : p.tile_params) {
    if (tp.value || !tp.var) continue;
    const int64_t step = tp.var->name == "threads" ? 32 : tp.var->name == "num_stages" ? 1 : 16;
    tp.candidates.clear();
    for (int64_t i = 1; i <= count; ++i) tp.candidates.push_back(i * step);
  }
  return p;
}

TEST(RecommendTest, ASpaceOverTheLimitIsRefusedAtOnceNamingEachCount) {
  // 400^5 = 1.0e13 configs: refused before any is enumerated. (Before the
  // limit, this ran until the deadline, storing every config.)
  RecommendOptions options;
  options.deadline = absl::Now() + absl::Seconds(5);
  const absl::Time start = absl::Now();
  auto report = RecommendWithReport(GemmWithCandidates(400), Profile("h100"), options);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  ASSERT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument) << report.status();
  for (const char* name :
       {"block_M 400", "block_N 400", "block_K 400", "threads 400", "num_stages 400", "1048576"}) {
    EXPECT_TRUE(absl::StrContains(report.status().message(), name)) << report.status();
  }
}

TEST(RecommendTest, TheSpaceSizeCheckDoesNotOverflow) {
  // 400^8 overflows int64; the check must still refuse it.
  SearchSpace space;
  for (int i = 0; i < 8; ++i) {
    SearchedParam p;
    p.name = absl::StrCat("p", i);
    for (int64_t v = 1; v <= 400; ++v) p.values.push_back(v);
    space.searched.push_back(p);
  }
  absl::Status st = space.CheckSize(kMaxSearchConfigs);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "p7 400")) << st;
  space.searched.resize(2);
  EXPECT_TRUE(space.CheckSize(kMaxSearchConfigs).ok());
  EXPECT_EQ(space.Size(), 160000);
}

TEST(RecommendTest, ACancelledSearchStops) {
  // 16^5 = 1048576 configs: within the limit, seconds of work.
  std::atomic<bool> cancel{false};
  RecommendOptions options;
  options.cancelled = [&] { return cancel.load(); };
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(100));
    cancel.store(true);
  });
  const absl::Time start = absl::Now();
  auto report = RecommendWithReport(GemmWithCandidates(16), Profile("h100"), options);
  const absl::Duration took = absl::Now() - start;
  canceller.join();
  EXPECT_EQ(report.status().code(), absl::StatusCode::kCancelled) << report.status();
  EXPECT_LT(took, absl::Seconds(1));
}

TEST(RecommendTest, StreamingWithFewKeptCandidatesGivesTheSameRanking) {
  // Three kept candidates force many passes over the space; the result is
  // that of one full sort.
  ir::Program program = Gemm();
  RecommendOptions all;
  all.top_k = 8;
  RecommendOptions few = all;
  few.kept_candidates = 3;
  auto a = RecommendWithReport(program, Profile("h100"), all);
  auto b = RecommendWithReport(program, Profile("h100"), few);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  ASSERT_EQ(a->recommendations.size(), 8u);
  ExpectSame(a->recommendations, b->recommendations);
  EXPECT_EQ(a->over_limits, b->over_limits);
  EXPECT_EQ(a->lowered, b->lowered);
}

const ExampleSpec kExamples[] = {
    {"gemm_f16_nn_small", {"block_M", "block_N", "block_K", "threads", "num_stages"}},
    {"flash_attention_small", {"block_M", "block_N", "num_stages", "threads"}},
    {"gqa_decode_small", {"block_N", "block_H", "num_stages"}},
};

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest,
                         ::testing::Combine(::testing::ValuesIn(kExamples),
                                            ::testing::Values("h100", "a100", "mi300x")),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param).case_name;
                           return name + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace tilec::recommend
