// Host twin of the cp.async wrappers:
//   cp_async_{16,8,4}(smem, gmem, pred)   cp.async.{cg,ca}.shared.global,
//                                         src-size 0 (zero fill) when !pred
//   cp_async_commit()                     cp.async.commit_group
//   cp_async_wait<N>()                    cp.async.wait_group N
// The emulator defers each copy until a wait retires its group (a group is
// retired when at most N newer committed groups remain), so reading the
// destination before the matching wait sees the old, poisoned bytes, exactly
// the bug a missing wait causes on the GPU. Copies never committed are never
// performed. Checks: the destination lies inside dynamic shared memory, both
// addresses are aligned to the copy size, and (when pred) the source lies
// inside a registered global buffer.
#ifndef TILEC_DEVICE_HOST_TL_CP_ASYNC_H_
#define TILEC_DEVICE_HOST_TL_CP_ASYNC_H_

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

inline void cp_async(void* smem, const void* gmem, uint32_t bytes, bool pred) {
  Thread* t = current_thread;
  t->rt->cp_async(t, smem, gmem, bytes, pred ? bytes : 0);
}

}  // namespace host

inline void cp_async_16(void* smem, const void* gmem, bool pred) {
  host::cp_async(smem, gmem, 16, pred);
}
inline void cp_async_8(void* smem, const void* gmem, bool pred) {
  host::cp_async(smem, gmem, 8, pred);
}
inline void cp_async_4(void* smem, const void* gmem, bool pred) {
  host::cp_async(smem, gmem, 4, pred);
}

inline void cp_async_commit() {
  host::Thread* t = host::current_thread;
  t->rt->cp_async_commit(t);
}

template <int N>
TL_HOST_NOINLINE inline void cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group takes a non-negative group count");
  host::Thread* t = host::current_thread;
  t->pc = TL_HOST_CALLER();
  t->rt->cp_async_wait(t, N);
  host::current_thread = t;
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_CP_ASYNC_H_
