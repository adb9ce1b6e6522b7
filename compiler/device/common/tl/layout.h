// Shared-memory layouts (docs/cuda_backend.md, "Shared-memory layouts").
// Target-neutral: compiled for CUDA and for the host emulator.
//
// A shared buffer of shape [R, C] (higher ranks flattened into rows) with
// E-byte elements is addressed through a layout type with
//   static constexpr int offset(int r, int c)   // in elements
//   kRows, kCols                                // R, C
//
// RowMajor<R, C>:   r * C + c.
// Swizzled<R, C, E>: rows of RB = C * E bytes, RB = 32, 64 or a multiple of
// 128. The 16-byte chunk k = c * E / 16 of row r is stored at chunk
//   RB >= 128:  k' = (k & ~7) | ((k & 7) ^ (r & 7))
//   RB <  128:  k' = k ^ ((r / (128 / RB)) % (RB / 16))
// and offset = r * C + k' * (16 / E) + c % (16 / E). Each row is permuted
// within itself, so every 8-row x 16-byte ldmatrix phase and every 16-byte
// store of 8 consecutive rows at the same column hits 32 distinct banks.
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

template <int R, int C, int E>
struct Swizzled {
  static_assert(R > 0 && C > 0, "tl::Swizzled<R, C, E>: the shape must be positive");
  static_assert(E == 1 || E == 2 || E == 4 || E == 8,
                "tl::Swizzled<R, C, E>: E is the element size in bytes (1, 2, 4 or 8)");
  static_assert(C * E == 32 || C * E == 64 || (C * E) % 128 == 0,
                "tl::Swizzled<R, C, E>: rows must be 32, 64 or a multiple of 128 bytes "
                "(C * E); use tl::RowMajor for other shapes");
  static constexpr int kRows = R;
  static constexpr int kCols = C;
  static constexpr int kRowBytes = C * E;
  static constexpr int kChunkElems = 16 / E;

  __device__ __forceinline__ static constexpr int offset(int r, int c) {
    const int k = c / kChunkElems;
    const int e = c % kChunkElems;
    int swizzled = 0;
    if constexpr (kRowBytes >= 128) {
      swizzled = (k & ~7) | ((k & 7) ^ (r & 7));
    } else {
      swizzled = k ^ ((r / (128 / kRowBytes)) % (kRowBytes / 16));
    }
    return r * C + swizzled * kChunkElems + e;
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

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_LAYOUT_H_
