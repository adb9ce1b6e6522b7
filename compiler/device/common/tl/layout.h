// Shared-memory layouts (docs/cuda_backend.md, "Shared-memory layouts").
// Target-neutral: compiled for CUDA and for the host emulator.
//
// A shared buffer of shape [R, C] (higher ranks flattened into rows) with
// E-byte elements is addressed through a layout type with
//   static constexpr int offset(int r, int c)   // in elements
//   kRows, kCols                                // R, C
//
// RowMajor<R, C>:   r * C + c.
// Swizzled<R, C, E, TR>: rows of RB = C * E bytes, RB = 32, 64 or a multiple
// of 128. The 16-byte chunk k = c * E / 16 of row r is stored at
//   RB <= 128: offset r * C + k' * (16 / E) + c % (16 / E) elements, with
//              k' = k ^ ((r / (128 / RB)) % (RB / 16));
//   RB >  128: the rows are cut into 128-byte column blocks, and each block
//              of each [TR, C] matrix (TR rows; the leading dims of a
//              higher-rank buffer count matrices) is stored whole, a
//              [TR, 128-byte] block with the 128-byte rule above: matrix t =
//              r / TR, row i = r % TR, block b = k / 8, at byte
//              t * TR * RB + b * TR * 128 + i * 128 + ((k % 8) ^ (i % 8)) * 16.
// Every 16-byte chunk of a row is permuted within its 128-byte block, so every
// 8-row x 16-byte ldmatrix phase and every 16-byte store of 8 consecutive rows
// at the same column hits 32 distinct banks. These are also the canonical
// swizzled layouts of Hopper's wgmma shared-memory operands (32-, 64- and
// 128-byte swizzle modes, core matrices of 8 rows; the PTX ISA's "Shared
// Memory Matrix Layout"), given a base aligned to 8 rows of the block
// (kSwizzleBytes * 8 bytes): kSwizzleBytes is the swizzle's row width
// (min(RB, 128)), kBlockBytes the distance between 128-byte column blocks.
#ifndef TILEC_DEVICE_COMMON_TL_LAYOUT_H_
#define TILEC_DEVICE_COMMON_TL_LAYOUT_H_

namespace tl {

template <int R, int C>
struct RowMajor {
  static_assert(R > 0 && C > 0, "tl::RowMajor<R, C>: the shape must be positive");
  static constexpr int kRows = R;
  static constexpr int kCols = C;

  __device__ __forceinline__ static constexpr int offset(int r, int c) { return r * C + c; }
};

template <int R, int C, int E, int TR = R>
struct Swizzled {
  static_assert(R > 0 && C > 0 && TR > 0, "tl::Swizzled<R, C, E, TR>: the shape must be positive");
  static_assert(E == 1 || E == 2 || E == 4 || E == 8,
                "tl::Swizzled<R, C, E, TR>: E is the element size in bytes (1, 2, 4 or 8)");
  static_assert(C * E == 32 || C * E == 64 || (C * E) % 128 == 0,
                "tl::Swizzled<R, C, E, TR>: rows must be 32, 64 or a multiple of 128 bytes "
                "(C * E); use tl::RowMajor for other shapes");
  static constexpr int kRows = R;
  static constexpr int kCols = C;
  static constexpr int kRowBytes = C * E;
  static constexpr int kChunkElems = 16 / E;
  static constexpr int kSwizzleBytes = kRowBytes < 128 ? kRowBytes : 128;
  static constexpr int kBlockBytes = TR * 128;

  __device__ __forceinline__ static constexpr int offset(int r, int c) {
    const int k = c / kChunkElems;
    const int e = c % kChunkElems;
    if constexpr (kRowBytes > 128) {
      const int t = r / TR, i = r % TR;
      const int bytes =
          t * TR * kRowBytes + (k / 8) * kBlockBytes + i * 128 + ((k % 8) ^ (i % 8)) * 16;
      return bytes / E + e;
    } else {
      const int swizzled = k ^ ((r / (128 / kRowBytes)) % (kRowBytes / 16));
      return r * C + swizzled * kChunkElems + e;
    }
  }
};

// The [Rows, Cols] window at row R0, column C0 of layout L: a gemm operand
// that is part of a shared buffer (A_shared[:, k0:k0 + K]). Its rows start
// on 16-byte chunks of L when C0 * element size is a multiple of 16.
template <typename L, int R0, int C0, int Rows, int Cols>
struct Window {
  static_assert(R0 >= 0 && C0 >= 0 && Rows > 0 && Cols > 0 && R0 + Rows <= L::kRows &&
                    C0 + Cols <= L::kCols,
                "tl::Window<L, R0, C0, Rows, Cols>: the window must lie inside L");
  static constexpr int kRows = Rows;
  static constexpr int kCols = Cols;

  __device__ __forceinline__ static constexpr int offset(int r, int c) {
    return L::offset(r + R0, c + C0);
  }
};

// The swizzle facts of a layout (tl::Swizzled, or a window of one): its
// swizzle row width and column-block distance in bytes; 0 for tl::RowMajor.
template <typename L>
struct SwizzleOf {
  static constexpr int kSwizzleBytes = 0;
  static constexpr int kBlockBytes = 0;
};
template <int R, int C, int E, int TR>
struct SwizzleOf<Swizzled<R, C, E, TR>> {
  static constexpr int kSwizzleBytes = Swizzled<R, C, E, TR>::kSwizzleBytes;
  static constexpr int kBlockBytes = Swizzled<R, C, E, TR>::kBlockBytes;
};
template <typename L, int R0, int C0, int Rows, int Cols>
struct SwizzleOf<Window<L, R0, C0, Rows, Cols>> : SwizzleOf<L> {};

// A column period of a layout: offset(r, c + kCols) == offset(r, c) + kShift
// for every r and c (kCols == 0: none shorter than a row). A swizzled row
// wider than 128 bytes repeats every 128 bytes of columns, one column block
// (kBlockBytes) further on.
template <typename L>
struct ColumnPeriod {
  static constexpr int kCols = 0;
  static constexpr int kShift = 0;
};
template <int R, int C>
struct ColumnPeriod<RowMajor<R, C>> {
  static constexpr int kCols = 1;
  static constexpr int kShift = 1;
};
template <int R, int C, int E, int TR>
struct ColumnPeriod<Swizzled<R, C, E, TR>> {
  static constexpr bool kWide = Swizzled<R, C, E, TR>::kRowBytes > 128;
  static constexpr int kCols = kWide ? 128 / E : 0;
  static constexpr int kShift = kWide ? Swizzled<R, C, E, TR>::kBlockBytes / E : 0;
};
template <typename L, int R0, int C0, int Rows, int Cols>
struct ColumnPeriod<Window<L, R0, C0, Rows, Cols>> : ColumnPeriod<L> {};

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_LAYOUT_H_
