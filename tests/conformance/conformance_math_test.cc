// Conformance: element-wise primitives as TileLang documents them (math
// functions, the rest of TVM's math (tan ... copysign, nearbyint), the
// integer bit counts, the float classes, the bitwise spellings and
// T.likely, T.max / T.min / T.clamp / T.if_then_else, T.ceildiv,
// T.infinity, T.max_value / T.min_value, T.cast, T.reinterpret, T.any_of /
// T.all_of, T.dp4a). The interpreter is checked against references computed
// here in float64 (or exactly), the emitted CUDA on the SIMT emulator against
// the interpreter.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
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

# B = fn(A * scale + shift)
def unary(N, fn, scale=1.0, shift=0.0):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = getattr(T, fn)(A[bx * 128 + i] * scale + shift)
    return main

def binary(N, fn):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32"),
             B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                k = bx * 128 + i
                if fn == "pow":
                    B[k] = T.pow(T.abs(A[k]) + 0.5, C[k])
                elif fn == "clamp":
                    B[k] = T.clamp(A[k], -0.5, C[k] * 0.0 + 0.25)
                elif fn == "if_then_else":
                    B[k] = T.if_then_else(A[k] > C[k], A[k], C[k] * 2.0)
                else:
                    B[k] = getattr(T, fn)(A[k], C[k])
    return main

def ceildiv(N, d):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                B[bx * 64 + i] = T.ceildiv(A[bx * 64 + i] + 100, d)
    return main

