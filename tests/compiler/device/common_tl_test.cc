// The target-neutral device templates (compiler/device/common/tl) run on the
// host against a small model of the warp primitives they call: one
// std::thread per GPU thread, warp collectives (ldmatrix, mma.sync,
// shfl.sync) exchanging their operands through a per-warp barrier. The model
// follows the fragment layouts of docs/cuda_backend.md ("Primitives"); the
// expected results come from naive loops over the logical matrices. Operand
// values are small multiples of 1/2, so every product and sum is exact in
// float and results compare exactly.
#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"

#define __device__
#define __forceinline__ inline

struct ThreadIndex {
  unsigned x = 0;
};
thread_local ThreadIndex threadIdx;

namespace tl {

// Storage types holding exactly representable values (the test only uses
// numbers with few significant bits, so no rounding is needed).
struct half_t {
  uint16_t storage;
  half_t() = default;
  explicit half_t(float f) {
    if (f == 0) {
      storage = std::signbit(f) ? 0x8000 : 0;
      return;
    }
    int e = 0;
    const float m = std::frexp(std::fabs(f), &e);  // |f| = m * 2^e, m in [0.5, 1)
    const float man = (m * 2 - 1) * 1024;
    if (man != std::floor(man) || e - 1 < -14 || e - 1 > 15) std::abort();
    storage =
        static_cast<uint16_t>((f < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | static_cast<int>(man));
  }
  operator float() const {
    const int exp = (storage >> 10) & 31;
    const int man = storage & 1023;
    const float mag = exp == 0 ? std::ldexp(static_cast<float>(man), -24)
                               : std::ldexp(static_cast<float>(1024 + man), exp - 25);
    return storage & 0x8000 ? -mag : mag;
  }
};

struct bfloat16_t {
  uint16_t storage;
  bfloat16_t() = default;
  explicit bfloat16_t(float f) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 0xffff) != 0) std::abort();
    storage = static_cast<uint16_t>(bits >> 16);
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(storage) << 16); }
};

namespace model {

struct Warp {
  std::barrier<> barrier{32};
  const void* addr[32];
  uint32_t a[32][4];
  uint32_t b[32][2];
  uint32_t value[32];
};

thread_local Warp* warp = nullptr;
thread_local int lane = 0;

uint32_t Load16(const void* row, int col) {
  uint16_t v;
  std::memcpy(&v, static_cast<const char*>(row) + 2 * col, 2);
  return v;
}

template <int N>
void Ldmatrix(uint32_t (&r)[N], const void* p, bool trans) {
  warp->addr[lane] = p;
  warp->barrier.arrive_and_wait();
  const int g = lane / 4;
  const int q = lane % 4;
  for (int j = 0; j < N; ++j) {
    if (!trans) {
      const void* row = warp->addr[j * 8 + g];
      r[j] = Load16(row, 2 * q) | Load16(row, 2 * q + 1) << 16;
    } else {
      r[j] = Load16(warp->addr[j * 8 + 2 * q], g) | Load16(warp->addr[j * 8 + 2 * q + 1], g) << 16;
    }
  }
  warp->barrier.arrive_and_wait();
}

template <typename T>
void Mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4]) {
  for (int i = 0; i < 4; ++i) warp->a[lane][i] = a[i];
  for (int i = 0; i < 2; ++i) warp->b[lane][i] = b[i];
  warp->barrier.arrive_and_wait();
  auto half = [](uint32_t reg, int hi) {
    T t;
    t.storage = static_cast<uint16_t>(hi ? reg >> 16 : reg & 0xffff);
    return static_cast<float>(t);
  };
  float A[16][16];
  float B[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4;
    const int q = l % 4;
    for (int e = 0; e < 2; ++e) {
      A[g][2 * q + e] = half(warp->a[l][0], e);
      A[g + 8][2 * q + e] = half(warp->a[l][1], e);
      A[g][2 * q + 8 + e] = half(warp->a[l][2], e);
      A[g + 8][2 * q + 8 + e] = half(warp->a[l][3], e);
      B[2 * q + e][g] = half(warp->b[l][0], e);
      B[2 * q + 8 + e][g] = half(warp->b[l][1], e);
    }
  }
  warp->barrier.arrive_and_wait();
  const int g = lane / 4;
  const int q = lane % 4;
  float out[4];
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i / 2) * 8;
    const int col = 2 * q + i % 2;
    float sum = c[i];
    for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
    out[i] = sum;
  }
  for (int i = 0; i < 4; ++i) d[i] = out[i];
}

