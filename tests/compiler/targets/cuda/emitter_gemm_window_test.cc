// T.gemm on windows of shared buffers (A_shared[:, k0:k0 + K],
// B_shared[r0:r0 + K, c0:c0 + N]) at constant offsets: the operand's tile is
// addressed through the buffer's own (swizzled or row-major) layout. Each
// kernel is emitted for sm_80 and sm_90a, compiled by NVRTC, and run on the
// SIMT emulator against the interpreter, which is checked against a float64
// reference. A window whose rows do not start on 16-byte chunks is refused.
#include <cmath>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::BindingList;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;
using ::tilec::testing::TestSeed;

// C = A @ B (or A @ B^T with trans_b) for ragged M, N, K; the k-tile of A
// sits in columns [off_a, off_a + bk) of a wider shared buffer, the tile of B
// at rows [off_b, off_b + bk) (columns when trans_b) and column 8 (row 8).
constexpr char kWindows[] = R"(
import tilelang.language as T

def windowed(M, N, K, bm, bn, bk, off_a, off_b, trans_b, dtype):
    B_shape = (N, K) if trans_b else (K, N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, off_a + bk + 8), dtype)
            if trans_b:
                B_s = T.alloc_shared((bn + 8, off_b + bk), dtype)
            else:
                B_s = T.alloc_shared((off_b + bk, bn + 8), dtype)
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=1):
                T.copy(A[by * bm, ko * bk], A_s[:, off_a:off_a + bk])
                if trans_b:
                    T.copy(B[bx * bn, ko * bk], B_s[8:8 + bn, off_b:off_b + bk])
                    T.gemm(A_s[:, off_a:off_a + bk], B_s[8:8 + bn, off_b:off_b + bk], acc,
                           transpose_B=True)
                else:
                    T.copy(B[ko * bk, bx * bn], B_s[off_b:off_b + bk, 8:8 + bn])
                    T.gemm(A_s[:, off_a:off_a + bk], B_s[off_b:off_b + bk, 8:8 + bn], acc)
            T.copy(acc, C[by * bm, bx * bn])
    return main
)";

void Check(const BindingList& bindings, uint64_t seed) {
  absl::StatusOr<ir::Program> p = CompileSource("windows.py", kWindows, "windowed", bindings);
  ASSERT_TRUE(p.ok()) << p.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_THAT(src->code, HasSubstr("tl::Window<"));
    EXPECT_THAT(src->code, HasSubstr("tl::Swizzled<"));
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p->name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src,
                                                       {.seed = TestSeed(seed), .zero = {"C"}});
  }
}

TEST(GemmWindows, ColumnWindowOfASwizzledBuffer) {
  // A_s: rows of 24 + 32 + 8 = 64 halves (128 bytes, swizzled); B_s: rows
  // of 40 halves (80 bytes, row-major).
  Check({{"M", "70"},
         {"N", "45"},
         {"K", "80"},
         {"bm", "32"},
         {"bn", "32"},
         {"bk", "32"},
         {"off_a", "24"},
         {"off_b", "16"},
         {"trans_b", "False"},
         {"dtype", "float16"}},
        21);
}

TEST(GemmWindows, TransposedBWindowsInBfloat16) {
  // A_s: rows of 40 + 16 + 8 = 64 halves (swizzled); B_s: 40 rows of
  // 48 + 16 = 64 (swizzled), the window at row 8, column 48.
  Check({{"M", "64"},
         {"N", "40"},
         {"K", "72"},
         {"bm", "64"},
         {"bn", "32"},
         {"bk", "16"},
         {"off_a", "40"},
         {"off_b", "48"},
         {"trans_b", "True"},
         {"dtype", "bfloat16"}},
        22);
}

// The interpreter's answer on windows is the product itself.
TEST(GemmWindows, InterpreterMatchesFloat64Reference) {
  absl::StatusOr<ir::Program> p = CompileSource("windows.py", kWindows, "windowed",
                                                {{"M", "40"},
                                                 {"N", "24"},
                                                 {"K", "48"},
                                                 {"bm", "32"},
                                                 {"bn", "32"},
                                                 {"bk", "32"},
                                                 {"off_a", "32"},
                                                 {"off_b", "8"},
                                                 {"trans_b", "False"},
                                                 {"dtype", "float16"}});
  ASSERT_TRUE(p.ok()) << p.status();
  uint64_t seed = TestSeed(23);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat16, {40, 48}, seed),
                                      interp::RandomTensor(ir::DType::kFloat16, {48, 24}, seed + 1),
                                      interp::Tensor(ir::DType::kFloat32, {40, 24})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t i = 0; i < 40; ++i) {
    for (int64_t j = 0; j < 24; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < 48; ++k) {
        ref += args[0].GetDouble(i * 48 + k) * args[1].GetDouble(k * 24 + j);
      }
      EXPECT_NEAR(args[2].GetDouble(i * 24 + j), ref, 1e-3 * (1 + std::fabs(ref)));
    }
  }
}

TEST(GemmWindows, WindowOffTheChunkGridIsRefused) {
  absl::StatusOr<ir::Program> p = CompileSource("windows.py", kWindows, "windowed",
                                                {{"M", "64"},
                                                 {"N", "32"},
                                                 {"K", "64"},
                                                 {"bm", "32"},
                                                 {"bn", "32"},
                                                 {"bk", "32"},
                                                 {"off_a", "4"},
                                                 {"off_b", "0"},
                                                 {"trans_b", "False"},
                                                 {"dtype", "float16"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm80);
  ASSERT_FALSE(src.ok());
  EXPECT_THAT(src.status().message(), HasSubstr("with A a part of a shared buffer"));
  EXPECT_THAT(src.status().message(), HasSubstr("c0 a multiple of 16 bytes"));
}

}  // namespace
}  // namespace tilec::cuda
