// Block-level MFMA gemm for AMD GPUs (docs/amdgpu.md "MFMA"). Target-neutral:
// built only on tl::mfma_32x32x8 / tl::mfma_16x16x16, the tl element types
// and threadIdx, so the emulator runs this very code with 64-lane
// wavefronts. Included by the AMD tl/tl.h and by the host twin.
//
//   gemm_ss_mfma<M, N, K, WavesM, WavesN, TransA, TransB, LayoutA, LayoutB, T>(A_smem, B_smem, C_frag)
//   gemm_rs_mfma<...same...>(A_frag, B_smem, C_frag)
//
// C += op(A) @ op(B) for the block tile, f32 accumulation; operands and
// shared layouts as for tl::gemm_ss (gemm.h). gemm_ss_mfma reads the
// operands of two k-steps at once (16 bytes per lane and tile; a last odd
// step alone) and sums k in that permuted order (mfma_ss_steps).
// T is the MFMA tile: 32 (v_mfma_f32_32x32x8, k-steps of 8, 16 registers)
// or 16 (v_mfma_f32_16x16x16, k-steps of 16, 4 registers) for tl::half_t
// and tl::bfloat16_t operands (V = 4 values per lane); for float8 (fnuz, V
// = 8; gemm_ss_mfma only) v_mfma_f32_32x32x16 / 16x16x32, k-steps of 16 / 32.
// Below, 4 is V for the float8 forms. The OCP float8 types (tl::fp8_e4m3_t,
// tl::fp8_e5m2_t; gemm_ss_mfma only), which no AMD MFMA takes, are converted
// to tl::half_t as they are read (exactly: every value of both is a half)
// and multiplied as half, with the half k-steps.
//
// Wave w = (threadIdx.x / 64) % (WavesM * WavesN) owns rows wm * WM .. of C
// and columns wn * WN .., wm = w % WavesM, wn = w / WavesM, WM = M / WavesM,
// WN = N / WavesN, in MI x NI tiles (MI = WM / T, NI = WN / T). Each MFMA
// computes the transposed tile, C^T += B^T A^T (B's fragment as the
// instruction's A operand), so a lane's D registers run along a row of C:
// lane l = threadIdx.x % 64 holds, in C_frag[(mi * NI + ni) * R + r], row
// l % T of tile (mi, ni) and column 8 * (r / 4) + 4 * (l / 32) + r % 4
// (T = 32) or 4 * (l / 16) + r (T = 16) (layout inference's
// mfma_accumulator). gemm_rs_mfma takes A ([M, K], no transpose) in the
// MFMA A-operand layout: A_frag[(mi * KI + kk) * 4 + j] holds row wm * WM +
// mi * T + l % T, k = kk * KS + 4 * (l / T) + j (KS the k-step, KI = K /
// KS), which is the accumulator layout of an [M, K] product over WavesM x 1
// waves. Further wave groups past WavesM * WavesN compute the same tile
// again.
#ifndef TILEC_DEVICE_COMMON_TL_GEMM_MFMA_H_
#define TILEC_DEVICE_COMMON_TL_GEMM_MFMA_H_

#include "tl/layout.h"

