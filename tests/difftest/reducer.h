// The reducer: shrinks a program that fails on one target to a minimal one
// that fails there the same way (same outcome class), by greedy delta
// debugging over the generator's Program:
//   1. remove statements (at any depth; unused buffers and tensors go too),
//   2. replace an expression by one of its operands or by a constant,
//   3. shrink parameters (sizes, tile sizes, threads, stages; a dynamic dim
//      becomes a bound one), turn T.Pipelined into T.serial,
// repeated until no candidate keeps the failure or the check budget is
// spent. A candidate that would read a buffer before defining it is never
// tried (Program::DefinedBeforeUse), so the result fails for the same reason
// and not because of an undefined read. Each check runs isolated
// (RunIsolated) on the failing target only.
#ifndef TILEC_TESTS_DIFFTEST_REDUCER_H_
#define TILEC_TESTS_DIFFTEST_REDUCER_H_

#include <functional>
#include <string>
#include <vector>

#include "tests/difftest/program.h"
#include "tests/difftest/runner.h"

namespace tilec::difftest {

struct ReduceOptions {
  RunnerOptions runner;
  int max_checks = 120;
};

struct Reduced {
  Program program;
  TargetResult result;  // the failure of the reduced program
  int checks = 0;       // candidates tried
};

// Whether a candidate still fails the same way; RunIsolated by default.
using FailurePredicate = std::function<bool(const Program&, TargetResult*)>;

// The predicate the reducer uses: RunIsolated on `target` only, true when
// the outcome is `outcome`.
FailurePredicate SameFailure(const std::string& target, Outcome outcome,
                             const RunnerOptions& options);

Reduced Reduce(const Program& p, const TargetResult& failure, const FailurePredicate& fails,
               int max_checks);

// Every one-step simplification of `p` (exposed for tests), in the order
// tried: biggest first.
std::vector<Program> Candidates(const Program& p);

// A ready regression test: the reduced kernel as a .py file whose header
// holds the outcome, the reproducing command and the runner's settings
// (ParseRegression reads them back).
std::string RegressionFile(const Reduced& r, const std::string& status);

// Reads a regression file written by RegressionFile: its case, the target
// and its status line ("open", "fixed").
struct Regression {
  Case c;
  std::string target;
  std::string outcome;
  std::string status;
};
bool ParseRegression(const std::string& text, Regression* out);

}  // namespace tilec::difftest

#endif  // TILEC_TESTS_DIFFTEST_REDUCER_H_
