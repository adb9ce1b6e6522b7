// Host twin of cuda/tl/red.h: red_add(addr, v) and red_add_vec<T, N>(addr, x)
// add into global memory atomically per element, like tl::atomic_add (half_t
// sums round to nearest even, as f16 and f16x2 do per half). The address must
// lie in a global buffer the launch registered, and for red_add_vec be
// aligned to N * sizeof(T) bytes (the GPU faults otherwise).
#ifndef TILEC_DEVICE_HOST_TL_RED_H_
#define TILEC_DEVICE_HOST_TL_RED_H_

#include <cstdint>

#include "tl/arith.h"
#include "tl/atomic.h"
#include "tl/thread.h"
#include "tl/types.h"

namespace tl {

namespace host {

template <typename T>
inline void red_add(T* addr, T v) {
  Thread* t = current_thread;
  t->rt->check_global(t, addr, sizeof(T), "red_add");
  atomic_add(addr, v);
}

}  // namespace host

inline void red_add(float* addr, float v) { host::red_add(addr, v); }
inline void red_add(double* addr, double v) { host::red_add(addr, v); }
inline void red_add(int32_t* addr, int32_t v) { host::red_add(addr, v); }
inline void red_add(half_t* addr, half_t v) { host::red_add(addr, v); }
inline void red_add(uint32_t* addr, uint32_t v) { host::red_add(addr, v); }
inline void red_add(int64_t* addr, int64_t v) { host::red_add(addr, v); }
inline void red_add(uint64_t* addr, uint64_t v) { host::red_add(addr, v); }
inline void red_add(bfloat16_t* addr, bfloat16_t v) { host::red_add(addr, v); }

template <typename T, int N>
inline void red_add_vec(T* addr, const Vec<T, N>& x) {
  host::Thread* t = host::current_thread;
  if (reinterpret_cast<uintptr_t>(addr) % (sizeof(T) * N) != 0) {
    t->rt->trap(t, "tl::red_add_vec: address not aligned to the vector size");
    return;
  }
  t->rt->check_global(t, addr, sizeof(T) * N, "red_add_vec");
  for (int i = 0; i < N; ++i) atomic_add(addr + i, x.v[i]);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_RED_H_