namespace tl {
namespace detail {

// The type an operand element is multiplied as: itself, or tl::half_t for
// the OCP float8 types.
template <typename X>
struct mfma_operand {
  using type = X;
};
template <>
struct mfma_operand<fp8_e4m3_t> {
  using type = half_t;
};
template <>
struct mfma_operand<fp8_e5m2_t> {
  using type = half_t;
};

// The MFMA of tile T over operands of `Bytes` bytes: V values per lane.
template <int T, int Bytes>
struct MfmaTile {
  static_assert(T == 32 || T == 16, "tl::gemm_*_mfma: the MFMA tile is 32 or 16");
  static_assert(Bytes == 2 || Bytes == 1, "tl::gemm_*_mfma: operands are 16- or 8-bit");
  static constexpr int kValues = 8 / Bytes;
  static constexpr int kStep = kValues * 64 / T;
  static constexpr int kRegs = T * T / 64;
};

// One MFMA on the accumulator registers of one tile, in place: c += x @ y in
// the instruction's terms (x its A operand, y its B operand).
template <int T, typename XT, typename YT, int V>
__device__ __forceinline__ void mfma_tile(float* c, const XT (&x)[V], const YT (&y)[V]) {
  using Regs = float[T * T / 64];
  if constexpr (V == 4 && T == 32) {
    mfma_32x32x8(*reinterpret_cast<Regs*>(c), x, y);
  } else if constexpr (V == 4) {
    mfma_16x16x16(*reinterpret_cast<Regs*>(c), x, y);
  } else if constexpr (T == 32) {
    mfma_32x32x16(*reinterpret_cast<Regs*>(c), x, y);
  } else {
    mfma_16x16x32(*reinterpret_cast<Regs*>(c), x, y);
  }
}

template <int M, int N, int K, int WavesM, int WavesN, int T, typename AT, typename BT, typename CT>
__device__ __forceinline__ void check_gemm_mfma() {
  static_assert(WavesM >= 1 && WavesN >= 1, "tl::gemm_*_mfma: WavesM and WavesN must be >= 1");
  static_assert(M % (T * WavesM) == 0, "tl::gemm_*_mfma: M must be a multiple of T * WavesM");
  static_assert(N % (T * WavesN) == 0, "tl::gemm_*_mfma: N must be a multiple of T * WavesN");
  using XA = typename mfma_operand<AT>::type;
  using XB = typename mfma_operand<BT>::type;
  static_assert(sizeof(XA) == sizeof(XB) && (sizeof(XA) == 2 || sizeof(XA) == 1),
                "tl::gemm_*_mfma: operands are tl::half_t or tl::bfloat16_t, or float8");
  static_assert(K % MfmaTile<T, sizeof(XA)>::kStep == 0,
                "tl::gemm_*_mfma: K must be a multiple of the k-step");
  static_assert(sizeof(CT) == 4, "tl::gemm_*_mfma: C must be float");
}

// B operand of tile column n0 from k0, V values per lane (the array's extent):
// B(k0 + V * (lane / T) + j, n0 + lane % T).
template <int T, bool TransB, typename LayoutB, typename BT, int V>
__device__ __forceinline__ void load_b_mfma(const BT* B, int n0, int k0, int lane, BT (&b)[V]) {
  const int n = n0 + lane % T, k = k0 + V * (lane / T);
#pragma unroll
  for (int j = 0; j < V; ++j) b[j] = TransB ? B[LayoutB::offset(n, k + j)] : B[LayoutB::offset(k + j, n)];
}

// An operand element as its MFMA type: itself, or an OCP float8 value as
// the half of the same value.
template <typename X, typename E>
struct MfmaValue {
  __device__ __forceinline__ static X of(E e) { return X(static_cast<float>(e)); }
};
template <typename X>
struct MfmaValue<X, X> {
  __device__ __forceinline__ static X of(X e) { return e; }
};

}  // namespace detail

namespace detail {

// P k-steps of gemm_ss_mfma from k0, their operands read at once: lane group
// g = lane / T reads the P * V consecutive k values k0 + P * V * g + j (16
// bytes: one ds_read_b128 per operand tile, with P = 2, or 4 for OCP float8
// multiplied as half), and step p multiplies values p * V .. p * V + V - 1
// of A and of B. That is one permutation of k shared by both operands, so
// every product still pairs A(i, k) with B(k, j).
template <int P, int T, int MI, int NI, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AT, typename BT>
__device__ __forceinline__ void mfma_ss_steps(const AT* A_smem, const BT* B_smem, float* C_frag,
                                              int m_base, int n_base, int k0, int lane) {
  using XA = typename mfma_operand<AT>::type;
  using XB = typename mfma_operand<BT>::type;
  using Tile = MfmaTile<T, sizeof(XA)>;
  constexpr int R = Tile::kRegs, V = Tile::kValues, PV = P * V;
  AT a[MI][PV];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    // A(m_base + mi * T + lane % T, k0 + PV * (lane / T) + j)
    const int m = m_base + mi * T + lane % T, k = k0 + PV * (lane / T);
#pragma unroll
    for (int j = 0; j < PV; ++j) {
      a[mi][j] = TransA ? A_smem[LayoutA::offset(k + j, m)] : A_smem[LayoutA::offset(m, k + j)];
    }
  }
  BT b[NI][PV];
#pragma unroll
  for (int ni = 0; ni < NI; ++ni) load_b_mfma<T, TransB, LayoutB>(B_smem, n_base + ni * T, k0, lane, b[ni]);
#pragma unroll
  for (int p = 0; p < P; ++p) {
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      XA x[V];
#pragma unroll
      for (int j = 0; j < V; ++j) x[j] = MfmaValue<XA, AT>::of(a[mi][p * V + j]);
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        XB y[V];
#pragma unroll
        for (int j = 0; j < V; ++j) y[j] = MfmaValue<XB, BT>::of(b[ni][p * V + j]);
        mfma_tile<T>(C_frag + (mi * NI + ni) * R, y, x);
      }
    }
  }
}

}  // namespace detail

