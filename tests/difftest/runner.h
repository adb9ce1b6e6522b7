// The differential runner: one tile program through the frontend, the
// reference interpreter (the oracle) and, per CUDA target, layout inference,
// CUDA emission, the host toolchain and the SIMT emulator; the emulator's
// tensors are compared with the interpreter's under tolerances fitted to the
// program's dtypes and accumulation depth.
//
//   Case c = CaseOf(Generate(seed));
//   CaseResult r = RunIsolated(c, {});   // in a child process, with a time limit
//
// Outcomes per (program, target):
// - kMatch: every tensor parameter agrees within tolerance;
// - kRefused: the compiler (or the frontend) declined the program with a
//   user-facing status (INVALID_ARGUMENT, UNIMPLEMENTED, FAILED_PRECONDITION,
//   RESOURCE_EXHAUSTED); `category` is the message normalised (numbers and
//   names dropped) for the refusal histogram;
// - kMismatch: results differ (a compiler bug);
// - kInternalError: INTERNAL or any other status (a compiler bug);
// - kCrash: the emulated kernel faulted (ABORTED) or the process died;
// - kHang: the emulator's watchdog fired or the child ran out of time.
// A program the interpreter rejects is kInvalid for every target (a
// generator bug, counted apart).
//
// Metamorphic check: the same program with a second tile config (another
// thread count and pipeline depth, which must not change any result) runs
// on one target (alternating by seed) against the same oracle, reported as
// target "<arch>+alt".
#ifndef TILEC_TESTS_DIFFTEST_RUNNER_H_
#define TILEC_TESTS_DIFFTEST_RUNNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/difftest/program.h"

namespace tilec::difftest {

enum class Outcome { kMatch, kRefused, kMismatch, kInternalError, kCrash, kHang, kInvalid };

const char* OutcomeName(Outcome o);
// kMismatch, kInternalError, kCrash, kHang.
bool IsBug(Outcome o);

// What the runner needs of a program: its source and how to run and judge it.
struct Case {
  uint64_t seed = 0;  // the generator seed (also seeds the inputs)
  std::string source;
  std::map<std::string, int64_t> dims;  // dynamic dims
  DType tolerance_dtype = "int32";
  int64_t accum_depth = 1;
  bool unordered_atomics = false;
  // Parameter values of the metamorphic variant (empty: no variant).
  std::vector<std::pair<std::string, int64_t>> alt_bindings;
};

Case CaseOf(const Program& p);

struct TargetResult {
  std::string target;  // "sm_80", "sm_90a", "sm_80+alt"
  Outcome outcome = Outcome::kMatch;
  std::string category;  // refusals and bugs: a short normalised reason
  std::string detail;    // the full message or comparison summary
};

struct CaseResult {
  uint64_t seed = 0;
  std::vector<TargetResult> targets;
  double seconds = 0;
};

struct RunnerOptions {
  std::vector<std::string> targets = {"sm_80", "sm_90a"};
  bool metamorphic = true;
  double emulator_time_limit_s = 30;  // per launch (the emulator's watchdog)
  double child_time_limit_s = 60;     // per stage of a case, RunIsolated* only
  // How the emitted code is built for the emulator. The host build is most
  // of a case's time: -O1 costs ~0.8 s per variant, -O0 ~0.04 s (with
  // several variants per build), and the emulated runs stay well under a
  // second (docs/testing.md has the figures).
  std::string host_opt_level = "-O0";
  bool host_debug_info = false;
  // Parent of the host builds' temporary folders ($TMPDIR or /tmp when
  // empty). RunIsolated* give each child its own, removed when the child has
  // ended, so a child killed or crashed mid-build leaves nothing behind.
  std::string host_work_dir;
  // Where the emitted code runs: "" on the SIMT emulator (host build), or a
  // GPU ("cuda:0"): NVRTC to a cubin, loaded and launched through the
  // runtime, every target then being one the GPU runs (sm_90a on Hopper).
  // A fault of the device is kCrash; the device context is then opened anew.
  std::string device;
  // Only these targets (by result name, e.g. "sm_80+alt") are run when
  // non-empty: the reducer re-checks just the failing one.
  std::vector<std::string> only;
};

// Called as the run enters a stage ("frontend", "interpreter", a target
// name) and as each target's result is known.
struct RunHooks {
  std::function<void(const std::string& stage)> on_start;
  std::function<void(const TargetResult&)> on_result;
};

// Runs the case in this process (a crash of generated code takes the
// process down: use RunIsolated for untrusted cases).
CaseResult RunCase(const Case& c, const RunnerOptions& options);
CaseResult RunCase(const Case& c, const RunnerOptions& options, const RunHooks& hooks);

// The targets a run of `c` reports, in order.
std::vector<std::string> ExpectedTargets(const Case& c, const RunnerOptions& options);

// Several cases in this process, with one host build for all their
// variants; hooks name the case by its index.
struct BatchHooks {
  std::function<void(size_t index, const std::string& stage)> on_start;
  std::function<void(size_t index, const TargetResult&)> on_result;
};
std::vector<CaseResult> RunCases(const std::vector<Case>& cases, const RunnerOptions& options,
                                 const BatchHooks& hooks);

// RunIsolated for several cases in one child (one host build for all); the
// case in flight when the child dies or overruns gets kCrash / kHang, and the
// cases it had not reached are re-run one by one with RunIsolated.
std::vector<CaseResult> RunIsolatedBatch(const std::vector<Case>& cases,
                                         const RunnerOptions& options);

// Runs the case in a forked child that must finish each stage within
// options.child_time_limit_s; a child that dies or overruns yields kCrash /
// kHang for the targets it had not finished.
CaseResult RunIsolated(const Case& c, const RunnerOptions& options);

// The CUDA source tilec emits for the case on `arch` (for reading a failure).
absl::StatusOr<std::string> EmitSource(const Case& c, const std::string& arch);

// A status message reduced to a category: the status code name and the
// message without source locations, numbers, quoted text and identifiers
// that vary between programs, at most ~80 characters.
std::string Categorize(const std::string& code, const std::string& message);

}  // namespace tilec::difftest

#endif  // TILEC_TESTS_DIFFTEST_RUNNER_H_
