// Shared steps of the conformance suite (tests/conformance/): compile one
// kernel of an inline TileLang source, run the reference interpreter on
// random inputs, compare an output with a reference computed by the test,
// check the CUDA code emitted for sm_80 / sm_90a on the SIMT emulator against
// the interpreter, and check a refusal's message.
//
//   ir::Program p = Compile(kSource, "fill", {{"N", "100"}});
//   Tensors args = {Random(ir::DType::kFloat32, {100}, seed), Zeros(...)};
//   Interpret(p, args);
//   ExpectClose(args[1], expected, interp::DefaultTolerance(ir::DType::kFloat32));
//   ExpectTargetsMatch(p, {.seed = seed});
#ifndef TILEC_TESTS_CONFORMANCE_CONFORMANCE_TESTING_H_
#define TILEC_TESTS_CONFORMANCE_CONFORMANCE_TESTING_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/target.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::conformance {

using Tensors = std::vector<interp::Tensor>;
using ::tilec::testing::BindingList;
using ::tilec::testing::EmulatorCheck;

// `s` as a Python string literal, for a binding whose value is a string: a
// bare word is a string only when it names nothing in the module or a Python
// builtin (`max` binds "max").
std::string Quoted(const std::string& s);

// TestSeed(default_seed), printed so that a failure can be reproduced.
uint64_t Seed(uint64_t default_seed);

// `function` of `source` (named "conformance.py") with `bindings`; fails the
// test (and returns an empty program) when the frontend or verifier refuse.
ir::Program Compile(const char* source, const std::string& function,
                    const BindingList& bindings = {});

// The status of compiling `function`, for refusals.
absl::Status CompileStatus(const char* source, const std::string& function,
                           const BindingList& bindings = {});

// Expects compiling `function` to fail with a message containing `message`
// and, unless `located` is false, located in the source ("conformance.py:"),
// as docs/language.md says every refusal is.
void ExpectRefused(const char* source, const std::string& function, const BindingList& bindings,
                   const std::string& message, bool located = true);

// Random contents (interp::RandomTensor) and zeros.
interp::Tensor Random(ir::DType dtype, std::vector<int64_t> shape, uint64_t seed);
interp::Tensor Zeros(ir::DType dtype, std::vector<int64_t> shape);

// Runs the interpreter on `args`; fails the test on error.
void Interpret(const ir::Program& program, Tensors& args);

// Expects every element of `actual` within `tol` of `expected` (row-major),
// naming the first mismatches by flat index.
void ExpectClose(const interp::Tensor& actual, const std::vector<double>& expected,
                 interp::Tolerance tol, const std::string& what = "output");

// The same, bit for bit on integers (exact comparison of GetInt).
void ExpectEqualInts(const interp::Tensor& actual, const std::vector<int64_t>& expected,
                     const std::string& what = "output");

// C = A @ B in float64, A and B the first two of `args` (m x k and k x n, or
// stored transposed when `ta` / `tb`), row-major m x n.
std::vector<double> GemmReference(const Tensors& args, int64_t m, int64_t n, int64_t k,
                                  bool ta = false, bool tb = false);

// `f(i)` for every flat index i < n.
std::vector<double> Table(int64_t n, const std::function<double(int64_t)>& f);

// Emits `program` for each of `archs` and runs it on the SIMT emulator
// against the interpreter (ExpectEmulatorMatchesInterpreter with `check`).
void ExpectTargetsMatch(const ir::Program& program, const EmulatorCheck& check,
                        std::vector<cuda::CudaArch> archs = {cuda::CudaArch::kSm80});

// ExpectTargetsMatch for sm_80 and sm_90a, then the gfx942 code on the
// emulator, all with `seed` and the emulator's uninitialised-read check.
void ExpectAllTargetsMatch(const ir::Program& program, uint64_t seed);

inline const std::vector<cuda::CudaArch> kBothArchs = {cuda::CudaArch::kSm80,
                                                       cuda::CudaArch::kSm90a};

}  // namespace tilec::conformance

#endif  // TILEC_TESTS_CONFORMANCE_CONFORMANCE_TESTING_H_
