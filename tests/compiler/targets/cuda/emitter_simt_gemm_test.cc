// T.gemm with types the tensor cores do not take, computed on the CUDA
// cores: float32 (TileLang's tf32 tests), float64, int8 into int32, and
// float16 with float32 into float32, transposed or not, over ragged M, N, K.
// The interpreter is checked against a float64 (or exact integer)
// reference; the code emitted for sm_80 and sm_90a compiles with NVRTC and
// runs on the SIMT emulator against the interpreter.
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

constexpr char kGemm[] = R"(
import tilelang.language as T

def matmul(M, N, K, ta, tb, a_dtype, b_dtype, acc, bm=64, bn=32, bk=16, a_frag=False):
    A_shape = (K, M) if ta else (M, K)
    B_shape = (N, K) if tb else (K, N)
    A_tile = (bk, bm) if ta else (bm, bk)
    B_tile = (bn, bk) if tb else (bk, bn)

    @T.prim_func
    def main(A: T.Tensor(A_shape, a_dtype), B: T.Tensor(B_shape, b_dtype),
             C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared(A_tile, a_dtype)
            B_s = T.alloc_shared(B_tile, b_dtype)
            A_f = T.alloc_fragment(A_tile, a_dtype)
            C_f = T.alloc_fragment((bm, bn), acc)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                if ta:
                    T.copy(A[k * bk, by * bm], A_s)
                else:
                    T.copy(A[by * bm, k * bk], A_s)
                if tb:
                    T.copy(B[bx * bn, k * bk], B_s)
                else:
                    T.copy(B[k * bk, bx * bn], B_s)
                if a_frag:
                    T.copy(A_s, A_f)
                    T.gemm(A_f, B_s, C_f, ta, tb)
                else:
                    T.gemm(A_s, B_s, C_f, ta, tb)
            T.copy(C_f, C[by * bm, bx * bn])
    return main
)";

struct Case {
  const char* a;
  const char* b;
  const char* acc;
  bool ta, tb;
};

void Check(const Case& c, uint64_t default_seed) {
  const int64_t M = 70, N = 45, K = 37;
  BindingList bindings = {{"M", "70"},
                          {"N", "45"},
                          {"K", "37"},
                          {"ta", c.ta ? "True" : "False"},
                          {"tb", c.tb ? "True" : "False"},
                          {"a_dtype", c.a},
                          {"b_dtype", c.b},
                          {"acc", c.acc}};
  absl::StatusOr<ir::Program> p = CompileSource("gemm.py", kGemm, "matmul", bindings);
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = TestSeed(default_seed);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<int64_t> a_shape = c.ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
  std::vector<int64_t> b_shape = c.tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
  std::vector<interp::Tensor> args = {
      interp::RandomTensor(p->params[0].tensor->dtype, a_shape, seed),
      interp::RandomTensor(p->params[1].tensor->dtype, b_shape, seed + 1),
      interp::Tensor(p->params[2].tensor->dtype, {M, N})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  const bool exact = std::string(c.acc) == "int32";
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) {
        ref += args[0].GetDouble(c.ta ? k * M + i : i * K + k) *
               args[1].GetDouble(c.tb ? j * K + k : k * N + j);
      }
      if (exact) {
        EXPECT_EQ(args[2].GetDouble(i * N + j), ref) << i << ", " << j;
      } else {
        EXPECT_NEAR(args[2].GetDouble(i * N + j), ref, 1e-5 * (1 + std::fabs(ref)))
            << i << ", " << j;
      }
    }
  }
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_THAT(src->code, HasSubstr("on the CUDA cores"));
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p->name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .written = {"C"}});
  }
}

TEST(SimtGemm, Float32NT) { Check({"float32", "float32", "float32", false, true}, 51); }
TEST(SimtGemm, Float64NN) { Check({"float64", "float64", "float64", false, false}, 52); }
TEST(SimtGemm, Int8IntoInt32TN) { Check({"int8", "int8", "int32", true, false}, 53); }
TEST(SimtGemm, Float16TimesFloat32TT) { Check({"float16", "float32", "float32", true, true}, 54); }

TEST(SimtGemm, RegisterOperandIsRefused) {
  absl::StatusOr<ir::Program> p = CompileSource("gemm.py", kGemm, "matmul",
                                                {{"M", "64"},
                                                 {"N", "32"},
                                                 {"K", "32"},
                                                 {"ta", "False"},
                                                 {"tb", "False"},
                                                 {"a_dtype", "float32"},
                                                 {"b_dtype", "float32"},
                                                 {"acc", "float32"},
                                                 {"a_frag", "True"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm90a);
  ASSERT_FALSE(src.ok());
  EXPECT_THAT(src.status().message(),
              HasSubstr("on the CUDA cores, which takes A and B in shared"));
}

}  // namespace
}  // namespace tilec::cuda
