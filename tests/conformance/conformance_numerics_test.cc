// Conformance: the numeric semantics TileLang documents for element
// expressions: NaN through T.max / T.min (ignored) and T.clamp (kept),
// Python's floor division and modulo on signed integers, unsigned division,
// modulo, shifts and comparisons, float16 arithmetic rounded in float16,
// T.copy converting between dtypes, and dynamic (unbound) shapes. The
// interpreter is checked against references computed here, the emitted CUDA
// on the SIMT emulator against the interpreter.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T

# x is NaN where A > 0.5 (the square root of a negative number), else A.
def nan_ops(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32"),
             X: T.Tensor((N,), "float32"), Mx: T.Tensor((N,), "float32"),
             Mn: T.Tensor((N,), "float32"), Cl: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                x = T.if_then_else(A[k] > 0.5, T.sqrt(A[k] - 10.0), A[k])
                X[k] = x
                Mx[k] = T.max(x, C[k])
                Mn[k] = T.min(x, C[k])
                Cl[k] = T.clamp(x, -0.5, 0.5)
    return main

def floor_div(N, d):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Q: T.Tensor((N,), "int32"),
             R: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                Q[bx * 64 + i] = A[bx * 64 + i] // d
                R[bx * 64 + i] = A[bx * 64 + i] % d
    return main

def unsigned_ops(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "uint32"), X: T.Tensor((N,), "uint32"),
             Q: T.Tensor((N,), "uint32"), R: T.Tensor((N,), "uint32"),
             S: T.Tensor((N,), "uint32"), M: T.Tensor((N,), "uint32"),
             G: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                Q[k] = A[k] // 7
                R[k] = A[k] % 10
                S[k] = A[k] >> 3
                M[k] = T.max(A[k], X[k])
                G[k] = T.if_then_else(A[k] > X[k], 1, 0)
    return main

def half_arith(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), "float16"),
             C: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                C[k] = A[k] * B[k] + A[k]
    return main

def copy_convert(M, N, bm=16, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float16"),
             C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float16")
            F = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], S)
            T.copy(S, B[by * bm, bx * bn])
            T.copy(A[by * bm, bx * bn], F)
            T.copy(F, C[by * bm, bx * bn])
    return main

def dynamic(block=64):
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            S = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], S)
            for i in T.Parallel(block):
                S[i] = S[i] * 0.5
            T.copy(S, B[bx * block])
    return main

def reduce3d(B, M, N):
    @T.prim_func
    def main(A: T.Tensor((B, M, N), "float32"), O: T.Tensor((B, N), "float32")):
        with T.Kernel(1, threads=128):
            F = T.alloc_fragment((B, M, N), "float32")
            R = T.alloc_fragment((B, N), "float32")
            T.copy(A, F)
            T.reduce_sum(F, R, dim=1)
            T.copy(R, O)
    return main

# Row sums of a 16-bit tile into a 16-bit fragment (or shared buffer),
# added to what B held (clear=False) when `accumulate`.
def narrow_row_sum(M, N, dtype, threads, dst_scope="fragment", accumulate=False, op="sum"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=threads):
            F = T.alloc_fragment((M, N), dtype)
            if dst_scope == "fragment":
                R = T.alloc_fragment((M,), dtype)
            else:
                R = T.alloc_shared((M,), dtype)
            T.copy(A, F)
            T.copy(B, R)
            if op == "sum":
                T.reduce_sum(F, R, dim=1, clear=not accumulate)
            else:
                T.reduce_abssum(F, R, dim=1)
            T.copy(R, B)
    return main

def gemm_dynamic(bm=64, bn=64, bk=32):
    M = T.dynamic("M")
    N = T.dynamic("N")
    K = T.dynamic("K")

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=3):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * bm, bx * bn])
    return main

def copy3d(H, S, D, bs=16):
    @T.prim_func
    def main(Q: T.Tensor((S, H, D), "float16"), O: T.Tensor((H, S, D), "float16")):
        with T.Kernel(T.ceildiv(S, bs), H, threads=128) as (bx, by):
            Q_s = T.alloc_shared((bs, D), "float16")
            T.copy(Q[bx * bs:(bx + 1) * bs, by, :], Q_s)
            T.copy(Q_s, O[by, bx * bs:(bx + 1) * bs, :])
    return main

