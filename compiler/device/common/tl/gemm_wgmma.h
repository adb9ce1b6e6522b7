// Block-level gemm on Hopper's warpgroup mma (docs/cuda_backend.md "wgmma").
// Target-neutral: built on the target's tl/wgmma.h (inline PTX on CUDA, the
// emulated instruction on the host), so the emulator runs this very code.
//
//   gemm_ss_wgmma<M, N, K, WgM, WgN, TransA, TransB, LayoutA, LayoutB>(A_smem, B_smem, C_frag)
//   gemm_ss_wgmma_issue<...same...>(A_smem, B_smem, C_frag, group)
//   gemm_rs_wgmma<M, N, K, WgM, WgN, TransB, LayoutB>(A_frag, B_smem, C_frag)
//
// C += op(A) @ op(B), A stored [M, K] ([K, M] when TransA), B stored [K, N]
// ([N, K] when TransB), both in shared memory in tl::Swizzled layouts (whose
// 32-, 64- and 128-byte swizzles are wgmma's), each buffer 8-row-period
// aligned (kSwizzleBytes * 8 bytes). Operands tl::half_t or tl::bfloat16_t
// (k16; either major-ness), or tl::fp8_e4m3_t / tl::fp8_e5m2_t (k32; A stored
// [M, K] and B stored [N, K] only); C float.
//
// The block's warps form warpgroups of four (w / 4); warpgroup g computes
// rows wgm * WGM .. and columns wgn * WGN .. of C, wgm = g % WgM, wgn = (g /
// WgM) % WgN, WGM = M / WgM (a multiple of 64), WGN = N / WgN (a multiple of
// 8, at most 256), issuing MI = WGM / 64 instructions m64n<WGN> per k-step;
// further warpgroups (the block has more than 4 * WgM * WgN warps) compute
// the same tile again. C_frag (MI * WGN / 2 floats) is the wgmma accumulator
// layout (inference::MmaAccumulator with wgmma): local ((mi * NI + ni) * 2 +
// h) * 2 + e, NI = WGN / 8, holds C(wgm * WGM + mi * 64 + (w % 4) * 16 + h * 8
// + lane / 4, wgn * WGN + ni * 8 + 2 * (lane % 4) + e), the PTX ISA's D
// fragment of each instruction.
//
// The instructions of one call form one wgmma group: fenced before (the
// accumulator registers were written by ordinary code), committed, and
// waited for before returning, so C is complete on return. gemm_ss_wgmma_issue
// only issues and commits the group into `group`: the caller waits
// (tl::wgmma_wait<N>(group)) before it reads C or lets anything overwrite
// A and B, and may issue further groups onto the same C before that (a
// pipelined K loop keeps one group in flight). Float8 products
// are summed by the tensor cores with about 13 bits, not float32's 24 (the
// hardware's float8 accumulation, as TileLang's T.gemm has it on Hopper);
// a kernel that needs float32 sums accumulates each few k-steps' T.gemm into
// a cleared fragment and adds that to its own in float32. Shared memory the
// block wrote with ordinary stores or cp.async must have been made visible to
// the async proxy (tl::fence_proxy_async() by the writers before the barrier
// that precedes the call).
#ifndef TILEC_DEVICE_COMMON_TL_GEMM_WGMMA_H_
#define TILEC_DEVICE_COMMON_TL_GEMM_WGMMA_H_

#include "tl/layout.h"