uint32_t ShflXor(uint32_t v, int mask) {
  warp->value[lane] = v;
  warp->barrier.arrive_and_wait();
  const uint32_t r = warp->value[lane ^ mask];
  warp->barrier.arrive_and_wait();
  return r;
}

// Runs body on `threads` threads (a multiple of 32) as one block.
void RunBlock(int threads, const std::function<void()>& body) {
  std::vector<Warp> warps(threads / 32);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      threadIdx.x = t;
      warp = &warps[t / 32];
      lane = t % 32;
      body();
    });
  }
  for (auto& th : pool) th.join();
}

}  // namespace model

template <int N>
void ldmatrix_x2(uint32_t (&r)[N], const void* p) {
  static_assert(N == 2);
  model::Ldmatrix(r, p, false);
}
template <int N>
void ldmatrix_x4(uint32_t (&r)[N], const void* p) {
  static_assert(N == 4);
  model::Ldmatrix(r, p, false);
}
template <int N>
void ldmatrix_x2_trans(uint32_t (&r)[N], const void* p) {
  static_assert(N == 2);
  model::Ldmatrix(r, p, true);
}
template <int N>
void ldmatrix_x4_trans(uint32_t (&r)[N], const void* p) {
  static_assert(N == 4);
  model::Ldmatrix(r, p, true);
}
inline void mma_m16n8k16_f16f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                const float (&c)[4]) {
  model::Mma<half_t>(d, a, b, c);
}
inline void mma_m16n8k16_bf16f32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                 const float (&c)[4]) {
  model::Mma<bfloat16_t>(d, a, b, c);
}
inline int shfl_xor(int v, int mask) {
  return static_cast<int>(model::ShflXor(static_cast<uint32_t>(v), mask));
}
inline float shfl_xor(float v, int mask) {
  return std::bit_cast<float>(model::ShflXor(std::bit_cast<uint32_t>(v), mask));
}
inline constexpr int warp_lanes = 32;
inline float fmax(float a, float b) { return std::fmax(a, b); }
inline double fmax(double a, double b) { return std::fmax(a, b); }
inline float fmin(float a, float b) { return std::fmin(a, b); }
inline double fmin(double a, double b) { return std::fmin(a, b); }

}  // namespace tl

#include "tl/gemm.h"
#include "tl/layout.h"
#include "tl/reduce.h"

