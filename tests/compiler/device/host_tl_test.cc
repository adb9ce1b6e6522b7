// The host twins of the float8 mma (host/tl/mma.h) and of stmatrix
// (host/tl/stmatrix.h), lane by lane against the PTX ISA's fragment tables:
// probe kernels written against the device library fill every lane's
// registers from whole matrices by the documented layout, run on the
// emulator (built with the real clang-19 host toolchain), and are checked
// against the math; a probe with a deliberately wrong layout must give wrong
// numbers. Set TILEC_TEST_SEED to reproduce a run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
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

// m16n8k32 with 8-bit operands from row-major A[16][32], B[32][8] (k, n) and
// C[16][8]. broken = 1 swaps a[1] and a[2] (rows g + 8 and columns 16..
// confused); broken = 2 packs B's four k values in reverse byte order.
template <typename AT, typename BT>
__device__ __forceinline__ void mma_probe(const uint8_t* A, const uint8_t* B, const float* C,
                                          float* D, int broken) {
  const int lane = threadIdx.x % 32, g = lane >> 2, q = lane & 3;
  uint32_t a[4], b[2];
  float c[4], d[4];
  for (int j = 0; j < 4; ++j) {
    const int row = g + (j & 1) * 8, k0 = (j >> 1) * 16 + 4 * q;
    a[j] = 0;
    for (int i = 0; i < 4; ++i) a[j] |= static_cast<uint32_t>(A[row * 32 + k0 + i]) << (8 * i);
  }
  if (broken == 1) {
    const uint32_t t = a[1];
    a[1] = a[2];
    a[2] = t;
  }
  for (int r = 0; r < 2; ++r) {
    b[r] = 0;
    for (int i = 0; i < 4; ++i) {
      const int k = r * 16 + 4 * q + i;
      b[r] |= static_cast<uint32_t>(B[k * 8 + g]) << (8 * (broken == 2 ? 3 - i : i));
    }
  }
  for (int i = 0; i < 4; ++i) c[i] = C[(g + (i / 2) * 8) * 8 + 2 * q + i % 2];
  if constexpr (__is_same(AT, tl::fp8_e4m3_t) && __is_same(BT, tl::fp8_e4m3_t)) {
    tl::mma_m16n8k32_e4m3e4m3f32(d, a, b, c);
  } else if constexpr (__is_same(AT, tl::fp8_e4m3_t)) {
    tl::mma_m16n8k32_e4m3e5m2f32(d, a, b, c);
  } else if constexpr (__is_same(BT, tl::fp8_e4m3_t)) {
    tl::mma_m16n8k32_e5m2e4m3f32(d, a, b, c);
  } else {
    tl::mma_m16n8k32_e5m2e5m2f32(d, a, b, c);
  }
  for (int i = 0; i < 4; ++i) D[(g + (i / 2) * 8) * 8 + 2 * q + i % 2] = d[i];
}

// kind: bit 0 = A is e5m2, bit 1 = B is e5m2.
extern "C" __global__ void __launch_bounds__(32) mma_fp8(
    const uint8_t* __restrict__ A, const uint8_t* __restrict__ B, const float* __restrict__ C,
    float* __restrict__ D, int kind, int broken) {
  switch (kind) {
    case 0: mma_probe<tl::fp8_e4m3_t, tl::fp8_e4m3_t>(A, B, C, D, broken); break;
    case 1: mma_probe<tl::fp8_e5m2_t, tl::fp8_e4m3_t>(A, B, C, D, broken); break;
    case 2: mma_probe<tl::fp8_e4m3_t, tl::fp8_e5m2_t>(A, B, C, D, broken); break;
    default: mma_probe<tl::fp8_e5m2_t, tl::fp8_e5m2_t>(A, B, C, D, broken); break;
  }
}