namespace tl {
namespace detail {

// The instruction kind of an operand pair (tl/wgmma_ops.h).
template <typename AT, typename BT>
struct WgmmaKind {
  static_assert(sizeof(AT) == 0,
                "tl::gemm_ss_wgmma: operands must be float16, bfloat16 or float8 (e4m3, e5m2)");
};
template <>
struct WgmmaKind<half_t, half_t> {
  static constexpr int value = 0;
};
template <>
struct WgmmaKind<bfloat16_t, bfloat16_t> {
  static constexpr int value = 1;
};
template <>
struct WgmmaKind<fp8_e4m3_t, fp8_e4m3_t> {
  static constexpr int value = 2;
};
template <>
struct WgmmaKind<fp8_e4m3_t, fp8_e5m2_t> {
  static constexpr int value = 3;
};
template <>
struct WgmmaKind<fp8_e5m2_t, fp8_e4m3_t> {
  static constexpr int value = 4;
};
template <>
struct WgmmaKind<fp8_e5m2_t, fp8_e5m2_t> {
  static constexpr int value = 5;
};

// The matrix descriptor (PTX ISA "Matrix Descriptor Format") of the operand
// whose first core matrix starts at `p`, in layout L, K-major or MN-major:
// start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29 (MN-major:
// the distance between swizzle blocks along M/N, L's column-block distance;
// K-major swizzled: unused, 1), stride byte offset >> 4 in 32-45 (8 rows of
// the swizzle width: the distance between 8-row groups), base offset 0 (the
// buffer is aligned to the swizzle period), swizzle mode in 62-63 (1: 128
// bytes, 2: 64, 3: 32).
template <typename L, bool MnMajor>
__device__ __forceinline__ uint64_t wgmma_desc(const void* p) {
  constexpr int kSwizzle = SwizzleOf<L>::kSwizzleBytes;
  static_assert(kSwizzle == 32 || kSwizzle == 64 || kSwizzle == 128,
                "tl::gemm_ss_wgmma: operands must be in a tl::Swizzled layout");
  constexpr uint64_t kMode = kSwizzle == 128 ? 1 : kSwizzle == 64 ? 2 : 3;
  constexpr uint64_t kLbo = MnMajor ? uint64_t(SwizzleOf<L>::kBlockBytes) : 16;
  constexpr uint64_t kSbo = uint64_t(kSwizzle) * 8;
  const uint64_t addr = wgmma_smem_addr(p);
  return ((addr & 0x3FFFF) >> 4) | (((kLbo & 0x3FFFF) >> 4) << 16) | ((kSbo >> 4) << 32) |
         (kMode << 62);
}

// The descriptor of the operand `bytes` past the one `base` describes: the
// start address field (bits 0-13) advanced by bytes >> 4, a 32-bit add (a
// shared address is below 2^18, so the field never carries), where making
// each descriptor from its pointer costs a conversion, a mask, a shift and
// an or.
__device__ __forceinline__ uint64_t wgmma_desc_advance(uint64_t base, uint32_t bytes) {
  const uint32_t lo = static_cast<uint32_t>(base) + (bytes >> 4);
  return (base & 0xFFFFFFFF00000000ull) | lo;
}

}  // namespace detail

template <int M, int N, int K, int WgM, int WgN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AT, typename BT>
__device__ __forceinline__ void gemm_ss_wgmma_issue(const AT* A_smem, const BT* B_smem,
                                                    float* C_frag, WgmmaGroup& group) {
  constexpr int WGM = M / WgM;
  constexpr int WGN = N / WgN;
  constexpr int MI = WGM / 64;
  constexpr int kKind = detail::WgmmaKind<AT, BT>::value;
  constexpr int KStep = sizeof(AT) == 1 ? 32 : 16;
  static_assert(WgM >= 1 && WgN >= 1 && M % (64 * WgM) == 0 && N % (8 * WgN) == 0 && WGN <= 256,
                "tl::gemm_ss_wgmma: each warpgroup computes whole m64 tiles of at most 256 "
                "columns, a multiple of 8");
  static_assert(K % KStep == 0, "tl::gemm_ss_wgmma: K must be a multiple of the k-step (16, 32)");
  static_assert(KStep == 16 || (!TransA && TransB),
                "tl::gemm_ss_wgmma: float8 operands must be stored A [M, K] and B [N, K]");
  static_assert(LayoutA::kCols == (TransA ? M : K) && LayoutB::kCols == (TransB ? K : N),
                "tl::gemm_ss_wgmma: a layout's column count must be its operand's stored "
                "column count");
  const int wg = static_cast<int>(threadIdx.x) / 128 % (WgM * WgN);
  const int m_base = (wg % WgM) * WGM;
  const int n_base = (wg / WgM) * WGN;
  constexpr int kRegs = MI * WGN / 2;
  wgmma_fence_operand<kRegs>(C_frag);
  wgmma_fence();
  const uint64_t desc_a0 = detail::wgmma_desc<LayoutA, TransA>(A_smem);
  const uint64_t desc_b0 = detail::wgmma_desc<LayoutB, !TransB>(B_smem);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += KStep) {
    // B: K-major when stored [N, K]; MN-major (columns contiguous) stored [K, N].
    const int b_offset = TransB ? LayoutB::offset(n_base, k0) : LayoutB::offset(k0, n_base);
    const uint64_t desc_b = detail::wgmma_desc_advance(desc_b0, b_offset * sizeof(BT));
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int m0 = m_base + mi * 64;
      const int a_offset = TransA ? LayoutA::offset(k0, m0) : LayoutA::offset(m0, k0);
      const uint64_t desc_a = detail::wgmma_desc_advance(desc_a0, a_offset * sizeof(AT));
      wgmma_ss<WGN, kKind, TransA ? 1 : 0, TransB ? 0 : 1>(group, C_frag + mi * (WGN / 2), desc_a,
                                                           desc_b, 1u);
    }
  }
  wgmma_commit(group);
}