namespace tilec::device {
namespace {

uint32_t TestSeed() {
  const uint32_t seed = std::random_device{}();
  std::printf("common_tl_test seed: %u\n", seed);
  return seed;
}

// ---------------------------------------------------------------- layouts

TEST(LayoutTest, RowMajor) {
  using L = tl::RowMajor<4, 24>;
  EXPECT_EQ(L::offset(0, 0), 0);
  EXPECT_EQ(L::offset(3, 5), 77);
  EXPECT_EQ(L::kRows, 4);
  EXPECT_EQ(L::kCols, 24);
}

TEST(LayoutTest, SwizzledValuesFromTheSpecification) {
  // 128-byte rows: chunk k of row r moves to k ^ (r & 7).
  static_assert(tl::Swizzled<8, 64, 2>::offset(1, 0) == 72);
  EXPECT_EQ((tl::Swizzled<8, 64, 2>::offset(3, 17)), 3 * 64 + 1 * 8 + 1);
  // 256-byte rows: 128-byte column blocks, each an [8, 64] block of its own
  // with the 128-byte rule (block 1 starts after the 8 rows of block 0).
  EXPECT_EQ((tl::Swizzled<8, 128, 2>::offset(1, 8)), 64 + 0);
  EXPECT_EQ((tl::Swizzled<8, 128, 2>::offset(1, 64)), 8 * 64 + 64 + 1 * 8);
  EXPECT_EQ((tl::Swizzled<16, 128, 2>::offset(9, 70)), 16 * 64 + 9 * 64 + (0 ^ 1) * 8 + 6);
  // A higher-rank buffer's matrices of TR rows are stored one after another.
  EXPECT_EQ((tl::Swizzled<16, 128, 2, 8>::offset(9, 70)), 8 * 128 + 8 * 64 + 1 * 64 + 8 + 6);
  // 32-byte rows: k ^ ((r / 4) % 2).
  EXPECT_EQ((tl::Swizzled<8, 16, 2>::offset(4, 0)), 4 * 16 + 8);
  EXPECT_EQ((tl::Swizzled<8, 16, 2>::offset(2, 9)), 2 * 16 + 8 + 1);
  // 64-byte rows: k ^ ((r / 2) % 4).
  EXPECT_EQ((tl::Swizzled<16, 32, 2>::offset(2, 0)), 64 + 8);
  EXPECT_EQ((tl::Swizzled<16, 32, 2>::offset(7, 25)), 7 * 32 + 1);
  // float rows of 128 bytes: 4 elements per chunk.
  EXPECT_EQ((tl::Swizzled<8, 32, 4>::offset(5, 6)), 5 * 32 + (1 ^ 5) * 4 + 2);
}

template <typename L, int E>
void CheckSwizzle() {
  SCOPED_TRACE(testing::Message() << "C=" << L::kCols << " E=" << E);
  constexpr int C = L::kCols;
  constexpr int chunk = 16 / E;
  // A permutation of the matrix that keeps 16-byte chunks whole; rows of up
  // to 128 bytes stay within themselves.
  std::vector<int> seen(L::kRows * C, 0);
  for (int r = 0; r < L::kRows; ++r) {
    for (int c = 0; c < C; ++c) {
      const int off = L::offset(r, c);
      ASSERT_GE(off, 0);
      ASSERT_LT(off, L::kRows * C);
      ++seen[off];
      if (C * E <= 128) {
        ASSERT_GE(off, r * C);
        ASSERT_LT(off, (r + 1) * C);
      }
      if (c % chunk != 0) {
        EXPECT_EQ(off, L::offset(r, c - 1) + 1) << "chunk split at " << c;
      }
    }
  }
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "element " << i;
  // 8 consecutive rows (from a multiple of 8) at the same 16-byte column
  // chunk cover all 32 banks: conflict-free ldmatrix phases and stores.
  for (int r0 = 0; r0 + 8 <= L::kRows; r0 += 8) {
    for (int c = 0; c < C; c += chunk) {
      std::vector<int> banks(32, 0);
      for (int r = r0; r < r0 + 8; ++r) {
        const int byte = L::offset(r, c) * E;
        for (int w = 0; w < 4; ++w) ++banks[(byte / 4 + w) % 32];
      }
      for (int b = 0; b < 32; ++b) ASSERT_EQ(banks[b], 1) << "rows " << r0 << " chunk " << c;
    }
  }
}

TEST(LayoutTest, SwizzledIsARowPermutationWithoutBankConflicts) {
  CheckSwizzle<tl::Swizzled<32, 16, 2>, 2>();   // 32-byte rows
  CheckSwizzle<tl::Swizzled<32, 32, 2>, 2>();   // 64
  CheckSwizzle<tl::Swizzled<32, 64, 2>, 2>();   // 128
  CheckSwizzle<tl::Swizzled<32, 128, 2>, 2>();  // 256
  CheckSwizzle<tl::Swizzled<16, 192, 2>, 2>();  // 384
  CheckSwizzle<tl::Swizzled<16, 64, 1>, 1>();   // fp8, 64-byte rows
  CheckSwizzle<tl::Swizzled<16, 128, 1>, 1>();  // fp8, 128
  CheckSwizzle<tl::Swizzled<16, 8, 4>, 4>();    // float, 32
  CheckSwizzle<tl::Swizzled<16, 64, 4>, 4>();   // float, 256
  CheckSwizzle<tl::Swizzled<16, 4, 8>, 8>();    // double, 32
}

// ------------------------------------------------------------------- gemm

struct GemmData {
  int M, N, K;
  std::vector<float> a;  // logical A [M, K]
  std::vector<float> b;  // logical B [K, N]
  std::vector<float> c;  // C before the gemm [M, N]

