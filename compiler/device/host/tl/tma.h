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

TL_HOST_NOINLINE inline void tma_load_op(void* dst, const TmaMap& map, uint64_t* bar,
                                         std::initializer_list<int> coords) {
  Thread* t = current_thread;
  t->pc = TL_HOST_CALLER();
  TmaLoadIn in{};
  in.smem = dst;
  in.map = &map.desc;
  in.bar = bar;
  in.rank = static_cast<int32_t>(coords.size());
  int d = 0;
  for (int c : coords) in.coords[d++] = c;
  t->rt->tma_load(t, &in);
  current_thread = t;
}

}  // namespace host

template <typename... C>
inline void tma_load(void* dst, const TmaMap& map, uint64_t* bar, C... coords) {
  static_assert(sizeof...(C) >= 1 && sizeof...(C) <= 5, "TMA takes 1 to 5 coordinates");
  host::tma_load_op(dst, map, bar, {static_cast<int>(coords)...});
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_TMA_H_
