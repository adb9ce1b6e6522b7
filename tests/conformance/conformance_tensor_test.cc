// Conformance: tensor parameters as TileLang documents them. T.StridedTensor
// (shape, strides, dtype), in its call and subscript forms, and
// T.Tensor(..., strides=...): the kernel indexes the tensor by its shape and
// tilec addresses it through its row-major storage (docs/language.md). Each
// test checks the interpreter against a reference computed here on the
// storage, on shapes that do not divide the tiles, then the emitted CUDA on
// the SIMT emulator against the interpreter; refusals by their message.
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/hash.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T

def padded_rows(M, N, NN, bm=32, bn=32):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (NN, 1), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                B[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] * 2.0
    return main

def transposed(N, M, S, bm=32):
    @T.prim_func
    def main(A: T.StridedTensor[(N, M), (1, S), "float32"],
             B: T.StridedTensor[(N, M), (1, S), "float32"]):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            for i, j in T.Parallel(N, bm):
                B[i, bx * bm + j] = A[i, bx * bm + j] + i
    return main

def dynamic_stride(M, N, bm=16, bn=64):
    NN = T.dynamic("NN")
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (NN, 1), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float16")
            T.copy(A[by * bm, bx * bn], S)
            T.copy(S, B[by * bm, bx * bn])
    return main

def tile_copy_out(M, N, NN, bm=16, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"),
             B: T.Tensor((M, N), "float32", strides=(NN, 1))):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            F = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], F)
            for i, j in T.Parallel(bm, bn):
                F[i, j] = F[i, j] - 1.0
            T.copy(F, B[by * bm, bx * bn])
    return main

def batched(B, M, N, SB, SM):
    @T.prim_func
    def main(A: T.StridedTensor((B, M, N), (SB, SM, 1), "int32"), O: T.Tensor((B, M, N), "int32")):
        with T.Kernel(B, threads=64) as b:
            for i, j in T.Parallel(M, N):
                O[b, i, j] = A[b, i, j] + A[b, M - 1 - i, 0]
    return main

def contiguous(M, N):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (N, 1), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i, j in T.Parallel(M, N):
                B[i, j] = A[i, j]
    return main

def two_runtime_strides(M, N):
    S1 = T.dynamic("S1")
    S2 = T.dynamic("S2")
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (S1, S2), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A[0, 0] = 1.0
    return main

def no_unit_stride(M, N):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (2 * N, 2), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A[0, 0] = 1.0
    return main

def overlapping(M, N):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (N - 1, 1), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A[0, 0] = 1.0
    return main

def atomic_into(M, N):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (2 * N, 1), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i, j in T.Parallel(M, N):
                T.atomic_add(A[i, j], 1.0)
    return main

def im2col(N, H, W, C, K, S, D, P, bm=32, bk=16):
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    @T.prim_func
    def main(img: T.Tensor((N, H, W, C), "float16"),
             col: T.Tensor((N * OH * OW, K * K * C), "float32")):
        with T.Kernel(T.ceildiv(K * K * C, bk), T.ceildiv(N * OH * OW, bm), threads=128) as (bx, by):
            tile = T.alloc_shared((bm, bk), "float16")
            T.c2d_im2col(img, tile, by, bx, K, S, D, P)
            T.copy(tile, col[by * bm, bx * bk])
    return main

def pointers(M, N, bm=32, bn=32):
    @T.prim_func
    def main(a_ptr: T.ptr, b_ptr: T.ptr, m: T.int32, n: T.int32):
        A = T.make_tensor(a_ptr, (m, n), "float32")
        B = T.make_tensor(b_ptr, (m, n), "float32")
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                B[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] - 0.5
    return main

def pointer_twice(N):
    @T.prim_func
    def main(a_ptr: T.ptr, n: T.int32):
        A = T.make_tensor(a_ptr, (n,), "float32")
        B = T.make_tensor(a_ptr, (n,), "float32")
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0
    return main

def pointer_unused(N):
    @T.prim_func
    def main(a_ptr: T.ptr, B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            B[0] = 1.0
    return main

def ramps(R, C, lanes=3, br=16):
    @T.prim_func
    def main(A: T.Tensor((R, C * lanes), "float16"), B: T.Tensor((R, C * lanes), "float16"),
             F: T.Tensor((R, C * 2), "float32")):
        with T.Kernel(T.ceildiv(R, br), threads=128) as bx:
            for i, j in T.Parallel(br, C):
                B[bx * br + i, T.Ramp(j * lanes, 1, lanes)] = A[bx * br + i, T.Ramp(j * lanes, 1, lanes)]
                F[bx * br + i, j * 2:j * 2 + 2] = j * 0.5
    return main

def element_copies(M, N, b=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float32"),
             S: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, b), T.ceildiv(M, b), threads=128) as (bx, by):
            A_s = T.alloc_shared((b, b), "float16")
            for i, j in T.Parallel(b, b):
                T.copy(A[by * b + i, bx * b + j], B[by * b + i, bx * b + j])
                T.copy(A[by * b + i, bx * b + j], A_s[i, j])
            for i, j in T.Parallel(b, b):
                T.copy(A_s[j, i], S[by * b + i, bx * b + j])
    return main

