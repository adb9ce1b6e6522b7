// Host-only plumbing of the device library's twin: the emulated thread that
// is running, and the calls into the emulator runtime (tl/abi.h) that the
// primitives are built on.
//
// The runtime switches fibers only inside its calls, and all threads of a
// block run on one OS thread, so `current_thread` (one per OS thread) is
// restored after every call that may switch.
//
// Calls that may wait are made from noinline functions that record their
// return address in Thread::pc first, so the runtime can say where in the
// kernel a thread waits (the address resolves to a line of the generated
// source through the module's debug info). Checked memory accesses count
// towards a poll of the launch's watchdog, so a thread spinning on memory
// without ever entering the runtime still stops at the launch's time limit.
#ifndef TILEC_DEVICE_HOST_TL_THREAD_H_
#define TILEC_DEVICE_HOST_TL_THREAD_H_

#include <cstdint>

#include "tl/abi.h"

#define TL_HOST_NOINLINE __attribute__((noinline))
#define TL_HOST_INLINE __attribute__((always_inline)) inline
#define TL_HOST_CALLER() __builtin_return_address(0)

namespace tl::host {

inline thread_local Thread* current_thread = nullptr;

inline Thread* self() { return current_thread; }

// A warp collective (WarpOp) with this lane's operands `in` and result `out`.
TL_HOST_NOINLINE inline void collective(uint32_t op, const void* in, void* out) {
  Thread* t = current_thread;
  t->pc = TL_HOST_CALLER();
  t->rt->warp_collective(t, op, in, out);
  current_thread = t;
}

// Checked memory accesses (tl/buffer.h) poll the launch's watchdog once
// every kPollEvery of them.
inline constexpr uint32_t kPollEvery = 1u << 12;
inline thread_local uint32_t poll_countdown = kPollEvery;

}  // namespace tl::host

#endif  // TILEC_DEVICE_HOST_TL_THREAD_H_
