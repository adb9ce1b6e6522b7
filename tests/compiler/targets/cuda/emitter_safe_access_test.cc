// Out-of-bounds element accesses of global tensors (frontend/safe_access.h):
// a load outside the tensor reads its safe value (0, or T.annotate_safe_value
// 's), a store outside it does nothing, a T.copy out of a tensor with a safe
// value pads with it; accesses proven in bounds (by loop, grid and thread
// ranges, or by the enclosing condition) keep no guard. The interpreter is
// checked against values computed here; the code emitted for sm_80 runs on
// the SIMT emulator against the interpreter.
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/ir/printer.h"
#include "compiler/targets/cuda/emitter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;
using ::tilec::testing::TestSeed;

constexpr char kKernels[] = R"(
import tilelang.language as T

# B[r, c] = A[r - 10, c + 3]: reads above the first row and past the last
# column; the stores of the last block's rows past M are dropped.
def shifted(M, N, bm, bn, pad=None):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            if pad is not None:
                T.annotate_safe_value({A: pad})
            for i, j in T.Parallel(bm, bn):
                B[by * bm + i, bx * bn + j] = A[by * bm + i - 10, bx * bn + j + 3]
    return main

def padded_copy(M, N, bm, bn, pad):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((96, 96), "float16")):
        with T.Kernel(3, 3, threads=128) as (bx, by):
            T.annotate_safe_value({A: pad})
            T.copy(A[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn],
                   B[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn])
    return main

# In bounds by the grid (64 x 64 in tiles of 32), and by the condition.
def in_bounds(M, N):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32"),
             C: T.Tensor((M, N), "float32"), D: T.Tensor((M, N), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            for i, j in T.Parallel(32, 32):
                B[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + 1.0
            for i, j in T.Parallel(32, 32):
                r = by * 32 + i
                c = bx * 32 + j
                if r < M and c < N:
                    D[r, c] = C[r, c] * 2.0
    return main

def bad():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((64,), "float32")
            T.annotate_safe_value({S: 1.0})
            T.copy(A, S)
    return main
)";

void ExpectEmulatorMatches(const ir::Program& p, uint64_t seed) {
  absl::StatusOr<CudaSource> src = EmitFor(p, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(p, *src, {.seed = seed, .exact = true});
}

TEST(SafeAccess, OutOfBoundsLoadsReadTheSafeValueAndStoresAreDropped) {
  for (const char* pad : {"None", "-7.5"}) {
    SCOPED_TRACE(pad);
    absl::StatusOr<ir::Program> p =
        CompileSource("safe.py", kKernels, "shifted",
                      {{"M", "50"}, {"N", "40"}, {"bm", "32"}, {"bn", "32"}, {"pad", pad}});
    ASSERT_TRUE(p.ok()) << p.status();
    const double safe = std::string(pad) == "None" ? 0.0 : -7.5;
    const uint64_t seed = TestSeed(61);
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {50, 40}, seed),
                                        interp::Tensor(ir::DType::kFloat32, {50, 40})};
    ASSERT_TRUE(interp::RunProgram(*p, args).ok());
    for (int64_t r = 0; r < 50; ++r) {
      for (int64_t c = 0; c < 40; ++c) {
        const bool inside = r - 10 >= 0 && c + 3 < 40;
        EXPECT_EQ(args[1].GetDouble(r * 40 + c),
                  inside ? args[0].GetDouble((r - 10) * 40 + c + 3) : safe)
            << r << ", " << c;
      }
    }
    ExpectEmulatorMatches(*p, seed);
  }
}

TEST(SafeAccess, CopyOutOfATensorWithASafeValuePadsWithIt) {
  absl::StatusOr<ir::Program> p =
      CompileSource("safe.py", kKernels, "padded_copy",
                    {{"M", "70"}, {"N", "75"}, {"bm", "32"}, {"bn", "32"}, {"pad", "-99"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = TestSeed(62);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {70, 75}, seed),
                                      interp::Tensor(ir::DType::kFloat16, {96, 96})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t r = 0; r < 96; ++r) {
    for (int64_t c = 0; c < 96; ++c) {
      const double want = r < 70 && c < 75 ? args[0].GetDouble(r * 75 + c) : -99.0;
      EXPECT_NEAR(args[1].GetDouble(r * 96 + c), want, 2e-3 * (1 + std::abs(want)))
          << r << ", " << c;
    }
  }
  ExpectEmulatorMatches(*p, seed);
}

TEST(SafeAccess, AccessesProvenInBoundsKeepNoGuard) {
  absl::StatusOr<ir::Program> p =
      CompileSource("safe.py", kKernels, "in_bounds", {{"M", "50"}, {"N", "45"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::Print(*p);
  EXPECT_THAT(text, Not(HasSubstr("if_then_else"))) << text;
  EXPECT_THAT(text, HasSubstr("B[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + "))
      << text;
  ExpectEmulatorMatches(*p, TestSeed(63));
}

TEST(SafeAccess, ASafeValueIsForGlobalTensors) {
  absl::StatusOr<ir::Program> p = CompileSource("safe.py", kKernels, "bad", {});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(),
              HasSubstr("T.annotate_safe_value: a key must be a global tensor, got"));
}

}  // namespace
}  // namespace tilec::cuda
