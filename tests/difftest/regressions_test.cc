// Every reduced reproducer under tests/difftest/regressions runs on its
// target. A file whose status line says "fixed" must not fail any more. A
// file whose status is "open" records a bug not fixed yet and must still
// fail the way it records (like a strict expected failure): when its fix
// lands this test says so, and the line is flipped to "fixed". A "flaky"
// file failed in some runs and not in others (docs/testing.md says what is
// known); it is reported as skipped with the outcome of this run.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tests/difftest/reducer.h"

namespace tilec::difftest {
namespace {

std::vector<std::string> Files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(TILEC_REGRESSIONS_DIR)) {
    if (e.path().extension() == ".py") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class RegressionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RegressionTest, NoLongerFails) {
  std::ifstream in(GetParam());
  std::stringstream ss;
  ss << in.rdbuf();
  Regression reg;
  ASSERT_TRUE(ParseRegression(ss.str(), &reg)) << GetParam();
  RunnerOptions o;
  o.only = {reg.target};
  CaseResult r = RunIsolated(reg.c, o);
  ASSERT_EQ(r.targets.size(), 1u);
  const TargetResult& t = r.targets[0];
  if (reg.status == "flaky") {
    GTEST_SKIP() << GetParam() << " is flaky; this run: " << OutcomeName(t.outcome);
  }
  if (reg.status == "open") {
    EXPECT_EQ(OutcomeName(t.outcome), reg.outcome)
        << GetParam() << " no longer fails as recorded (" << OutcomeName(t.outcome) << ": "
        << t.detail << "); if it is fixed, change its status line to \"fixed\"";
  } else {
    EXPECT_FALSE(IsBug(t.outcome))
        << GetParam() << ": " << OutcomeName(t.outcome) << ": " << t.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, RegressionTest, ::testing::ValuesIn(Files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = std::filesystem::path(info.param).stem().string();
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RegressionTest);

}  // namespace
}  // namespace tilec::difftest
