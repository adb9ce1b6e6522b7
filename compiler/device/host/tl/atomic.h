// Host twin of the atomic wrappers: atomic_add(addr, v) returns the old value
// (atomicAdd), for float, double, int32_t and tl::half_t. Blocks may run on
// several OS threads, so these are real atomic read-modify-writes (half_t by a
// compare-and-swap loop on its 16 bits, rounding the sum to nearest even).
// The address must lie in the block's shared memory or in a global buffer the
// launch registered.
#ifndef TILEC_DEVICE_HOST_TL_ATOMIC_H_
#define TILEC_DEVICE_HOST_TL_ATOMIC_H_

#include <atomic>

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

inline half_t atomic_add(half_t* addr, half_t v) {
  host::check_atomic(addr, sizeof(half_t));
  std::atomic_ref<uint16_t> ref(addr->storage);
  uint16_t old = ref.load();
  for (;;) {
    const uint16_t sum = half_t(float(half_t::from_bits(old)) + float(v)).bits();
    if (ref.compare_exchange_weak(old, sum)) return half_t::from_bits(old);
  }
}

template <typename T, typename V>
inline T atomic_add(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_add supports float, double, int32_t and tl::half_t, with a value of "
                "the same type as the destination");
  return *addr;
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_ATOMIC_H_
