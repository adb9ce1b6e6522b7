// Atomic adds, maxima and minima on global or shared memory (generic
// addresses), relaxed, GPU scope. Each returns the value stored at addr
// before the update.
//
//   atomic_add  float    atom.add.f32        double   atom.add.f64
//               int32_t  atom.add.s32        half_t   atom.add.noftz.f16
//               uint32_t atom.add.u32        bfloat16_t atom.add.noftz.bf16
//               int64_t, uint64_t  atom.add.u64          (sm_90+; else a loop)
//   atomic_max  int32_t  atom.max.s32        float, double, half_t,
//   atomic_min  int32_t  atom.min.s32        bfloat16_t: a compare-and-swap
//               uint32_t .u32, int64_t .s64, loop (atom.cas.b32/.b64/.b16)
//               uint64_t .u64
//
// Float maxima and minima follow tl::fmax / tl::fmin: a NaN operand is
// ignored. The loop stores only when the value changes.
#ifndef TILEC_DEVICE_CUDA_TL_ATOMIC_H_
#define TILEC_DEVICE_CUDA_TL_ATOMIC_H_

#include "tl/math.h"
#include "tl/types.h"

namespace tl {

__device__ __forceinline__ float atomic_add(float* addr, float v) {
  float old;
  asm volatile("atom.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(addr), "f"(v) : "memory");
  return old;
}

__device__ __forceinline__ double atomic_add(double* addr, double v) {
  double old;
  asm volatile("atom.add.f64 %0, [%1], %2;" : "=d"(old) : "l"(addr), "d"(v) : "memory");
  return old;
}

__device__ __forceinline__ int32_t atomic_add(int32_t* addr, int32_t v) {
  int32_t old;
  asm volatile("atom.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  return old;
}

__device__ __forceinline__ half_t atomic_add(half_t* addr, half_t v) {
  unsigned short old;
  asm volatile("atom.add.noftz.f16 %0, [%1], %2;"
               : "=h"(old)
               : "l"(addr), "h"(static_cast<unsigned short>(v.bits()))
               : "memory");
  return half_t::from_bits(old);
}

__device__ __forceinline__ uint32_t atomic_cas(uint32_t* addr, uint32_t expected,
                                               uint32_t desired) {
  uint32_t old;
  asm volatile("atom.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(addr), "r"(expected), "r"(desired)
               : "memory");
  return old;
}

__device__ __forceinline__ uint64_t atomic_cas(uint64_t* addr, uint64_t expected,
                                               uint64_t desired) {
  uint64_t old;
  asm volatile("atom.cas.b64 %0, [%1], %2, %3;"
               : "=l"(old)
               : "l"(addr), "l"(expected), "l"(desired)
               : "memory");
  return old;
}

__device__ __forceinline__ uint16_t atomic_cas(uint16_t* addr, uint16_t expected,
                                               uint16_t desired) {
  uint16_t old;
  asm volatile("atom.cas.b16 %0, [%1], %2, %3;"
               : "=h"(old)
               : "l"(addr), "h"(expected), "h"(desired)
               : "memory");
  return old;
}

__device__ __forceinline__ uint32_t atomic_add(uint32_t* addr, uint32_t v) {
  uint32_t old;
  asm volatile("atom.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  return old;
}

__device__ __forceinline__ uint64_t atomic_add(uint64_t* addr, uint64_t v) {
  uint64_t old;
  asm volatile("atom.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(addr), "l"(v) : "memory");
  return old;
}

__device__ __forceinline__ int64_t atomic_add(int64_t* addr, int64_t v) {
  // Two's complement: the unsigned sum has the signed sum's bits.
  return static_cast<int64_t>(
      atomic_add(reinterpret_cast<uint64_t*>(addr), static_cast<uint64_t>(v)));
}

#define TILEC_CUDA_ATOMIC_MINMAX(T, C, PTX)                                                   \
  __device__ __forceinline__ T atomic_max(T* addr, T v) {                                     \
    T old;                                                                                    \
    asm volatile("atom.max." PTX " %0, [%1], %2;" : "=" C(old) : "l"(addr), C(v) : "memory"); \
    return old;                                                                               \
  }                                                                                           \
  __device__ __forceinline__ T atomic_min(T* addr, T v) {                                     \
    T old;                                                                                    \
    asm volatile("atom.min." PTX " %0, [%1], %2;" : "=" C(old) : "l"(addr), C(v) : "memory"); \
    return old;                                                                               \
  }

TILEC_CUDA_ATOMIC_MINMAX(int32_t, "r", "s32")
TILEC_CUDA_ATOMIC_MINMAX(uint32_t, "r", "u32")
TILEC_CUDA_ATOMIC_MINMAX(int64_t, "l", "s64")
TILEC_CUDA_ATOMIC_MINMAX(uint64_t, "l", "u64")

#undef TILEC_CUDA_ATOMIC_MINMAX

namespace detail {

// The bits of T as the unsigned integer a compare-and-swap works on.
template <typename T>
struct AtomicBits;
template <>
struct AtomicBits<float> {
  using Bits = uint32_t;
  static __device__ __forceinline__ Bits to(float x) { return __float_as_uint(x); }
  static __device__ __forceinline__ float from(Bits b) { return __uint_as_float(b); }
};
template <>
struct AtomicBits<double> {
  using Bits = uint64_t;
  static __device__ __forceinline__ Bits to(double x) {
    return static_cast<Bits>(__double_as_longlong(x));
  }
  static __device__ __forceinline__ double from(Bits b) {
    return __longlong_as_double(static_cast<long long>(b));
  }
};
template <>
struct AtomicBits<half_t> {
  using Bits = uint16_t;
  static __device__ __forceinline__ Bits to(half_t x) { return x.bits(); }
  static __device__ __forceinline__ half_t from(Bits b) { return half_t::from_bits(b); }
};
template <>
struct AtomicBits<bfloat16_t> {
  using Bits = uint16_t;
  static __device__ __forceinline__ Bits to(bfloat16_t x) { return x.bits(); }
  static __device__ __forceinline__ bfloat16_t from(Bits b) { return bfloat16_t::from_bits(b); }
};

// Replaces *addr by f(*addr) with a compare-and-swap loop on its bits; stores
// only when the value changes; returns the old value.
template <typename T, typename F>
__device__ __forceinline__ T atomic_update(T* addr, F f) {
  using Traits = AtomicBits<T>;
  using Bits = typename Traits::Bits;
  Bits* bits = reinterpret_cast<Bits*>(addr);
  Bits old = *reinterpret_cast<volatile Bits*>(bits);
  for (;;) {
    const Bits next = Traits::to(f(Traits::from(old)));
    if (next == old) return Traits::from(old);
    const Bits seen = atomic_cas(bits, old, next);
    if (seen == old) return Traits::from(old);
    old = seen;
  }
}

}  // namespace detail

__device__ __forceinline__ float atomic_max(float* addr, float v) {
  return detail::atomic_update(addr, [v](float x) { return tl::fmax(x, v); });
}
__device__ __forceinline__ float atomic_min(float* addr, float v) {
  return detail::atomic_update(addr, [v](float x) { return tl::fmin(x, v); });
}
__device__ __forceinline__ double atomic_max(double* addr, double v) {
  return detail::atomic_update(addr, [v](double x) { return tl::fmax(x, v); });
}
__device__ __forceinline__ double atomic_min(double* addr, double v) {
  return detail::atomic_update(addr, [v](double x) { return tl::fmin(x, v); });
}
__device__ __forceinline__ half_t atomic_max(half_t* addr, half_t v) {
  return detail::atomic_update(addr,
                               [v](half_t x) { return half_t(tl::fmax(float(x), float(v))); });
}
__device__ __forceinline__ half_t atomic_min(half_t* addr, half_t v) {
  return detail::atomic_update(addr,
                               [v](half_t x) { return half_t(tl::fmin(float(x), float(v))); });
}

__device__ __forceinline__ bfloat16_t atomic_add(bfloat16_t* addr, bfloat16_t v) {
#if __CUDA_ARCH__ >= 900
  unsigned short old;
  asm volatile("atom.add.noftz.bf16 %0, [%1], %2;"
               : "=h"(old)
               : "l"(addr), "h"(static_cast<unsigned short>(v.bits()))
               : "memory");
  return bfloat16_t::from_bits(old);
#else
  return detail::atomic_update(addr, [v](bfloat16_t x) { return bfloat16_t(float(x) + float(v)); });
#endif
}
__device__ __forceinline__ bfloat16_t atomic_max(bfloat16_t* addr, bfloat16_t v) {
  return detail::atomic_update(
      addr, [v](bfloat16_t x) { return bfloat16_t(tl::fmax(float(x), float(v))); });
}
__device__ __forceinline__ bfloat16_t atomic_min(bfloat16_t* addr, bfloat16_t v) {
  return detail::atomic_update(
      addr, [v](bfloat16_t x) { return bfloat16_t(tl::fmin(float(x), float(v))); });
}

template <typename T, typename V>
__device__ __forceinline__ T atomic_max(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_max supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of "
                "the same type as the destination");
  return *addr;
}

template <typename T, typename V>
__device__ __forceinline__ T atomic_min(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_min supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of "
                "the same type as the destination");
  return *addr;
}

template <typename T, typename V>
__device__ __forceinline__ T atomic_add(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_add supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of "
                "the same type as the destination");
  return *addr;
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_ATOMIC_H_
