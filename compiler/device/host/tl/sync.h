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

// bar.sync id, count: the `count` threads (whole warps) that use barrier `id`
// (1 .. 15) wait for each other; the others run on. Warp-specialised kernels
// sync their consumer warpgroups this way while the producer runs free.
TL_HOST_NOINLINE inline void named_barrier_sync(uint32_t id, uint32_t count) {
  host::Thread* t = host::current_thread;
  t->pc = TL_HOST_CALLER();
  t->rt->named_barrier(t, id, count);
  host::current_thread = t;
}

// setmaxnreg.{inc,dec}.sync.aligned.u32: a warpgroup's register budget moves
// between warpgroups on the GPU; here only the operand's rules are checked.
template <int Count>
inline void setmaxnreg_inc() {
  static_assert(Count >= 24 && Count <= 256 && Count % 8 == 0,
                "setmaxnreg takes 24 to 256 registers, a multiple of 8");
}
template <int Count>
inline void setmaxnreg_dec() {
  static_assert(Count >= 24 && Count <= 256 && Count % 8 == 0,
                "setmaxnreg takes 24 to 256 registers, a multiple of 8");
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