# Arithmetic in a narrow integer dtype wraps in that dtype before the next
# operation reads it.
def vector_lanes(N):
    @T.prim_func
    def main(A: T.Tensor((N, 4), "float16"), B: T.Tensor((N, 4), "float16")):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            i = bx * 32 + T.get_thread_binding()
            if i < N:
                v = T.alloc_var(T.float16x4)
                v = T.float16x4(A[i, 3], A[i, 2], A[i, 1], A[i, 0])
                h = T.alloc_var("bfloat16x2")
                h = T.bfloat16x2(A[i, 0] * 2.0)
                B[i, 0] = T.extract_lane(v, 0) + T.extract_lane(h, 1)
                B[i, 1] = T.extract_lane(v, 1) + T.extract_lane(h, 1)
                B[i, 2] = T.extract_lane(v, 2) + T.extract_lane(h, 0)
                B[i, 3] = T.extract_lane(v, 3) + T.extract_lane(h, 0)
    return main

def packed_nibbles(N):
    from tilelang.quantize import _tir_packed_int_to_int_convert, _tir_packed_to_unsigned_convert
    @T.prim_func
    def main(B: T.Tensor((N,), "int8"), S: T.Tensor((N * 2,), "float16"),
             U: T.Tensor((N * 2,), "int32")):
        with T.Kernel(T.ceildiv(N * 2, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                if k < N * 2:
                    S[k] = _tir_packed_int_to_int_convert("int", 8)(4, B[k // 2], k % 2, "float16")
                    U[k] = _tir_packed_to_unsigned_convert("int", 8)(4, B[k // 2], k % 2, "int32")
    return main

def vector_refused(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((32,), T.float16x2)
    return main

def narrow_int(N, dtype):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), Q: T.Tensor((N,), dtype), G: T.Tensor((N,), "int32"),
             W: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                Q[k] = (A[k] * 20) // 7
                G[k] = T.if_then_else(A[k] * 20 > 100, 1, 0)
                W[k] = T.cast(A[k] * 20, "int32")
    return main
)";

TEST(ConformanceNumerics, NanThroughMaxMinAndClamp) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "nan_ops", {{"N", "150"}});
  const uint64_t seed = Seed(601);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Random(DType::kFloat32, {n}, seed + 1)};
  for (int i = 0; i < 4; ++i) args.push_back(Zeros(DType::kFloat32, {n}));
  Interpret(p, args);
  int64_t nans = 0;
  for (int64_t i = 0; i < n; ++i) nans += args[0].GetDouble(i) > 0.5;
  ASSERT_GT(nans, 0) << "the seed gives no NaN";
  auto x = [&](int64_t i) { return args[0].GetDouble(i) > 0.5 ? NAN : args[0].GetDouble(i); };
  auto c = [&](int64_t i) { return args[1].GetDouble(i); };
  ExpectClose(args[2], Table(n, x), {}, "x");
  ExpectClose(args[3],
              Table(n, [&](int64_t i) { return std::isnan(x(i)) ? c(i) : std::max(x(i), c(i)); }),
              {}, "T.max ignores NaN");
  ExpectClose(args[4],
              Table(n, [&](int64_t i) { return std::isnan(x(i)) ? c(i) : std::min(x(i), c(i)); }),
              {}, "T.min ignores NaN");
  ExpectClose(
      args[5],
      Table(n, [&](int64_t i) { return std::isnan(x(i)) ? NAN : std::clamp(x(i), -0.5, 0.5); }), {},
      "T.clamp keeps NaN");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceNumerics, FloorDivisionAndModuloOfSignedIntegers) {
  const int64_t n = 150;
  for (int d : {3, -3, 8}) {
    SCOPED_TRACE(d);
    ir::Program p = Compile(kSource, "floor_div", {{"N", "150"}, {"d", std::to_string(d)}});
    const uint64_t seed = Seed(602);
    Tensors args = {Random(DType::kInt32, {n}, seed), Zeros(DType::kInt32, {n}),
                    Zeros(DType::kInt32, {n})};
    Interpret(p, args);
    std::vector<int64_t> q(n), r(n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t a = args[0].GetInt(i);
      q[i] = static_cast<int64_t>(std::floor(static_cast<double>(a) / d));
      r[i] = a - q[i] * d;
    }
    ExpectEqualInts(args[1], q, "//");
    ExpectEqualInts(args[2], r, "%");
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

TEST(ConformanceNumerics, UnsignedDivisionModuloShiftAndComparison) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "unsigned_ops", {{"N", "150"}});
  const uint64_t seed = Seed(603);
  Tensors args = {Random(DType::kUInt32, {n}, seed), Random(DType::kUInt32, {n}, seed + 1)};
  for (int i = 0; i < 4; ++i) args.push_back(Zeros(DType::kUInt32, {n}));
  args.push_back(Zeros(DType::kInt32, {n}));
  Interpret(p, args);
  std::vector<int64_t> q(n), r(n), s(n), m(n), g(n);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t a = static_cast<uint32_t>(args[0].GetBits(i));
    uint32_t x = static_cast<uint32_t>(args[1].GetBits(i));
    q[i] = a / 7;
    r[i] = a % 10;
    s[i] = a >> 3;
    m[i] = std::max(a, x);
    g[i] = a > x;
  }
  ExpectEqualInts(args[2], q, "//");
  ExpectEqualInts(args[3], r, "%");
  ExpectEqualInts(args[4], s, ">>");
  ExpectEqualInts(args[5], m, "T.max");
  ExpectEqualInts(args[6], g, ">");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceNumerics, Float16ArithmeticRoundsInFloat16) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "half_arith", {{"N", "150"}});
  const uint64_t seed = Seed(604);
  Tensors args = {Random(DType::kFloat16, {n}, seed), Random(DType::kFloat16, {n}, seed + 1),
                  Zeros(DType::kFloat16, {n})};
  Interpret(p, args);
  ExpectClose(args[2],
              Table(n,
                    [&](int64_t i) {
                      double a = args[0].GetDouble(i);
                      return a * args[1].GetDouble(i) + a;
                    }),
              interp::DefaultTolerance(DType::kFloat16));
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceNumerics, CopyConvertsBetweenDtypes) {
  const int64_t m = 37, n = 70;
  ir::Program p = Compile(kSource, "copy_convert", {{"M", "37"}, {"N", "70"}});
  const uint64_t seed = Seed(605);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat16, {m, n}),
                  Zeros(DType::kBFloat16, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(m * n, [&](int64_t k) { return args[0].GetDouble(k); }),
              {.atol = 1e-7, .rtol = 1.0 / 2048}, "float16");
  ExpectClose(args[2], Table(m * n, [&](int64_t k) { return args[0].GetDouble(k); }),
              {.atol = 1e-7, .rtol = 1.0 / 256}, "bfloat16");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

