// Host twin of cuda/tl/tma.h: TMA loads on the emulator. The tensor map is
// the emulator's own encoding (tl::host::TensorMapDesc, tl/abi.h), made by
// the runtime from the same description the GPU's is made from; the load is
// handed to the runtime (Runtime::tma_load), which checks it, and lands the
// box, swizzled by the shared address bits as the hardware does, zeros out
// of bounds, as late as the hardware may: when a thread waits on the barrier.
#ifndef TILEC_DEVICE_HOST_TL_TMA_H_
#define TILEC_DEVICE_HOST_TL_TMA_H_

#include <initializer_list>

#include "tl/abi.h"
#include "tl/thread.h"

namespace tl {

struct alignas(64) TmaMap {
  host::TensorMapDesc desc;
};
static_assert(sizeof(TmaMap) == 128);

namespace host {

inline TmaLoadIn tma_request(const void* smem, const TmaMap& map, uint64_t* bar,
                             std::initializer_list<int> coords) {
  TmaLoadIn in{};
  in.smem = const_cast<void*>(smem);
  in.map = &map.desc;
  in.bar = bar;
  in.rank = static_cast<int32_t>(coords.size());
  int d = 0;
  for (int c : coords) in.coords[d++] = c;
  return in;
}

TL_HOST_NOINLINE inline void tma_load_op(void* dst, const TmaMap& map, uint64_t* bar,
                                         std::initializer_list<int> coords) {
  Thread* t = current_thread;
  t->pc = TL_HOST_CALLER();
  const TmaLoadIn in = tma_request(dst, map, bar, coords);
  t->rt->tma_load(t, &in);
  current_thread = t;
}

TL_HOST_NOINLINE inline void tma_store_op(const TmaMap& map, const void* src,
                                          std::initializer_list<int> coords) {
  Thread* t = current_thread;
  t->pc = TL_HOST_CALLER();
  const TmaLoadIn in = tma_request(src, map, nullptr, coords);
  t->rt->tma_store(t, &in, -1);
  current_thread = t;
}

TL_HOST_NOINLINE inline void tma_store_group(int32_t wait) {
  Thread* t = current_thread;
  t->pc = TL_HOST_CALLER();
  t->rt->tma_store(t, nullptr, wait);
  current_thread = t;
}

}  // namespace host

// TMA stores (cuda/tl/tma.h): the box is read from shared memory and written
// when a wait retires its group, as late as the hardware may, so shared
// memory overwritten before the wait corrupts it, as on the GPU.
template <typename... C>
inline void tma_store(const TmaMap& map, const void* src, C... coords) {
  static_assert(sizeof...(C) >= 1 && sizeof...(C) <= 5, "TMA takes 1 to 5 coordinates");
  host::tma_store_op(map, src, {static_cast<int>(coords)...});
}
inline void tma_store_commit() { host::tma_store_group(-1); }
template <int N>
inline void tma_store_wait() {
  static_assert(N >= 0, "wait_group takes a count");
  host::tma_store_group(N);
}

template <typename... C>
inline void tma_load(void* dst, const TmaMap& map, uint64_t* bar, C... coords) {
  static_assert(sizeof...(C) >= 1 && sizeof...(C) <= 5, "TMA takes 1 to 5 coordinates");
  host::tma_load_op(dst, map, bar, {static_cast<int>(coords)...});
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_TMA_H_