template <int M, int N, int K, int WgM, int WgN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AT, typename BT>
__device__ __forceinline__ void gemm_ss_wgmma(const AT* A_smem, const BT* B_smem, float* C_frag) {
  WgmmaGroup group;
  gemm_ss_wgmma_issue<M, N, K, WgM, WgN, TransA, TransB, LayoutA, LayoutB>(A_smem, B_smem, C_frag,
                                                                           group);
  wgmma_wait<0>(group);
  wgmma_fence_operand<M / WgM / 64 * (N / WgN) / 2>(C_frag);
}

// A ([M, K], float16 or bfloat16) from registers: each warpgroup computes
// one m64 tile (M / WgM == 64), A_frag in the register-A layout of the
// m16n8k16 templates with WarpsM = 4 * WgM (tl/gemm.h: local ((kk * 2 + h)
// * 2 + e) holds A(wm * 16 + h * 8 + lane / 4, kk * 8 + 2 * (lane % 4) + e)),
// whose eight elements of k-step ks are the four registers of the ISA's A
// fragment in order.
template <int M, int N, int K, int WgM, int WgN, bool TransB, typename LayoutB, typename AT,
          typename BT>
__device__ __forceinline__ void gemm_rs_wgmma(const AT* A_frag, const BT* B_smem, float* C_frag) {
  constexpr int WGN = N / WgN;
  constexpr int kKind = detail::WgmmaKind<AT, BT>::value;
  static_assert(kKind <= 1, "tl::gemm_rs_wgmma: A from registers is float16 or bfloat16");
  static_assert(M == 64 * WgM && N % (8 * WgN) == 0 && WGN <= 256,
                "tl::gemm_rs_wgmma: each warpgroup computes one m64 tile of at most 256 "
                "columns, a multiple of 8");
  static_assert(K % 16 == 0, "tl::gemm_rs_wgmma: K must be a multiple of 16");
  static_assert(LayoutB::kCols == (TransB ? K : N),
                "tl::gemm_rs_wgmma: LayoutB's column count must be B's stored column count");
  const int wg = static_cast<int>(threadIdx.x) / 128 % (WgM * WgN);
  const int n_base = (wg / WgM) * WGN;
  // Every k-step's A registers are packed before the first wgmma: packing
  // between them (registers defined while wgmma runs) makes ptxas wait for
  // each wgmma before issuing the next.
  uint32_t a_all[K / 16][4];
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      a_all[k0 / 16][j] = detail::pack_b16x2(A_frag[k0 / 2 + 2 * j], A_frag[k0 / 2 + 2 * j + 1]);
    }
  }
  WgmmaGroup group;
  wgmma_fence_operand<K / 16 * 4>(&a_all[0][0]);
  wgmma_fence_operand<WGN / 2>(C_frag);
  wgmma_fence();
  const uint64_t desc_b0 = detail::wgmma_desc<LayoutB, !TransB>(B_smem);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    const uint32_t(&a)[4] = a_all[k0 / 16];
    const int b_offset = TransB ? LayoutB::offset(n_base, k0) : LayoutB::offset(k0, n_base);
    wgmma_rs<WGN, kKind, TransB ? 0 : 1>(
        group, C_frag, a, detail::wgmma_desc_advance(desc_b0, b_offset * sizeof(BT)), 1u);
  }
  wgmma_commit(group);
  wgmma_wait<0>(group);
  wgmma_fence_operand<WGN / 2>(C_frag);
}

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_GEMM_WGMMA_H_