// stmatrix of `num` (2 or 4) 8x8 matrices, src holding matrix m row-major at
// element m * 64: every lane fills its registers by the PTX table (register
// j: row lane / 4, cols 2 (lane % 4), +1 of matrix j, lower column low),
// lane i names row i % 8 of matrix i / 8 in a checked shared buffer of
// `elements` elements, and the block copies the buffer out to dst.
// broken = 1 packs the two columns in the wrong halves; broken = 2 names row
// (i + 1) % 8 instead of i % 8.
extern "C" __global__ void __launch_bounds__(32) stmatrix_probe(
    const uint16_t* __restrict__ src, uint16_t* __restrict__ dst, int num, int broken,
    int elements) {
  auto s = tl::smem_buffer<uint16_t>(tl::dynamic_smem(), 0, elements, "s");
  const int lane = threadIdx.x % 32, r = lane / 4, c = 2 * (lane % 4);
  uint32_t x[4];
  for (int j = 0; j < 4; ++j) {
    const uint32_t lo = src[j * 64 + r * 8 + c], hi = src[j * 64 + r * 8 + c + 1];
    x[j] = broken == 1 ? (hi | (lo << 16)) : (lo | (hi << 16));
  }
  const int row = broken == 2 ? (lane + 1) % 8 : lane % 8;
  const int m = num == 4 ? lane / 8 : (lane / 8) % 2;
  if (num == 4) {
    tl::stmatrix_x4(x, s + m * 64 + row * 8);
  } else {
    uint32_t y[2] = {x[0], x[1]};
    tl::stmatrix_x2(y, s + m * 64 + row * 8);
  }
  tl::syncthreads();
  for (int i = lane; i < num * 64; i += 32) dst[i] = s[i];
}
)cu";

const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels); }

uint64_t Seed() {
  const char* env = std::getenv("TILEC_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20261121;
}

template <typename T>
void* Arg(T& value) {
  return &value;
}

// Random float8 encodings of small values (integers -6..6 and +-0.5, +-1.5:
// exact in both formats, with products and sums exact in float whatever the
// summation order), as the bytes and their values.
template <typename T>
void RandomFp8(std::mt19937_64& rng, int n, std::vector<uint8_t>& bytes, std::vector<float>& vals) {
  static const float kValues[] = {-6, -5,   -4, -3, -2, -1.5f, -1, -0.5f, 0.5f,
                                  1,  1.5f, 2,  3,  4,  5,     6,  0};
  std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(kValues)) - 1);
  bytes.resize(n);
  vals.resize(n);
  for (int i = 0; i < n; ++i) {
    const T t(kValues[pick(rng)]);
    bytes[i] = t.bits();
    vals[i] = float(t);
  }
}