TEST(ConformanceNumerics, DynamicShape) {
  ir::Program p = Compile(kSource, "dynamic");
  for (int64_t n : {1, 63, 200}) {
    const uint64_t seed = Seed(606);
    Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
    Interpret(p, args);
    ExpectClose(args[1], Table(n, [&](int64_t i) { return args[0].GetDouble(i) * 0.5; }), {});
    ExpectTargetsMatch(p, {.seed = seed, .dims = {{"N", n}}, .exact = true});
  }
}

TEST(ConformanceNumerics, ReduceOverTheMiddleDimOf3D) {
  const int64_t b = 3, m = 7, n = 10;
  ir::Program p = Compile(kSource, "reduce3d", {{"B", "3"}, {"M", "7"}, {"N", "10"}});
  const uint64_t seed = Seed(607);
  Tensors args = {Random(DType::kFloat32, {b, m, n}, seed), Zeros(DType::kFloat32, {b, n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(b * n,
                    [&](int64_t e) {
                      double s = 0;
                      for (int64_t j = 0; j < m; ++j)
                        s += args[0].GetDouble((e / n * m + j) * n + e % n);
                      return s;
                    }),
              {.atol = 1e-5, .rtol = 1e-5});
  ExpectTargetsMatch(p, {.seed = seed});
}

// Sums of 16-bit floats keep float32 partials and round once: every target
// and the interpreter agree with the float64 sum within the dtype's
// rounding, whatever order the threads add in (partials rounded to bfloat16
// at each step drift by several of its ulps over 128 elements).
TEST(ConformanceNumerics, SumsOfSixteenBitFloatsRoundOnce) {
  const int64_t m = 96, n = 128;
  struct Case {
    const char* dtype;
    DType t;
    const char* threads;
    const char* scope;
    bool accumulate;
    const char* op;
  } cases[] = {
      {"bfloat16", DType::kBFloat16, "32", "fragment", false, "sum"},
      {"bfloat16", DType::kBFloat16, "256", "fragment", true, "sum"},
      {"float16", DType::kFloat16, "128", "shared", false, "sum"},
      {"bfloat16", DType::kBFloat16, "64", "fragment", false, "abssum"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.dtype, " threads=", c.threads, " ", c.scope, " ", c.op,
                              c.accumulate ? " accumulate" : ""));
    ir::Program p = Compile(kSource, "narrow_row_sum",
                            {{"M", "96"},
                             {"N", "128"},
                             {"dtype", Quoted(c.dtype)},
                             {"threads", c.threads},
                             {"dst_scope", Quoted(c.scope)},
                             {"accumulate", c.accumulate ? "True" : "False"},
                             {"op", Quoted(c.op)}});
    const uint64_t seed = Seed(611);
    Tensors args = {Random(c.t, {m, n}, seed), Random(c.t, {m}, seed + 1)};
    std::vector<double> want(m);
    for (int64_t r = 0; r < m; ++r) {
      double sum = c.accumulate ? args[1].GetDouble(r) : 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const double x = args[0].GetDouble(r * n + j);
        sum += std::string(c.op) == "abssum" ? std::fabs(x) : x;
      }
      want[r] = sum;
    }
    Interpret(p, args);
    // One rounding to the dtype (float32 partials add far less).
    const double ulp = c.t == DType::kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    ExpectClose(args[1], want, {.atol = 1e-3, .rtol = ulp}, "B");
    ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
  }
}

