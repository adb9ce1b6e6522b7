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
)cu";

const absl::StatusOr<HostModule>& Module() {
  static const auto* module = new absl::StatusOr<HostModule>(CompileHost(kKernels, HostOptions()));
  return *module;
}

#define ASSERT_MODULE() ASSERT_TRUE(Module().ok()) << Module().status()

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

}  // namespace
}  // namespace tilec::host
