// Shared steps of the CUDA emitter tests: compile TileLang (inline or an
// examples/cases.txt case) through the frontend and the verifier, emit CUDA
// C++ for an architecture, and run the emitted code on the SIMT emulator
// against the reference interpreter on random inputs.
//
//   absl::StatusOr<ir::Program> p = CompileSource("test.py", kText, "f", {{"N", "100"}});
//   absl::StatusOr<cuda::CudaSource> src = EmitFor(*p, cuda::CudaArch::kSm80);
//   ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = TestSeed(7), .zero = {"C"}});
//
// Environment: TILEC_TEST_SEED overrides every test's default seed (the seed
// a run used is printed, so a failure can be reproduced); TILEC_DUMP_CUDA set
// makes EmitFor print the source it emits.
#ifndef TILEC_TESTS_COMPILER_TARGETS_CUDA_EMIT_TESTING_H_
#define TILEC_TESTS_COMPILER_TARGETS_CUDA_EMIT_TESTING_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/target.h"
#include "compiler/targets/host/launch.h"
#include "gtest/gtest.h"
#include "tests/testing/example_cases.h"

namespace tilec::testing {

using BindingList = std::vector<std::pair<std::string, std::string>>;

// A one-dimensional kernel over a dynamic N (Y = 2 * X, blocks of `block`
// with a guarded ragged last block), file "scale.py", function "scale":
// the suites' example of a dynamic dim.
inline constexpr char kScaleKernel[] = R"(
import tilelang.language as T

def scale(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Y[bx * block + i] = X[bx * block + i] * 2.0
    return main
)";

// TILEC_TEST_SEED when set (a decimal number), else `default_seed`.
uint64_t TestSeed(uint64_t default_seed);

// `text` (named `path` in diagnostics) through the frontend for `function`
// with `bindings`, then ir::Verify. The first error of either is returned.
absl::StatusOr<ir::Program> CompileSource(const std::string& path, const std::string& text,
                                          const std::string& function,
                                          const BindingList& bindings = {});
// The same with frontend bindings (for Bindings::unbound).
absl::StatusOr<ir::Program> CompileWithBindings(const std::string& path, const std::string& text,
                                                const std::string& function,
                                                const frontend::Bindings& bindings);

// examples/<file> compiled as CompileSource does (named "examples/<file>").
absl::StatusOr<ir::Program> CompileExample(const std::string& file, const std::string& function,
                                           const BindingList& bindings);

// The case of examples/cases.txt named `name`; NotFound when there is none.
absl::StatusOr<ExampleCase> FindExampleCase(const std::string& name);

// A case compiled with its file, function and bindings.
absl::StatusOr<ir::Program> CompileExampleCase(const ExampleCase& c);
absl::StatusOr<ir::Program> CompileExampleCase(const std::string& name);

// Every case of examples/cases.txt; aborts naming the error when the file
// cannot be read (for test parameter lists, built before any test runs).
std::vector<ExampleCase> ExampleCasesOrDie();

// The case's name, as a parameterised test's name suffix.
std::string CaseName(const ::testing::TestParamInfo<ExampleCase>& info);

// Layout inference and EmitCuda for `arch`; prints the source when
// TILEC_DUMP_CUDA is set.
absl::StatusOr<cuda::CudaSource> EmitFor(const ir::Program& program, cuda::CudaArch arch);
absl::StatusOr<cuda::CudaSource> EmitFor(const ir::Program& program,
                                        const cuda::CudaTarget& target);

// What ExpectEmulatorMatchesInterpreter runs and checks; designated
// initializers name the fields a test sets ({.seed = TestSeed(7), .zero = {"C"}}),
// in this order. Every field has an initializer, so leaving one out is no
// missing-initializer warning.
struct EmulatorCheck {
  uint64_t seed = 0;                         // of the random inputs: pass TestSeed(default)
  std::map<std::string, int64_t> dims = {};  // every dynamic dim of the program, by name
  std::vector<std::string> zero = {};        // parameters that start at zero (accumulated into)
  host::LaunchOptions launch = {};           // e.g. launch.check_uninit
  bool exact = false;                        // tensors must be equal, not only within tolerance
  std::vector<std::string> written = {};     // tensors that must differ from their inputs
};

// Makes random inputs for `program` from check.seed (the parameters named in
// check.zero zeroed), runs the interpreter and `source` on the emulator from
// them, and expects every tensor parameter to match within
// interp::DefaultTolerance of its dtype (bit for bit when check.exact), each
// of check.written to have changed. Prints the program, dims and seed, and a
// comparison summary per tensor. A name in check.zero or check.written that
// is no tensor parameter fails the test.
void ExpectEmulatorMatchesInterpreter(const ir::Program& program, const cuda::CudaSource& source,
                                      const EmulatorCheck& check);

}  // namespace tilec::testing

#endif  // TILEC_TESTS_COMPILER_TARGETS_CUDA_EMIT_TESTING_H_
