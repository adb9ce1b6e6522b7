// Emitted CUDA C++ run on the SIMT emulator (clang-19 host build of the very
// same source) and compared with the reference interpreter on random inputs,
// for example kernels at small and ragged sizes. Set TILEC_TEST_SEED to
// reproduce a run; TILEC_DUMP_CUDA=1 prints the generated source.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/host/emulate.h"
#include "gtest/gtest.h"
#include "tests/testing/example_cases.h"

namespace tilec::cuda {
namespace {

using ::tilec::testing::ExampleCase;

uint64_t Seed() {
  const char* env = std::getenv("TILEC_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20261121;
}

absl::StatusOr<ir::Program> CompileCase(const ExampleCase& c) {
  absl::StatusOr<std::string> text =
      ::tilec::testing::ReadFile(::tilec::testing::ExamplesDir() + "/" + c.file);
  if (!text.ok()) return text.status();
  frontend::Bindings b;
  for (const auto& [k, v] : c.bindings) b.Set(k, v);
  absl::StatusOr<ir::Program> p =
      frontend::CompileTileLang(frontend::SourceFile{"examples/" + c.file, *text}, c.function, b);
  if (!p.ok()) return p.status();
  if (absl::Status st = ir::Verify(*p); !st.ok()) return st;
  return p;
}

absl::Status RunOnEmulator(const ir::Program& program, const CudaSource& src,
                           std::vector<interp::Tensor>& args,
                           const std::map<std::string, int64_t>& dim_values = {}) {
  return host::EmulateProgram(program, src, args, dim_values);
}

// Emits the case for `arch`, runs it on the emulator and compares every
// tensor with the interpreter's.
void RunCase(const std::string& name, CudaArch arch) {
  absl::StatusOr<std::vector<ExampleCase>> cases = ::tilec::testing::LoadExampleCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  const ExampleCase* c = nullptr;
  for (const ExampleCase& x : *cases) {
    if (x.name == name) c = &x;
  }
  ASSERT_NE(c, nullptr) << name;
  absl::StatusOr<ir::Program> program = CompileCase(*c);
  ASSERT_TRUE(program.ok()) << program.status();
  const CudaTarget target = CudaTarget::ForArch(arch);
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(*program, target.info);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<CudaSource> src = EmitCuda(*program, *plan, target);
  ASSERT_TRUE(src.ok()) << src.status();
  if (std::getenv("TILEC_DUMP_CUDA")) std::printf("%s\n", src->code.c_str());

  const uint64_t seed = Seed();
  std::printf("case %s for %s, seed %llu (TILEC_TEST_SEED)\n", c->name.c_str(),
              std::string(target.name()).c_str(), static_cast<unsigned long long>(seed));
  absl::StatusOr<std::vector<interp::Tensor>> inputs = interp::MakeInputs(*program, {}, seed);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  if (c->file == "gemm_splitk.py") {
    // Split-K accumulates into C, which must start at zero.
    interp::Tensor& out = inputs->back();
    out = interp::Tensor(out.dtype(), out.shape());
  }
  std::vector<interp::Tensor> expected = *inputs;
  std::vector<interp::Tensor> actual = *inputs;
  ASSERT_TRUE(interp::RunProgram(*program, expected).ok());
  absl::Status run = RunOnEmulator(*program, *src, actual);
  ASSERT_TRUE(run.ok()) << run;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!program->params[i].tensor) continue;
    const std::string& tensor = program->params[i].tensor->name;
    absl::StatusOr<interp::CompareResult> cmp =
        interp::CompareTensors(actual[i], expected[i], interp::DefaultTolerance(actual[i].dtype()));
    ASSERT_TRUE(cmp.ok()) << cmp.status();
    std::printf("  %s %s: %s\n", tensor.c_str(), actual[i].TypeString().c_str(),
                cmp->Summary().c_str());
    EXPECT_TRUE(cmp->ok) << tensor << ": " << cmp->Summary() << " (seed " << seed << ")";
  }
}

class EmulatedExample : public ::testing::TestWithParam<std::string> {};

TEST_P(EmulatedExample, MatchesTheInterpreter) { RunCase(GetParam(), CudaArch::kSm80); }

// The sm_90a code paths (the float8 mma, ...) on the cases that take them.
class EmulatedExampleSm90a : public ::testing::TestWithParam<std::string> {};

TEST_P(EmulatedExampleSm90a, MatchesTheInterpreter) { RunCase(GetParam(), CudaArch::kSm90a); }

// Every case of examples/cases.txt (about 20 s on one core), or those of
// the example files named.
std::vector<std::string> CaseNames(const std::vector<std::string>& files = {}) {
  std::vector<std::string> names;
  absl::StatusOr<std::vector<ExampleCase>> cases = ::tilec::testing::LoadExampleCases();
  if (!cases.ok()) return names;
  for (const ExampleCase& c : *cases) {
    if (files.empty() || std::find(files.begin(), files.end(), c.file) != files.end()) {
      names.push_back(c.name);
    }
  }
  return names;
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Examples, EmulatedExample, ::testing::ValuesIn(CaseNames()), ParamName);
INSTANTIATE_TEST_SUITE_P(Examples, EmulatedExampleSm90a,
                         ::testing::ValuesIn(CaseNames({"gemm.py", "gemm_fp8.py"})), ParamName);

constexpr char kScale[] = R"(
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

// A dynamic N passed as the trailing int parameter: 1000 is not a multiple
// of the block, so the last block is ragged.
TEST(EmulatedDynamic, ScaleWithARuntimeSize) {
  frontend::Bindings none;
  absl::StatusOr<ir::Program> program =
      frontend::CompileTileLang(frontend::SourceFile{"scale.py", kScale}, "scale", none);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->dyn_dims.size(), 1u);
  const CudaTarget target = CudaTarget::ForArch(CudaArch::kSm80);
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(*program, target.info);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<CudaSource> src = EmitCuda(*program, *plan, target);
  ASSERT_TRUE(src.ok()) << src.status();
  const uint64_t seed = Seed();
  std::printf("seed %llu (TILEC_TEST_SEED)\n", static_cast<unsigned long long>(seed));
  absl::StatusOr<std::vector<interp::Tensor>> inputs =
      interp::MakeInputs(*program, {{"N", 1000}}, seed);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::vector<interp::Tensor> expected = *inputs, actual = *inputs;
  ASSERT_TRUE(interp::RunProgram(*program, expected).ok());
  absl::Status run = RunOnEmulator(*program, *src, actual, {{"N", 1000}});
  ASSERT_TRUE(run.ok()) << run;
  EXPECT_EQ(actual[1], expected[1]);
  EXPECT_NE(actual[1], (*inputs)[1]);  // the kernel wrote Y
}

}  // namespace
}  // namespace tilec::cuda
