// Host twin of cuda/tl/math.h: the math functions generated code calls, on
// float and double, from the C library (no fast-math).
//
//   exp exp2 log log2 sqrt rsqrt tanh sigmoid sin cos erf floor ceil
//   round (half to even) pow fabs fmax fmin, tan asin acos atan sinh cosh
//   asinh acosh atanh log10 log1p exp10 expm1 trunc atan2 fmod hypot copysign
//   popcount clz   integers: set bits / leading zeros in the type's width
//   infinity<T>()  +inf of float, double, half_t, bfloat16_t; for the fp8
//                  types the largest finite value (float -> fp8 saturates)
//
// fmax/fmin ignore a NaN operand, as CUDA's do. Exactly rounded operations
// (sqrt, floor, ceil, round, fabs, fmax, fmin) match the GPU bit for bit; the
// transcendental functions may differ from CUDA's in the last ulp. rsqrt is
// 1 / sqrt(x) rounded twice. Other argument types fail with the CUDA twin's
// message.
#ifndef TILEC_DEVICE_HOST_TL_MATH_H_
#define TILEC_DEVICE_HOST_TL_MATH_H_

#include <cmath>
#include <limits>
#include <type_traits>

#include "tl/types.h"

namespace tl {

#define TL_HOST_MATH_UNARY(name, expr_f, expr_d)                                              \
  inline float name(float x) { return expr_f; }                                               \
  inline double name(double x) { return expr_d; }                                             \
  template <typename T>                                                                       \
  inline T name(T x) {                                                                        \
    static_assert(sizeof(T) == 0,                                                             \
                  "tl::" #name " takes float or double; convert the argument with float(x)"); \
    return x;                                                                                 \
  }

#define TL_HOST_MATH_BINARY(name, fn)                                                             \
  inline float name(float x, float y) { return std::fn(x, y); }                                   \
  inline double name(double x, double y) { return std::fn(x, y); }                                \
  template <typename T, typename U>                                                               \
  inline T name(T x, U y) {                                                                       \
    static_assert(sizeof(T) == 0, "tl::" #name                                                    \
                                  " takes two floats or two doubles; convert the arguments with " \
                                  "float(x)");                                                    \
    return x;                                                                                     \
  }

TL_HOST_MATH_UNARY(exp, std::exp(x), std::exp(x))
TL_HOST_MATH_UNARY(exp2, std::exp2(x), std::exp2(x))
TL_HOST_MATH_UNARY(log, std::log(x), std::log(x))
TL_HOST_MATH_UNARY(log2, std::log2(x), std::log2(x))
TL_HOST_MATH_UNARY(sqrt, std::sqrt(x), std::sqrt(x))
TL_HOST_MATH_UNARY(rsqrt, 1.0f / std::sqrt(x), 1.0 / std::sqrt(x))
TL_HOST_MATH_UNARY(tanh, std::tanh(x), std::tanh(x))
TL_HOST_MATH_UNARY(sigmoid, 1.0f / (1.0f + std::exp(-x)), 1.0 / (1.0 + std::exp(-x)))
TL_HOST_MATH_UNARY(sin, std::sin(x), std::sin(x))
TL_HOST_MATH_UNARY(cos, std::cos(x), std::cos(x))
TL_HOST_MATH_UNARY(erf, std::erf(x), std::erf(x))
TL_HOST_MATH_UNARY(floor, std::floor(x), std::floor(x))
TL_HOST_MATH_UNARY(ceil, std::ceil(x), std::ceil(x))
TL_HOST_MATH_UNARY(round, std::rint(x), std::rint(x))  // default rounding mode: half to even
TL_HOST_MATH_UNARY(fabs, std::fabs(x), std::fabs(x))
TL_HOST_MATH_UNARY(tan, std::tan(x), std::tan(x))
TL_HOST_MATH_UNARY(asin, std::asin(x), std::asin(x))
TL_HOST_MATH_UNARY(acos, std::acos(x), std::acos(x))
TL_HOST_MATH_UNARY(atan, std::atan(x), std::atan(x))
TL_HOST_MATH_UNARY(sinh, std::sinh(x), std::sinh(x))
TL_HOST_MATH_UNARY(cosh, std::cosh(x), std::cosh(x))
TL_HOST_MATH_UNARY(asinh, std::asinh(x), std::asinh(x))
TL_HOST_MATH_UNARY(acosh, std::acosh(x), std::acosh(x))
TL_HOST_MATH_UNARY(atanh, std::atanh(x), std::atanh(x))
TL_HOST_MATH_UNARY(log10, std::log10(x), std::log10(x))
TL_HOST_MATH_UNARY(log1p, std::log1p(x), std::log1p(x))
TL_HOST_MATH_UNARY(exp10, std::pow(10.0f, x), std::pow(10.0, x))
TL_HOST_MATH_UNARY(expm1, std::expm1(x), std::expm1(x))
TL_HOST_MATH_UNARY(trunc, std::trunc(x), std::trunc(x))
TL_HOST_MATH_BINARY(pow, pow)
TL_HOST_MATH_BINARY(atan2, atan2)
TL_HOST_MATH_BINARY(fmod, fmod)
TL_HOST_MATH_BINARY(hypot, hypot)
TL_HOST_MATH_BINARY(copysign, copysign)
TL_HOST_MATH_BINARY(fmax, fmax)
TL_HOST_MATH_BINARY(fmin, fmin)

#undef TL_HOST_MATH_UNARY
#undef TL_HOST_MATH_BINARY

template <typename T>
inline T popcount(T x) {
  static_assert(sizeof(T) <= 8, "tl::popcount takes an integer of at most 64 bits");
  using U = std::make_unsigned_t<T>;
  return T(__builtin_popcountll(static_cast<unsigned long long>(static_cast<U>(x))));
}
template <typename T>
inline T clz(T x) {
  static_assert(sizeof(T) <= 8, "tl::clz takes an integer of at most 64 bits");
  using U = std::make_unsigned_t<T>;
  const unsigned long long u = static_cast<unsigned long long>(static_cast<U>(x));
  return T(u == 0 ? 8 * int(sizeof(T)) : __builtin_clzll(u) - 64 + 8 * int(sizeof(T)));
}

template <typename T>
inline T infinity() {
  static_assert(sizeof(T) == 0,
                "tl::infinity<T>: T must be float, double, tl::half_t, tl::bfloat16_t or an fp8 "
                "type");
  return T();
}
template <>
inline float infinity<float>() {
  return std::numeric_limits<float>::infinity();
}
template <>
inline double infinity<double>() {
  return std::numeric_limits<double>::infinity();
}
template <>
inline half_t infinity<half_t>() {
  return half_t::from_bits(0x7c00);
}
template <>
inline bfloat16_t infinity<bfloat16_t>() {
  return bfloat16_t::from_bits(0x7f80);
}
template <>
inline fp8_e4m3_t infinity<fp8_e4m3_t>() {
  return fp8_e4m3_t(infinity<float>());
}
template <>
inline fp8_e5m2_t infinity<fp8_e5m2_t>() {
  return fp8_e5m2_t(infinity<float>());
}
template <>
inline fp8_e4m3fnuz_t infinity<fp8_e4m3fnuz_t>() {
  return fp8_e4m3fnuz_t(infinity<float>());
}
template <>
inline fp8_e5m2fnuz_t infinity<fp8_e5m2fnuz_t>() {
  return fp8_e5m2fnuz_t(infinity<float>());
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_MATH_H_
