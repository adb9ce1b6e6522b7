// Conformance: kernels whose signature leaves sizes and dtypes to the call
// (@tilelang.lazy_jit, @T.prim_func(generator=True)).
// - a tensor annotated T.Tensor[[int, int], Any] takes its shape and dtype
//   from -D A="T.Tensor((M, K), T.float16)" (or its dtype alone, -D A=float16);
//   an `int` dimension left open, and every T.dyn one, is a dynamic size
//   (A_0, A_1, ...); T.dyn[int, "X"] names one;
// - T.empty outputs, T.ptr parameters with T.make_tensor, staging parameters
//   (int, T.dtype) bound with -D or defaulted, a tensor given as a default;
// - an `assert` on dynamic sizes (`M == M_`, `A.shape == [M, N]`) is a
//   requirement checked at launch: the interpreter refuses a launch that
//   breaks it, naming the condition, the sizes and the message;
// - refusals: an `Any` dtype nobody gives, a binding that contradicts the
//   annotation.
// References are computed here; the emitted code runs on the emulator
// against the interpreter (sm_80, sm_90a, gfx942).
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;
using ::testing::HasSubstr;

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T
from typing import Any

def _gemm_impl():
    @T.macro
    def gemm_impl(A: T.Tensor[[int, int], Any], B: T.Tensor[[int, int], Any],
                  C: T.Tensor[[int, int], Any], out_dtype: T.dtype, block_M: int,
                  block_N: int, block_K: int):
        dtype = A.dtype
        M, K = A.shape
        K, N = B.shape
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), out_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[bx * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, by * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[bx * block_M, by * block_N])
    return gemm_impl

@tilelang.lazy_jit
def gemm(A: T.Tensor[[int, int], Any], B: T.Tensor[[int, int], Any],
         out_dtype: T.dtype = T.float32, block_M: int = 64, block_N: int = 64,
         block_K: int = 32):
    M, K = A.shape
    K, N = B.shape
    C = T.empty(M, N, dtype=out_dtype)
    _gemm_impl()(A, B, C, out_dtype, block_M, block_N, block_K)
    return C

@tilelang.lazy_jit
def gemm_ptr(A: T.ptr, B: T.ptr, C: T.ptr, M: int, N: int, K: int, dtype: T.dtype,
             out_dtype: T.dtype, block_M: int = 64, block_N: int = 64, block_K: int = 32):
    A = T.make_tensor(A, (M, K), dtype)
    B = T.make_tensor(B, (K, N), dtype)
    C = T.make_tensor(C, (M, N), out_dtype)
    _gemm_impl()(A, B, C, out_dtype, block_M, block_N, block_K)

@T.macro
def copy_impl(A, B):
    M, N = A.shape
    M_, N_ = B.shape
    assert M == M_, f"M mismatch {M} {M_}"
    assert N == N_, f"N mismatch {N} {N_}"
    with T.Kernel(T.ceildiv(M, 64), T.ceildiv(N, 64), threads=128) as (bx, by):
        T.copy(A[bx * 64 : bx * 64 + 64, by * 64 : by * 64 + 64],
               B[bx * 64 : bx * 64 + 64, by * 64 : by * 64 + 64])

@tilelang.lazy_jit
def copy_open(A: T.Tensor[[int, int], T.float32], B: T.Tensor[[int, int], T.float32]):
    copy_impl(A, B)

@tilelang.lazy_jit
def copy_dyn(A: T.Tensor[[T.dyn, 96], T.float32], B: T.Tensor[[T.dyn, 96], T.float32]):
    copy_impl(A, B)

# The output's shape from the input's; scale by `alpha`, a runtime scalar.
@tilelang.lazy_jit
def scaled(A: T.Tensor[[T.dyn[int, "rows"], 64], Any], alpha: T.float32):
    rows, cols = A.shape
    B = T.empty((rows, cols), A.dtype)
    assert B.shape == [rows, 64]
    with T.Kernel(T.ceildiv(rows, 32), threads=128) as bx:
        for i, j in T.Parallel(32, cols):
            if bx * 32 + i < rows:
                B[bx * 32 + i, j] = A[bx * 32 + i, j] * alpha
    return B