TEST(ConformanceNumerics, GemmWithDynamicShapes) {
  ir::Program p = Compile(kSource, "gemm_dynamic");
  const int64_t m = 70, n = 50, k = 90;
  const uint64_t seed = Seed(608);
  Tensors args = {Random(DType::kFloat16, {m, k}, seed), Random(DType::kFloat16, {k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2],
              Table(m * n,
                    [&](int64_t e) {
                      double s = 0;
                      for (int64_t l = 0; l < k; ++l) {
                        s += args[0].GetDouble(e / n * k + l) * args[1].GetDouble(l * n + e % n);
                      }
                      return s;
                    }),
              {.atol = 1e-4, .rtol = 1e-4});
  ExpectTargetsMatch(p, {.seed = seed, .dims = {{"M", m}, {"N", n}, {"K", k}}});
}

TEST(ConformanceNumerics, CopyOf3DRegionsWithAScalarIndex) {
  const int64_t h = 3, s = 40, d = 24;
  ir::Program p = Compile(kSource, "copy3d", {{"H", "3"}, {"S", "40"}, {"D", "24"}});
  const uint64_t seed = Seed(609);
  Tensors args = {Random(DType::kFloat16, {s, h, d}, seed), Zeros(DType::kFloat16, {h, s, d})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(h * s * d,
                    [&](int64_t e) {
                      int64_t hh = e / (s * d), ss = e / d % s, dd = e % d;
                      return args[0].GetDouble((ss * h + hh) * d + dd);
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

TEST(ConformanceNumerics, NarrowIntegerArithmeticWrapsInItsDtype) {
  const int64_t n = 150;
  for (auto [name, dtype] : std::vector<std::pair<std::string, DType>>{
           {"int8", DType::kInt8}, {"uint8", DType::kUInt8}, {"int16", DType::kInt16}}) {
    SCOPED_TRACE(name);
    ir::Program p = Compile(kSource, "narrow_int", {{"N", "150"}, {"dtype", Quoted(name)}});
    const uint64_t seed = Seed(610);
    Tensors args = {Random(dtype, {n}, seed), Zeros(dtype, {n}), Zeros(DType::kInt32, {n}),
                    Zeros(DType::kInt32, {n})};
    Interpret(p, args);
    const int bits = ir::DTypeBits(dtype);
    const bool is_signed = dtype != DType::kUInt8;
    auto wrap = [&](int64_t v) {
      int64_t m = v & ((int64_t{1} << bits) - 1);
      return is_signed && m >= (int64_t{1} << (bits - 1)) ? m - (int64_t{1} << bits) : m;
    };
    std::vector<int64_t> q(n), g(n), w(n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t t = wrap(args[0].GetInt(i) * 20);
      q[i] = wrap(static_cast<int64_t>(std::floor(static_cast<double>(t) / 7)));
      g[i] = t > 100;
      w[i] = t;
    }
    ExpectEqualInts(args[1], q, "(A * 20) // 7");
    ExpectEqualInts(args[2], g, "A * 20 > 100");
    ExpectEqualInts(args[3], w, "cast(A * 20)");
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

// Vector dtypes: T.alloc_var of float16x4 / "bfloat16x2", their
// constructors (one value per lane, or one for all) and T.extract_lane.
TEST(ConformanceNumerics, VectorVariablesAndExtractLane) {
  const int64_t n = 45;
  ir::Program p = Compile(kSource, "vector_lanes", {{"N", "45"}});
  const uint64_t seed = Seed(606);
  Tensors args = {Random(DType::kFloat16, {n, 4}, seed), Zeros(DType::kFloat16, {n, 4})};
  Interpret(p, args);
  auto a = [&](int64_t i, int64_t j) { return args[0].GetDouble(i * 4 + j); };
  auto bf16 = [](double x) {  // round to bfloat16, nearest even
    float f = static_cast<float>(x);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
    std::memcpy(&f, &u, 4);
    return static_cast<double>(f);
  };
  ExpectClose(args[1],
              Table(n * 4,
                    [&](int64_t k) {
                      const int64_t i = k / 4, l = k % 4;
                      return a(i, 3 - l) + bf16(a(i, 0) * 2.0);
                    }),
              interp::DefaultTolerance(DType::kFloat16));
  ExpectTargetsMatch(p, {.seed = seed});
  ExpectRefused(kSource, "vector_refused", {{"N", "8"}},
                "the vector dtype float16x2 is not supported for the dtype of T.alloc_shared; "
                "tilec supports vector dtypes in T.alloc_var, their constructors and "
                "T.extract_lane");
}

// tilelang.quantize's converters: 4-bit fields of int8 bytes, sign- and
// zero-extended.
TEST(ConformanceNumerics, QuantizeConvertersOfPackedNibbles) {
  const int64_t n = 77;
  ir::Program p = Compile(kSource, "packed_nibbles", {{"N", "77"}});
  Tensors args = {Zeros(DType::kInt8, {n}), Zeros(DType::kFloat16, {n * 2}),
                  Zeros(DType::kInt32, {n * 2})};
  // Every byte value, not only the small ones random inputs give.
  for (int64_t i = 0; i < n; ++i) args[0].SetInt(i, static_cast<int8_t>(i * 37 - 128));
  Interpret(p, args);
  std::vector<int64_t> s, u;
  for (int64_t k = 0; k < n * 2; ++k) {
    const uint8_t byte = static_cast<uint8_t>(args[0].GetInt(k / 2));
    const int64_t field = (byte >> (4 * (k % 2))) & 0xF;
    u.push_back(field);
    s.push_back(field >= 8 ? field - 16 : field);
  }
  ExpectEqualInts(args[1], s, "signed fields");
  ExpectEqualInts(args[2], u, "unsigned fields");
  ExpectTargetsMatch(p, {.seed = Seed(607), .exact = true});
}

}  // namespace
}  // namespace tilec::conformance