def limits(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
             F: T.Tensor((3,), "float32"), I: T.Tensor((3,), "int64")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(N):
                B[i] = T.if_then_else(A[i] > 0, T.infinity("float32"), -T.infinity("float32"))
            F[0] = T.max_value("float16")
            F[1] = T.min_value("float16")
            F[2] = T.max_value("float32")
            I[0] = T.max_value("int8")
            I[1] = T.min_value("int32")
            I[2] = T.max_value(T.int64)
    return main

def cast(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), I: T.Tensor((N,), "int32"),
             H: T.Tensor((N,), "float16"), D: T.Tensor((N,), "float64")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                I[k] = T.cast(A[k] * 100.0, "int32")
                H[k] = T.cast(A[k], "float16")
                D[k] = T.cast(A[k], T.float64) * 3.0
    return main

def reinterpret(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), U: T.Tensor((N,), "uint32"),
             B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                U[k] = T.reinterpret(A[k], "uint32")
                B[k] = T.reinterpret("float32", T.reinterpret(A[k], "uint32") ^ 2147483648)
    return main

def any_all(M, W):
    @T.prim_func
    def main(Mask: T.Tensor((M, W), "bool"), Any: T.Tensor((M,), "int32"),
             All: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            Any[bx] = T.if_then_else(T.any_of(Mask[bx, 0:W]), 1, 0)
            All[bx] = T.if_then_else(T.all_of(Mask[bx, 0:W]), 1, 0)
    return main

def any_scalar(M):
    @T.prim_func
    def main(A: T.Tensor((M,), "bool"), B: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            B[bx] = T.if_then_else(T.any_of(A[bx]), 1, 0)
    return main

def dot4(N):
    @T.prim_func
    def main(A: T.Tensor((N, 8), "int8"), B: T.Tensor((N, 8), "int8"),
             C: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            tx = T.get_thread_binding()
            a = T.alloc_local((8,), "int8")
            b = T.alloc_local((8,), "int8")
            acc = T.alloc_local((1,), "int32")
            acc[0] = 3
            for k in T.serial(8):
                a[k] = A[bx * 32 + tx, k]
                b[k] = B[bx * 32 + tx, k]
            T.dp4a(a[0], b[0], acc[0])
            T.dp4a(a[4], b[4], acc[0])
            C[bx * 32 + tx] = acc[0]
    return main

def all_big(M):
    @T.prim_func
    def main(Mask: T.Tensor((M,), "bool"), B: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=32):
            B[0] = T.if_then_else(T.all_of(Mask), 1, 0)
    return main

def bits(N, dtype):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), P: T.Tensor((N,), dtype), Z: T.Tensor((N,), dtype),
             S: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                if T.likely(k < N):
                    P[k] = T.popcount(A[k])
                    Z[k] = T.clz(A[k])
                    S[k] = T.bitwise_xor(T.bitwise_and(A[k], 12345), T.bitwise_or(
                        T.shift_left(A[k], 3), T.shift_right(A[k], 2))) + T.bitwise_not(A[k])
    return main

def classes(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), H: T.Tensor((N,), "float16"),
             C: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                k = bx * 64 + i
                x = A[k] / (A[k] * 0.0 + T.if_then_else(k % 3 == 0, 0.0, 1.0))
                y = T.if_then_else(k % 5 == 0, x * 0.0, x)
                C[k] = (T.if_then_else(T.isnan(y), 1, 0) + T.if_then_else(T.isinf(y), 2, 0) +
                        T.if_then_else(T.isfinite(y), 4, 0) +
                        T.if_then_else(T.isinf(T.cast(T.cast(H[k], "float32") * 70000.0, "float16")), 8, 0))
    return main
def uint64_limits(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "uint64"), B: T.Tensor((N,), "uint64")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(N):
                B[i] = T.max_value(T.uint64) - A[i]
    return main
)";

const interp::Tolerance kF32 = interp::DefaultTolerance(DType::kFloat32);

// B = fn(float32(A * scale + shift)) against `ref` in float64.
void CheckUnary(const std::string& fn, const std::function<double(double)>& ref, double scale = 1.0,
                double shift = 0.0) {
  const int64_t n = 300;
  ir::Program p = Compile(kSource, "unary",
                          {{"N", "300"},
                           {"fn", Quoted(fn)},
                           {"scale", std::to_string(scale)},
                           {"shift", std::to_string(shift)}});
  const uint64_t seed = Seed(301);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t i) {
                      float x =
                          static_cast<float>(args[0].GetDouble(i)) * static_cast<float>(scale);
                      x = x + static_cast<float>(shift);
                      return static_cast<double>(static_cast<float>(ref(x)));
                    }),
              {.atol = 2e-6, .rtol = 2e-6}, fn);
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceMath, Exp) {
  CheckUnary("exp", [](double x) { return std::exp(x); });
}
TEST(ConformanceMath, Exp2) {
  CheckUnary("exp2", [](double x) { return std::exp2(x); });
}
TEST(ConformanceMath, Log) {
  CheckUnary(
      "log", [](double x) { return std::log(x); }, 1.0, 2.0);
}
TEST(ConformanceMath, Log2) {
  CheckUnary(
      "log2", [](double x) { return std::log2(x); }, 1.0, 2.0);
}
TEST(ConformanceMath, Sqrt) {
  CheckUnary(
      "sqrt", [](double x) { return std::sqrt(x); }, 1.0, 2.0);
}
TEST(ConformanceMath, Rsqrt) {
  CheckUnary(
      "rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, 1.0, 2.0);
}
TEST(ConformanceMath, Tanh) {
  CheckUnary(
      "tanh", [](double x) { return std::tanh(x); }, 3.0);
}
TEST(ConformanceMath, Sigmoid) {
  CheckUnary(
      "sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 4.0);
}
TEST(ConformanceMath, Sin) {
  CheckUnary(
      "sin", [](double x) { return std::sin(x); }, 3.0);
}
TEST(ConformanceMath, Cos) {
  CheckUnary(
      "cos", [](double x) { return std::cos(x); }, 3.0);
}
TEST(ConformanceMath, Erf) {
  CheckUnary(
      "erf", [](double x) { return std::erf(x); }, 2.0);
}
TEST(ConformanceMath, Floor) {
  CheckUnary(
      "floor", [](double x) { return std::floor(x); }, 4.0);
}
TEST(ConformanceMath, Ceil) {
  CheckUnary(
      "ceil", [](double x) { return std::ceil(x); }, 4.0);
}
TEST(ConformanceMath, Round) {
  CheckUnary(
      "round", [](double x) { return std::nearbyint(x); }, 4.0);
}
TEST(ConformanceMath, Abs) {
  CheckUnary("abs", [](double x) { return std::fabs(x); });
}

void CheckBinary(const std::string& fn, const std::function<double(double, double)>& ref,
                 interp::Tolerance tol) {
  const int64_t n = 300;
  ir::Program p = Compile(kSource, "binary", {{"N", "300"}, {"fn", Quoted(fn)}});
  const uint64_t seed = Seed(311);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Random(DType::kFloat32, {n}, seed + 1),
                  Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[2],
              Table(n, [&](int64_t i) { return ref(args[0].GetDouble(i), args[1].GetDouble(i)); }),
              tol, fn);
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceMath, Pow) {
  CheckBinary(
      "pow", [](double a, double c) { return std::pow(static_cast<float>(std::fabs(a) + 0.5), c); },
      {.atol = 2e-6, .rtol = 2e-6});
}
TEST(ConformanceMath, Max) {
  CheckBinary("max", [](double a, double c) { return std::max(a, c); }, {});
}
TEST(ConformanceMath, Min) {
  CheckBinary("min", [](double a, double c) { return std::min(a, c); }, {});
}
TEST(ConformanceMath, Clamp) {
  CheckBinary("clamp", [](double a, double) { return std::min(std::max(a, -0.5), 0.25); }, {});
}
TEST(ConformanceMath, IfThenElse) {
  CheckBinary(
      "if_then_else",
      [](double a, double c) { return a > c ? a : static_cast<double>(static_cast<float>(c * 2)); },
      {});
}

TEST(ConformanceMath, Trigonometric) {
  CheckUnary("tan", [](double x) { return std::tan(x); });
  CheckUnary(
      "asin", [](double x) { return std::asin(x); }, 0.99);
  CheckUnary(
      "acos", [](double x) { return std::acos(x); }, 0.99);
  CheckUnary(
      "atan", [](double x) { return std::atan(x); }, 3.0);
}
TEST(ConformanceMath, Hyperbolic) {
  CheckUnary(
      "sinh", [](double x) { return std::sinh(x); }, 2.0);
  CheckUnary(
      "cosh", [](double x) { return std::cosh(x); }, 2.0);
  CheckUnary(
      "asinh", [](double x) { return std::asinh(x); }, 3.0);
  CheckUnary(
      "acosh", [](double x) { return std::acosh(x); }, 1.0, 2.0);
  CheckUnary(
      "atanh", [](double x) { return std::atanh(x); }, 0.9);
}
TEST(ConformanceMath, LogarithmsAndExponentials) {
  CheckUnary(
      "log10", [](double x) { return std::log10(x); }, 1.0, 2.0);
  CheckUnary(
      "log1p", [](double x) { return std::log1p(x); }, 0.5);
  CheckUnary("exp10", [](double x) { return std::pow(10.0, x); });
  CheckUnary(
      "expm1", [](double x) { return std::expm1(x); }, 0.01);
}
TEST(ConformanceMath, Rounding) {
  CheckUnary(
      "trunc", [](double x) { return std::trunc(x); }, 4.0);
  CheckUnary(
      "nearbyint", [](double x) { return std::nearbyint(x); }, 4.0);
}

TEST(ConformanceMath, TwoArgumentFunctions) {
  const interp::Tolerance tol{.atol = 2e-6, .rtol = 2e-6};
  CheckBinary(
      "atan2", [](double y, double x) { return std::atan2(y, x); }, tol);
  CheckBinary(
      "fmod", [](double x, double y) { return std::fmod(x, y); }, tol);
  CheckBinary(
      "hypot", [](double x, double y) { return std::hypot(x, y); }, tol);
  CheckBinary(
      "copysign", [](double x, double y) { return std::copysign(x, y); }, tol);
}

TEST(ConformanceMath, BitCountsAndBitwiseSpellings) {
  for (const char* dtype : {"int32", "uint8", "int64"}) {
    SCOPED_TRACE(dtype);
    const DType t = *ir::ParseDType(dtype);
    const int bits = ir::DTypeBits(t);
    const int64_t n = 100;  // the last block is partial
    ir::Program p = Compile(kSource, "bits", {{"N", "100"}, {"dtype", Quoted(dtype)}});
    const uint64_t seed = Seed(343);
    Tensors args = {Random(t, {n}, seed), Zeros(t, {n}), Zeros(t, {n}), Zeros(t, {n})};
    Interpret(p, args);
    std::vector<int64_t> pop(n), lz(n), mix(n);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    auto wrap = [&](uint64_t u) {
      u &= mask;
      if (ir::IsSigned(t) && bits < 64 && (u >> (bits - 1)) != 0)
        return static_cast<int64_t>(u | ~mask);
      return static_cast<int64_t>(u);
    };
    for (int64_t i = 0; i < n; ++i) {
      const int64_t a = args[0].GetInt(i);
      const uint64_t u = static_cast<uint64_t>(a) & mask;
      pop[i] = std::popcount(u);
      lz[i] = u == 0 ? bits : std::countl_zero(u) - (64 - bits);
      // C++ promotes the narrow operands to int, as the emitted code does.
      const int64_t shr = ir::IsSigned(t) ? (a >> 2) : static_cast<int64_t>(u >> 2);
      mix[i] = wrap(static_cast<uint64_t>(((a & 12345) ^ ((a << 3) | shr)) + ~a));
    }
    ExpectEqualInts(args[1], pop, "popcount");
    ExpectEqualInts(args[2], lz, "clz");
    ExpectEqualInts(args[3], mix, "bitwise");
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

TEST(ConformanceMath, FloatClasses) {
  const int64_t n = 90;
  ir::Program p = Compile(kSource, "classes", {{"N", "90"}});
  const uint64_t seed = Seed(344);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Random(DType::kFloat16, {n}, seed + 1),
                  Zeros(DType::kInt32, {n})};
  Interpret(p, args);
  std::vector<int64_t> want(n);
  for (int64_t i = 0; i < n; ++i) {
    const float a = static_cast<float>(args[0].GetDouble(i));
    const float x = a / (a * 0.0f + (i % 3 == 0 ? 0.0f : 1.0f));
    const float y = i % 5 == 0 ? x * 0.0f : x;
    const float h = static_cast<float>(args[1].GetDouble(i)) * 70000.0f;
    want[i] = (std::isnan(y) ? 1 : 0) + (std::isinf(y) ? 2 : 0) + (std::isfinite(y) ? 4 : 0) +
              (std::fabs(h) >= 65520.0f ? 8 : 0);  // rounds to the float16 infinity
  }
  ExpectEqualInts(args[2], want);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceMath, CeilDiv) {
  const int64_t n = 100;
  for (int d : {1, 7, 16}) {
    ir::Program p = Compile(kSource, "ceildiv", {{"N", "100"}, {"d", std::to_string(d)}});
    const uint64_t seed = Seed(321);
    Tensors args = {Random(DType::kInt32, {n}, seed), Zeros(DType::kInt32, {n})};
    Interpret(p, args);
    std::vector<int64_t> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = (args[0].GetInt(i) + 100 + d - 1) / d;
    ExpectEqualInts(args[1], want);
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

TEST(ConformanceMath, InfinityAndLimits) {
  const int64_t n = 50;
  ir::Program p = Compile(kSource, "limits", {{"N", "50"}});
  const uint64_t seed = Seed(322);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n}),
                  Zeros(DType::kFloat32, {3}), Zeros(DType::kInt64, {3})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n, [&](int64_t i) { return args[0].GetDouble(i) > 0 ? INFINITY : -INFINITY; }),
              {}, "infinity");
  ExpectClose(args[2], {65504.0, -65504.0, std::numeric_limits<float>::max()}, {}, "float limits");
  ExpectEqualInts(args[3],
                  {127, std::numeric_limits<int32_t>::min(), std::numeric_limits<int64_t>::max()},
                  "int limits");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceMath, Cast) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "cast", {{"N", "150"}});
  const uint64_t seed = Seed(323);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kInt32, {n}),
                  Zeros(DType::kFloat16, {n}), Zeros(DType::kFloat64, {n})};
  Interpret(p, args);
  std::vector<int64_t> truncated(n);
  for (int64_t i = 0; i < n; ++i) {
    truncated[i] = static_cast<int32_t>(static_cast<float>(args[0].GetDouble(i)) * 100.0f);
  }
  ExpectEqualInts(args[1], truncated, "to int32");
  ExpectClose(args[2], Table(n, [&](int64_t i) { return args[0].GetDouble(i); }),
              {.atol = 0, .rtol = 1.0 / 2048}, "to float16");
  ExpectClose(args[3], Table(n, [&](int64_t i) { return args[0].GetDouble(i) * 3; }),
              interp::DefaultTolerance(DType::kFloat64), "to float64");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceMath, Reinterpret) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "reinterpret", {{"N", "150"}});
  const uint64_t seed = Seed(324);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kUInt32, {n}),
                  Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  std::vector<int64_t> bits(n);
  for (int64_t i = 0; i < n; ++i) bits[i] = static_cast<int64_t>(args[0].GetBits(i));
  ExpectEqualInts(args[1], bits, "bits");
  ExpectClose(args[2], Table(n, [&](int64_t i) { return -args[0].GetDouble(i); }), {}, "sign flip");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceMath, AnyOfAllOf) {
  const int64_t m = 40, w = 3;
  ir::Program p = Compile(kSource, "any_all", {{"M", "40"}, {"W", "3"}});
  const uint64_t seed = Seed(325);
  Tensors args = {Random(DType::kBool, {m, w}, seed), Zeros(DType::kInt32, {m}),
                  Zeros(DType::kInt32, {m})};
  Interpret(p, args);
  std::vector<int64_t> any(m), all(m);
  for (int64_t r = 0; r < m; ++r) {
    any[r] = 0;
    all[r] = 1;
    for (int64_t c = 0; c < w; ++c) {
      any[r] |= args[0].GetInt(r * w + c) != 0;
      all[r] &= args[0].GetInt(r * w + c) != 0;
    }
  }
  ExpectEqualInts(args[1], any, "any_of");
  ExpectEqualInts(args[2], all, "all_of");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceMath, AnyOfScalarRefused) {
  ExpectRefused(kSource, "any_scalar", {{"M", "4"}},
                "T.any_of() needs a buffer or a buffer region, got element of buffer `A`");
}

