// Loops over a thread's elements are unrolled fully up to kFullUnrollTrips
// iterations and by 8 beyond: a fragment that every thread holds whole (a
// 64x16 float32 tile read along its diagonal, 1024 elements per thread) took
// NVRTC over a minute with three fully unrolled 512-trip loops (found by
// tilec-difftest on an H200), and its arrays live in local memory either way.
// The emitted code still matches the interpreter on the emulator.
#include <string>

#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/emitter_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::tilec::testing::CompileSource;
using ::tilec::testing::TestSeed;

constexpr char kDiagonal[] = R"(
import tilelang.language as T

def diagonal(M, N, bm, bn, threads):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Y0: T.Tensor((M, N), "float16"),
             Y1: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            F0 = T.alloc_fragment((bm, bn), "float32")
            F1 = T.alloc_fragment((bm, bn), "float32")
            F3 = T.alloc_fragment((bn,), "float32")
            T.copy(A[by * bm, bx * bn], F0)
            T.copy(A[by * bm, bx * bn], F1)
            for j in T.Parallel(bn):
                F3[j] = T.cast(T.cast((F0[j % bm, j] - F1[j % bm, j]), "float16"), "float32")
            for i, j in T.Parallel(bn, bm):
                if (by * bm + j < M) and (bx * bn + i < N):
                    Y0[by * bm + j, bx * bn + i] = T.cast(F3[i], "float16")
            T.copy(F0, Y1[by * bm, bx * bn])
    return main
)";

TEST(Unroll, PragmaFollowsTheTripCount) {
  EXPECT_EQ(UnrollPragma(1), "#pragma unroll");
  EXPECT_EQ(UnrollPragma(kFullUnrollTrips), "#pragma unroll");
  EXPECT_EQ(UnrollPragma(kFullUnrollTrips + 1), "#pragma unroll 8");
}

TEST(Unroll, AWholeFragmentPerThreadIsUnrolledBy8AndStillMatches) {
  absl::StatusOr<ir::Program> p =
      CompileSource("diagonal.py", kDiagonal, "diagonal",
                    {{"M", "58"}, {"N", "102"}, {"bm", "64"}, {"bn", "16"}, {"threads", "256"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("#pragma unroll 8\n")) << src->code;
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = TestSeed(91)});
}

TEST(Unroll, SmallTilesStayFullyUnrolled) {
  absl::StatusOr<ir::Program> p =
      CompileSource("diagonal.py", kDiagonal, "diagonal",
                    {{"M", "58"}, {"N", "102"}, {"bm", "8"}, {"bn", "16"}, {"threads", "128"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, Not(HasSubstr("#pragma unroll 8"))) << src->code;
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = TestSeed(92)});
}

}  // namespace
}  // namespace tilec::cuda
