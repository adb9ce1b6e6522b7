// The staging budget: builtins that work per element pay per element, so a
// builder cannot keep a core busy for long with few steps; staging also stops
// at its deadline and when asked to (a cancelled call, a server shutting
// down).
#include "compiler/frontend/staging_budget.h"

#include <atomic>
#include <string>

#include "absl/time/clock.h"
#include "tests/compiler/frontend/frontend_test_util.h"

namespace tilec::frontend {
namespace {

using test_util::kPrelude;

// A builder that runs `loop` (Python statements, 4-space indented) at
// staging time, then returns a one-element kernel.
std::string Builder(const std::string& loop) {
  return std::string(kPrelude) + "def build(n):\n" + loop +
         "    @T.prim_func\n"
         "    def k(A: T.Tensor((4,), \"float32\")):\n"
         "        with T.Kernel(1, threads=4) as bx:\n"
         "            for i in T.Parallel(4):\n"
         "                A[i] = 1.0\n"
         "    return k\n";
}

absl::StatusOr<ir::Program> Stage(const std::string& text, StagingLimits limits = {}) {
  Bindings b;
  b.Set("n", "60000");
  b.staging = std::move(limits);
  return CompileTileLang({"builder.py", text}, "build", b);
}

// The builder with `loop` staged, and how long that took.
struct Staged {
  absl::StatusOr<ir::Program> program;
  absl::Duration took;
};
Staged StageTimed(const std::string& loop, StagingLimits limits = {}) {
  const absl::Time start = absl::Now();
  absl::StatusOr<ir::Program> p = Stage(Builder(loop), std::move(limits));
  return {std::move(p), absl::Now() - start};
}

TEST(StagingBudgetTest, SortedOverABigListOverAndOverStopsWithinTheBudget) {
  auto [p, took] = StageTimed(
      "    xs = list(range(n))\n"
      "    for _ in range(1000):\n"
      "        ys = sorted(xs)\n");
  ASSERT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  EXPECT_NE(p.status().message().find("exceeded its step budget"), absl::string_view::npos)
      << p.status();
  EXPECT_TRUE(p.status().message().rfind("builder.py:", 0) == 0) << p.status();
  // Before, each sorted() was one step: 1000 of them ran to completion.
  EXPECT_LT(took, absl::Seconds(5)) << took;
}

TEST(StagingBudgetTest, EveryPerElementBuiltinPays) {
  for (const char* body : {
           "        ys = sum(xs)\n",
           "        ys = max(xs)\n",
           "        ys = xs[:30000] + xs[:30000]\n",
           "        ys = xs == list(xs)\n",
           "        ys = -1 in xs\n",
           "        ys = tuple(reversed(xs))\n",
           "        ys = [x for x in xs][:1]\n",
           "        ys = any(x < 0 for x in xs)\n",
       }) {
    const std::string text =
        Builder(std::string("    xs = list(range(n))\n    for _ in range(1000):\n") + body);
    absl::StatusOr<ir::Program> p = Stage(text);
    EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << body << p.status();
    EXPECT_NE(p.status().message().find("step budget"), absl::string_view::npos)
        << body << p.status();
  }
}

TEST(StagingBudgetTest, NestedSequencesCompareWithinTheBudget) {
  // 60000 references to one 60000-item list: comparing it with itself
  // visits 3.6e9 items unless each visit is paid for.
  auto [p, took] = StageTimed(
      "    row = list(range(n))\n"
      "    grid = [row] * n\n"
      "    same = grid == [row] * n\n");
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  EXPECT_LT(took, absl::Seconds(5));
}

TEST(StagingBudgetTest, SubstringSearchesPayForTheirComparisons) {
  auto [p, took] = StageTimed(
      "    hay = 'a' * 60000\n"
      "    needle = 'a' * 30000 + 'b'\n"
      "    for _ in range(1000):\n"
      "        found = hay.find(needle)\n");
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  EXPECT_LT(took, absl::Seconds(5));
  // join builds no string past the staging limit.
  p = Stage(Builder("    s = 'x' * 60000\n    t = ''.join([s] * 1000)\n"));
  EXPECT_NE(p.status().message().find("too large"), absl::string_view::npos) << p.status();
}

TEST(StagingBudgetTest, TheDeadlineStopsStaging) {
  // Within the step budget, but slow: stopped by the clock.
  StagingLimits limits;
  limits.deadline = absl::Now() + absl::Milliseconds(50);
  limits.deadline_reason = "the test's 50 ms";
  auto [p, took] = StageTimed(
      "    x = 0\n"
      "    for i in range(1000):\n"
      "        for j in range(1000):\n"
      "            x = x + 1\n",
      limits);
  ASSERT_TRUE(absl::IsDeadlineExceeded(p.status())) << p.status();
  EXPECT_NE(p.status().message().find("the test's 50 ms"), absl::string_view::npos);
  EXPECT_LT(took, absl::Seconds(1));
}

TEST(StagingBudgetTest, StopSaysCancelled) {
  std::atomic<int> asked{0};
  StagingLimits limits;
  limits.stop = [&] { return ++asked > 3; };
  absl::StatusOr<ir::Program> p = Stage(Builder("    x = 0\n"
                                                "    for i in range(300):\n"
                                                "        for j in range(300):\n"
                                                "            x = x + j\n"),
                                        limits);
  ASSERT_TRUE(absl::IsCancelled(p.status())) << p.status();
  EXPECT_GT(asked.load(), 3);
}

TEST(StagingBudgetTest, OrdinaryBuildersFitEasily) {
  absl::StatusOr<ir::Program> p =
      Stage(Builder("    xs = sorted(list(range(n)))\n"
                    "    total = sum(xs[:100])\n"));
  EXPECT_TRUE(p.ok()) << p.status();
}

TEST(StagingBudgetTest, ChargesOutsideAnyBudgetAreFree) {
  EXPECT_EQ(StagingBudget::Current(), nullptr);
  EXPECT_TRUE(ChargeStaging(kStagingSteps * 10).ok());
  StagingLimits none;
  {
    StagingBudget b(none, 100);
    EXPECT_EQ(StagingBudget::Current(), &b);
    EXPECT_TRUE(ChargeStaging(100).ok());
    EXPECT_FALSE(ChargeStaging(1).ok());
    EXPECT_FALSE(ChargeStaging(0).ok());  // spent stays spent
  }
  EXPECT_EQ(StagingBudget::Current(), nullptr);
}

}  // namespace
}  // namespace tilec::frontend
