// T.atomic_add lowering: a fragment added into a global tensor goes as
// vector reductions where the target has them (red.global.add.v2/v4.f32 on
// sm_90a, f16x2 pairs on every target), element by element at a ragged
// border or a misaligned row, and as REDG with no shared-memory spin path
// otherwise. Each case is emitted for sm_80 and sm_90a, read in its SASS,
// and run on the SIMT emulator against the reference interpreter on random
// inputs (TILEC_TEST_SEED reproduces a run).
#include <string>
#include <utility>
#include <vector>

#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/sass.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Emitted {
  ir::Program program;
  CudaSource source;
  std::string sass;
};

// Emits `program` for `arch` and disassembles the cubin NVRTC makes of it.
Emitted Emit(absl::StatusOr<ir::Program> program, CudaArch arch) {
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, arch);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return {};
  absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, program->name + ".cu", arch);
  EXPECT_TRUE(cubin.ok()) << cubin.status();
  if (!cubin.ok()) return {};
  absl::StatusOr<std::string> sass = DisassembleCubin(cubin->cubin);
  EXPECT_TRUE(sass.ok()) << sass.status();
  return {*std::move(program), *src, sass.ok() ? *sass : ""};
}

// Runs the emitted code on the emulator and the program on the interpreter
// from the same random inputs; every tensor must match within its dtype's
// tolerance.
void ExpectMatchesInterpreter(const Emitted& e) {
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(e.program, e.source,
                                                     {.seed = ::tilec::testing::TestSeed(11)});
}

Emitted SplitK(CudaArch arch) {
  return Emit(::tilec::testing::CompileExampleCase("gemm_splitk_ragged"), arch);
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
    Emitted e = Emit(
        ::tilec::testing::CompileSource("test.py", kIntoHalf, "acc_half",
                                        {{"M", "50"}, {"N", "70"}, {"bm", "16"}, {"bn", "64"}}),
        arch);
    EXPECT_THAT(e.source.code, HasSubstr("tl::red_add_vec<tl::half_t, "));
    EXPECT_THAT(e.source.code, HasSubstr("tl::is_aligned<"));  // rows are not all aligned
    EXPECT_EQ(CountOpcode(e.sass, "ATOMS"), 0);
    ExpectMatchesInterpreter(e);
  }
}

}  // namespace
}  // namespace tilec::cuda
