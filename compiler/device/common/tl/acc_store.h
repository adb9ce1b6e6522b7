// Storing an mma accumulator tile to shared memory as 16-bit values with
// stmatrix (docs/cuda_backend.md, "T.copy"). Target-neutral: built on
// tl::stmatrix_x4 / tl::stmatrix_x2 (sm_90 and later, and the host twin) and
// the tl element types. Included by the target's tl/tl.h after tl/gemm.h.
//
//   store_acc_stmatrix<T, M, N, WarpsM, WarpsN, Layout>(C_smem, C_frag)
//   store_acc_stmatrix<T, M, N, WarpsM, WarpsN, Layout, true>(C_smem, C_frag)
//
// The second form takes the wgmma accumulator of tl/gemm_wgmma.h (WarpsM =
// 4 * WgM, WarpsN = WgN): the same 16 x 8 tiles, warp w's rows (w / 4 % WgM)
// * WGM + mi * 64 + (w % 4) * 16 + ..., columns (w / 4 / WgM) * WGN + ....
//
// C_frag is a float accumulator fragment in the layout tl/gemm.h documents
// for gemm_ss<M, N, K, WarpsM, WarpsN, ...>: local ((mi * NI + ni) * 2 + h) * 2
// + e holds C(wm * WM + mi * 16 + h * 8 + lane / 4, wn * WN + ni * 8 +
// 2 * (lane % 4) + e). Every element is converted to T (tl::half_t or
// tl::bfloat16_t, round to nearest even) and stored at C_smem +
// Layout::offset(row, col). Each 8x8 quarter of an m16n8 tile is one stmatrix
// matrix: its registers are exactly the fragment's (c0, c1) or (c2, c3)
// pairs, and its rows are 8 consecutive elements at a column that is a
// multiple of 8, which tl::RowMajor with N % 8 == 0 and tl::Swizzled keep
// contiguous and 16-byte aligned. Pairs of 8-column tiles go as one x4 (the
// last tile of an odd count as one x2).
//
// Preconditions: all threads of the block call it; M % (16 * WarpsM) == 0,
// N % (8 * WarpsN) == 0 (checked at compile time), C_smem 16-byte aligned.
// Warps beyond the first WarpsM * WarpsN (replicated groups, which hold the
// same tile) store nothing.
#ifndef TILEC_DEVICE_COMMON_TL_ACC_STORE_H_
#define TILEC_DEVICE_COMMON_TL_ACC_STORE_H_

#include "tl/layout.h"

namespace tl {

template <typename T, int M, int N, int WarpsM, int WarpsN, typename Layout, bool Wgmma = false,
          typename P>
__device__ __forceinline__ void store_acc_stmatrix(const P& C_smem, const float* C_frag) {
  static_assert(sizeof(T) == 2, "tl::store_acc_stmatrix: T must be a 16-bit type");
  static_assert(M % (16 * WarpsM) == 0,
                "tl::store_acc_stmatrix: M must be a multiple of 16 * WarpsM");
  static_assert(N % (8 * WarpsN) == 0,
                "tl::store_acc_stmatrix: N must be a multiple of 8 * WarpsN");
  static_assert(
      !Wgmma || (WarpsM % 4 == 0 && M % (16 * WarpsM) == 0 && (M / (WarpsM / 4)) % 64 == 0),
      "tl::store_acc_stmatrix: a wgmma accumulator has warpgroups of whole m64 tiles");
  static_assert(Layout::kCols == N && Layout::kRows >= M,
                "tl::store_acc_stmatrix: the layout must have N columns and at least M rows");
  static_assert(N % 8 == 0, "tl::store_acc_stmatrix: rows of 8 elements must be 16-byte aligned");
  constexpr int WM = M / WarpsM, WN = N / WarpsN;
  constexpr int MI = WM / 16, NI = WN / 8;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (warp >= WarpsM * WarpsN) return;  // a replicated warp group: same values
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = warp % WarpsM, wn = warp / WarpsM;
  // The first row of this warp's 16-row tile mi.
  auto tile_row = [&](int mi) {
    if constexpr (Wgmma) {
      constexpr int WgM = WarpsM / 4;
      return (warp / 4 % WgM) * (M / WgM) + mi * 64 + (warp % 4) * 16;
    } else {
      return wm * WM + mi * 16;
    }
  };
  // This lane addresses row r of matrix q: q = (8-column tile, row half).
  const int r = lane % 8, q = lane / 8;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    const int row = tile_row(mi) + (q % 2) * 8 + r;
#pragma unroll
    for (int ni = 0; ni + 1 < NI; ni += 2) {
      uint32_t x[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float* c = C_frag + ((mi * NI + ni + j / 2) * 2 + j % 2) * 2;
        x[j] = detail::pack_b16x2(T(c[0]), T(c[1]));
      }
      stmatrix_x4(x, C_smem + Layout::offset(row, wn * WN + (ni + q / 2) * 8));
    }
    if constexpr (NI % 2 == 1) {
      uint32_t x[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float* c = C_frag + ((mi * NI + NI - 1) * 2 + j) * 2;
        x[j] = detail::pack_b16x2(T(c[0]), T(c[1]));
      }
      stmatrix_x2(x, C_smem + Layout::offset(row, wn * WN + (NI - 1) * 8));
    }
  }
}

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_ACC_STORE_H_
