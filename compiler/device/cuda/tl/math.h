// Math functions generated code calls, on float and double, with the CUDA
// math library's IEEE-conforming implementations: NVRTC gets --use_fast_math
// only for a kernel whose pass_configs ask for fast math (ir::Program::
// fast_math); otherwise sqrt and division are correctly rounded.
//
//   exp exp2 log log2 sqrt rsqrt tanh sigmoid sin cos erf floor ceil
//   round (half to even) pow fabs fmax fmin, tan asin acos atan sinh cosh
//   asinh acosh atanh log10 log1p exp10 expm1 trunc atan2 fmod hypot copysign
//   popcount clz   integers: set bits / leading zeros in the type's width
//   infinity<T>()  +inf of float, double, half_t, bfloat16_t; for the fp8
//                  types the largest finite value (float -> fp8 saturates)
//
// fmax/fmin follow CUDA's NaN rule: a NaN operand is ignored (the result is
// NaN only when both are). Other argument types (16-bit floats, integers)
// fail with a message: convert with float(x) first.
#ifndef TILEC_DEVICE_CUDA_TL_MATH_H_
#define TILEC_DEVICE_CUDA_TL_MATH_H_

#include "tl/types.h"

namespace tl {

#define TL_MATH_UNARY(name, f32, f64)                                                         \
  __device__ __forceinline__ float name(float x) { return ::f32(x); }                         \
  __device__ __forceinline__ double name(double x) { return ::f64(x); }                       \
  template <typename T>                                                                       \
  __device__ __forceinline__ T name(T x) {                                                    \
    static_assert(sizeof(T) == 0,                                                             \
                  "tl::" #name " takes float or double; convert the argument with float(x)"); \
    return x;                                                                                 \
  }

#define TL_MATH_BINARY(name, f32, f64)                                                            \
  __device__ __forceinline__ float name(float x, float y) { return ::f32(x, y); }                 \
  __device__ __forceinline__ double name(double x, double y) { return ::f64(x, y); }              \
  template <typename T, typename U>                                                               \
  __device__ __forceinline__ T name(T x, U y) {                                                   \
    static_assert(sizeof(T) == 0, "tl::" #name                                                    \
                                  " takes two floats or two doubles; convert the arguments with " \
                                  "float(x)");                                                    \
    return x;                                                                                     \
  }

TL_MATH_UNARY(exp, expf, exp)
TL_MATH_UNARY(exp2, exp2f, exp2)
TL_MATH_UNARY(log, logf, log)
TL_MATH_UNARY(log2, log2f, log2)
TL_MATH_UNARY(sqrt, sqrtf, sqrt)
TL_MATH_UNARY(rsqrt, rsqrtf, rsqrt)
TL_MATH_UNARY(tanh, tanhf, tanh)
TL_MATH_UNARY(sin, sinf, sin)
TL_MATH_UNARY(cos, cosf, cos)
TL_MATH_UNARY(erf, erff, erf)
TL_MATH_UNARY(floor, floorf, floor)
TL_MATH_UNARY(ceil, ceilf, ceil)
TL_MATH_UNARY(round, rintf, rint)
TL_MATH_UNARY(fabs, fabsf, fabs)
TL_MATH_UNARY(tan, tanf, tan)
TL_MATH_UNARY(asin, asinf, asin)
TL_MATH_UNARY(acos, acosf, acos)
TL_MATH_UNARY(atan, atanf, atan)
TL_MATH_UNARY(sinh, sinhf, sinh)
TL_MATH_UNARY(cosh, coshf, cosh)
TL_MATH_UNARY(asinh, asinhf, asinh)
TL_MATH_UNARY(acosh, acoshf, acosh)
TL_MATH_UNARY(atanh, atanhf, atanh)
TL_MATH_UNARY(log10, log10f, log10)
TL_MATH_UNARY(log1p, log1pf, log1p)
TL_MATH_UNARY(exp10, exp10f, exp10)
TL_MATH_UNARY(expm1, expm1f, expm1)
TL_MATH_UNARY(trunc, truncf, trunc)
TL_MATH_BINARY(pow, powf, pow)
TL_MATH_BINARY(atan2, atan2f, atan2)
TL_MATH_BINARY(fmod, fmodf, fmod)
TL_MATH_BINARY(hypot, hypotf, hypot)
TL_MATH_BINARY(copysign, copysignf, copysign)
TL_MATH_BINARY(fmax, fmaxf, fmax)
TL_MATH_BINARY(fmin, fminf, fmin)

#undef TL_MATH_UNARY
#undef TL_MATH_BINARY

template <typename T>
__device__ __forceinline__ T popcount(T x) {
  static_assert(sizeof(T) <= 8, "tl::popcount takes an integer of at most 64 bits");
  if constexpr (sizeof(T) == 8) {
    return T(__popcll(static_cast<unsigned long long>(x)));
  } else {
    constexpr unsigned mask = sizeof(T) == 4 ? 0xffffffffu : (1u << (8 * sizeof(T))) - 1u;
    return T(__popc(static_cast<unsigned>(x) & mask));
  }
}
template <typename T>
__device__ __forceinline__ T clz(T x) {
  static_assert(sizeof(T) <= 8, "tl::clz takes an integer of at most 64 bits");
  if constexpr (sizeof(T) == 8) {
    return T(__clzll(static_cast<long long>(x)));
  } else {
    constexpr unsigned mask = sizeof(T) == 4 ? 0xffffffffu : (1u << (8 * sizeof(T))) - 1u;
    return T(__clz(static_cast<int>(static_cast<unsigned>(x) & mask)) - 32 + 8 * int(sizeof(T)));
  }
}

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + ::expf(-x)); }
__device__ __forceinline__ double sigmoid(double x) { return 1.0 / (1.0 + ::exp(-x)); }
template <typename T>
__device__ __forceinline__ T sigmoid(T x) {
  static_assert(sizeof(T) == 0,
                "tl::sigmoid takes float or double; convert the argument with float(x)");
  return x;
}

template <typename T>
__device__ __forceinline__ T infinity() {
  static_assert(sizeof(T) == 0,
                "tl::infinity<T>: T must be float, double, tl::half_t, tl::bfloat16_t or an fp8 "
                "type");
  return T();
}
template <>
__device__ __forceinline__ float infinity<float>() {
  return __int_as_float(0x7f800000);
}
template <>
__device__ __forceinline__ double infinity<double>() {
  return __longlong_as_double(0x7ff0000000000000LL);
}
template <>
__device__ __forceinline__ half_t infinity<half_t>() {
  return half_t::from_bits(0x7c00);
}
template <>
__device__ __forceinline__ bfloat16_t infinity<bfloat16_t>() {
  return bfloat16_t::from_bits(0x7f80);
}
template <>
__device__ __forceinline__ fp8_e4m3_t infinity<fp8_e4m3_t>() {
  return fp8_e4m3_t(infinity<float>());
}
template <>
__device__ __forceinline__ fp8_e5m2_t infinity<fp8_e5m2_t>() {
  return fp8_e5m2_t(infinity<float>());
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_MATH_H_