TEST(ConformanceMath, Dp4a) {
  const int64_t n = 45;
  ir::Program p = Compile(kSource, "dot4", {{"N", "45"}});
  const uint64_t seed = Seed(326);
  Tensors args = {Random(DType::kInt8, {n, 8}, seed), Random(DType::kInt8, {n, 8}, seed + 1),
                  Zeros(DType::kInt32, {n})};
  Interpret(p, args);
  std::vector<int64_t> want(n, 3);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < 8; ++k)
      want[r] += args[0].GetInt(r * 8 + k) * args[1].GetInt(r * 8 + k);
  }
  ExpectEqualInts(args[2], want);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceMath, AllOfMoreThan1024ElementsRefused) {
  ExpectRefused(kSource, "all_big", {{"M", "2048"}},
                "T.all_of() of more than 1024 elements is not supported");
}

TEST(ConformanceMath, MaxValueOfUInt64) {
  const int64_t n = 40;
  ir::Program p = Compile(kSource, "uint64_limits", {{"N", "40"}});
  const uint64_t seed = Seed(327);
  Tensors args = {Random(DType::kUInt64, {n}, seed), Zeros(DType::kUInt64, {n})};
  Interpret(p, args);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(args[1].GetBits(i), ~uint64_t{0} - args[0].GetBits(i)) << "element " << i;
  }
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

}  // namespace
}  // namespace tilec::conformance
