#include "compiler/targets/cuda/emitter.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/example_cases.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::ExampleCase;

absl::StatusOr<ir::Program> CompileExample(const std::string& file, const std::string& function,
                                           const std::vector<std::pair<std::string, std::string>>&
                                               bindings) {
  absl::StatusOr<std::string> text =
      ::tilec::testing::ReadFile(::tilec::testing::ExamplesDir() + "/" + file);
  if (!text.ok()) return text.status();
  frontend::Bindings b;
  for (const auto& [k, v] : bindings) b.Set(k, v);
  absl::StatusOr<ir::Program> p =
      frontend::CompileTileLang(frontend::SourceFile{"examples/" + file, *text}, function, b);
  if (!p.ok()) return p.status();
  if (absl::Status st = ir::Verify(*p); !st.ok()) return st;
  return p;
}

absl::StatusOr<CudaSource> Emit(const ir::Program& program, const CudaTarget& target) {
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(program, target.info);
  if (!plan.ok()) return plan.status();
  return EmitCuda(program, *plan, target);
}

std::vector<ExampleCase> Cases() {
  absl::StatusOr<std::vector<ExampleCase>> cases = ::tilec::testing::LoadExampleCases();
  if (!cases.ok()) {
    std::fprintf(stderr, "cannot load examples/cases.txt: %s\n",
                 std::string(cases.status().message()).c_str());
    std::abort();
  }
  return *cases;
}

class ExampleEmission : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(ExampleEmission, EmitsAndCompilesForBothTargets) {
  const ExampleCase& c = GetParam();
  absl::StatusOr<ir::Program> program = CompileExample(c.file, c.function, c.bindings);
  ASSERT_TRUE(program.ok()) << program.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    CudaTarget target = CudaTarget::ForArch(arch);
    SCOPED_TRACE(std::string(target.name()));
    absl::StatusOr<CudaSource> src = Emit(*program, target);
    ASSERT_TRUE(src.ok()) << src.status();
    if (std::getenv("TILEC_DUMP_CUDA")) std::printf("%s\n", src->code.c_str());
    absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, c.name + ".cu", arch);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->kernels.size(), src->kernels.size());
    for (const PtxasKernelInfo& k : r->kernels) {
      EXPECT_EQ(k.spill_store_bytes, 0) << k.name;
      EXPECT_EQ(k.spill_load_bytes, 0) << k.name;
    }
    for (const CudaKernel& k : src->kernels) {
      EXPECT_LE(k.smem_bytes, target.info.shared_memory_per_block) << k.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleEmission, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<ExampleCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tilec::cuda
