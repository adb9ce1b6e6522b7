// Emitted CUDA C++ run on the SIMT emulator (clang-19 host build of the very
// same source) and compared with the reference interpreter on random inputs,
// for example kernels at small and ragged sizes. Set TILEC_TEST_SEED to
// reproduce a run; TILEC_DUMP_CUDA=1 prints the generated source.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/testing/example_cases.h"

namespace tilec::cuda {
namespace {

using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;
using ::tilec::testing::EmulatorCheck;
using ::tilec::testing::ExampleCase;
using ::tilec::testing::ExpectEmulatorMatchesInterpreter;
using ::tilec::testing::kScaleKernel;
using ::tilec::testing::TestSeed;

// Emits the case for `arch`, runs it on the emulator and compares every
// tensor with the interpreter's.
void RunCase(const std::string& name, CudaArch arch) {
  absl::StatusOr<ExampleCase> c = ::tilec::testing::FindExampleCase(name);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExampleCase(*c);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
  ASSERT_TRUE(src.ok()) << src.status();
  std::printf("case %s for %s\n", c->name.c_str(), std::string(CudaArchName(arch)).c_str());
  EmulatorCheck check{.seed = TestSeed(20261121)};
  // Split-K accumulates into C, which must start at zero.
  if (c->file == "gemm_splitk.py") check.zero = {"C"};
  ExpectEmulatorMatchesInterpreter(*program, *src, check);
  // Code with TMA loads again with the loads landing as early as the
  // hardware may (the first run: as late), so that a stage refilled while it
  // is still read shows as well as one read before it lands.
  if (src->code.find("tl::tma_load(") != std::string::npos) {
    std::printf("again with TMA loads landing when issued\n");
    check.launch.tma_land_early = true;
    ExpectEmulatorMatchesInterpreter(*program, *src, check);
  }
}

class EmulatedExample : public ::testing::TestWithParam<std::string> {};

TEST_P(EmulatedExample, MatchesTheInterpreter) { RunCase(GetParam(), CudaArch::kSm80); }

// Every case again for sm_90a, whose code differs where the target has more
// (float8 mma, stmatrix epilogues, vector reductions).
class EmulatedExampleSm90a : public ::testing::TestWithParam<std::string> {};

TEST_P(EmulatedExampleSm90a, MatchesTheInterpreter) { RunCase(GetParam(), CudaArch::kSm90a); }

// Every case of examples/cases.txt (about 20 s on one core per target).
std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const ExampleCase& c : ::tilec::testing::ExampleCasesOrDie()) names.push_back(c.name);
  return names;
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Examples, EmulatedExample, ::testing::ValuesIn(CaseNames()), ParamName);
INSTANTIATE_TEST_SUITE_P(Examples, EmulatedExampleSm90a, ::testing::ValuesIn(CaseNames()),
                         ParamName);

// A dynamic N passed as the trailing int parameter: 1000 is not a multiple
// of the block, so the last block is ragged.
TEST(EmulatedDynamic, ScaleWithARuntimeSize) {
  absl::StatusOr<ir::Program> program = CompileSource("scale.py", kScaleKernel, "scale");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->dyn_dims.size(), 1u);
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ExpectEmulatorMatchesInterpreter(
      *program, *src,
      {.seed = TestSeed(20261121), .dims = {{"N", 1000}}, .exact = true, .written = {"Y"}});
}

}  // namespace
}  // namespace tilec::cuda
