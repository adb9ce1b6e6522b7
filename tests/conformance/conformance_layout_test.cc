// Conformance: layouts, views and element types as TileLang documents them
// (T.annotate_layout with swizzled shared layouts, T.Fragment hints and
// T.Layout of global tensors, T.reshape / T.view of the same and of another
// dtype, T.transpose, the element dtypes). Each test
// checks the interpreter against a reference computed here, on shapes that
// do not divide the tiles, then the emitted CUDA on the SIMT emulator against
// the interpreter; a refusal is checked by the message docs/language.md gives.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout

def swizzled(M, N, bm=32, bn=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float16")
            T.annotate_layout({S: make_swizzled_layout(S)})
            T.copy(A[by * bm, bx * bn], S)
            for i, j in T.Parallel(bm, bn):
                B[by * bm + i, bx * bn + j] = S[i, bn - 1 - j]
    return main

def reshape_view(R, C):
    @T.prim_func
    def main(A: T.Tensor((R * C,), "float32"), B: T.Tensor((R, C), "float32"),
             D: T.Tensor((C, R), "float32")):
        with T.Kernel(1, threads=128):
            V = T.reshape(A, (R, C))
            W = T.view(A, (C, R))
            for i, j in T.Parallel(R, C):
                B[i, j] = V[i, j] * 2.0
            T.copy(W, D)
    return main

def dtype_view(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), H: T.Tensor((2 * N,), "uint16"),
             U: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=128):
            V = T.view(A, (2 * N,), dtype="uint16")
            W = T.view(A, (N,), dtype="int32")
            for i in T.Parallel(2 * N):
                H[i] = V[i]
            for i in T.Parallel(N):
                U[i] = W[i]
    return main