def scalar_tensors(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((), "int32"), S: T.Tensor([], "float32"),
             C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            src = T.alloc_fragment((N,), "float32")
            dst = T.alloc_fragment([], "int32")
            T.copy(A, src)
            T.reduce_argmax(src, dst, 0)
            if bx == 0:
                T.copy(dst[()], B[()])
            for i in T.parallel(128):
                C[bx * 128 + i] = A[bx * 128 + i] * S[()]
    return main

def wrong_count(M, N):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A[0, 0] = 1.0
    return main
)";

double F32(double v) { return static_cast<float>(v); }
const interp::Tolerance kF32 = interp::DefaultTolerance(DType::kFloat32);

TEST(ConformanceTensor, StridedRowsReadOnlyTheirElements) {
  const int64_t m = 45, n = 70, nn = 96;
  ir::Program p = Compile(kSource, "padded_rows", {{"M", "45"}, {"N", "70"}, {"NN", "96"}});
  ASSERT_EQ(p.params.size(), 2u);
  ASSERT_TRUE(p.params[0].view.has_value());
  EXPECT_EQ(ir::AsConstInt(p.params[0].tensor->shape[1]), nn);
  const uint64_t seed = Seed(301);
  Tensors args = {Random(DType::kFloat32, {m, nn}, seed), Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m * n, [&](int64_t k) { return 2 * args[0].GetDouble(k / n * nn + k % n); }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

TEST(ConformanceTensor, SubscriptFormWithColumnStrides) {
  // (N, M) with strides (1, S): element [i, j] at j * S + i, both tensors.
  const int64_t n = 20, m = 50, s = 24;
  ir::Program p = Compile(kSource, "transposed", {{"N", "20"}, {"M", "50"}, {"S", "24"}});
  const uint64_t seed = Seed(302);
  Tensors args = {Random(DType::kFloat32, {m, s}, seed), Random(DType::kFloat32, {m, s}, seed + 1)};
  const interp::Tensor before = args[1];
  Interpret(p, args);
  // Rows of the storage hold columns of the tensor; the padding is untouched.
  ExpectClose(args[1],
              Table(m * s,
                    [&](int64_t k) {
                      const int64_t i = k % s;
                      return i < n ? F32(args[0].GetDouble(k) + i) : before.GetDouble(k);
                    }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

TEST(ConformanceTensor, RuntimeStrideIsADynamicDim) {
  const int64_t m = 37, n = 100, nn = 136;
  ir::Program p = Compile(kSource, "dynamic_stride", {{"M", "37"}, {"N", "100"}});
  ASSERT_EQ(p.dyn_dims.size(), 1u);
  EXPECT_EQ(p.dyn_dims[0]->name, "NN");
  const uint64_t seed = Seed(303);
  Tensors args = {Random(DType::kFloat16, {m, nn}, seed), Zeros(DType::kFloat16, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m * n, [&](int64_t k) { return args[0].GetDouble(k / n * nn + k % n); }),
              {0, 0});
  ExpectTargetsMatch(p, {.seed = seed, .dims = {{"NN", nn}}}, kBothArchs);
}

TEST(ConformanceTensor, TensorStridesKeywordOnAnOutput) {
  const int64_t m = 33, n = 40, nn = 41;
  ir::Program p = Compile(kSource, "tile_copy_out", {{"M", "33"}, {"N", "40"}, {"NN", "41"}});
  const uint64_t seed = Seed(304);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed),
                  Random(DType::kFloat32, {m, nn}, seed + 1)};
  const interp::Tensor before = args[1];
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m * nn,
                    [&](int64_t k) {
                      const int64_t i = k / nn, j = k % nn;
                      return j < n ? F32(args[0].GetDouble(i * n + j) - 1) : before.GetDouble(k);
                    }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

TEST(ConformanceTensor, ThreeDimensionsWithPaddedStrides) {
  const int64_t b = 3, m = 5, n = 7, sm = 8, sb = 48;
  ir::Program p =
      Compile(kSource, "batched", {{"B", "3"}, {"M", "5"}, {"N", "7"}, {"SB", "48"}, {"SM", "8"}});
  EXPECT_EQ(ir::AsConstInt(p.params[0].tensor->shape[1]), sb / sm);
  const uint64_t seed = Seed(305);
  Tensors args = {Random(DType::kInt32, {b, sb / sm, sm}, seed), Zeros(DType::kInt32, {b, m, n})};
  Interpret(p, args);
  std::vector<int64_t> want;
  for (int64_t x = 0; x < b; ++x) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        want.push_back(args[0].GetInt(x * sb + i * sm + j) +
                       args[0].GetInt(x * sb + (m - 1 - i) * sm));
      }
    }
  }
  ExpectEqualInts(args[1], want);
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceTensor, TheViewTravelsInWireFormAndIsVerified) {
  ir::Program p = Compile(kSource, "transposed", {{"N", "20"}, {"M", "50"}, {"S", "24"}});
  absl::StatusOr<ir::Program> back = ir::FromProto(ir::ToProto(p));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->params[0].view.has_value());
  EXPECT_EQ(back->params[0].view->axes, p.params[0].view->axes);
  EXPECT_EQ(ir::ProgramHash(*back), ir::ProgramHash(p));
  ir::Program bad = p;
  bad.params[0].view->axes = {0, 0};
  EXPECT_THAT(std::string(ir::Verify(bad).message()),
              ::testing::HasSubstr("are not a permutation of its dimensions"));
  bad = p;
  bad.params[0].view->shape.pop_back();
  EXPECT_THAT(std::string(ir::Verify(bad).message()), ::testing::HasSubstr("has rank 1"));
}

