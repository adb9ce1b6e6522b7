// Host twin of cuda/tl/sync.h: the block's dynamic shared memory and the block
// barrier.
//
// dynamic_smem() is the block's buffer of the launch's dynamic shared memory
// size, filled with the launch's poison byte (0xFF by default: NaN in every
// float type) before the block starts, so reading an unwritten element shows.
// syncthreads() is `bar.sync 0`: every thread of the block must reach it; a
// thread that exits while others wait is reported as barrier divergence.
#ifndef TILEC_DEVICE_HOST_TL_SYNC_H_
#define TILEC_DEVICE_HOST_TL_SYNC_H_

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {

inline uint8_t* dynamic_smem() { return host::self()->smem; }

TL_HOST_NOINLINE inline void syncthreads() {
  host::Thread* t = host::current_thread;
  t->pc = TL_HOST_CALLER();
  t->rt->syncthreads(t);
  host::current_thread = t;
}

// Host-only hook: aborts the launch unless [ptr, ptr + bytes) lies inside a
// global buffer registered with the launch (no-op when none was registered).
inline void check_global(const void* ptr, uint64_t bytes) {
  host::Thread* t = host::current_thread;
  t->rt->check_global(t, ptr, bytes, "check_global");
}

// Host-only hook: aborts the launch unless [ptr, ptr + bytes) lies inside the
// block's dynamic shared memory.
inline void check_shared(const void* ptr, uint64_t bytes) {
  host::Thread* t = host::current_thread;
  t->rt->check_shared(t, ptr, bytes, "check_shared");
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_SYNC_H_