  GemmData(int m, int n, int k, std::mt19937& rng) : M(m), N(n), K(k) {
    std::uniform_int_distribution<int> small(-8, 8);
    auto fill = [&](std::vector<float>& v, int size, float scale) {
      v.resize(size);
      for (float& x : v) x = small(rng) * scale;
    };
    fill(a, M * K, 0.5f);
    fill(b, K * N, 0.5f);
    fill(c, M * N, 1.0f);
  }

  std::vector<float> Expected() const {
    std::vector<float> out = c;
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double sum = c[i * N + j];
        for (int k = 0; k < K; ++k) sum += double(a[i * K + k]) * b[k * N + j];
        out[i * N + j] = static_cast<float>(sum);
      }
    }
    return out;
  }
};

// Stores logical [rows, cols] matrix `m` (transposed when `trans`) into a
// shared buffer through layout L.
template <typename L, typename AT>
std::vector<AT> ToShared(const std::vector<float>& m, int rows, int cols, bool trans) {
  std::vector<AT> smem(L::kRows * L::kCols, AT(0.0f));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const float v = m[r * cols + c];
      smem[trans ? L::offset(c, r) : L::offset(r, c)] = AT(v);
    }
  }
  return smem;
}

// (row, col) of accumulator-layout element `l` of thread tx (docs: "Accumulator layout").
void AccElement(int M, int N, int warps_m, int warps_n, int tx, int l, int* row, int* col) {
  const int WM = M / warps_m;
  const int WN = N / warps_n;
  const int NI = WN / 8;
  const int warp = tx / 32;
  const int lane = tx % 32;
  const int e = l % 2;
  const int h = (l / 2) % 2;
  const int ni = (l / 4) % NI;
  const int mi = l / 4 / NI;
  *row = (warp % warps_m) * WM + mi * 16 + h * 8 + lane / 4;
  *col = (warp / warps_m) * WN + ni * 8 + 2 * (lane % 4) + e;
}

// RegistersA: gemm_rs (A from registers) instead of gemm_ss.
template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LA,
          typename LB, typename AT, bool RegistersA = false>
