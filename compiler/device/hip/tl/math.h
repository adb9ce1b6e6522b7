// Math functions generated code calls, for AMD GPUs, with no ROCm device
// library: what LLVM lowers to instructions (exp, exp2, log, log2, log10,
// sqrt, sin, cos, floor, ceil, rint, trunc, fabs, fmax, fmin, copysign,
// fmod, pow on float; sqrt, floor, ceil, rint, trunc, fabs, fmax, fmin,
// copysign, fmod on double) comes from clang's builtins, the rest is written
// here from those. The other double functions are refused at compile time
// with a message (LLVM has no amdgcn lowering for them without a library).
//
// fmax/fmin ignore a NaN operand (the result is NaN only when both are), as
// on CUDA. popcount, clz, sigmoid and infinity<T>() as in cuda/tl/math.h.
#ifndef TILEC_DEVICE_HIP_TL_MATH_H_
#define TILEC_DEVICE_HIP_TL_MATH_H_

#include "tl/types.h"

namespace tl {

#define TL_HIP_MATH_UNARY(name, f32, f64)                                                     \
  __device__ __forceinline__ float name(float x) { return f32; }                              \
  __device__ __forceinline__ double name(double x) { return f64; }                            \
  template <typename T>                                                                       \
  __device__ __forceinline__ T name(T x) {                                                    \
    static_assert(sizeof(T) == 0,                                                             \
                  "tl::" #name " takes float or double; convert the argument with float(x)"); \
    return x;                                                                                 \
  }
#define TL_HIP_MATH_FLOAT_ONLY(name, f32)                                                      \
  __device__ __forceinline__ float name(float x) { return f32; }                               \
  template <typename T>                                                                        \
  __device__ __forceinline__ T name(T x) {                                                     \
    static_assert(sizeof(T) == 0, "tl::" #name " takes float on AMD targets (double needs a " \
                                  "device math library tilec does not use); convert with "    \
                                  "float(x)");                                                 \
    return x;                                                                                  \
  }
#define TL_HIP_MATH_BINARY(name, f32, f64)                                                    \
  __device__ __forceinline__ float name(float x, float y) { return f32; }                     \
  __device__ __forceinline__ double name(double x, double y) { return f64; }                  \
  template <typename T, typename U>                                                           \
  __device__ __forceinline__ T name(T x, U y) {                                               \
    static_assert(sizeof(T) == 0, "tl::" #name " takes two floats or two doubles");          \
    return x;                                                                                 \
  }
#define TL_HIP_MATH_BINARY_FLOAT_ONLY(name, f32)                                               \
  __device__ __forceinline__ float name(float x, float y) { return f32; }                      \
  template <typename T, typename U>                                                            \
  __device__ __forceinline__ T name(T x, U y) {                                                \
    static_assert(sizeof(T) == 0, "tl::" #name " takes two floats on AMD targets");           \
    return x;                                                                                  \
  }

TL_HIP_MATH_UNARY(sqrt, __builtin_sqrtf(x), __builtin_sqrt(x))
TL_HIP_MATH_UNARY(floor, __builtin_floorf(x), __builtin_floor(x))
TL_HIP_MATH_UNARY(ceil, __builtin_ceilf(x), __builtin_ceil(x))
TL_HIP_MATH_UNARY(round, __builtin_rintf(x), __builtin_rint(x))
TL_HIP_MATH_UNARY(trunc, __builtin_truncf(x), __builtin_trunc(x))
TL_HIP_MATH_UNARY(fabs, __builtin_fabsf(x), __builtin_fabs(x))
TL_HIP_MATH_BINARY(fmax, __builtin_fmaxf(x, y), __builtin_fmax(x, y))
TL_HIP_MATH_BINARY(fmin, __builtin_fminf(x, y), __builtin_fmin(x, y))
TL_HIP_MATH_BINARY(copysign, __builtin_copysignf(x, y), __builtin_copysign(x, y))
TL_HIP_MATH_BINARY(fmod, __builtin_fmodf(x, y), __builtin_fmod(x, y))

TL_HIP_MATH_FLOAT_ONLY(exp, __builtin_expf(x))
TL_HIP_MATH_FLOAT_ONLY(exp2, __builtin_exp2f(x))
TL_HIP_MATH_FLOAT_ONLY(exp10, __builtin_exp10f(x))
TL_HIP_MATH_FLOAT_ONLY(log, __builtin_logf(x))
TL_HIP_MATH_FLOAT_ONLY(log2, __builtin_log2f(x))
TL_HIP_MATH_FLOAT_ONLY(log10, __builtin_log10f(x))
TL_HIP_MATH_FLOAT_ONLY(rsqrt, 1.0f / __builtin_sqrtf(x))
TL_HIP_MATH_FLOAT_ONLY(sin, __builtin_sinf(x))
TL_HIP_MATH_FLOAT_ONLY(cos, __builtin_cosf(x))
TL_HIP_MATH_FLOAT_ONLY(tan, __builtin_sinf(x) / __builtin_cosf(x))
TL_HIP_MATH_BINARY_FLOAT_ONLY(pow, __builtin_powf(x, y))

// expm1 and log1p without cancellation near 0 (Kahan's correction).
__device__ __forceinline__ float expm1(float x) {
  const float u = __builtin_expf(x);
  if (u == 1.0f) return x;
  const float um1 = u - 1.0f;
  if (um1 == -1.0f) return -1.0f;
  return um1 * x / __builtin_logf(u);
}
__device__ __forceinline__ float log1p(float x) {
  const float u = 1.0f + x;
  if (u == 1.0f) return x;
  return __builtin_logf(u) * x / (u - 1.0f);
}
__device__ __forceinline__ float tanh(float x) {
  const float a = __builtin_fabsf(x);
  if (a > 9.0f) return __builtin_copysignf(1.0f, x);
  const float e = expm1(2.0f * a);
  return __builtin_copysignf(e / (e + 2.0f), x);
}
__device__ __forceinline__ float sinh(float x) {
  const float e = expm1(__builtin_fabsf(x));
  return __builtin_copysignf(0.5f * (e + e / (e + 1.0f)), x);
}
__device__ __forceinline__ float cosh(float x) {
  const float e = __builtin_expf(__builtin_fabsf(x));
  return 0.5f * (e + 1.0f / e);
}
__device__ __forceinline__ float asinh(float x) {
  const float a = __builtin_fabsf(x);
  return __builtin_copysignf(log1p(a + a * a / (1.0f + __builtin_sqrtf(1.0f + a * a))), x);
}
__device__ __forceinline__ float acosh(float x) {
  return __builtin_logf(x + __builtin_sqrtf((x - 1.0f) * (x + 1.0f)));
}
__device__ __forceinline__ float atanh(float x) { return 0.5f * log1p(2.0f * x / (1.0f - x)); }
// atan on [0, 1] by a minimax polynomial in x^2 (error below 1e-7 there),
// extended with atan(x) = pi/2 - atan(1/x).
__device__ __forceinline__ float atan(float x) {
  const float a = __builtin_fabsf(x);
  const bool inv = a > 1.0f;
  const float t = inv ? 1.0f / a : a, s = t * t;
  float p = -0.0040540580f;
  p = p * s + 0.0218612288f;
  p = p * s - 0.0559098861f;
  p = p * s + 0.0964200441f;
  p = p * s - 0.1390853351f;
  p = p * s + 0.1994653599f;
  p = p * s - 0.3332985605f;
  float r = t + t * s * p;
  if (inv) r = 1.57079632679f - r;
  return __builtin_copysignf(r, x);
}
__device__ __forceinline__ float atan2(float y, float x) {
  if (x == 0.0f && y == 0.0f) return __builtin_signbit(x) ? __builtin_copysignf(3.14159265359f, y) : y;
  const float r = atan(y / x);
  if (x > 0.0f) return r;
  return r + __builtin_copysignf(3.14159265359f, y);
}
__device__ __forceinline__ float asin(float x) {
  return atan2(x, __builtin_sqrtf((1.0f - x) * (1.0f + x)));
}
__device__ __forceinline__ float acos(float x) {
  return atan2(__builtin_sqrtf((1.0f - x) * (1.0f + x)), x);
}
__device__ __forceinline__ float hypot(float x, float y) {
  const float a = __builtin_fabsf(x), b = __builtin_fabsf(y);
  const float hi = __builtin_fmaxf(a, b), lo = __builtin_fminf(a, b);
  if (hi == 0.0f || hi == __builtin_inff()) return hi;
  const float q = lo / hi;
  return hi * __builtin_sqrtf(1.0f + q * q);
}
// erf from erfc's Chebyshev fit (Numerical Recipes' erfcc: relative error
// below 1.2e-7 everywhere).
__device__ __forceinline__ float erf(float x) {
  const float z = __builtin_fabsf(x), t = 1.0f / (1.0f + 0.5f * z);
  const float p =
      -z * z - 1.26551223f +
      t * (1.00002368f +
           t * (0.37409196f +
                t * (0.09678418f +
                     t * (-0.18628806f +
                          t * (0.27886807f +
                               t * (-1.13520398f +
                                    t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  return __builtin_copysignf(1.0f - t * __builtin_expf(p), x);
}

#define TL_HIP_FLOAT_ONLY_DOUBLE(name)                                                       \
  template <typename T>                                                                      \
  __device__ __forceinline__ T name(T x) {                                                   \
    static_assert(sizeof(T) == 0, "tl::" #name " takes float on AMD targets; convert with " \
                                  "float(x)");                                               \
    return x;                                                                                \
  }
TL_HIP_FLOAT_ONLY_DOUBLE(expm1)
TL_HIP_FLOAT_ONLY_DOUBLE(log1p)
TL_HIP_FLOAT_ONLY_DOUBLE(tanh)
TL_HIP_FLOAT_ONLY_DOUBLE(sinh)
TL_HIP_FLOAT_ONLY_DOUBLE(cosh)
TL_HIP_FLOAT_ONLY_DOUBLE(asinh)
TL_HIP_FLOAT_ONLY_DOUBLE(acosh)
TL_HIP_FLOAT_ONLY_DOUBLE(atanh)
TL_HIP_FLOAT_ONLY_DOUBLE(atan)
TL_HIP_FLOAT_ONLY_DOUBLE(asin)
TL_HIP_FLOAT_ONLY_DOUBLE(acos)
TL_HIP_FLOAT_ONLY_DOUBLE(erf)

#undef TL_HIP_FLOAT_ONLY_DOUBLE
#undef TL_HIP_MATH_UNARY
#undef TL_HIP_MATH_FLOAT_ONLY
#undef TL_HIP_MATH_BINARY
#undef TL_HIP_MATH_BINARY_FLOAT_ONLY

template <typename T>
__device__ __forceinline__ T popcount(T x) {
  static_assert(sizeof(T) <= 8, "tl::popcount takes an integer of at most 64 bits");
  if constexpr (sizeof(T) == 8) {
    return T(__builtin_popcountll(static_cast<unsigned long long>(x)));
  } else {
    constexpr unsigned mask = sizeof(T) == 4 ? 0xffffffffu : (1u << (8 * sizeof(T))) - 1u;
    return T(__builtin_popcount(static_cast<unsigned>(x) & mask));
  }
}
template <typename T>
__device__ __forceinline__ T clz(T x) {
  static_assert(sizeof(T) <= 8, "tl::clz takes an integer of at most 64 bits");
  if constexpr (sizeof(T) == 8) {
    const unsigned long long u = static_cast<unsigned long long>(x);
    return T(u == 0 ? 64 : __builtin_clzll(u));
  } else {
    constexpr unsigned mask = sizeof(T) == 4 ? 0xffffffffu : (1u << (8 * sizeof(T))) - 1u;
    const unsigned u = static_cast<unsigned>(x) & mask;
    return T((u == 0 ? 32 : __builtin_clz(u)) - 32 + 8 * int(sizeof(T)));
  }
}

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + __builtin_expf(-x)); }
template <typename T>
__device__ __forceinline__ T sigmoid(T x) {
  static_assert(sizeof(T) == 0, "tl::sigmoid takes float on AMD targets; convert with float(x)");
  return x;
}

template <typename T>
__device__ __forceinline__ T infinity() {
  static_assert(sizeof(T) == 0,
                "tl::infinity<T>: T must be float, double, tl::half_t or tl::bfloat16_t");
  return T();
}
template <>
__device__ __forceinline__ float infinity<float>() {
  return __builtin_inff();
}
template <>
__device__ __forceinline__ double infinity<double>() {
  return __builtin_inf();
}
template <>
__device__ __forceinline__ half_t infinity<half_t>() {
  return half_t::from_bits(0x7c00);
}
template <>
__device__ __forceinline__ bfloat16_t infinity<bfloat16_t>() {
  return bfloat16_t::from_bits(0x7f80);
}
// float8 has no infinity: it saturates to the largest finite value (as on
// NVIDIA for the OCP pair, whose e5m2 has one).
template <>
__device__ __forceinline__ fp8_e4m3_t infinity<fp8_e4m3_t>() {
  return fp8_e4m3_t::from_bits(0x7e);
}
template <>
__device__ __forceinline__ fp8_e5m2_t infinity<fp8_e5m2_t>() {
  return fp8_e5m2_t::from_bits(0x7b);
}
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
template <>
__device__ __forceinline__ fp8_e4m3fnuz_t infinity<fp8_e4m3fnuz_t>() {
  return fp8_e4m3fnuz_t::from_bits(0x7f);
}
template <>
__device__ __forceinline__ fp8_e5m2fnuz_t infinity<fp8_e5m2fnuz_t>() {
  return fp8_e5m2fnuz_t::from_bits(0x7f);
}
#endif

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_MATH_H_
