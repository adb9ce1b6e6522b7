#include "tests/difftest/reducer.h"

#include "gtest/gtest.h"
#include "tests/difftest/generator.h"

namespace tilec::difftest {
namespace {

// A failure predicate over the text: "fails" while the program still
// contains a T.reduce_ call (a stand-in for a compiler bug in reductions).
bool ContainsReduce(const Program& p, TargetResult* r) {
  r->target = "sm_80";
  r->outcome = Outcome::kMismatch;
  return p.Render().find("T.reduce_") != std::string::npos;
}

uint64_t SeedWithReduce() {
  for (uint64_t seed = 1;; ++seed) {
    Program p = Generate(seed);
    if (p.Render().find("T.reduce_") != std::string::npos && p.body.size() >= 4) return seed;
  }
}

TEST(ReducerTest, ShrinksToTheStatementsTheFailureNeeds) {
  uint64_t seed = SeedWithReduce();
  Program p = Generate(seed);
  TargetResult failure{"sm_80", Outcome::kMismatch, "c", "d"};
  Reduced r = Reduce(p, failure, ContainsReduce, 1000);
  std::string text = r.program.Render();
  SCOPED_TRACE(text);
  EXPECT_NE(text.find("T.reduce_"), std::string::npos);
  EXPECT_TRUE(r.program.DefinedBeforeUse());
  EXPECT_LT(text.size(), p.Render().size());
  // Nothing else is left to remove: every candidate loses the reduction or
  // reads an undefined buffer.
  for (const Program& c : Candidates(r.program)) {
    TargetResult ignored;
    if (c.DefinedBeforeUse() && c.Render() != text) {
      EXPECT_FALSE(ContainsReduce(c, &ignored));
    }
  }
  // Sizes went to their minimum.
  for (const Param& q : r.program.params) {
    EXPECT_FALSE(q.dynamic) << q.name;
    EXPECT_EQ(q.value, q.min) << q.name;
  }
}

TEST(ReducerTest, RespectsTheCheckBudget) {
  Program p = Generate(SeedWithReduce());
  int calls = 0;
  auto never = [&](const Program&, TargetResult*) {
    ++calls;
    return false;
  };
  Reduced r = Reduce(p, TargetResult{}, never, 5);
  EXPECT_EQ(r.checks, 5);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(r.program.Render(), p.Render());
}

TEST(ReducerTest, RegressionFilesRoundTrip) {
  Program p = Generate(SeedWithReduce());
  Reduced r{p, TargetResult{"sm_90a+alt", Outcome::kInternalError, "emit INTERNAL: x", "boom"}, 3};
  std::string file = RegressionFile(r, "open");
  EXPECT_NE(file.find("# reproduce: tilec run THIS_FILE --fn kernel --seed "), std::string::npos)
      << file;
  EXPECT_NE(file.find("--compare --target sm_90a"), std::string::npos) << file;
  Regression reg;
  ASSERT_TRUE(ParseRegression(file, &reg)) << file;
  Case c = CaseOf(p);
  EXPECT_EQ(reg.target, "sm_90a+alt");
  EXPECT_EQ(reg.outcome, "internal_error");
  EXPECT_EQ(reg.status, "open");
  EXPECT_EQ(reg.c.seed, c.seed);
  EXPECT_EQ(reg.c.dims, c.dims);
  EXPECT_EQ(reg.c.alt_bindings, c.alt_bindings);
  EXPECT_EQ(reg.c.tolerance_dtype, c.tolerance_dtype);
  EXPECT_EQ(reg.c.accum_depth, c.accum_depth);
  EXPECT_FALSE(ParseRegression("def kernel(): pass\n", &reg));
}

}  // namespace
}  // namespace tilec::difftest
