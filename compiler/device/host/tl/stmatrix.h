// Host twin of the stmatrix wrappers (cuda/tl/stmatrix.h):
//   stmatrix.sync.aligned.m8n8.x{2,4}.shared.b16
// Lane i supplies the address of row (i % 8) of matrix (i / 8) (lanes 0-15
// for x2, all for x4; the other lanes' pointers are ignored). Register j of
// lane l holds the 16-bit elements (row l / 4, cols 2 (l % 4) and
// 2 (l % 4) + 1) of matrix j, the lower column in the low half. A warp
// collective of the emulator (the inverse of ldmatrix): it writes the rows
// when all lanes have arrived, after checking that each lies inside the
// block's dynamic shared memory and is 16-byte aligned.
//
// Generated code passes checked pointers (tl::smem_buffer): their overloads
// below check each used row against its own buffer first (a store, marked
// written for uninitialised-read tracking).
#ifndef TILEC_DEVICE_HOST_TL_STMATRIX_H_
#define TILEC_DEVICE_HOST_TL_STMATRIX_H_

#include "tl/buffer.h"
#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

template <int N>
inline void stmatrix(const uint32_t (&r)[N], void* row) {
  static_assert(N == 1 || N == 2 || N == 4, "stmatrix stores 1, 2 or 4 matrices");
  StmatrixIn in{row, N, 0, {0, 0, 0, 0}};
  for (int i = 0; i < N; ++i) in.r[i] = r[i];
  collective(kWarpStmatrix, &in, nullptr);
}

// The row of a checked pointer, checked when this lane's address is used.
template <int N, typename P>
TL_HOST_INLINE void* stmatrix_row(const P& row) {
  if (static_cast<int>(self()->lane % 32) < 8 * N) check_range(row, 16, true);
  return static_cast<void*>(raw(row));
}

}  // namespace host

template <int N>
inline void stmatrix_x2(const uint32_t (&r)[N], void* smem_row_ptr) {
  static_assert(N == 2, "tl::stmatrix_x2 stores two 8x8 matrices: pass uint32_t[2]");
  host::stmatrix(r, smem_row_ptr);
}

template <int N>
inline void stmatrix_x4(const uint32_t (&r)[N], void* smem_row_ptr) {
  static_assert(N == 4, "tl::stmatrix_x4 stores four 8x8 matrices: pass uint32_t[4]");
  host::stmatrix(r, smem_row_ptr);
}

template <int N, typename P>
  requires host::Checked<P>
TL_HOST_INLINE void stmatrix_x2(const uint32_t (&r)[N], const P& smem_row_ptr) {
  stmatrix_x2(r, host::stmatrix_row<2>(smem_row_ptr));
}

template <int N, typename P>
  requires host::Checked<P>
TL_HOST_INLINE void stmatrix_x4(const uint32_t (&r)[N], const P& smem_row_ptr) {
  stmatrix_x4(r, host::stmatrix_row<4>(smem_row_ptr));
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_STMATRIX_H_
