// Atomics for AMD GPUs (relaxed, device scope), from clang's __hip_atomic
// builtins. The same functions as cuda/tl/atomic.h and cuda/tl/red.h:
//
//   atomic_add(addr, v)   float, double, int32_t, uint32_t, int64_t, uint64_t,
//                         half_t, bfloat16_t; returns the old value
//   atomic_max / atomic_min(addr, v)   the same types
//   red_add(addr, v), red_add_vec<T, N>(addr, x)   the same adds, old value unused
//
// float and double max/min and every 16-bit float update are compare-and-swap
// loops (on the aligned 32-bit word holding the value: the hardware has no
// 16-bit compare-and-swap); float max/min ignore a NaN operand like tl::fmax.
#ifndef TILEC_DEVICE_HIP_TL_ATOMIC_H_
#define TILEC_DEVICE_HIP_TL_ATOMIC_H_

#include "tl/arith.h"
#include "tl/math.h"
#include "tl/types.h"

namespace tl {
namespace detail {

template <typename B>
__device__ __forceinline__ B atomic_cas(B* addr, B expected, B desired) {
  __hip_atomic_compare_exchange_strong(addr, &expected, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return expected;  // the value seen (equal to `expected` on success)
}

template <typename T, typename B, typename F>
__device__ __forceinline__ T atomic_update_bits(T* addr, F f) {
  B* bits = reinterpret_cast<B*>(addr);
  B old = __hip_atomic_load(bits, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  for (;;) {
    const B next = __builtin_bit_cast(B, f(__builtin_bit_cast(T, old)));
    if (next == old) return __builtin_bit_cast(T, old);
    const B seen = atomic_cas(bits, old, next);
    if (seen == old) return __builtin_bit_cast(T, old);
    old = seen;
  }
}

// A half_t or bfloat16_t update through the 32-bit word that holds it.
template <typename H, typename F>
__device__ __forceinline__ H atomic_update_half(H* addr, F f) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(addr);
  uint32_t* word = reinterpret_cast<uint32_t*>(a & ~3ull);
  const int shift = (a & 2) ? 16 : 0;
  uint32_t old = __hip_atomic_load(word, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  for (;;) {
    const H h = H::from_bits(static_cast<uint16_t>(old >> shift));
    const uint32_t next = (old & ~(0xffffu << shift)) | (uint32_t(f(h).bits()) << shift);
    if (next == old) return h;
    const uint32_t seen = atomic_cas(word, old, next);
    if (seen == old) return h;
    old = seen;
  }
}

}  // namespace detail

__device__ __forceinline__ float atomic_add(float* addr, float v) {
  return __hip_atomic_fetch_add(addr, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ __forceinline__ double atomic_add(double* addr, double v) {
  return __hip_atomic_fetch_add(addr, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ __forceinline__ half_t atomic_add(half_t* addr, half_t v) {
  return detail::atomic_update_half(addr, [v](half_t x) { return half_t(float(x) + float(v)); });
}

// The integer types: the hardware's add, max and min.
#define TILEC_HIP_ATOMIC_INT(T)                                                         \
  __device__ __forceinline__ T atomic_add(T* addr, T v) {                               \
    return __hip_atomic_fetch_add(addr, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); \
  }                                                                                     \
  __device__ __forceinline__ T atomic_max(T* addr, T v) {                               \
    return __hip_atomic_fetch_max(addr, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); \
  }                                                                                     \
  __device__ __forceinline__ T atomic_min(T* addr, T v) {                               \
    return __hip_atomic_fetch_min(addr, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); \
  }
TILEC_HIP_ATOMIC_INT(int32_t)
TILEC_HIP_ATOMIC_INT(uint32_t)
TILEC_HIP_ATOMIC_INT(int64_t)
TILEC_HIP_ATOMIC_INT(uint64_t)
#undef TILEC_HIP_ATOMIC_INT

__device__ __forceinline__ bfloat16_t atomic_add(bfloat16_t* addr, bfloat16_t v) {
  return detail::atomic_update_half(addr,
                                    [v](bfloat16_t x) { return bfloat16_t(float(x) + float(v)); });
}
__device__ __forceinline__ bfloat16_t atomic_max(bfloat16_t* addr, bfloat16_t v) {
  return detail::atomic_update_half(
      addr, [v](bfloat16_t x) { return bfloat16_t(tl::fmax(float(x), float(v))); });
}
__device__ __forceinline__ bfloat16_t atomic_min(bfloat16_t* addr, bfloat16_t v) {
  return detail::atomic_update_half(
      addr, [v](bfloat16_t x) { return bfloat16_t(tl::fmin(float(x), float(v))); });
}
__device__ __forceinline__ float atomic_max(float* addr, float v) {
  return detail::atomic_update_bits<float, uint32_t>(addr, [v](float x) { return tl::fmax(x, v); });
}
__device__ __forceinline__ float atomic_min(float* addr, float v) {
  return detail::atomic_update_bits<float, uint32_t>(addr, [v](float x) { return tl::fmin(x, v); });
}
__device__ __forceinline__ double atomic_max(double* addr, double v) {
  return detail::atomic_update_bits<double, uint64_t>(addr,
                                                      [v](double x) { return tl::fmax(x, v); });
}
__device__ __forceinline__ double atomic_min(double* addr, double v) {
  return detail::atomic_update_bits<double, uint64_t>(addr,
                                                      [v](double x) { return tl::fmin(x, v); });
}
__device__ __forceinline__ half_t atomic_max(half_t* addr, half_t v) {
  return detail::atomic_update_half(addr,
                                    [v](half_t x) { return half_t(tl::fmax(float(x), float(v))); });
}
__device__ __forceinline__ half_t atomic_min(half_t* addr, half_t v) {
  return detail::atomic_update_half(addr,
                                    [v](half_t x) { return half_t(tl::fmin(float(x), float(v))); });
}

template <typename T, typename V>
__device__ __forceinline__ T atomic_add(T* addr, V) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_add supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of "
                "the same type as the destination");
  return *addr;
}
template <typename T, typename V>
__device__ __forceinline__ T atomic_max(T* addr, V) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_max supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t");
  return *addr;
}
template <typename T, typename V>
__device__ __forceinline__ T atomic_min(T* addr, V) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_min supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t");
  return *addr;
}

template <typename T, typename V>
__device__ __forceinline__ void red_add(T* addr, V v) {
  (void)atomic_add(addr, v);
}
template <typename T, int N>
__device__ __forceinline__ void red_add_vec(T* addr, const Vec<T, N>& x) {
#pragma unroll
  for (int i = 0; i < N; ++i) (void)atomic_add(addr + i, x.v[i]);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_ATOMIC_H_
