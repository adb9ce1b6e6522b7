// Hopper's warpgroup mma on the emulator (host/tl/wgmma.h), from the PTX
// ISA: the matrix-descriptor addressing against the ISA's documented
// canonical layouts, tl::gemm_ss_wgmma with tl::Swizzled operands against a
// CPU product for every operand type, major-ness and swizzle width tilec
// emits, and the two bugs the emulator must expose: operands stored in a
// layout the descriptor does not describe, and an accumulator read before
// its wgmma group is waited for.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/device/host/tl/types.h"
#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/toolchain.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/host/kernel_testing.h"

namespace tilec::host {
namespace {

constexpr char kKernels[] = R"cu(
#include "tl/tl.h"

constexpr int Align1024(int bytes) { return (bytes + 1023) / 1024 * 1024; }

// C = op(A) @ op(B) for one block of 128 * WgM * WgN threads: A and B
// (row-major as stored: A [M, K] or [K, M] when TA, B [K, N] or [N, K] when
// TB) are copied into shared memory in tl::Swizzled layouts (row-major
// instead when `plain`, an operand the descriptor does not describe), then
// tl::gemm_ss_wgmma; C is written from the documented accumulator layout.
template <int M, int N, int K, int WgM, int WgN, bool TA, bool TB, typename AT, typename BT>
__device__ void wgmma_block(const AT* A, const BT* B, float* C, int plain) {
  constexpr int AR = TA ? K : M, AC = TA ? M : K, BR = TB ? N : K, BC = TB ? K : N;
  using LA = tl::Swizzled<AR, AC, sizeof(AT)>;
  using LB = tl::Swizzled<BR, BC, sizeof(BT)>;
  AT* As = reinterpret_cast<AT*>(tl::dynamic_smem());
  BT* Bs = reinterpret_cast<BT*>(tl::dynamic_smem() + Align1024(AR * AC * sizeof(AT)));
  const int tx = threadIdx.x, threads = blockDim.x;
  for (int i = tx; i < AR * AC; i += threads) As[plain ? i : LA::offset(i / AC, i % AC)] = A[i];
  for (int i = tx; i < BR * BC; i += threads) Bs[LB::offset(i / BC, i % BC)] = B[i];
  tl::fence_proxy_async();
  tl::syncthreads();
  constexpr int WGM = M / WgM, WGN = N / WgN, MI = WGM / 64, NI = WGN / 8;
  float acc[MI * WGN / 2];
  for (int i = 0; i < MI * WGN / 2; ++i) acc[i] = 0.0f;
  tl::gemm_ss_wgmma<M, N, K, WgM, WgN, TA, TB, LA, LB>(As, Bs, acc);
  const int w = tx / 32, lane = tx % 32, g = w / 4, wgm = g % WgM, wgn = (g / WgM) % WgN;
  for (int mi = 0; mi < MI; ++mi)
    for (int ni = 0; ni < NI; ++ni)
      for (int h = 0; h < 2; ++h)
        for (int e = 0; e < 2; ++e) {
          const int row = wgm * WGM + mi * 64 + (w % 4) * 16 + h * 8 + lane / 4;
          const int col = wgn * WGN + ni * 8 + 2 * (lane % 4) + e;
          C[row * N + col] = acc[((mi * NI + ni) * 2 + h) * 2 + e];
        }
}

// f16, A [128, 64] (128-byte rows, K-major), B [64, 128] (256-byte rows in
// two 128-byte column blocks, MN-major), two instructions per k-step.
extern "C" __global__ void f16_nn_128x128x64(const tl::half_t* A, const tl::half_t* B, float* C, int plain) {
  wgmma_block<128, 128, 64, 1, 1, false, false, tl::half_t, tl::half_t>(A, B, C, plain);
}
// bf16, A stored [32, 64] (M-major), B [32, 64] (N-major).
extern "C" __global__ void bf16_tn_64x64x32(const tl::bfloat16_t* A, const tl::bfloat16_t* B, float* C, int plain) {
  wgmma_block<64, 64, 32, 1, 1, true, false, tl::bfloat16_t, tl::bfloat16_t>(A, B, C, plain);
}
// f16, 32-byte rows (K = 16), K-major A and B, two warpgroups along M.
extern "C" __global__ void f16_nt_128x64x16(const tl::half_t* A, const tl::half_t* B, float* C, int plain) {
  wgmma_block<128, 64, 16, 2, 1, false, true, tl::half_t, tl::half_t>(A, B, C, plain);
}
// f16, B [32, 256] (512-byte rows, four blocks), two warpgroups along N
// (each 128 columns, two blocks), 64-byte rows of A.
extern "C" __global__ void f16_nn_64x256x32(const tl::half_t* A, const tl::half_t* B, float* C, int plain) {
  wgmma_block<64, 256, 32, 1, 2, false, false, tl::half_t, tl::half_t>(A, B, C, plain);
}
// bf16, A and B transposed: M-major A of 256-byte rows, K-major B.
extern "C" __global__ void bf16_tt_128x64x32(const tl::bfloat16_t* A, const tl::bfloat16_t* B, float* C, int plain) {
  wgmma_block<128, 64, 32, 1, 1, true, true, tl::bfloat16_t, tl::bfloat16_t>(A, B, C, plain);
}
// float8 (k32, K-major only): 64-byte and 128-byte rows, mixed types.
extern "C" __global__ void e4m3_nt_64x64x64(const tl::fp8_e4m3_t* A, const tl::fp8_e4m3_t* B, float* C, int plain) {
  wgmma_block<64, 64, 64, 1, 1, false, true, tl::fp8_e4m3_t, tl::fp8_e4m3_t>(A, B, C, plain);
}
extern "C" __global__ void e5m2_e4m3_nt_64x128x128(const tl::fp8_e5m2_t* A, const tl::fp8_e4m3_t* B, float* C, int plain) {
  wgmma_block<64, 128, 128, 1, 1, false, true, tl::fp8_e5m2_t, tl::fp8_e4m3_t>(A, B, C, plain);
}

// A from registers: each lane loads its four registers of A [64, 16]
// (row-major in global memory) by the ISA's A fragment (register j: row
// 16 (w % 4) + l / 4 + 8 (j % 2), columns 2 (l % 4) + 8 (j / 2) and the next);
// `broken` swaps registers 1 and 2, the classic layout slip. B [8, 16]
// (K-major) in shared memory; D[64, 8] written by the documented layout.
extern "C" __global__ void rs_probe(const tl::half_t* A, const tl::half_t* B, float* D,
                                    int broken) {
  using LB = tl::Swizzled<8, 16, 2>;
  tl::half_t* Bs = reinterpret_cast<tl::half_t*>(tl::dynamic_smem());
  const int tx = threadIdx.x, w = tx / 32, lane = tx % 32;
  for (int i = tx; i < 8 * 16; i += 128) Bs[LB::offset(i / 16, i % 16)] = B[i];
  tl::fence_proxy_async();
  tl::syncthreads();
  uint32_t a[4];
  for (int j = 0; j < 4; ++j) {
    const int row = 16 * w + lane / 4 + 8 * (j % 2), col = 2 * (lane % 4) + 8 * (j / 2);
    a[j] = tl::detail::pack_b16x2(A[row * 16 + col], A[row * 16 + col + 1]);
  }
  if (broken) {
    const uint32_t t = a[1];
    a[1] = a[2];
    a[2] = t;
  }
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  tl::WgmmaGroup group;
  tl::wgmma_fence();
  tl::wgmma_rs<8, 0, 0>(group, d, a, tl::detail::wgmma_desc<LB, false>(Bs), 1u);
  tl::wgmma_commit(group);
  tl::wgmma_wait<0>(group);
  for (int i = 0; i < 4; ++i) {
    D[(16 * w + lane / 4 + 8 * (i / 2)) * 8 + 2 * (lane % 4) + i % 2] = d[i];
  }
}

// B [8, 16] stored by the threads (generic proxy), then one m64n8k16 with A
// zero in registers; `fence` 0 leaves out fence.proxy.async before the
// barrier (a bug the hardware punishes with stale operands).
extern "C" __global__ void operand_fence(const tl::half_t* B, float* D, int fence) {
  using LB = tl::Swizzled<8, 16, 2>;
  // A checked shared buffer: its stores are tracked (check_uninit).
  auto Bs = tl::smem_buffer<tl::half_t>(tl::dynamic_smem(), 0, 8 * 16, "Bs");
  for (int i = threadIdx.x; i < 8 * 16; i += 128) Bs[LB::offset(i / 16, i % 16)] = B[i];
  if (fence) tl::fence_proxy_async();
  tl::syncthreads();
  uint32_t a[4] = {0, 0, 0, 0};
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  tl::WgmmaGroup group;
  tl::wgmma_fence();
  tl::wgmma_rs<8, 0, 0>(group, d, a, tl::detail::wgmma_desc<LB, false>(Bs), 1u);  // @wgmma
  tl::wgmma_commit(group);
  tl::wgmma_wait<0>(group);  // @wait
  for (int i = 0; i < 4; ++i) D[threadIdx.x * 4 + i] = d[i];
}

// The emulator's address of element (mn, k) of a wgmma operand, for mn <
// 64, k < 16: out[mn * 16 + k].
extern "C" __global__ void element_addresses(uint64_t desc, int mn_major, int bytes,
                                             uint32_t* out) {
  if (threadIdx.x != 0) return;
  for (int mn = 0; mn < 64; ++mn)
    for (int k = 0; k < 16; ++k)
      out[mn * 16 + k] = tl::host::wgmma_element(desc, mn_major != 0, mn, k, bytes);
}

// The raw instructions: one m64n8k16 (f16, K-major, 32-byte swizzle) onto
// an accumulator of ones; `early` gets the accumulator read between the
// commit and the wait, `late` after the wait; `overwrite` zeroes A between
// them.
extern "C" __global__ void early_read(const tl::half_t* A, const tl::half_t* B, float* early,
                                      float* late, int overwrite) {
  using LA = tl::Swizzled<64, 16, 2>;
  using LB = tl::Swizzled<8, 16, 2>;
  tl::half_t* As = reinterpret_cast<tl::half_t*>(tl::dynamic_smem());
  tl::half_t* Bs = reinterpret_cast<tl::half_t*>(tl::dynamic_smem() + 2048);
  const int tx = threadIdx.x;
  for (int i = tx; i < 64 * 16; i += 128) As[LA::offset(i / 16, i % 16)] = A[i];
  for (int i = tx; i < 8 * 16; i += 128) Bs[LB::offset(i / 16, i % 16)] = B[i];
  tl::fence_proxy_async();
  tl::syncthreads();
  float d[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  tl::WgmmaGroup group;
  tl::wgmma_fence();
  tl::wgmma_ss<8, 0, 0, 0>(group, d, tl::detail::wgmma_desc<LA, false>(As),
                           tl::detail::wgmma_desc<LB, false>(Bs), 1u);
  tl::wgmma_commit(group);
  for (int i = 0; i < 4; ++i) early[tx * 4 + i] = d[i];  // @early
  if (overwrite) {  // A refilled before the wait: a race the emulator exposes
    for (int i = tx; i < 64 * 16; i += 128) As[i] = tl::half_t(0.0f);
    tl::syncthreads();
  }
  tl::wgmma_wait<0>(group);
  for (int i = 0; i < 4; ++i) late[tx * 4 + i] = d[i];
}
)cu";

const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels, "wgmma.cu"); }

