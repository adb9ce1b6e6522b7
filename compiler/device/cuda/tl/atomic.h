// Atomic adds, maxima and minima on global or shared memory (generic
// addresses), relaxed, GPU scope. Each returns the value stored at addr
// before the update.
//
//   atomic_add  float    atom.add.f32        double   atom.add.f64
//               int32_t  atom.add.s32        half_t   atom.add.noftz.f16
//               uint32_t atom.add.u32        bfloat16_t atom.add.noftz.bf16
//               int64_t, uint64_t  atom.add.u64          (sm_90+; else a loop)
//   atomic_max  int32_t  atom.max.s32        float, double: atom.max/min on
//   atomic_min  int32_t  atom.min.s32        their bits as integers
//               uint32_t .u32, int64_t .s64, half_t, bfloat16_t: a compare-
//               uint64_t .u64                and-swap loop (atom.cas.b32 of
//                                            the aligned word)
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
// only when the value changes; returns the old value. A 16-bit value is
// swapped within its aligned 32-bit word: ptxas spills registers around
// unrolled loops of atom.cas.b16 (20 bytes for 16 of them at 40 registers).
template <typename T, typename F>
__device__ __forceinline__ T atomic_update(T* addr, F f) {
  using Traits = AtomicBits<T>;
  using Bits = typename Traits::Bits;
  if constexpr (sizeof(Bits) == 2) {
    const uint64_t a = reinterpret_cast<uint64_t>(addr);
    uint32_t* word = reinterpret_cast<uint32_t*>(a & ~uint64_t{3});
    const int shift = static_cast<int>(a & 2) * 8;
    uint32_t old = *reinterpret_cast<volatile uint32_t*>(word);
    for (;;) {
      const Bits cur = static_cast<Bits>(old >> shift);
      const Bits next = Traits::to(f(Traits::from(cur)));
      if (next == cur) return Traits::from(cur);
      const uint32_t seen =
          atomic_cas(word, old, (old & ~(0xffffu << shift)) | (uint32_t{next} << shift));
      if (seen == old) return Traits::from(cur);
      old = seen;
    }
  } else {
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
}

// The compare-and-swap loop of atomic_extremum for a NaN at addr, out of
// line: inlined once per element of an unrolled loop, it costs spills.
template <bool kMax, typename T>
__device__ __noinline__ void replace_nan(T* addr, T v) {
  atomic_update(addr, [v](T x) { return kMax ? tl::fmax(x, v) : tl::fmin(x, v); });
}

// Maximum (kMax) or minimum of float or double with one integer atomic on
// its bits: with the sign bit clear, the order of the values is that of the
// bits as signed integers; with it set, the reverse of their order as
// unsigned integers (-0.0 sorts below +0.0). S and U are the signed and
// unsigned integers of T's width. As tl::fmax / tl::fmin, a NaN value
// changes nothing, and a NaN found at addr is replaced by the value (by the
// compare-and-swap loop, rarely run: a loop per element spills registers).
template <bool kMax, typename T, typename S, typename U>
__device__ __forceinline__ T atomic_extremum(T* addr, T v) {
  using Traits = AtomicBits<T>;
  if (v != v) return *reinterpret_cast<volatile T*>(addr);
  const U bits = Traits::to(v);
  U old;
  if ((bits >> (sizeof(U) * 8 - 1)) == 0) {
    S* signed_addr = reinterpret_cast<S*>(addr);
    old = static_cast<U>(kMax ? atomic_max(signed_addr, static_cast<S>(bits))
                              : atomic_min(signed_addr, static_cast<S>(bits)));
  } else {
    U* unsigned_addr = reinterpret_cast<U*>(addr);
    old = kMax ? atomic_min(unsigned_addr, bits) : atomic_max(unsigned_addr, bits);
  }
  const T prev = Traits::from(old);
  if (prev != prev) replace_nan<kMax>(addr, v);
  return prev;
}

}  // namespace detail

__device__ __forceinline__ float atomic_max(float* addr, float v) {
  return detail::atomic_extremum<true, float, int32_t, uint32_t>(addr, v);
}
__device__ __forceinline__ float atomic_min(float* addr, float v) {
  return detail::atomic_extremum<false, float, int32_t, uint32_t>(addr, v);
}
__device__ __forceinline__ double atomic_max(double* addr, double v) {
  return detail::atomic_extremum<true, double, int64_t, uint64_t>(addr, v);
}
__device__ __forceinline__ double atomic_min(double* addr, double v) {
  return detail::atomic_extremum<false, double, int64_t, uint64_t>(addr, v);
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
