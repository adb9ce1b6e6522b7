// Host twin of cuda/tl/mbarrier.h: the same operations on the 8-byte mbarrier
// objects in the block's shared memory, with the PTX ISA's semantics:
// init sets expected = pending = count, phase 0, tx-count 0; an arrival
// decrements the pending count, expect_tx raises and complete_tx lowers the
// tx-count; when both are zero the phase completes (it advances, pending is
// reloaded with expected). Tokens name the phase they were taken in; a wait
// on parity p is satisfied once the current phase's parity differs from p.
//
// The emulator keeps the state in the object's 8 bytes and checks what the
// ISA leaves undefined: an object that is not initialised (or invalidated),
// misaligned or outside shared memory; counts out of range (1 .. 2^20 - 1
// arrivals, tx-count within +-(2^20 - 1)); more arrivals than pending.
// test_wait never blocks but lets the block's other threads run before it
// returns false (so a spin loop makes progress); try_wait blocks until the
// phase completes (a barrier nobody can complete is a deadlock, reported as
// an error naming the barrier). Every architecture is accepted here.
#ifndef TILEC_DEVICE_HOST_TL_MBARRIER_H_
#define TILEC_DEVICE_HOST_TL_MBARRIER_H_

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

TL_HOST_NOINLINE inline uint64_t mbarrier_op(uint32_t op, void* bar, uint64_t arg) {
  Thread* t = current_thread;
  t->pc = TL_HOST_CALLER();
  const uint64_t r = t->rt->mbarrier(t, op, bar, arg);
  current_thread = t;
  return r;
}

}  // namespace host

inline void mbarrier_init(uint64_t* bar, uint32_t count) {
  host::mbarrier_op(host::kMbarInit, bar, count);
}
// The emulator's barriers are visible to its TMA at once.
inline void fence_barrier_init() {}
inline uint64_t mbarrier_arrive(uint64_t* bar, uint32_t count = 1) {
  return host::mbarrier_op(host::kMbarArrive, bar, count);
}
inline uint64_t mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t tx) {
  return host::mbarrier_op(host::kMbarArriveExpectTx, bar, tx);
}
inline void mbarrier_expect_tx(uint64_t* bar, uint32_t tx) {
  host::mbarrier_op(host::kMbarExpectTx, bar, tx);
}
inline void mbarrier_complete_tx(uint64_t* bar, uint32_t tx) {
  host::mbarrier_op(host::kMbarCompleteTx, bar, tx);
}
inline bool mbarrier_test_wait(uint64_t* bar, uint64_t token) {
  return host::mbarrier_op(host::kMbarTestWait, bar, token) != 0;
}
inline bool mbarrier_test_wait_parity(uint64_t* bar, uint32_t parity) {
  return host::mbarrier_op(host::kMbarTestWaitParity, bar, parity) != 0;
}
inline bool mbarrier_try_wait(uint64_t* bar, uint64_t token) {
  return host::mbarrier_op(host::kMbarTryWait, bar, token) != 0;
}
inline bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  return host::mbarrier_op(host::kMbarTryWaitParity, bar, parity) != 0;
}
inline void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  host::mbarrier_op(host::kMbarTryWaitParity, bar, parity);
}
inline void mbarrier_inval(uint64_t* bar) { host::mbarrier_op(host::kMbarInval, bar, 0); }

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_MBARRIER_H_