template <int M, int N, int K, int WavesM, int WavesN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, int T, typename AT, typename BT, typename CT>
__device__ __forceinline__ void gemm_ss_mfma(const AT* A_smem, const BT* B_smem, CT* C_frag) {
  detail::check_gemm_mfma<M, N, K, WavesM, WavesN, T, AT, BT, CT>();
  constexpr int WM = M / WavesM, WN = N / WavesN, MI = WM / T, NI = WN / T;
  using Tile = detail::MfmaTile<T, sizeof(typename detail::mfma_operand<AT>::type)>;
  constexpr int KS = Tile::kStep;
  // Groups of G k-steps whose operands are 16 bytes a lane, then the steps
  // left one at a time.
  constexpr int G = 16 / (Tile::kValues * static_cast<int>(sizeof(AT)));
  constexpr int KP = K / (G * KS) * (G * KS);
  const int tid = static_cast<int>(threadIdx.x);
  const int wave = tid / 64 % (WavesM * WavesN), lane = tid % 64;
  const int m_base = (wave % WavesM) * WM, n_base = (wave / WavesM) * WN;
#pragma unroll
  for (int k0 = 0; k0 < KP; k0 += G * KS) {
    detail::mfma_ss_steps<G, T, MI, NI, TransA, TransB, LayoutA, LayoutB>(A_smem, B_smem, C_frag,
                                                                         m_base, n_base, k0, lane);
  }
#pragma unroll
  for (int k0 = KP; k0 < K; k0 += KS) {
    detail::mfma_ss_steps<1, T, MI, NI, TransA, TransB, LayoutA, LayoutB>(A_smem, B_smem, C_frag,
                                                                         m_base, n_base, k0, lane);
  }
}

template <int M, int N, int K, int WavesM, int WavesN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, int T, typename AT, typename CT>
__device__ __forceinline__ void gemm_rs_mfma(const AT* A_frag, const AT* B_smem, CT* C_frag) {
  detail::check_gemm_mfma<M, N, K, WavesM, WavesN, T, AT, AT, CT>();
  static_assert(!TransA, "tl::gemm_rs_mfma: a register A operand is [M, K]");
  static_assert(sizeof(AT) == 2, "tl::gemm_rs_mfma: register A operands are 16-bit");
  constexpr int WM = M / WavesM, WN = N / WavesN, MI = WM / T, NI = WN / T;
  constexpr int KS = detail::MfmaTile<T, 2>::kStep, R = detail::MfmaTile<T, 2>::kRegs, KI = K / KS;
  const int tid = static_cast<int>(threadIdx.x);
  const int wave = tid / 64 % (WavesM * WavesN), lane = tid % 64;
  const int n_base = (wave / WavesM) * WN;
#pragma unroll
  for (int kk = 0; kk < KI; ++kk) {
    AT b[NI][4];
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      detail::load_b_mfma<T, TransB, LayoutB>(B_smem, n_base + ni * T, kk * KS, lane, b[ni]);
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      AT a[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) a[j] = A_frag[(mi * KI + kk) * 4 + j];
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) detail::mfma_tile<T>(C_frag + (mi * NI + ni) * R, b[ni], a);
    }
  }
}

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_GEMM_MFMA_H_