# An eager @tilelang.jit annotated like a prim_func, with a T.empty output
# and a staging parameter.
@tilelang.jit
def row_sums(A: T.Tensor((96, 80), T.float16), block: int = 32):
    out = T.empty((96,), T.float32)
    with T.Kernel(T.ceildiv(96, block), threads=128) as bx:
        S = T.alloc_fragment((block, 80), T.float32)
        R = T.alloc_fragment((block,), T.float32)
        T.copy(A[bx * block, 0], S)
        T.reduce_sum(S, R, dim=1)
        T.copy(R, out[bx * block])
    return out

@T.prim_func(generator=True)
def from_defaults(A=T.Tensor((128,), T.float32), B=T.Tensor((128,), T.float32)):
    with T.Kernel(128) as (tx,):
        T.copy(A[tx], B[tx])
)";

TEST(ConformanceSignature, LazyJitGemmTakesShapesAndDtypesFromTheBindings) {
  // Sizes that do not divide the tiles.
  const int64_t m = 100, k = 72, n = 80;
  ir::Program p = Compile(kSource, "gemm",
                          {{"A", "T.Tensor((100, 72), T.float16)"},
                           {"B", "T.Tensor((72, 80), T.float16)"},
                           {"block_K", "16"}});
  ASSERT_EQ(p.params.size(), 3u);  // A, B and the T.empty output
  EXPECT_TRUE(p.dyn_dims.empty());
  EXPECT_EQ(p.params[0].tensor->dtype, DType::kFloat16);
  EXPECT_EQ(p.params[2].tensor->dtype, DType::kFloat32);
  const uint64_t seed = Seed(20261401);
  Tensors args = {Random(DType::kFloat16, {m, k}, seed), Random(DType::kFloat16, {k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, m, n, k), {.atol = 1e-3, .rtol = 1e-3}, "C");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSignature, PointerParametersAndStagingValues) {
  ir::Program p = Compile(kSource, "gemm_ptr",
                          {{"M", "96"},
                           {"N", "64"},
                           {"K", "40"},
                           {"dtype", "T.bfloat16"},
                           {"out_dtype", "T.float32"},
                           {"block_K", "16"}});
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[1].tensor->dtype, DType::kBFloat16);
  const uint64_t seed = Seed(20261402);
  Tensors args = {Random(DType::kBFloat16, {96, 40}, seed),
                  Random(DType::kBFloat16, {40, 64}, seed + 1), Zeros(DType::kFloat32, {96, 64})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, 96, 64, 40), {.atol = 1e-2, .rtol = 1e-2}, "C");
}

TEST(ConformanceSignature, OpenIntDimensionsAreDynamicAndTheirAssertsCheckedAtLaunch) {
  ir::Program p = Compile(kSource, "copy_open");
  ASSERT_EQ(p.dyn_dims.size(), 4u);  // A_0, A_1, B_0, B_1
  ASSERT_EQ(p.requirements.size(), 2u);
  const uint64_t seed = Seed(20261403);
  Tensors args = {Random(DType::kFloat32, {150, 70}, seed), Zeros(DType::kFloat32, {150, 70})};
  Interpret(p, args);
  ExpectClose(args[1], Table(150 * 70, [&](int64_t i) { return args[0].GetDouble(i); }),
              {.atol = 0, .rtol = 0}, "B");
  ExpectTargetsMatch(
      p,
      {.seed = seed, .dims = {{"A_0", 150}, {"A_1", 70}, {"B_0", 150}, {"B_1", 70}}, .exact = true},
      kBothArchs);

  // B one row short: the first assert fails, naming the sizes.
  Tensors bad = {Random(DType::kFloat32, {150, 70}, seed), Zeros(DType::kFloat32, {149, 70})};
  absl::Status run = interp::RunProgram(p, bad);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(run.message(), HasSubstr("requires A_0 == B_0"));
  EXPECT_THAT(run.message(), HasSubstr("A_0 = 150"));
  EXPECT_THAT(run.message(), HasSubstr("B_0 = 149"));
  EXPECT_THAT(run.message(), HasSubstr("M mismatch"));

  // Bound, the sizes are constants and the asserts are checked now.
  ir::Program bound =
      Compile(kSource, "copy_open",
              {{"A", "T.Tensor((64, 128), T.float32)"}, {"B", "T.Tensor((64, 128), T.float32)"}});
  EXPECT_TRUE(bound.dyn_dims.empty());
  EXPECT_TRUE(bound.requirements.empty());
  ExpectRefused(kSource, "copy_open",
                {{"A", "T.Tensor((64, 128), T.float32)"}, {"B", "T.Tensor((64, 96), T.float32)"}},
                "N mismatch 128 96");
}

