// T.atomic_add lowering: a fragment added into a global tensor goes as
// vector reductions where the target has them (red.global.add.v2/v4.f32 on
// sm_90a, f16x2 pairs on every target), element by element at a ragged
// border or a misaligned row, and as REDG with no shared-memory spin path
// otherwise. Each case is emitted for sm_80 and sm_90a, read in its SASS,
// and run on the SIMT emulator against the reference interpreter on random
// inputs (TILEC_TEST_SEED reproduces a run).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/sass.h"
#include "compiler/targets/host/emulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/example_cases.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

uint64_t Seed() {
  const char* env = std::getenv("TILEC_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 11;
}

struct Emitted {
  ir::Program program;
  CudaSource source;
  std::string sass;
};

// Compiles, emits for `arch` and disassembles the cubin NVRTC makes of it.
Emitted Emit(const std::string& path, const std::string& source, const std::string& function,
             const std::vector<std::pair<std::string, std::string>>& bindings, CudaArch arch) {
  frontend::Bindings b;
  for (const auto& [k, v] : bindings) b.Set(k, v);
  absl::StatusOr<ir::Program> program =
      frontend::CompileTileLang(frontend::SourceFile{path, source}, function, b);
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  EXPECT_TRUE(ir::Verify(*program).ok());
  const CudaTarget target = CudaTarget::ForArch(arch);
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(*program, target.info);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  absl::StatusOr<CudaSource> src = EmitCuda(*program, *plan, target);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return {};
  if (std::getenv("TILEC_DUMP_CUDA")) std::printf("%s\n", src->code.c_str());
  absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, function + ".cu", arch);
  EXPECT_TRUE(cubin.ok()) << cubin.status();
  if (!cubin.ok()) return {};
  absl::StatusOr<std::string> sass = DisassembleCubin(cubin->cubin);
  EXPECT_TRUE(sass.ok()) << sass.status();
  return {*program, *src, sass.ok() ? *sass : ""};
}

// Runs the emitted code on the emulator and the program on the interpreter
// from the same random inputs; every tensor must match within its dtype's
// tolerance.
void ExpectMatchesInterpreter(const Emitted& e) {
  const uint64_t seed = Seed();
  std::printf("%s, seed %llu (TILEC_TEST_SEED)\n", e.program.name.c_str(),
              static_cast<unsigned long long>(seed));
  absl::StatusOr<std::vector<interp::Tensor>> inputs = interp::MakeInputs(e.program, {}, seed);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::vector<interp::Tensor> expected = *inputs, actual = *inputs;
  ASSERT_TRUE(interp::RunProgram(e.program, expected).ok());
  absl::Status emulated = host::EmulateProgram(e.program, e.source, actual);
  ASSERT_TRUE(emulated.ok()) << emulated;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!e.program.params[i].tensor) continue;
    absl::StatusOr<interp::CompareResult> cmp =
        interp::CompareTensors(actual[i], expected[i], interp::DefaultTolerance(actual[i].dtype()));
    ASSERT_TRUE(cmp.ok()) << cmp.status();
    EXPECT_TRUE(cmp->ok) << e.program.params[i].tensor->name << ": " << cmp->Summary()
                         << " (seed " << seed << ")";
  }
}

Emitted SplitK(CudaArch arch) {
  absl::StatusOr<std::vector<::tilec::testing::ExampleCase>> cases =
      ::tilec::testing::LoadExampleCases();
  EXPECT_TRUE(cases.ok()) << cases.status();
  if (!cases.ok()) return {};
  for (const auto& c : *cases) {
    if (c.name != "gemm_splitk_ragged") continue;
    absl::StatusOr<std::string> text =
        ::tilec::testing::ReadFile(::tilec::testing::ExamplesDir() + "/" + c.file);
    EXPECT_TRUE(text.ok());
    return Emit("examples/" + c.file, text.ok() ? *text : "", c.function, c.bindings, arch);
  }
  ADD_FAILURE() << "examples/cases.txt has no gemm_splitk_ragged";
  return {};
}

TEST(AtomicAdd, SplitKAccumulatorIsAddedInFloat32PairsOnSm90a) {
  Emitted e = SplitK(CudaArch::kSm90a);
  EXPECT_THAT(e.source.code, HasSubstr("tl::red_add_vec<float, 2>("));
  EXPECT_GT(CountOpcode(e.sass, "REDG.E.ADD.F32x2"), 0) << e.sass;
  // Every add is a reduction into global memory: no generic atomics with
  // their shared-memory compare-and-swap loop.
  EXPECT_EQ(CountOpcode(e.sass, "ATOMS"), 0);
  EXPECT_EQ(CountOpcode(e.sass, "ATOM"), 0);
  ExpectMatchesInterpreter(e);
}

TEST(AtomicAdd, Sm80HasNoFloat32VectorReduction) {
  Emitted e = SplitK(CudaArch::kSm80);
  EXPECT_THAT(e.source.code, Not(HasSubstr("red_add_vec<float")));
  EXPECT_THAT(e.source.code, HasSubstr("tl::red_add("));
  EXPECT_EQ(CountOpcode(e.sass, "ATOMS"), 0);
  EXPECT_GT(CountOpcode(e.sass, "RED"), 0) << e.sass;
  ExpectMatchesInterpreter(e);
}

// A float32 fragment added into a float16 tensor whose rows (70 elements,
// 140 bytes) are only 4-byte aligned on odd rows: 8-byte runs go as two
// f16x2 reductions where aligned, element by element elsewhere.
constexpr char kIntoHalf[] = R"(
import tilelang.language as T

def acc_half(M, N, bm, bn):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            F = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], F)
            for i, j in T.Parallel(bm, bn):
                F[i, j] = F[i, j] * 2.0
            T.atomic_add(C[by * bm, bx * bn], F)
    return main
)";

TEST(AtomicAdd, FragmentIntoFloat16GoesAsF16x2PairsOnBothTargets) {
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    SCOPED_TRACE(CudaArchName(arch));
    Emitted e = Emit("test.py", kIntoHalf, "acc_half",
                     {{"M", "50"}, {"N", "70"}, {"bm", "16"}, {"bn", "64"}}, arch);
    EXPECT_THAT(e.source.code, HasSubstr("tl::red_add_vec<tl::half_t, "));
    EXPECT_THAT(e.source.code, HasSubstr("tl::is_aligned<"));  // rows are not all aligned
    EXPECT_EQ(CountOpcode(e.sass, "ATOMS"), 0);
    ExpectMatchesInterpreter(e);
  }
}

}  // namespace
}  // namespace tilec::cuda