void CheckGemm(uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "M=" << M << " N=" << N << " K=" << K << " warps " << WarpsM
                                  << "x" << WarpsN << " transA=" << TransA << " transB=" << TransB
                                  << (RegistersA ? " gemm_rs" : " gemm_ss") << " seed=" << seed);
  std::mt19937 rng(seed);
  const GemmData data(M, N, K, rng);
  const std::vector<AT> a_smem = ToShared<LA, AT>(data.a, M, K, TransA);
  const std::vector<AT> b_smem = ToShared<LB, AT>(data.b, K, N, TransB);
  constexpr int kThreads = 32 * WarpsM * WarpsN;
  constexpr int kLocal = M * N / kThreads;
  constexpr int kLocalA = M * K / (32 * WarpsM);
  std::vector<float> out(M * N, std::numeric_limits<float>::quiet_NaN());
  std::vector<int> written(M * N, 0);
  std::mutex mu;
  tl::model::RunBlock(kThreads, [&] {
    const int tx = static_cast<int>(threadIdx.x);
    float acc[kLocal];
    int row = 0;
    int col = 0;
    for (int l = 0; l < kLocal; ++l) {
      AccElement(M, N, WarpsM, WarpsN, tx, l, &row, &col);
      acc[l] = data.c[row * N + col];
    }
    if constexpr (RegistersA) {
      // Register A: accumulator layout of an [M, K] tile with WarpsN = 1.
      AT a_frag[kLocalA];
      const int wm = (tx / 32) % WarpsM;
      const int t = wm * 32 + tx % 32;
      for (int l = 0; l < kLocalA; ++l) {
        AccElement(M, K, WarpsM, 1, t, l, &row, &col);
        a_frag[l] = AT(data.a[row * K + col]);
      }
      tl::gemm_rs<M, N, K, WarpsM, WarpsN, TransA, TransB, LA, LB>(a_frag, b_smem.data(), acc);
    } else {
      tl::gemm_ss<M, N, K, WarpsM, WarpsN, TransA, TransB, LA, LB>(a_smem.data(), b_smem.data(),
                                                                   acc);
    }
    std::lock_guard<std::mutex> lock(mu);
    for (int l = 0; l < kLocal; ++l) {
      AccElement(M, N, WarpsM, WarpsN, tx, l, &row, &col);
      out[row * N + col] = acc[l];
      ++written[row * N + col];
    }
  });
  const std::vector<float> expected = data.Expected();
  int bad = 0;
  for (int i = 0; i < M * N; ++i) {
    ASSERT_EQ(written[i], 1) << "element " << i / N << "," << i % N;
    if (out[i] != expected[i] && ++bad <= 5) {
      ADD_FAILURE() << "C[" << i / N << "][" << i % N << "] = " << out[i] << ", expected "
                    << expected[i];
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(GemmTest, SharedOperandsFp16SwizzledAllTransposes) {
  const uint32_t seed = TestSeed();
  // 128x128x32 on 2x2 warps, the layouts layout inference picks.
  CheckGemm<128, 128, 32, 2, 2, false, false, tl::Swizzled<128, 32, 2>, tl::Swizzled<32, 128, 2>,
            tl::half_t>(seed);
  CheckGemm<128, 128, 32, 2, 2, true, true, tl::Swizzled<32, 128, 2>, tl::Swizzled<128, 32, 2>,
            tl::half_t>(seed + 1);
  CheckGemm<64, 64, 32, 2, 2, false, true, tl::Swizzled<64, 32, 2>, tl::Swizzled<64, 32, 2>,
            tl::half_t>(seed + 2);
  CheckGemm<64, 64, 64, 2, 2, true, false, tl::Swizzled<64, 64, 2>, tl::Swizzled<64, 64, 2>,
            tl::half_t>(seed + 3);
}

TEST(GemmTest, SharedOperandsBf16RowMajorAndPartitions) {
  const uint32_t seed = TestSeed();
  // FullRow (4x1) and FullCol (1x4) partitions, row-major shared buffers.
  CheckGemm<64, 32, 32, 4, 1, false, true, tl::RowMajor<64, 32>, tl::RowMajor<32, 32>,
            tl::bfloat16_t>(seed);
  CheckGemm<16, 64, 16, 1, 4, true, false, tl::RowMajor<16, 16>, tl::RowMajor<16, 64>,
            tl::bfloat16_t>(seed + 1);
  // Layouts with more rows than the operand (a pipeline stage of a larger buffer).
  CheckGemm<32, 32, 16, 2, 1, false, false, tl::Swizzled<64, 16, 2>, tl::Swizzled<48, 32, 2>,
            tl::bfloat16_t>(seed + 2);
}

TEST(GemmTest, OddNumberOfColumnTilesPerWarp) {
  const uint32_t seed = TestSeed();
  // WN = 24: three 8-column tiles per warp, the last one loaded with ldmatrix x2.
  CheckGemm<32, 48, 16, 2, 2, false, false, tl::RowMajor<32, 16>, tl::RowMajor<16, 48>, tl::half_t>(
      seed);
  CheckGemm<32, 48, 16, 2, 2, false, true, tl::RowMajor<32, 16>, tl::Swizzled<48, 16, 2>,
            tl::half_t>(seed + 1);
  CheckGemm<16, 8, 16, 1, 1, false, false, tl::RowMajor<16, 16>, tl::RowMajor<16, 8>, tl::half_t>(
      seed + 2);
}

TEST(GemmTest, RegisterAOperand) {
  const uint32_t seed = TestSeed();
  // 2x2 warps: the two warps of an M slice hold the same A rows.
  CheckGemm<64, 64, 32, 2, 2, false, false, tl::RowMajor<64, 32>, tl::Swizzled<32, 64, 2>,
            tl::half_t, true>(seed);
  CheckGemm<64, 64, 64, 4, 1, false, true, tl::RowMajor<64, 64>, tl::Swizzled<64, 64, 2>,
            tl::bfloat16_t, true>(seed + 1);
  CheckGemm<32, 24, 16, 2, 1, false, false, tl::RowMajor<32, 16>, tl::RowMajor<16, 24>, tl::half_t,
            true>(seed + 2);
}

// -------------------------------------------------------------- reductions

template <typename Op, int Lanes, typename T, typename Ref>
void CheckAllreduce(const std::vector<T>& in, Ref reference) {
  SCOPED_TRACE(testing::Message() << "Lanes=" << Lanes);
  constexpr int kThreads = 64;
  std::vector<T> out(kThreads);
  tl::model::RunBlock(kThreads, [&] {
    const int tx = static_cast<int>(threadIdx.x);
    out[tx] = tl::warp_allreduce<Op, Lanes>(in[tx]);
  });
  for (int t = 0; t < kThreads; ++t) {
    const int group = t / Lanes * Lanes;
    T expected = in[group];
    for (int i = group + 1; i < group + Lanes; ++i) expected = reference(expected, in[i]);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(out[t])) << "thread " << t;
        continue;
      }
    }
    EXPECT_EQ(out[t], expected) << "thread " << t;
    // Every lane of a group holds the same bits.
    EXPECT_EQ(std::memcmp(&out[t], &out[group], sizeof(T)), 0) << "thread " << t;
  }
}