def narrow_store(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            V = T.view(A, (2 * N,), dtype="float16")
            for i in T.Parallel(2 * N):
                V[i] = 1.0
    return main

def transpose(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, M), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((M, N), "float32")
            D = T.alloc_shared((N, M), "float32")
            T.copy(A, S)
            T.transpose(S, D)
            T.copy(D, B)
    return main

def transpose_1d(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((N,), "float32")
            D = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            T.transpose(S, D)
            T.copy(D, B)
    return main

def dtype_arith(N, dtype):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            S = T.alloc_shared((64,), dtype)
            T.copy(A[bx * 64], S)
            for i in T.Parallel(64):
                B[bx * 64 + i] = S[i] * 3 + 1
    return main

def dtype_bool(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "bool"), B: T.Tensor((N,), "bool"), C: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                B[bx * 64 + i] = T.if_then_else(A[bx * 64 + i], False, True)
                C[bx * 64 + i] = T.cast(A[bx * 64 + i], "int32") + 5
    return main

def fragment_hint(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
            F = T.alloc_fragment((block,), "float32")
            T.annotate_layout({F: T.Fragment(F.shape, forward_thread_fn=lambda i: (i * 7) % 64)})
            T.copy(A[bx * block], F)
            for i in T.Parallel(block):
                F[i] = F[i] - 1.0
            T.copy(F, B[bx * block])
    return main

def fragment_hint_shared(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((N,), "float32")
            T.annotate_layout({S: T.Fragment(S.shape, forward_thread_fn=lambda i: i % 64)})
            T.copy(A, S)
            T.copy(S, A)
    return main

def global_layout(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            T.annotate_layout({B: T.Layout((M, N), lambda i, j: [j, i])})
            for i, j in T.Parallel(M, N):
                B[i, j] = A[i, j] * 4.0
    return main

def shared_reshape(N, W):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N // W, W), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((N,), "float32")
            rows = T.reshape(S, (N // W, W))
            T.copy(A, S)
            for i, j in T.Parallel(N // W, W):
                B[i, j] = rows[i, W - 1 - j]
    return main

def shared_view_size(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((N,), "float32")
            V = T.view(S, (N // 2,))
            T.copy(A, S)
            A[0] = V[0]
    return main

def int4_view(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=64):
            V = T.view(A, (8 * N,), dtype="int4")
            for i in T.Parallel(N):
                B[i] = V[i]
    return main

def fill_global_view(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            V = T.view(A, (N // 4, 4))
            T.fill(V, 0.0)
    return main
)";

double F32(double v) { return static_cast<float>(v); }
const interp::Tolerance kF32 = interp::DefaultTolerance(DType::kFloat32);

TEST(ConformanceAnnotate, SwizzledLayoutKeepsValues) {
  const int64_t m = 40, n = 100;
  ir::Program p = Compile(kSource, "swizzled", {{"M", "40"}, {"N", "100"}});
  const uint64_t seed = Seed(115);
  Tensors args = {Random(DType::kFloat16, {m, n}, seed), Zeros(DType::kFloat16, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m * n,
                    [&](int64_t k) {
                      int64_t i = k / n, j = k % n, jr = j / 64 * 64 + 63 - j % 64;
                      return jr < n ? args[0].GetDouble(i * n + jr) : 0.0;
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

TEST(ConformanceView, ReshapeAndViewOfAGlobalTensor) {
  const int64_t r = 6, c = 21;
  ir::Program p = Compile(kSource, "reshape_view", {{"R", "6"}, {"C", "21"}});
  const uint64_t seed = Seed(116);
  Tensors args = {Random(DType::kFloat32, {r * c}, seed), Zeros(DType::kFloat32, {r, c}),
                  Zeros(DType::kFloat32, {c, r})};
  Interpret(p, args);
  ExpectClose(args[1], Table(r * c, [&](int64_t k) { return args[0].GetDouble(k) * 2; }), {},
              "reshape");
  ExpectClose(args[2], Table(r * c, [&](int64_t k) { return args[0].GetDouble(k); }), {}, "view");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceView, OtherDtypeReadsTheBytes) {
  const int64_t n = 100;
  ir::Program p = Compile(kSource, "dtype_view", {{"N", "100"}});
  const uint64_t seed = Seed(117);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kUInt16, {2 * n}),
                  Zeros(DType::kInt32, {n})};
  Interpret(p, args);
  std::vector<int64_t> halves(2 * n), words(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = args[0].GetBits(i);
    halves[2 * i] = static_cast<int64_t>(bits & 0xffff);
    halves[2 * i + 1] = static_cast<int64_t>((bits >> 16) & 0xffff);
    words[i] = static_cast<int32_t>(static_cast<uint32_t>(bits));
  }
  ExpectEqualInts(args[1], halves, "uint16 view");
  ExpectEqualInts(args[2], words, "int32 view");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceView, StoreThroughANarrowerViewRefused) {
  ExpectRefused(kSource, "narrow_store", {{"N", "64"}},
                "a store through `V` (float16), a view of `A` (float32), would write part of an "
                "element of `A`; tilec reads such views only");
}

TEST(ConformanceTranspose, TwoDimensionalTiles) {
  const int64_t m = 13, n = 22;
  ir::Program p = Compile(kSource, "transpose", {{"M", "13"}, {"N", "22"}});
  const uint64_t seed = Seed(118);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {n, m})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m * n, [&](int64_t k) { return args[0].GetDouble((k % m) * n + k / m); }), {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceTranspose, OneDimensionalRefused) {
  ExpectRefused(kSource, "transpose_1d", {{"N", "16"}},
                "T.transpose takes two-dimensional tiles of constant transposed shapes");
}

// B = A * 3 + 1 in each dtype, through a shared tile: floats rounded to the
// dtype, integers wrapping modulo 2^bits.
TEST(ConformanceDtype, Floats) {
  const int64_t n = 150;
  for (auto [name, dtype] :
       std::vector<std::pair<std::string, DType>>{{"float16", DType::kFloat16},
                                                  {"bfloat16", DType::kBFloat16},
                                                  {"float32", DType::kFloat32},
                                                  {"float64", DType::kFloat64},
                                                  {"float8_e4m3", DType::kFloat8E4M3},
                                                  {"float8_e5m2", DType::kFloat8E5M2}}) {
    SCOPED_TRACE(name);
    ir::Program p = Compile(kSource, "dtype_arith", {{"N", "150"}, {"dtype", Quoted(name)}});
    const uint64_t seed = Seed(119);
    Tensors args = {Random(dtype, {n}, seed), Zeros(dtype, {n})};
    Interpret(p, args);
    ExpectClose(args[1], Table(n, [&](int64_t i) { return args[0].GetDouble(i) * 3 + 1; }),
                interp::DefaultTolerance(dtype));
    ExpectTargetsMatch(p, {.seed = seed});
  }
}

TEST(ConformanceDtype, Integers) {
  const int64_t n = 150;
  for (auto [name, dtype] :
       std::vector<std::pair<std::string, DType>>{{"int8", DType::kInt8},
                                                  {"int16", DType::kInt16},
                                                  {"int32", DType::kInt32},
                                                  {"int64", DType::kInt64},
                                                  {"uint8", DType::kUInt8},
                                                  {"uint16", DType::kUInt16},
                                                  {"uint32", DType::kUInt32},
                                                  {"uint64", DType::kUInt64}}) {
    SCOPED_TRACE(name);
    ir::Program p = Compile(kSource, "dtype_arith", {{"N", "150"}, {"dtype", Quoted(name)}});
    const uint64_t seed = Seed(120);
    Tensors args = {Random(dtype, {n}, seed), Zeros(dtype, {n})};
    Interpret(p, args);
    const int bits = ir::DTypeBits(dtype);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t want = (args[0].GetBits(i) * 3 + 1) & mask;
      EXPECT_EQ(args[1].GetBits(i) & mask, want) << "element " << i;
    }
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

TEST(ConformanceDtype, Bool) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "dtype_bool", {{"N", "150"}});
  const uint64_t seed = Seed(121);
  Tensors args = {Random(DType::kBool, {n}, seed), Zeros(DType::kBool, {n}),
                  Zeros(DType::kInt32, {n})};
  Interpret(p, args);
  std::vector<int64_t> negated(n), plus5(n);
  for (int64_t i = 0; i < n; ++i) {
    negated[i] = args[0].GetInt(i) ? 0 : 1;
    plus5[i] = args[0].GetInt(i) + 5;
  }
  ExpectEqualInts(args[1], negated, "not");
  ExpectEqualInts(args[2], plus5, "cast");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceAnnotate, FragmentHintAccepted) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "fragment_hint", {{"N", "150"}});
  const uint64_t seed = Seed(122);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(n, [&](int64_t i) { return F32(args[0].GetDouble(i) - 1); }), {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceAnnotate, FragmentHintOnASharedBufferRefused) {
  ExpectRefused(kSource, "fragment_hint_shared", {{"N", "64"}},
                "T.annotate_layout: T.Fragment(...) is for fragments, but `S` is a shared buffer");
}

TEST(ConformanceAnnotate, LayoutOfAGlobalTensorKeepsLogicalOrder) {
  const int64_t m = 9, n = 14;
  ir::Program p = Compile(kSource, "global_layout", {{"M", "9"}, {"N", "14"}});
  const uint64_t seed = Seed(123);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(m * n, [&](int64_t k) { return args[0].GetDouble(k) * 4; }), {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceView, ReshapeOfASharedBuffer) {
  const int64_t n = 120, w = 24;
  ir::Program p = Compile(kSource, "shared_reshape", {{"N", "120"}, {"W", "24"}});
  const uint64_t seed = Seed(124);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n / w, w})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n, [&](int64_t k) { return args[0].GetDouble(k / w * w + w - 1 - k % w); }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceView, SharedViewOfAnotherSizeRefused) {
  ExpectRefused(kSource, "shared_view_size", {{"N", "64"}},
                "a view of the shared buffer `S` (64 elements) must have as many elements; this "
                "one has 32");
}

TEST(ConformanceView, Int4ViewRefused) {
  ExpectRefused(kSource, "int4_view", {{"N", "16"}},
                "a view of `A` (float32) as int4: tilec reinterprets whole bytes between types "
                "whose widths divide one another");
}

TEST(ConformanceView, TileOperatorOnAViewOfAGlobalTensorRefused) {
  ExpectRefused(kSource, "fill_global_view", {{"N", "64"}},
                "`V` is a view of the global tensor `A`; tilec supports views of a global tensor "
                "in element accesses and T.copy only");
}

}  // namespace
}  // namespace tilec::conformance
