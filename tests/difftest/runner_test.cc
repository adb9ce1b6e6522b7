#include "tests/difftest/runner.h"

#include "gtest/gtest.h"

namespace tilec::difftest {
namespace {

// Y = 2 * X over a dynamic N, guarded at the ragged last block.
constexpr char kScale[] = R"(import tilelang.language as T


def kernel(N, block=64, threads=128):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Y[bx * block + i] = X[bx * block + i] * 2.0

    return main
)";

Case ScaleCase() {
  Case c;
  c.seed = 7;
  c.source = kScale;
  c.dims = {{"N", 100}};
  c.tolerance_dtype = "float32";
  c.alt_bindings = {{"threads", 64}};
  return c;
}

RunnerOptions WithoutVariant() {
  RunnerOptions o;
  o.metamorphic = false;
  return o;
}

RunnerOptions OnlySm80() {
  RunnerOptions o;
  o.only = {"sm_80"};
  return o;
}

TEST(RunnerTest, ACorrectProgramMatchesOnEveryTargetAndItsVariant) {
  CaseResult r = RunCase(ScaleCase(), RunnerOptions{});
  ASSERT_EQ(r.targets.size(), 3u);
  EXPECT_EQ(r.targets[0].target, "sm_80");
  EXPECT_EQ(r.targets[1].target, "sm_90a");
  EXPECT_EQ(r.targets[2].target, "sm_90a+alt");  // seed 7 is odd
  for (const TargetResult& t : r.targets) {
    EXPECT_EQ(t.outcome, Outcome::kMatch) << t.target << ": " << t.category << " " << t.detail;
  }
}

TEST(RunnerTest, OnADeviceTheProgramRunsThroughTheRuntime) {
  // The device mode (NVRTC, the runtime) on the runtime's emulator device:
  // the path a GPU takes, judged the same way.
  RunnerOptions o = WithoutVariant();
  o.targets = {"sm_80"};
  o.device = "emulator";
  CaseResult r = RunCase(ScaleCase(), o);
  ASSERT_EQ(r.targets.size(), 1u);
  EXPECT_EQ(r.targets[0].outcome, Outcome::kMatch)
      << r.targets[0].category << " " << r.targets[0].detail;
  o.device = "cuda:x";
  r = RunCase(ScaleCase(), o);
  ASSERT_EQ(r.targets.size(), 1u);
  EXPECT_EQ(r.targets[0].outcome, Outcome::kRefused) << r.targets[0].detail;
  EXPECT_NE(r.targets[0].detail.find("cuda:x"), std::string::npos) << r.targets[0].detail;
}

TEST(RunnerTest, AProgramTheInterpreterRejectsIsInvalidNotABug) {
  Case c = ScaleCase();
  // An integer division by zero.
  c.source = std::string(kScale);
  const std::string load = "X[bx * block + i] * 2.0";
  c.source.replace(c.source.find(load), load.size(), "T.cast(i // (i - i), \"float32\")");
  CaseResult r = RunCase(c, WithoutVariant());
  ASSERT_EQ(r.targets.size(), 2u);
  EXPECT_EQ(r.targets[0].outcome, Outcome::kInvalid) << r.targets[0].detail;
  EXPECT_FALSE(IsBug(r.targets[0].outcome));
}

TEST(RunnerTest, AFrontendErrorIsARefusalWithACategory) {
  Case c = ScaleCase();
  c.source.replace(c.source.find("T.Parallel"), 10, "T.Paralel");
  CaseResult r = RunCase(c, WithoutVariant());
  ASSERT_EQ(r.targets.size(), 2u);
  EXPECT_EQ(r.targets[0].outcome, Outcome::kRefused);
  EXPECT_EQ(r.targets[0].category.rfind("frontend INVALID_ARGUMENT: ", 0), 0u)
      << r.targets[0].category;
}

TEST(RunnerTest, IsolatedRunsReportTheSameAndCatchAnOverrun) {
  CaseResult r = RunIsolated(ScaleCase(), OnlySm80());
  ASSERT_EQ(r.targets.size(), 1u);
  EXPECT_EQ(r.targets[0].outcome, Outcome::kMatch) << r.targets[0].detail;
  // A child that cannot finish in time is killed and reported as a hang.
  RunnerOptions tight;
  tight.child_time_limit_s = 0.001;
  CaseResult h = RunIsolated(ScaleCase(), tight);
  ASSERT_EQ(h.targets.size(), 3u);
  EXPECT_EQ(h.targets[0].outcome, Outcome::kHang);
  EXPECT_TRUE(IsBug(h.targets[0].outcome));
}

// A batch shares one child and one host build; each case's outcome is what
// it gets on its own.
TEST(RunnerTest, ABatchReportsWhatEachCaseReportsAlone) {
  Case wrong = ScaleCase();
  wrong.seed = 8;
  wrong.source.replace(wrong.source.find("T.Parallel"), 10, "T.Paralel");
  Case other = ScaleCase();
  other.seed = 9;
  other.dims = {{"N", 3}};
  std::vector<Case> cases = {ScaleCase(), wrong, other};
  std::vector<CaseResult> batch = RunIsolatedBatch(cases, RunnerOptions{});
  ASSERT_EQ(batch.size(), 3u);
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseResult alone = RunIsolated(cases[i], RunnerOptions{});
    ASSERT_EQ(batch[i].targets.size(), alone.targets.size()) << i;
    for (size_t t = 0; t < alone.targets.size(); ++t) {
      EXPECT_EQ(batch[i].targets[t].target, alone.targets[t].target);
      EXPECT_EQ(batch[i].targets[t].outcome, alone.targets[t].outcome)
          << i << " " << alone.targets[t].target << ": " << batch[i].targets[t].detail;
    }
  }
  EXPECT_EQ(batch[0].targets[0].outcome, Outcome::kMatch);
  EXPECT_EQ(batch[1].targets[0].outcome, Outcome::kRefused);
  EXPECT_EQ(batch[2].targets[0].outcome, Outcome::kMatch);
}

TEST(RunnerTest, CategoriesDropLocationsNumbersAndNames) {
  EXPECT_EQ(Categorize("emit UNIMPLEMENTED",
                       "gen.py:12:5: error: T.gemm 64x32x16 with 'F3' in registers\n  F3 = ..."),
            "emit UNIMPLEMENTED: T.gemm N with Q in registers");
  EXPECT_EQ(Categorize("inference INVALID_ARGUMENT", "buffer S0 needs 300000 bytes [a, b]"),
            "inference INVALID_ARGUMENT: buffer N needs N bytes [..]");
}

TEST(RunnerTest, CaseOfGivesASecondThreadCount) {
  Case c = ScaleCase();
  EXPECT_EQ(c.alt_bindings.size(), 1u);
  EXPECT_NE(c.alt_bindings[0].second, 128);
}

}  // namespace
}  // namespace tilec::difftest
