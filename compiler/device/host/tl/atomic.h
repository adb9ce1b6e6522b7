// Host twin of the atomic wrappers: atomic_add / atomic_max / atomic_min(addr,
// v) return the old value, for float, double, int32_t, uint32_t, int64_t,
// uint64_t, tl::half_t and tl::bfloat16_t (float maxima and minima ignore a
// NaN operand, as tl::fmax / tl::fmin do). Blocks may run on several OS
// threads, so these are real atomic read-modify-writes (the 16-bit floats by
// a compare-and-swap loop on their bits, rounding the sum to nearest even).
// The address must lie in the block's shared memory or in a global buffer the
// launch registered.
#ifndef TILEC_DEVICE_HOST_TL_ATOMIC_H_
#define TILEC_DEVICE_HOST_TL_ATOMIC_H_

#include <atomic>
#include <bit>
#include <cstdint>

#include "tl/math.h"
#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

inline void check_atomic(const void* p, uint64_t bytes) {
  Thread* t = current_thread;
  const auto* b = static_cast<const uint8_t*>(p);
  if (b >= t->smem && b + bytes <= t->smem + t->smem_bytes) return;
  t->rt->check_global(t, p, bytes, "atomic_add");
}

}  // namespace host

inline float atomic_add(float* addr, float v) {
  host::check_atomic(addr, sizeof(float));
  return std::atomic_ref<float>(*addr).fetch_add(v);
}

inline double atomic_add(double* addr, double v) {
  host::check_atomic(addr, sizeof(double));
  return std::atomic_ref<double>(*addr).fetch_add(v);
}

inline int32_t atomic_add(int32_t* addr, int32_t v) {
  host::check_atomic(addr, sizeof(int32_t));
  return std::atomic_ref<int32_t>(*addr).fetch_add(v);
}

inline uint32_t atomic_add(uint32_t* addr, uint32_t v) {
  host::check_atomic(addr, sizeof(uint32_t));
  return std::atomic_ref<uint32_t>(*addr).fetch_add(v);
}

inline int64_t atomic_add(int64_t* addr, int64_t v) {
  host::check_atomic(addr, sizeof(int64_t));
  // Wraps like the GPU's two's complement add.
  return static_cast<int64_t>(std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(addr))
                                  .fetch_add(static_cast<uint64_t>(v)));
}

inline uint64_t atomic_add(uint64_t* addr, uint64_t v) {
  host::check_atomic(addr, sizeof(uint64_t));
  return std::atomic_ref<uint64_t>(*addr).fetch_add(v);
}

inline half_t atomic_add(half_t* addr, half_t v) {
  host::check_atomic(addr, sizeof(half_t));
  std::atomic_ref<uint16_t> ref(addr->storage);
  uint16_t old = ref.load();
  for (;;) {
    const uint16_t sum = half_t(float(half_t::from_bits(old)) + float(v)).bits();
    if (ref.compare_exchange_weak(old, sum)) return half_t::from_bits(old);
  }
}

namespace host {

// Replaces *addr by f(*addr) with a compare-and-swap loop on its bits;
// returns the old value.
template <typename T, typename Bits, typename F>
inline T atomic_update(T* addr, F f) {
  check_atomic(addr, sizeof(T));
  std::atomic_ref<Bits> ref(*reinterpret_cast<Bits*>(addr));
  Bits old = ref.load();
  for (;;) {
    const T cur = std::bit_cast<T>(old);
    const Bits next = std::bit_cast<Bits>(f(cur));
    if (next == old || ref.compare_exchange_weak(old, next)) return cur;
  }
}

}  // namespace host

// The integers: a compare-and-swap loop on their bits.
#define TILEC_HOST_ATOMIC_INT_MINMAX(T, Bits)                                      \
  inline T atomic_max(T* addr, T v) {                                              \
    return host::atomic_update<T, Bits>(addr, [v](T x) { return x > v ? x : v; }); \
  }                                                                                \
  inline T atomic_min(T* addr, T v) {                                              \
    return host::atomic_update<T, Bits>(addr, [v](T x) { return x < v ? x : v; }); \
  }
TILEC_HOST_ATOMIC_INT_MINMAX(int32_t, uint32_t)
TILEC_HOST_ATOMIC_INT_MINMAX(uint32_t, uint32_t)
TILEC_HOST_ATOMIC_INT_MINMAX(int64_t, uint64_t)
TILEC_HOST_ATOMIC_INT_MINMAX(uint64_t, uint64_t)
#undef TILEC_HOST_ATOMIC_INT_MINMAX

inline bfloat16_t atomic_add(bfloat16_t* addr, bfloat16_t v) {
  return host::atomic_update<bfloat16_t, uint16_t>(
      addr, [v](bfloat16_t x) { return bfloat16_t(float(x) + float(v)); });
}
inline bfloat16_t atomic_max(bfloat16_t* addr, bfloat16_t v) {
  return host::atomic_update<bfloat16_t, uint16_t>(
      addr, [v](bfloat16_t x) { return bfloat16_t(tl::fmax(float(x), float(v))); });
}
inline bfloat16_t atomic_min(bfloat16_t* addr, bfloat16_t v) {
  return host::atomic_update<bfloat16_t, uint16_t>(
      addr, [v](bfloat16_t x) { return bfloat16_t(tl::fmin(float(x), float(v))); });
}
inline float atomic_max(float* addr, float v) {
  return host::atomic_update<float, uint32_t>(addr, [v](float x) { return tl::fmax(x, v); });
}
inline float atomic_min(float* addr, float v) {
  return host::atomic_update<float, uint32_t>(addr, [v](float x) { return tl::fmin(x, v); });
}
inline double atomic_max(double* addr, double v) {
  return host::atomic_update<double, uint64_t>(addr, [v](double x) { return tl::fmax(x, v); });
}
inline double atomic_min(double* addr, double v) {
  return host::atomic_update<double, uint64_t>(addr, [v](double x) { return tl::fmin(x, v); });
}
inline half_t atomic_max(half_t* addr, half_t v) {
  return host::atomic_update<half_t, uint16_t>(
      addr, [v](half_t x) { return half_t(tl::fmax(float(x), float(v))); });
}
inline half_t atomic_min(half_t* addr, half_t v) {
  return host::atomic_update<half_t, uint16_t>(
      addr, [v](half_t x) { return half_t(tl::fmin(float(x), float(v))); });
}

template <typename T, typename V>
inline T atomic_max(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_max supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of "
                "the same type as the destination");
  return *addr;
}

template <typename T, typename V>
inline T atomic_min(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_min supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of "
                "the same type as the destination");
  return *addr;
}

template <typename T, typename V>
inline T atomic_add(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_add supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of "
                "the same type as the destination");
  return *addr;
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_ATOMIC_H_