// T.c2d_im2col: the im2col matrix of an NHWC image, tile by tile, with
// stride, dilation and padding, on ragged tiles.
TEST(ConformanceTensor, Im2colTilesOfAConvolution) {
  struct Conv {
    int64_t n, h, w, c, k, s, d, p;
  };
  for (const Conv& v : {Conv{3, 7, 7, 3, 3, 2, 1, 1}, Conv{1, 9, 6, 5, 2, 1, 2, 0}}) {
    const int64_t oh = (v.h + 2 * v.p - v.d * (v.k - 1) - 1) / v.s + 1;
    const int64_t ow = (v.w + 2 * v.p - v.d * (v.k - 1) - 1) / v.s + 1;
    const int64_t rows = v.n * oh * ow, cols = v.k * v.k * v.c;
    BindingList b = {{"N", std::to_string(v.n)}, {"H", std::to_string(v.h)},
                     {"W", std::to_string(v.w)}, {"C", std::to_string(v.c)},
                     {"K", std::to_string(v.k)}, {"S", std::to_string(v.s)},
                     {"D", std::to_string(v.d)}, {"P", std::to_string(v.p)}};
    ir::Program p = Compile(kSource, "im2col", b);
    const uint64_t seed = Seed(306);
    Tensors args = {Random(DType::kFloat16, {v.n, v.h, v.w, v.c}, seed),
                    Zeros(DType::kFloat32, {rows, cols})};
    Interpret(p, args);
    ExpectClose(args[1],
                Table(rows * cols,
                      [&](int64_t e) {
                        const int64_t m = e / cols, k = e % cols;
                        const int64_t n = m / (oh * ow), y = m % (oh * ow) / ow, x = m % ow;
                        const int64_t kh = k / (v.k * v.c), kw = k / v.c % v.k, c = k % v.c;
                        const int64_t ih = y * v.s + kh * v.d - v.p, iw = x * v.s + kw * v.d - v.p;
                        if (ih < 0 || ih >= v.h || iw < 0 || iw >= v.w) return 0.0;
                        return args[0].GetDouble(((n * v.h + ih) * v.w + iw) * v.c + c);
                      }),
                {0, 0});
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

// T.ptr parameters and T.make_tensor: the tensors' shapes are the scalar
// parameters m, n; the grid covers M x N and the accesses are bounded by
// the shapes.
TEST(ConformanceTensor, PointerParametersMadeIntoTensors) {
  ir::Program p = Compile(kSource, "pointers", {{"M", "96"}, {"N", "64"}});
  ASSERT_EQ(p.params.size(), 4u);
  ASSERT_TRUE(p.params[0].tensor);
  EXPECT_EQ(ir::PrintExpr(p.params[0].tensor->shape[0]), "m");
  const int64_t m = 70, n = 50;
  const uint64_t seed = Seed(307);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n}),
                  interp::Tensor::ScalarInt(DType::kInt32, m),
                  interp::Tensor::ScalarInt(DType::kInt32, n)};
  Interpret(p, args);
  ExpectClose(args[1], Table(m * n, [&](int64_t k) { return F32(args[0].GetDouble(k) - 0.5); }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed, .dims = {{"m", m}, {"n", n}}}, kBothArchs);
  ExpectRefused(kSource, "pointer_unused", {{"N", "4"}},
                "the pointer parameter `a_ptr` is never given a tensor; T.make_tensor(a_ptr, "
                "shape, dtype) declares what it points to");
  ExpectRefused(kSource, "pointer_twice", {{"N", "4"}},
                "`a_ptr` is already a tensor (T.make_tensor is called once per pointer)");
}