template <typename AT, typename BT>
void CheckFp8Mma(int kind) {
  const uint64_t seed = Seed() + kind;
  std::printf("mma_fp8 kind %d, seed %llu (TILEC_TEST_SEED)\n", kind,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> a, b;
  std::vector<float> av, bv;
  RandomFp8<AT>(rng, 16 * 32, a, av);
  RandomFp8<BT>(rng, 32 * 8, b, bv);
  std::vector<float> c(16 * 8), d(16 * 8);
  for (int i = 0; i < 128; ++i) c[i] = static_cast<float>(i % 13) - 6.25f;
  std::vector<float> want(128);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 8; ++j) {
      double sum = c[i * 8 + j];
      for (int k = 0; k < 32; ++k) sum += double(av[i * 32 + k]) * bv[k * 8 + j];
      want[i * 8 + j] = static_cast<float>(sum);
    }
  }
  for (int broken : {0, 1, 2}) {
    SCOPED_TRACE(::testing::Message() << "broken " << broken);
    uint8_t* pa = a.data();
    uint8_t* pb = b.data();
    float* pc = c.data();
    float* pd = d.data();
    std::fill(d.begin(), d.end(), -1000.0f);
    absl::Status s = Launch(*Module(), "mma_fp8", {1, 1, 1}, {32, 1, 1}, 0,
                            {Arg(pa), Arg(pb), Arg(pc), Arg(pd), Arg(kind), Arg(broken)});
    ASSERT_TRUE(s.ok()) << s;
    int mismatches = 0;
    for (int i = 0; i < 128; ++i) mismatches += d[i] != want[i];
    if (broken) {
      EXPECT_GT(mismatches, 32) << "a fragment in the wrong layout must give wrong numbers";
    } else {
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(HostMmaFp8, E4m3E4m3FragmentsFollowThePtxLayout) {
  ASSERT_MODULE();
  CheckFp8Mma<tl::fp8_e4m3_t, tl::fp8_e4m3_t>(0);
}

TEST(HostMmaFp8, E5m2E4m3FragmentsFollowThePtxLayout) {
  ASSERT_MODULE();
  CheckFp8Mma<tl::fp8_e5m2_t, tl::fp8_e4m3_t>(1);
}

TEST(HostMmaFp8, E4m3E5m2FragmentsFollowThePtxLayout) {
  ASSERT_MODULE();
  CheckFp8Mma<tl::fp8_e4m3_t, tl::fp8_e5m2_t>(2);
}

TEST(HostMmaFp8, E5m2E5m2FragmentsFollowThePtxLayout) {
  ASSERT_MODULE();
  CheckFp8Mma<tl::fp8_e5m2_t, tl::fp8_e5m2_t>(3);
}

void CheckStmatrix(int num) {
  const uint64_t seed = Seed() + 10 + num;
  std::printf("stmatrix_x%d, seed %llu (TILEC_TEST_SEED)\n", num,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint16_t> src(4 * 64);
  // Distinct values, so that any element landing elsewhere is seen.
  for (int i = 0; i < 4 * 64; ++i) src[i] = static_cast<uint16_t>(i);
  std::shuffle(src.begin(), src.end(), rng);
  std::vector<uint16_t> dst(4 * 64);
  for (int broken : {0, 1, 2}) {
    SCOPED_TRACE(::testing::Message() << "broken " << broken);
    std::fill(dst.begin(), dst.end(), uint16_t{0xFFFF});
    uint16_t* ps = src.data();
    uint16_t* pd = dst.data();
    int elements = num * 64;
    absl::Status st = Launch(*Module(), "stmatrix_probe", {1, 1, 1}, {32, 1, 1}, 512,
                             {Arg(ps), Arg(pd), Arg(num), Arg(broken), Arg(elements)});
    ASSERT_TRUE(st.ok()) << st;
    int mismatches = 0;
    for (int i = 0; i < num * 64; ++i) mismatches += dst[i] != src[i];
    if (broken) {
      EXPECT_GE(mismatches, 56 * num) << "a register in the wrong layout must land elsewhere";
    } else {
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(HostStmatrix, X4RegistersLandAsThePtxTableSays) {
  ASSERT_MODULE();
  CheckStmatrix(4);
}

TEST(HostStmatrix, X2RegistersLandAsThePtxTableSays) {
  ASSERT_MODULE();
  CheckStmatrix(2);
}

// The rows are stores through the checked buffer: a row past its end is an
// out-of-bounds store naming the buffer.
TEST(HostStmatrix, ARowOutsideItsBufferIsAnOutOfBoundsStore) {
  ASSERT_MODULE();
  std::vector<uint16_t> src(4 * 64, 1), dst(4 * 64);
  uint16_t* ps = src.data();
  uint16_t* pd = dst.data();
  int num = 4, broken = 0, elements = 4 * 64 - 8;
  absl::Status st = Launch(*Module(), "stmatrix_probe", {1, 1, 1}, {32, 1, 1}, 512,
                           {Arg(ps), Arg(pd), Arg(num), Arg(broken), Arg(elements)});
  EXPECT_EQ(st.code(), absl::StatusCode::kAborted) << st;
  EXPECT_NE(st.message().find("out-of-bounds store of 16 bytes"), std::string::npos) << st;
  EXPECT_NE(st.message().find("shared buffer 's'"), std::string::npos) << st;
}

}  // namespace
}  // namespace tilec::host