TEST(ConformanceSignature, DynDimensionsStayDynamic) {
  ir::Program p =
      Compile(kSource, "copy_dyn",
              {{"A", "T.Tensor((200, 96), T.float32)"}, {"B", "T.Tensor((200, 96), T.float32)"}});
  ASSERT_EQ(p.dyn_dims.size(), 2u);      // A_0 and B_0: T.dyn ignores the example size
  ASSERT_EQ(p.requirements.size(), 1u);  // N == N_ held at staging time
  const uint64_t seed = Seed(20261404);
  ExpectTargetsMatch(p, {.seed = seed, .dims = {{"A_0", 77}, {"B_0", 77}}, .exact = true},
                     kBothArchs);
}

TEST(ConformanceSignature, NamedDynSizeDtypeAloneAndARuntimeScalar) {
  ir::Program p = Compile(kSource, "scaled", {{"A", "float16"}});
  ASSERT_EQ(p.dyn_dims.size(), 1u);
  EXPECT_EQ(p.dyn_dims[0]->name, "rows");
  ASSERT_EQ(p.params.size(), 3u);  // A, alpha, B
  ASSERT_NE(p.params[1].scalar, nullptr);
  EXPECT_EQ(p.params[2].tensor->dtype, DType::kFloat16);
  const uint64_t seed = Seed(20261405);
  ExpectTargetsMatch(p, {.seed = seed, .dims = {{"rows", 77}}}, kBothArchs);
}

TEST(ConformanceSignature, ATensorGivenAsADefault) {
  ir::Program p = Compile(kSource, "from_defaults");
  ASSERT_EQ(p.params.size(), 2u);
  const uint64_t seed = Seed(20261406);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

TEST(ConformanceSignature, AnnotatedEagerKernelWithAnOutputAndAStagingParameter) {
  ir::Program p = Compile(kSource, "row_sums", {{"block", "16"}});
  ASSERT_EQ(p.params.size(), 2u);  // A and the T.empty output
  const uint64_t seed = Seed(20261407);
  Tensors args = {Random(DType::kFloat16, {96, 80}, seed), Zeros(DType::kFloat32, {96})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(96,
                    [&](int64_t r) {
                      double sum = 0;
                      for (int64_t j = 0; j < 80; ++j) sum += args[0].GetDouble(r * 80 + j);
                      return sum;
                    }),
              {.atol = 1e-4, .rtol = 1e-5}, "out");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSignature, Refusals) {
  ExpectRefused(kSource, "gemm", {}, "takes any dtype (`Any`); give the one to compile for");
  ExpectRefused(kSource, "copy_dyn",
                {{"A", "T.Tensor((200, 64), T.float32)"}, {"B", "T.Tensor((200, 96), T.float32)"}},
                "dimension 1 is 96 in its annotation but 64 is given");
  ExpectRefused(kSource, "copy_open",
                {{"A", "T.Tensor((64, 128), T.float16)"}, {"B", "T.Tensor((64, 128), T.float32)"}},
                "tensor parameter `A` is float32 in its annotation but float16 is given");
  ExpectRefused(kSource, "copy_open", {{"A", "T.Tensor((64, 128, 2), T.float32)"}},
                "has 2 dimensions in its annotation but 3 are given");
  ExpectRefused(kSource, "gemm", {{"A", "3"}, {"B", "float16"}}, "tensor parameter `A` is given");
}

}  // namespace
}  // namespace tilec::conformance