// T.Ramp indices and slice assignments inside T.Parallel: each iteration
// moves its own elements (ragged rows are out of bounds and dropped).
TEST(ConformanceTensor, RampsAndSliceStoresInsideParallel) {
  const int64_t r = 37, c = 20;
  ir::Program p = Compile(kSource, "ramps", {{"R", "37"}, {"C", "20"}});
  const uint64_t seed = Seed(308);
  Tensors args = {Random(DType::kFloat16, {r, c * 3}, seed), Zeros(DType::kFloat16, {r, c * 3}),
                  Zeros(DType::kFloat32, {r, c * 2})};
  Interpret(p, args);
  ExpectClose(args[1], Table(r * c * 3, [&](int64_t k) { return args[0].GetDouble(k); }), {0, 0});
  ExpectClose(args[2], Table(r * c * 2, [&](int64_t k) { return (k % (c * 2)) / 2 * 0.5; }), kF32);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

// T.copy of one element to one element inside T.Parallel: each iteration
// stores its own element, cast to the destination's dtype (ragged tiles read
// 0 outside A and drop their stores outside B and S).
TEST(ConformanceTensor, ElementCopiesInsideParallel) {
  const int64_t m = 70, n = 45, b = 32;
  ir::Program p = Compile(kSource, "element_copies", {{"M", "70"}, {"N", "45"}});
  const uint64_t seed = Seed(309);
  Tensors args = {Random(DType::kFloat16, {m, n}, seed), Zeros(DType::kFloat32, {m, n}),
                  Zeros(DType::kFloat16, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(m * n, [&](int64_t k) { return args[0].GetDouble(k); }), {0, 0});
  // S[r, c] is A at the transposed position inside the same 32 x 32 tile.
  ExpectClose(args[2],
              Table(m * n,
                    [&](int64_t k) {
                      const int64_t r = k / n, c = k % n;
                      const int64_t ar = r - r % b + c % b, ac = c - c % b + r % b;
                      return ar < m && ac < n ? args[0].GetDouble(ar * n + ac) : 0.0;
                    }),
              {0, 0});
  ExpectAllTargetsMatch(p, seed);
}

// 0-d tensors and buffers (shape ()) are one element, indexed x[()]; TIR's
// T.parallel(n) is a T.Parallel loop.
TEST(ConformanceTensor, ZeroDimensionalTensorsAndLowerCaseParallel) {
  const int64_t n = 200;
  ir::Program p = Compile(kSource, "scalar_tensors", {{"N", "200"}});
  ASSERT_EQ(p.params[1].tensor->shape.size(), 1u);
  const uint64_t seed = Seed(310);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kInt32, {1}),
                  Random(DType::kFloat32, {1}, seed + 1), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (args[0].GetDouble(i) > args[0].GetDouble(best)) best = i;
  }
  ExpectEqualInts(args[1], {best}, "B");
  ExpectClose(args[3],
              Table(n,
                    [&](int64_t i) {
                      return static_cast<double>(static_cast<float>(args[0].GetDouble(i)) *
                                                 static_cast<float>(args[2].GetDouble(0)));
                    }),
              {0, 0}, "C");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceTensor, RowMajorStridesAreAPlainTensor) {
  ir::Program p = Compile(kSource, "contiguous", {{"M", "4"}, {"N", "6"}});
  EXPECT_FALSE(p.params[0].view.has_value());
}

TEST(ConformanceTensor, StridesTilecCannotLayOutAreRefused) {
  ExpectRefused(kSource, "two_runtime_strides", {{"M", "4"}, {"N", "6"}},
                "at most one stride may depend on runtime values");
  ExpectRefused(kSource, "no_unit_stride", {{"M", "4"}, {"N", "6"}},
                "one dimension must have stride 1");
  ExpectRefused(kSource, "overlapping", {{"M", "4"}, {"N", "6"}}, "so elements overlap");
  ExpectRefused(kSource, "wrong_count", {{"M", "4"}, {"N", "6"}}, "has 2 dimensions but 1 strides");
}

TEST(ConformanceTensor, TileOperatorsOtherThanCopyOnAStridedTensorAreRefused) {
  ExpectRefused(kSource, "atomic_into", {{"M", "4"}, {"N", "6"}},
                "`A` is a strided tensor (T.StridedTensor); tilec supports strided tensors in "
                "element accesses and T.copy only");
}

}  // namespace
}  // namespace tilec::conformance
