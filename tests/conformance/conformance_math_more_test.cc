// Conformance: the rest of TVM's math that TileLang kernels call through T
// (tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log10, log1p,
// exp10, expm1, trunc, nearbyint, atan2, fmod, hypot, copysign), the integer
// bit counts (popcount, clz), the float classes (isnan, isinf, isfinite), the
// bitwise spellings (bitwise_and/or/xor/not, shift_left/right) and the
// T.likely hint. The interpreter against float64 / exact references, the
// emitted CUDA on the SIMT emulator against the interpreter.
#include <bit>
#include <cmath>
#include <cstdint>
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
                B[k] = getattr(T, fn)(A[k], C[k])
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
)";

// B = fn(float32(A * scale + shift)) against `ref` in float64.
void CheckUnary(const std::string& fn, const std::function<double(double)>& ref, double scale = 1.0,
                double shift = 0.0) {
  const int64_t n = 300;
  ir::Program p = Compile(kSource, "unary",
                          {{"N", "300"},
                           {"fn", Quoted(fn)},
                           {"scale", std::to_string(scale)},
                           {"shift", std::to_string(shift)}});
  const uint64_t seed = Seed(341);
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

TEST(ConformanceMathMore, Trigonometric) {
  CheckUnary("tan", [](double x) { return std::tan(x); });
  CheckUnary(
      "asin", [](double x) { return std::asin(x); }, 0.99);
  CheckUnary(
      "acos", [](double x) { return std::acos(x); }, 0.99);
  CheckUnary(
      "atan", [](double x) { return std::atan(x); }, 3.0);
}
TEST(ConformanceMathMore, Hyperbolic) {
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
TEST(ConformanceMathMore, LogarithmsAndExponentials) {
  CheckUnary(
      "log10", [](double x) { return std::log10(x); }, 1.0, 2.0);
  CheckUnary(
      "log1p", [](double x) { return std::log1p(x); }, 0.5);
  CheckUnary("exp10", [](double x) { return std::pow(10.0, x); });
  CheckUnary(
      "expm1", [](double x) { return std::expm1(x); }, 0.01);
}
TEST(ConformanceMathMore, Rounding) {
  CheckUnary(
      "trunc", [](double x) { return std::trunc(x); }, 4.0);
  CheckUnary(
      "nearbyint", [](double x) { return std::nearbyint(x); }, 4.0);
}

void CheckBinary(const std::string& fn, const std::function<double(double, double)>& ref) {
  const int64_t n = 300;
  ir::Program p = Compile(kSource, "binary", {{"N", "300"}, {"fn", Quoted(fn)}});
  const uint64_t seed = Seed(342);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Random(DType::kFloat32, {n}, seed + 1),
                  Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[2],
              Table(n,
                    [&](int64_t i) {
                      return static_cast<double>(
                          static_cast<float>(ref(args[0].GetDouble(i), args[1].GetDouble(i))));
                    }),
              {.atol = 2e-6, .rtol = 2e-6}, fn);
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceMathMore, TwoArgumentFunctions) {
  CheckBinary("atan2", [](double y, double x) { return std::atan2(y, x); });
  CheckBinary("fmod", [](double x, double y) { return std::fmod(x, y); });
  CheckBinary("hypot", [](double x, double y) { return std::hypot(x, y); });
  CheckBinary("copysign", [](double x, double y) { return std::copysign(x, y); });
}

TEST(ConformanceMathMore, BitCountsAndBitwiseSpellings) {
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

TEST(ConformanceMathMore, FloatClasses) {
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

}  // namespace
}  // namespace tilec::conformance
