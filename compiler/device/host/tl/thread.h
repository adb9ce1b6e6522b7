// Host-only plumbing of the device library's twin: the emulated thread that
// is running, and the calls into the emulator runtime (tl/abi.h) that the
// primitives are built on.
//
// The runtime switches fibers only inside its calls, and all threads of a
// block run on one OS thread, so `current_thread` (one per OS thread) is
// restored after every call that may switch.
#ifndef TILEC_DEVICE_HOST_TL_THREAD_H_
#define TILEC_DEVICE_HOST_TL_THREAD_H_

#include <cstdint>

#include "tl/abi.h"

namespace tl::host {

inline thread_local Thread* current_thread = nullptr;

inline Thread* self() { return current_thread; }

// A warp collective (WarpOp) with this lane's operands `in` and result `out`.
inline void collective(uint32_t op, const void* in, void* out) {
  Thread* t = current_thread;
  t->rt->warp_collective(t, op, in, out);
  current_thread = t;
}

}  // namespace tl::host

#endif  // TILEC_DEVICE_HOST_TL_THREAD_H_
