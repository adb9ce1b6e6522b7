// Scalar helpers that generated code calls for the IR's integer semantics,
// plain vector copies and block rasterization. Target-neutral: built only on
// the primitives (tl/types.h, tl/math.h) and the CUDA spellings the host twin
// defines, so the emulator runs this very code.
//
//   floordiv(a, b) floormod(a, b)  Python's // and % (round toward -inf; the
//                                  remainder has the divisor's sign), for
//                                  integers, float and double
//   ceildiv(a, b)                  -floordiv(-a, b); for unsigned T, the
//                                  quotient rounded up
//   imin imax iabs                 integer min / max / abs
//   hadd hsub hmul(a, b)           a + b, a - b, a * b of two half_t or two
//                                  bfloat16_t, rounded once to the type:
//                                  the half-precision instructions on CUDA
//                                  (the _rn forms: never contracted into an
//                                  fma, which would round once for two);
//                                  elsewhere float arithmetic rounded to the
//                                  type, which is the same value (float has
//                                  at least 2p + 2 bits for both types'
//                                  p-bit significands, so rounding twice
//                                  never differs from rounding once)
//   quiet_nan<T>()                 a quiet NaN of float or double
//   is_aligned<N>(p)               p is a multiple of N bytes
//   copy_vec<N>(dst, src)          one N-byte (4, 8 or 16) load and store;
//   zero_vec<N>(dst)               one N-byte store of zeros; both addresses
//                                  must be N-byte aligned
//   Vec<T, N>, load_vec<T, N>(p), store_vec<T, N>(p, v), vec_zero<T, N>()
//                                  N elements of T moved as one access of
//                                  N * sizeof(T) bytes (a power of two up to
//                                  16; p aligned to it), kept in registers
//   bit_cast<To>(x)                the bits of x as a To of the same size
//   rasterize(panel, column_major, bx, by)
//                                  T.use_swizzle: remaps the block index of a
//                                  gridDim.x x gridDim.y grid so that
//                                  consecutive blocks walk a panel of `panel`
//                                  rows (columns when column_major) before
//                                  moving on; a bijection of the grid.
#ifndef TILEC_DEVICE_COMMON_TL_ARITH_H_
#define TILEC_DEVICE_COMMON_TL_ARITH_H_

#include "tl/math.h"
#include "tl/types.h"

