// The emitter's facts about variables (non-negative, value range, C++ name)
// are keyed by the variable's node. A variable that carried a fact stays
// alive until the context is reset, so a later variable allocated where a
// dead temporary was cannot inherit its facts: a lane value of a vectorised
// loop once took a dead loop index's non-negativity, and T.floormod of it
// was emitted as C's %, wrong for negative values in the builds whose heap
// reused the address (difftest regression seed_101061, fixed).
#include <string>
#include <vector>

#include "compiler/inference/layout_inference.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/emitter_internal.h"
#include "compiler/targets/cuda/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::tilec::testing::CompileSource;

TEST(EmitterFacts, ADeadTemporarysFactsReachNoLaterVariable) {
  absl::StatusOr<ir::Program> p =
      CompileSource("scale.py", ::tilec::testing::kScaleKernel, "scale", {{"N", "256"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaTarget> target = CudaTarget::FromName("sm_80");
  ASSERT_TRUE(target.ok());
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(*p, target->info);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EmitContext ctx(*p, *plan, *target);
  for (int round = 0; round < 16; ++round) {
    {
      ir::Var temp = ir::MakeVar("e");
      ctx.MarkNonNegative(temp);
      ctx.SetRange(temp, 0, 1);
      ctx.BindVarText(temp, "e_dead");
    }
    // Fresh variables of the same size: the allocator hands a freed block
    // back first, so an unpinned temporary's address would come back here.
    for (int i = 0; i < 8; ++i) {
      ir::Var v = ir::MakeVar("lane");
      EXPECT_FALSE(ctx.NonNegative(v)) << "round " << round;
      EXPECT_FALSE(ctx.Range(v).has_value()) << "round " << round;
      EXPECT_EQ(ctx.var_names().count(v.get()), 0u) << "round " << round;
    }
  }
}

constexpr char kFloorModOfShared[] = R"(
import tilelang.language as T

def kernel(M=1, N=10, bm=7, bn=64, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), Y1: T.Tensor((M * N,), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            S0 = T.alloc_shared((bm, bn), "int32")
            S1 = T.alloc_shared((bm, bn), "int32")
            T.copy(A[by * bm, bx * bn], S0)
            T.copy(A[by * bm, bx * bn], S1)
            for i, j in T.Parallel(bm, bn):
                if (by * bm + i < M) and (bx * bn + j < N):
                    Y1[(by * bm + i) * N + bx * bn + j] = (S0[i, j] % 5)
    return main
)";

TEST(EmitterFacts, FloorModOfAVectorLaneStaysFloorMod) {
  absl::StatusOr<ir::Program> p = CompileSource("floormod.py", kFloorModOfShared, "kernel", {});
  ASSERT_TRUE(p.ok()) << p.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_THAT(src->code, HasSubstr("_vec.v[")) << src->code;  // the vector path exists
    EXPECT_THAT(src->code, Not(HasSubstr("% 5"))) << src->code;
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *p, *src, {.seed = ::tilec::testing::TestSeed(101061), .exact = true});
  }
}

// Conditions the value ranges decide are constants (the bounds test of a
// tile that divides its tensor), but only where the C arithmetic of the
// type computes the values the ranges say: i - 200 of a uint32 wraps to
// more than 32, though mathematically it is below 0.
constexpr char kDecided[] = R"(
import tilelang.language as T

def decided(N=128):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"),
             Z: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                Y[i] = T.if_then_else(i < N, X[i], 0.0)
                Z[i] = T.if_then_else(T.cast(i, "uint32") - T.cast(200, "uint32") < T.cast(32, "uint32"), X[i], 1.0)
    return main
)";

TEST(EmitterFacts, RangesDecideConditionsOnlyWhereTheTypeHoldsTheValues) {
  absl::StatusOr<ir::Program> p = CompileSource("decided.py", kDecided, "decided");
  ASSERT_TRUE(p.ok()) << p.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_THAT(src->code, Not(HasSubstr("< 128 ?"))) << src->code;
    EXPECT_THAT(src->code, HasSubstr("< uint32_t(32)")) << src->code;
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *p, *src, {.seed = ::tilec::testing::TestSeed(20261207), .written = {"Y", "Z"}});
  }
}

}  // namespace
}  // namespace tilec::cuda