template <int Lanes>
void CheckAllreduceKinds(std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-1000, 1000);
  std::vector<int> ints(64);
  for (int& v : ints) v = dist(rng);
  CheckAllreduce<tl::SumOp, Lanes>(ints, [](int a, int b) { return a + b; });
  CheckAllreduce<tl::MaxOp, Lanes>(ints, [](int a, int b) { return a > b ? a : b; });
  std::vector<float> floats(64);
  for (float& v : floats) v = dist(rng) * 0.25f;
  // NaN operands are ignored by MaxOp/MinOp (fmax/fmin rule).
  floats[3] = std::numeric_limits<float>::quiet_NaN();
  floats[40] = std::numeric_limits<float>::quiet_NaN();
  CheckAllreduce<tl::MaxOp, Lanes>(floats, [](float a, float b) { return std::fmax(a, b); });
  CheckAllreduce<tl::MinOp, Lanes>(floats, [](float a, float b) { return std::fmin(a, b); });
}

TEST(ReduceTest, WarpAllreduceOverEveryGroupSize) {
  std::mt19937 rng(TestSeed());
  CheckAllreduceKinds<1>(rng);
  CheckAllreduceKinds<2>(rng);
  CheckAllreduceKinds<4>(rng);
  CheckAllreduceKinds<8>(rng);
  CheckAllreduceKinds<16>(rng);
  CheckAllreduceKinds<32>(rng);
}

TEST(ReduceTest, FloatSumIsIdenticalOnEveryLane) {
  std::mt19937 rng(TestSeed());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> in(64);
  for (float& v : in) v = dist(rng);
  std::vector<float> out(64);
  tl::model::RunBlock(64, [&] {
    const int tx = static_cast<int>(threadIdx.x);
    out[tx] = tl::warp_allreduce<tl::SumOp, 32>(in[tx]);
  });
  for (int w = 0; w < 2; ++w) {
    double sum = 0;
    for (int i = 0; i < 32; ++i) sum += in[w * 32 + i];
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(out[w * 32 + i]), std::bit_cast<uint32_t>(out[w * 32]));
    }
    EXPECT_NEAR(out[w * 32], sum, 1e-5);
  }
}

}  // namespace
}  // namespace tilec::device
