// Host twin of tl/wgmma.h: Hopper's warpgroup mma, emulated from the PTX ISA.
//
// wgmma_ss<N, Kind, TA, TB>(group, d, desc_a, desc_b, scale_d) is
// wgmma.mma_async.sync.aligned.m64n<N>k{16,32}.f32 with both operands in
// shared memory. Each thread computes its own D fragment (the ISA's figure:
// register i of lane l in warp w % 4 of the warpgroup holds row 16 (w % 4) +
// l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2), reading A
// (64 x k) and B (k x N) from shared memory through the matrix descriptors
// as the hardware does, not through tilec's layout types: start address,
// leading and stride byte offsets and swizzle mode decoded from the 64-bit
// descriptor, element (mn, k) found in the ISA's canonical layout for the
// operand's major-ness (TA / TB: 1 = MN-major), then the swizzle applied to
// the address (Swizzle<B, 4, 3>: bits 4.. ^= bits 7.., B = 3, 2, 1 for the
// 128-, 64-, 32-byte modes). Addresses count from the block's shared memory
// base (which the CUDA side aligns to 1024 bytes). A layout that disagrees
// with the descriptor reads the wrong elements and gives wrong numbers.
//
// The instruction is asynchronous as on the GPU, and the emulator takes the
// latest moment the hardware may: it runs when wgmma_wait retires its group,
// in issue order, reading the operands from shared memory then and adding to
// the accumulator as it is then (the results of earlier instructions on it,
// which the hardware chains). So code that reads d before the wait sees the
// old values, and code that overwrites an operand before the wait (a pipeline
// refilling a stage its last group still reads) gets wrong numbers. Products
// of the operand types are exact in float; the sum runs over k in order onto
// the accumulator (scale_d 0: onto 0).
#ifndef TILEC_DEVICE_HOST_TL_WGMMA_H_
#define TILEC_DEVICE_HOST_TL_WGMMA_H_

#include <cstring>
#include <functional>
#include <vector>

#include "tl/shfl.h"
#include "tl/thread.h"
#include "tl/types.h"