namespace tl {

template <typename To, typename From>
__device__ __forceinline__ To bit_cast(From x) {
  static_assert(sizeof(To) == sizeof(From), "tl::bit_cast: the types differ in size");
  To y;
#if defined(__CUDACC__)
  memcpy(&y, &x, sizeof(To));
#else
  __builtin_memcpy(&y, &x, sizeof(To));
#endif
  return y;
}

#if defined(__CUDACC__)
#define TL_HALF_OP(name, intrinsic)                                        \
  __device__ __forceinline__ half_t name(half_t a, half_t b) {             \
    half_t r;                                                              \
    r.storage = intrinsic(a.storage, b.storage);                           \
    return r;                                                              \
  }                                                                        \
  __device__ __forceinline__ bfloat16_t name(bfloat16_t a, bfloat16_t b) { \
    bfloat16_t r;                                                          \
    r.storage = intrinsic(a.storage, b.storage);                           \
    return r;                                                              \
  }
TL_HALF_OP(hadd, __hadd_rn)
TL_HALF_OP(hsub, __hsub_rn)
TL_HALF_OP(hmul, __hmul_rn)
#undef TL_HALF_OP
#else
#define TL_HALF_OP(name, op)                                               \
  __device__ __forceinline__ half_t name(half_t a, half_t b) {             \
    return half_t(float(a) op float(b));                                   \
  }                                                                        \
  __device__ __forceinline__ bfloat16_t name(bfloat16_t a, bfloat16_t b) { \
    return bfloat16_t(float(a) op float(b));                               \
  }
TL_HALF_OP(hadd, +)
TL_HALF_OP(hsub, -)
TL_HALF_OP(hmul, *)
#undef TL_HALF_OP
#endif

template <typename T>
__device__ __forceinline__ T floordiv(T a, T b) {
  const T q = static_cast<T>(a / b);
  return (static_cast<T>(q * b) != a && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
}
__device__ __forceinline__ float floordiv(float a, float b) { return tl::floor(a / b); }
__device__ __forceinline__ double floordiv(double a, double b) { return tl::floor(a / b); }

template <typename T>
__device__ __forceinline__ T floormod(T a, T b) {
  const T r = static_cast<T>(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
}
__device__ __forceinline__ float floormod(float a, float b) { return a - tl::floor(a / b) * b; }
__device__ __forceinline__ double floormod(double a, double b) { return a - tl::floor(a / b) * b; }

template <typename T>
__device__ __forceinline__ T ceildiv(T a, T b) {
  if (static_cast<T>(-1) > T(0)) return static_cast<T>(a / b + (a % b != 0));  // unsigned
  return static_cast<T>(-floordiv(static_cast<T>(-a), b));
}

template <typename T>
__device__ __forceinline__ T imin(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
__device__ __forceinline__ T imax(T a, T b) {
  return a < b ? b : a;
}
template <typename T>
__device__ __forceinline__ T iabs(T a) {
  return a < 0 ? static_cast<T>(-a) : a;
}

template <typename T>
__device__ __forceinline__ T quiet_nan() {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "tl::quiet_nan<T>: T is float or double");
  const T inf = infinity<T>();
  return inf - inf;
}

template <int N>
__device__ __forceinline__ bool is_aligned(const void* p) {
  static_assert(N > 0 && (N & (N - 1)) == 0, "tl::is_aligned<N>: N must be a power of two");
  return (reinterpret_cast<unsigned long long>(p) & (N - 1)) == 0;
}

// The unsigned integer of B bytes (1, 2, 4 or 8), as a type: decltype(bit_cast_uint<B>()).
template <int B>
__device__ __forceinline__ auto bit_cast_uint() {
  if constexpr (B == 1) return static_cast<unsigned char>(0);
  else if constexpr (B == 2) return static_cast<uint16_t>(0);
  else if constexpr (B == 4) return static_cast<uint32_t>(0);
  else return static_cast<uint64_t>(0);
}

template <int N>
struct alignas(N) VecBytes {
  static_assert(N == 4 || N == 8 || N == 16, "tl::VecBytes<N>: N must be 4, 8 or 16");
  uint32_t words[N / 4];
};

template <int N>
__device__ __forceinline__ void copy_vec(void* dst, const void* src) {
  *static_cast<VecBytes<N>*>(dst) = *static_cast<const VecBytes<N>*>(src);
}

template <int N>
__device__ __forceinline__ void zero_vec(void* dst) {
  VecBytes<N> z;
#pragma unroll
  for (int i = 0; i < N / 4; ++i) z.words[i] = 0u;
  *static_cast<VecBytes<N>*>(dst) = z;
}

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  static_assert(N >= 1 && (sizeof(T) * N & (sizeof(T) * N - 1)) == 0 && sizeof(T) * N <= 16,
                "tl::Vec<T, N>: N * sizeof(T) must be a power of two up to 16 bytes");
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ Vec<T, N> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}

// A Vec whose bits are all zero: 0 of every integer and floating type.
template <typename T, int N>
__device__ __forceinline__ Vec<T, N> vec_zero() {
  Vec<T, N> r;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&r);
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(r)); ++i) bytes[i] = 0;
  return r;
}

// The N elements of x as one unsigned integer of their total width W <= 8
// bytes (element e in the bits from e * 8 * sizeof(T)): one store, not N.
template <typename W, typename T, int N>
__device__ __forceinline__ W pack_vec(const Vec<T, N>& x) {
  using E = decltype(bit_cast_uint<sizeof(T)>());
  W w = 0;
#pragma unroll
  for (int e = 0; e < N; ++e) w |= static_cast<W>(bit_cast<E>(x.v[e])) << (8 * sizeof(T) * e);
  return w;
}

template <typename T, int N>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, N>& x) {
  if constexpr (sizeof(T) * N == 8 && N > 1) {
    *reinterpret_cast<uint64_t*>(p) = pack_vec<uint64_t>(x);
  } else if constexpr (sizeof(T) * N == 4 && N > 1) {
    *reinterpret_cast<uint32_t*>(p) = pack_vec<uint32_t>(x);
  } else {
    *reinterpret_cast<Vec<T, N>*>(p) = x;
  }
}

// Row order: the grid's rows (by) are cut into panels of `panel` rows; block
// number n = bx + by * gridDim.x walks its panel column by column, down the
// panel's rows first; odd panels walk the columns right to left so the next
// panel starts where the previous one ended.
__device__ __forceinline__ void rasterize(int panel, bool column_major, int& bx, int& by) {
  const int gx = static_cast<int>(gridDim.x);
  const int gy = static_cast<int>(gridDim.y);
  // Major: the dimension cut into panels; minor: the one walked across.
  const int major_n = column_major ? gx : gy;
  const int minor_n = column_major ? gy : gx;
  if (panel <= 0 || panel >= major_n) return;
  const int n = column_major ? by + bx * gy : bx + by * gx;
  const int panel_blocks = panel * minor_n;
  const int p = n / panel_blocks;
  const int off = n % panel_blocks;
  const int rows = imin(panel, major_n - p * panel);
  int minor = off / rows;
  const int major = p * panel + off % rows;
  if (p % 2 == 1) minor = minor_n - 1 - minor;
  if (column_major) {
    bx = major;
    by = minor;
  } else {
    bx = minor;
    by = major;
  }
}

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_ARITH_H_