template <typename T>
void* Arg(T& value) {
  return &value;
}

// The ISA's canonical layouts (PTX ISA, "Shared Memory Matrix Layout":
// strides of the CuTe layouts in its table and examples), with the swizzle
// on byte-address bits 4.. ^= 7.. .
uint32_t Swizzle(uint32_t byte, int bits) {
  return byte ^ (((byte >> 7) & ((1u << bits) - 1)) << 4);
}

// The emulator's element addresses for a descriptor (64 x 16 elements).
std::vector<uint32_t> Addresses(uint64_t desc, int mn_major, int bytes) {
  std::vector<uint32_t> out(64 * 16, 0xFFFFFFFF);
  uint32_t* po = out.data();
  absl::Status s = Launch(*Module(), "element_addresses", {1, 1, 1}, {1, 1, 1}, 0,
                          {Arg(desc), Arg(mn_major), Arg(bytes), Arg(po)});
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(WgmmaDescriptorTest, AddressesFollowTheIsaExamples) {
  ASSERT_MODULE();
  // K-major, 32-byte swizzle, tf32 (T = 4): ((8,2),(4,4)):((8,64),(1,4)) elements,
  // SBO = 64 elements.
  uint64_t desc = (uint64_t{256 >> 4} << 32) | (uint64_t{1} << 16) | (uint64_t{3} << 62);
  std::vector<uint32_t> got = Addresses(desc, 0, 4);
  for (int mn = 0; mn < 16; ++mn) {
    for (int k = 0; k < 16; ++k) {
      const uint32_t elems = (mn % 8) * 8 + (mn / 8) * 64 + (k % 4) + (k / 4) * 4;
      ASSERT_EQ(got[mn * 16 + k], Swizzle(elems * 4, 1)) << mn << " " << k;
    }
  }
  // MN-major, 64-byte swizzle, bf16 (T = 8): ((8,4,2),(8,2)):((1,8,256),(32,512)),
  // LBO 256 and SBO 512 elements.
  desc = (uint64_t{512 >> 4} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{2} << 62);
  got = Addresses(desc, 1, 2);
  for (int mn = 0; mn < 64; ++mn) {
    for (int k = 0; k < 16; ++k) {
      const uint32_t elems =
          (mn % 8) + ((mn / 8) % 4) * 8 + (mn / 32) * 256 + (k % 8) * 32 + (k / 8) * 512;
      ASSERT_EQ(got[mn * 16 + k], Swizzle(elems * 2, 2)) << mn << " " << k;
    }
  }
  // K-major, 128-byte swizzle, f16, start 0x2400: row r of 128 bytes, 16-byte
  // chunk c moved to c ^ (r % 8), 8-row groups 1024 bytes apart.
  desc = (0x2400 >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
  got = Addresses(desc, 0, 2);
  for (int mn = 0; mn < 64; ++mn) {
    for (int k = 0; k < 16; ++k) {
      const uint32_t want =
          0x2400 + (mn / 8) * 1024 + (mn % 8) * 128 + (((k * 2 / 16) ^ (mn % 8)) * 16) + k * 2 % 16;
      ASSERT_EQ(got[mn * 16 + k], want) << mn << " " << k;
    }
  }
}

template <typename AT, typename BT>
void CheckGemm(const char* kernel, int m, int n, int k, int warpgroups, bool ta, bool tb,
               uint32_t seed) {
  SCOPED_TRACE(testing::Message() << kernel << " seed " << seed);
  std::mt19937 rng(seed);
  // Small integers: exact in every operand type (float8 included), products
  // and sums exact in float, so the result does not depend on the order.
  std::uniform_int_distribution<int> v(-4, 4);
  std::vector<AT> a(m * k);
  std::vector<BT> b(k * n);
  std::vector<float> af(m * k), bf(k * n);
  for (int i = 0; i < m * k; ++i) af[i] = static_cast<float>(v(rng));
  for (int i = 0; i < k * n; ++i) bf[i] = static_cast<float>(v(rng));
  af[0] = 3.0f;  // never all zero
  for (int i = 0; i < m * k; ++i) a[i] = AT(af[i]);
  for (int i = 0; i < k * n; ++i) b[i] = BT(bf[i]);
  // Logical A(i, kk) and B(kk, j) from the stored arrays.
  auto A = [&](int i, int kk) { return ta ? af[kk * m + i] : af[i * k + kk]; };
  auto B = [&](int kk, int j) { return tb ? bf[j * k + kk] : bf[kk * n + j]; };
  std::vector<float> want(m * n, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int kk = 0; kk < k; ++kk) want[i * n + j] += A(i, kk) * B(kk, j);
  const int smem = (m * k * static_cast<int>(sizeof(AT)) + 1023) / 1024 * 1024 +
                   k * n * static_cast<int>(sizeof(BT));
  for (int plain : {0, 1}) {
    std::vector<float> c(m * n, -7.0f);
    AT* pa = a.data();
    BT* pb = b.data();
    float* pc = c.data();
    absl::Status s =
        Launch(*Module(), kernel, {1, 1, 1}, {static_cast<uint32_t>(128 * warpgroups), 1, 1}, smem,
               {Arg(pa), Arg(pb), Arg(pc), Arg(plain)});
    ASSERT_TRUE(s.ok()) << s;
    int mismatches = 0;
    for (int i = 0; i < m * n; ++i) mismatches += c[i] != want[i];
    if (plain) {
      EXPECT_GT(mismatches, m * n / 4)
          << "A stored row-major under a swizzled descriptor must give wrong numbers";
    } else {
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(WgmmaTest, GemmMatchesTheProductForEveryOperandForm) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  CheckGemm<tl::half_t, tl::half_t>("f16_nn_128x128x64", 128, 128, 64, 1, false, false, seed);
  CheckGemm<tl::bfloat16_t, tl::bfloat16_t>("bf16_tn_64x64x32", 64, 64, 32, 1, true, false,
                                            seed + 1);
  CheckGemm<tl::half_t, tl::half_t>("f16_nt_128x64x16", 128, 64, 16, 2, false, true, seed + 2);
  CheckGemm<tl::half_t, tl::half_t>("f16_nn_64x256x32", 64, 256, 32, 2, false, false, seed + 3);
  CheckGemm<tl::bfloat16_t, tl::bfloat16_t>("bf16_tt_128x64x32", 128, 64, 32, 1, true, true,
                                            seed + 4);
  CheckGemm<tl::fp8_e4m3_t, tl::fp8_e4m3_t>("e4m3_nt_64x64x64", 64, 64, 64, 1, false, true,
                                            seed + 5);
  CheckGemm<tl::fp8_e5m2_t, tl::fp8_e4m3_t>("e5m2_e4m3_nt_64x128x128", 64, 128, 128, 1, false, true,
                                            seed + 6);
}

TEST(WgmmaTest, TheAccumulatorChangesOnlyWhenItsGroupIsWaitedFor) {
  ASSERT_MODULE();
  std::mt19937 rng{std::random_device{}()};
  std::uniform_int_distribution<int> v(1, 3);
  std::vector<tl::half_t> a(64 * 16), b(8 * 16);
  std::vector<float> af(64 * 16), bf(8 * 16);
  for (size_t i = 0; i < af.size(); ++i) a[i] = tl::half_t(af[i] = static_cast<float>(v(rng)));
  for (size_t i = 0; i < bf.size(); ++i) b[i] = tl::half_t(bf[i] = static_cast<float>(v(rng)));
  for (int overwrite : {0, 1}) {
    SCOPED_TRACE(overwrite ? "A overwritten before the wait" : "A kept");
    std::vector<float> early(128 * 4, -1.0f), late(128 * 4, -1.0f);
    tl::half_t* pa = a.data();
    tl::half_t* pb = b.data();
    float* pe = early.data();
    float* pl = late.data();
    absl::Status s = Launch(*Module(), "early_read", {1, 1, 1}, {128, 1, 1}, 4096,
                            {Arg(pa), Arg(pb), Arg(pe), Arg(pl), Arg(overwrite)});
    ASSERT_TRUE(s.ok()) << s;
    for (int t = 0; t < 128; ++t) {
      const int w = t / 32, lane = t % 32;
      for (int i = 0; i < 4; ++i) {
        const int row = 16 * w + lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
        float want = 1.0f;  // B stored [N, K]: K-major
        for (int kk = 0; kk < 16; ++kk) want += af[row * 16 + kk] * bf[col * 16 + kk];
        ASSERT_EQ(early[t * 4 + i], 1.0f) << "thread " << t << ": read before the wait";
        // The operands are read as late as the hardware may: the race gives
        // the product of the zeroed A.
        ASSERT_EQ(late[t * 4 + i], overwrite ? 1.0f : want) << "thread " << t << " register " << i;
      }
    }
  }
}

TEST(WgmmaTest, RegisterAFollowsTheIsaFragment) {
  ASSERT_MODULE();
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(-4, 4);
  std::vector<tl::half_t> a(64 * 16), b(8 * 16);
  std::vector<float> af(64 * 16), bf(8 * 16);
  for (size_t i = 0; i < af.size(); ++i) a[i] = tl::half_t(af[i] = static_cast<float>(v(rng)));
  for (size_t i = 0; i < bf.size(); ++i) b[i] = tl::half_t(bf[i] = static_cast<float>(v(rng)));
  a[1] = tl::half_t(af[1] = 3.0f);
  std::vector<float> want(64 * 8, 0.0f);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 16; ++k) want[i * 8 + j] += af[i * 16 + k] * bf[j * 16 + k];
  for (int broken : {0, 1}) {
    std::vector<float> d(64 * 8, -9.0f);
    tl::half_t* pa = a.data();
    tl::half_t* pb = b.data();
    float* pd = d.data();
    absl::Status s = Launch(*Module(), "rs_probe", {1, 1, 1}, {128, 1, 1}, 1024,
                            {Arg(pa), Arg(pb), Arg(pd), Arg(broken)});
    ASSERT_TRUE(s.ok()) << s;
    int mismatches = 0;
    for (int i = 0; i < 64 * 8; ++i) mismatches += d[i] != want[i];
    if (broken) {
      EXPECT_GT(mismatches, 64 * 8 / 2) << "swapped A registers must give wrong numbers";
    } else {
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(WgmmaTest, OperandsWrittenWithoutAProxyFenceAreReported) {
  ASSERT_MODULE();
  std::vector<tl::half_t> b(8 * 16, tl::half_t(1.0f));
  std::vector<float> d(128 * 4, -1.0f);
  for (int fence : {1, 0}) {
    SCOPED_TRACE(fence ? "fenced" : "no fence");
    tl::half_t* pb = b.data();
    float* pd = d.data();
    LaunchOptions options;
    options.check_uninit = true;
    absl::Status s = Launch(*Module(), "operand_fence", {1, 1, 1}, {128, 1, 1}, 1024,
                            {Arg(pb), Arg(pd), Arg(fence)}, options);
    if (fence) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
      EXPECT_TRUE(Contains(s, "with no fence.proxy.async since")) << s;
    }
  }
}

}  // namespace
}  // namespace tilec::host
