// Host twin of the ldmatrix wrappers:
//   ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16
// Lane i supplies the address of row (i % 8) of matrix (i / 8) (lanes 0-7 for
// x1, 0-15 for x2, all for x4; the other lanes' pointers are ignored). Register
// j of lane l receives the 16-bit elements (row l / 4, cols 2 (l % 4) and
// 2 (l % 4) + 1) of matrix j, the lower column in the low half; with .trans,
// (rows 2 (l % 4) and 2 (l % 4) + 1, col l / 4). The emulator reads the rows
// when all lanes have arrived and checks each row lies inside the block's
// dynamic shared memory and is 16-byte aligned.
#ifndef TILEC_DEVICE_HOST_TL_LDMATRIX_H_
#define TILEC_DEVICE_HOST_TL_LDMATRIX_H_

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

template <int N>
inline void ldmatrix(uint32_t (&r)[N], const void* row, bool trans) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix loads 1, 2 or 4 matrices");
  LdmatrixIn in{row, N, trans ? 1 : 0};
  uint32_t out[4] = {0, 0, 0, 0};
  collective(kWarpLdmatrix, &in, out);
  for (int i = 0; i < N; ++i) r[i] = out[i];
}

}  // namespace host

template <int N>
inline void ldmatrix_x1(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 1, "tl::ldmatrix_x1 loads one 8x8 matrix: pass uint32_t[1]");
  host::ldmatrix(r, smem_row_ptr, false);
}

template <int N>
inline void ldmatrix_x1_trans(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 1, "tl::ldmatrix_x1_trans loads one 8x8 matrix: pass uint32_t[1]");
  host::ldmatrix(r, smem_row_ptr, true);
}

template <int N>
inline void ldmatrix_x2(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 2, "tl::ldmatrix_x2 loads two 8x8 matrices: pass uint32_t[2]");
  host::ldmatrix(r, smem_row_ptr, false);
}

template <int N>
inline void ldmatrix_x2_trans(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 2, "tl::ldmatrix_x2_trans loads two 8x8 matrices: pass uint32_t[2]");
  host::ldmatrix(r, smem_row_ptr, true);
}

template <int N>
inline void ldmatrix_x4(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 4, "tl::ldmatrix_x4 loads four 8x8 matrices: pass uint32_t[4]");
  host::ldmatrix(r, smem_row_ptr, false);
}

template <int N>
inline void ldmatrix_x4_trans(uint32_t (&r)[N], const void* smem_row_ptr) {
  static_assert(N == 4, "tl::ldmatrix_x4_trans loads four 8x8 matrices: pass uint32_t[4]");
  host::ldmatrix(r, smem_row_ptr, true);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_LDMATRIX_H_