namespace tl {

struct WgmmaGroup {
  std::vector<std::function<void()>> open;                    // issued, not committed
  std::vector<std::vector<std::function<void()>>> committed;  // oldest first
};

inline uint32_t wgmma_smem_addr(const void* p) {
  return static_cast<uint32_t>(static_cast<const uint8_t*>(p) - host::self()->smem);
}

// fence.proxy.async: this thread's generic-proxy writes to shared memory
// become visible to the async proxy (wgmma, TMA); checked with check_uninit.
TL_HOST_NOINLINE inline void fence_proxy_async() {
  host::Thread* t = host::current_thread;
  if (t->check_uninit) {
    t->pc = TL_HOST_CALLER();
    t->rt->fence_proxy_async(t);
    host::current_thread = t;
  }
}
inline void wgmma_fence() {}

template <int Count>
inline void wgmma_fence_operand(float*) {}
template <int Count>
inline void wgmma_fence_operand(uint32_t*) {}

inline void wgmma_commit(WgmmaGroup& g) {
  g.committed.push_back(std::move(g.open));
  g.open.clear();
}

template <int N>
inline void wgmma_wait(WgmmaGroup& g) {
  while (g.committed.size() > static_cast<size_t>(N)) {
    for (const std::function<void()>& run : g.committed.front()) run();
    g.committed.erase(g.committed.begin());
  }
}

namespace host {

// Byte address (from the shared base) of element (mn, k) of a wgmma operand
// in shared memory, E-byte elements.
inline uint32_t wgmma_element(uint64_t desc, bool mn_major, int mn, int k, int e) {
  const uint32_t start = static_cast<uint32_t>(desc & 0x3FFF) << 4;
  const uint32_t lbo = static_cast<uint32_t>((desc >> 16) & 0x3FFF) << 4;
  const uint32_t sbo = static_cast<uint32_t>((desc >> 32) & 0x3FFF) << 4;
  const int mode = static_cast<int>(desc >> 62);
  const uint32_t width = mode == 1 ? 128 : mode == 2 ? 64 : 32;  // swizzle bytes
  uint32_t byte;
  if (!mn_major) {
    // ((8, m), (T, 2k)) : ((width / 16 * T, SBO), (1, T)): rows of `width` bytes.
    byte = start + (mn % 8) * width + (mn / 8) * sbo + k * e;
  } else {
    // ((T, width / 16, m), (8, k)) : ((1, T, LBO), (width / 16 * T, SBO)).
    const int per_block = static_cast<int>(width) / e;
    byte = start + (mn % per_block) * e + (mn / per_block) * lbo + (k % 8) * width + (k / 8) * sbo;
  }
  const uint32_t bits = mode == 1 ? 3 : mode == 2 ? 2 : 1;
  return byte ^ (((byte >> 7) & ((1u << bits) - 1)) << 4);
}

template <typename T>
inline float wgmma_load(uint64_t desc, bool mn_major, int mn, int k) {
  Thread* t = self();
  const uint32_t at = wgmma_element(desc, mn_major, mn, k, sizeof(T));
  if (static_cast<uint64_t>(at) + sizeof(T) > t->smem_bytes) {
    t->rt->check_shared(t, t->smem + at, sizeof(T), "wgmma operand (matrix descriptor)");
  }
  if (t->check_uninit) t->rt->async_read(t, t->smem + at, sizeof(T), t->pc);
  decltype(T{}.bits()) bits;
  std::memcpy(&bits, t->smem + at, sizeof(T));
  return float(T::from_bits(bits));
}

// The operand types of an instruction kind (tl/wgmma_ops.h).
template <typename AT, typename BT>
struct WgmmaPair {
  using A = AT;
  using B = BT;
};
template <int Kind>
struct WgmmaTypes;
template <>
struct WgmmaTypes<0> : WgmmaPair<half_t, half_t> {};
template <>
struct WgmmaTypes<1> : WgmmaPair<bfloat16_t, bfloat16_t> {};
template <>
struct WgmmaTypes<2> : WgmmaPair<fp8_e4m3_t, fp8_e4m3_t> {};
template <>
struct WgmmaTypes<3> : WgmmaPair<fp8_e4m3_t, fp8_e5m2_t> {};
template <>
struct WgmmaTypes<4> : WgmmaPair<fp8_e5m2_t, fp8_e4m3_t> {};
template <>
struct WgmmaTypes<5> : WgmmaPair<fp8_e5m2_t, fp8_e5m2_t> {};

// One instruction's results for the thread `t`: register i of its D fragment
// (the ISA's figure: row 16 (w % 4) + l / 4 + 8 ((i / 2) % 2), column 8 (i /
// 4) + 2 (l % 4) + i % 2) becomes d[i] (0 when scale_d is 0) plus the sum over
// k < K, in order, of a(row, k) * b(col, k).
template <int N, int K, typename AFn, typename BFn>
inline void wgmma_results(const Thread* t, float* d, uint32_t scale_d, AFn a, BFn b) {
  const int tid = static_cast<int>(t->thread_idx.x) % 128;
  const int warp = tid / 32, lane = tid % 32;
  float out[N / 2];
  for (int i = 0; i < N / 2; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    float acc = scale_d != 0 ? d[i] : 0.0f;
    for (int k = 0; k < K; ++k) acc += a(row, k) * b(col, k);
    out[i] = acc;
  }
  for (int i = 0; i < N / 2; ++i) d[i] = out[i];
}

}  // namespace host

template <int N, int Kind, int TransA, int TransB>
inline void wgmma_ss(WgmmaGroup& g, float* d, uint64_t desc_a, uint64_t desc_b, uint32_t scale_d) {
  static_assert(N >= 8 && N <= 256 && N % 8 == 0, "wgmma: N is a multiple of 8 up to 256");
  using AT = typename host::WgmmaTypes<Kind>::A;
  using BT = typename host::WgmmaTypes<Kind>::B;
  constexpr int kK = sizeof(AT) == 1 ? 32 : 16;
  static_assert(kK == 16 || (TransA == 0 && TransB == 0), "wgmma: float8 operands are K-major");
  host::Thread* t = host::self();
  if ((desc_a >> 49 & 7) != 0 || (desc_b >> 49 & 7) != 0 || (desc_a >> 62) == 0 ||
      (desc_b >> 62) == 0) {
    t->rt->trap(t, "wgmma: only swizzled operands with base offset 0 are emulated");
  }
  // Runs when wgmma_wait retires the group, in issue order: reads the
  // operands then (the latest the hardware may) and adds to d as it is then
  // (the results of the earlier instructions on it, which the hardware chains).
  g.open.push_back([t, d, desc_a, desc_b, scale_d] {
    host::wgmma_results<N, kK>(
        t, d, scale_d,
        [&](int row, int k) { return host::wgmma_load<AT>(desc_a, TransA != 0, row, k); },
        [&](int col, int k) { return host::wgmma_load<BT>(desc_b, TransB != 0, col, k); });
  });
}

// wgmma_rs: A (64 x 16, f16 or bf16) from registers: register j of lane l of
// warp w % 4 holds the pair (row 16 (w % 4) + l / 4 + 8 (j % 2), columns
// 2 (l % 4) + 8 (j / 2) and the next), the lower column in the low half (the
// ISA's A fragment, that of mma.m16n8k16 per warp). Every lane of the warp
// must call it: the rows this thread's results need are gathered from the
// four lanes that hold them with warp shuffles when it is issued (the
// registers may change after the wait only); B is read at the wait.
template <int N, int Kind, int TransB>
inline void wgmma_rs(WgmmaGroup& g, float* d, const uint32_t (&a)[4], uint64_t desc_b,
                     uint32_t scale_d) {
  static_assert(N >= 8 && N <= 256 && N % 8 == 0, "wgmma: N is a multiple of 8 up to 256");
  static_assert(Kind == 0 || Kind == 1, "wgmma: A from registers is f16 or bf16");
  using AT = typename host::WgmmaTypes<Kind>::A;
  using BT = typename host::WgmmaTypes<Kind>::B;
  host::Thread* t = host::self();
  if ((desc_b >> 49 & 7) != 0 || (desc_b >> 62) == 0) {
    t->rt->trap(t, "wgmma: only swizzled operands with base offset 0 are emulated");
  }
  const int lane = static_cast<int>(t->lane), grp = lane / 4;
  // rows[h][k]: A(row grp + 8 h, k) of this warp's 16 rows.
  float rows[2][16];
  for (int q = 0; q < 4; ++q) {
    for (int j = 0; j < 4; ++j) {
      const uint32_t v = host::shfl(host::kWarpShflIdx, a[j], 4 * grp + q);
      for (int e = 0; e < 2; ++e) {
        const auto bits = static_cast<uint16_t>(v >> (16 * e));
        rows[j % 2][8 * (j / 2) + 2 * q + e] = float(AT::from_bits(bits));
      }
    }
  }
  std::vector<float> arows(&rows[0][0], &rows[0][0] + 32);
  g.open.push_back([t, d, arows, desc_b, scale_d] {
    host::wgmma_results<N, 16>(
        t, d, scale_d, [&](int row, int k) { return arows[(row % 16) / 8 * 16 + k]; },
        [&](int col, int k) { return host::wgmma_load<BT>(desc_b, TransB != 0, col, k); });
  });
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_WGMMA_H_
