// The emulator's MFMA (host/tl/mfma.h and the wave collective in
// emulator/warp_ops.cc) against AMD's lane tables, independently of the
// emitter: a hand-written kernel loads the operands and stores D exactly as
// the tables say (docs/amdgpu.md "MFMA"), one wave computes C + A @ B, and
// the result must match a reference product exactly (small values: every
// product and sum is exact in float). The same kernel with an operand or D
// in a wrong layout must give wrong numbers, so a twin that ignored the
// layout would fail here. Set TILEC_TEST_SEED to reproduce a run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/toolchain.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/host/kernel_testing.h"

namespace tilec::host {
namespace {

constexpr char kKernels[] = R"cu(// MFMA twin probe
#define TL_AMDGPU 1
#include "tl/tl.h"

// One wave: D = C + A @ B for a T x T tile with V values per lane (V = 4
// for 16-bit types: k = 8 (T = 32) or 16; V = 8 for float8: k = 16 or 32).
// A is [T, KS] row-major, B [KS, T], C and D [T, T], all float (values exact
// in the operand types). broken = 1 loads A's k interleaved across the lane
// groups instead of in blocks of V; broken = 2 stores D transposed.
template <typename AT, typename BT, int T, int V>
__device__ void probe(const float* A, const float* B, const float* C, float* D, int broken) {
  constexpr int KS = V * 64 / T, R = T * T / 64;
  const int lane = static_cast<int>(threadIdx.x);
  float d[R];
  for (int r = 0; r < R; ++r) {
    const int row = T == 32 ? 8 * (r / 4) + 4 * (lane / 32) + r % 4 : 4 * (lane / 16) + r;
    d[r] = C[row * T + lane % T];
  }
  AT a[V];
  BT b[V];
  for (int j = 0; j < V; ++j) {
    const int k = V * (lane / T) + j;
    const int ka = broken == 1 ? j * (64 / T) + lane / T : k;
    a[j] = AT(A[(lane % T) * KS + ka]);
    b[j] = BT(B[k * T + lane % T]);
  }
  if constexpr (V == 4 && T == 32) {
    tl::mfma_32x32x8(d, a, b);
  } else if constexpr (V == 4) {
    tl::mfma_16x16x16(d, a, b);
  } else if constexpr (T == 32) {
    tl::mfma_32x32x16(d, a, b);
  } else {
    tl::mfma_16x16x32(d, a, b);
  }
  for (int r = 0; r < R; ++r) {
    const int row = T == 32 ? 8 * (r / 4) + 4 * (lane / 32) + r % 4 : 4 * (lane / 16) + r;
    const int col = lane % T;
    D[broken == 2 ? col * T + row : row * T + col] = d[r];
  }
}

template <int T>
__device__ void probe_types(const float* A, const float* B, const float* C, float* D, int types,
                            int broken) {
  using e4 = tl::fp8_e4m3fnuz_t;
  using e5 = tl::fp8_e5m2fnuz_t;
  switch (types) {
    case 0: probe<tl::half_t, tl::half_t, T, 4>(A, B, C, D, broken); break;
    case 1: probe<tl::bfloat16_t, tl::bfloat16_t, T, 4>(A, B, C, D, broken); break;
    case 2: probe<e4, e4, T, 8>(A, B, C, D, broken); break;
    case 3: probe<e4, e5, T, 8>(A, B, C, D, broken); break;
    case 4: probe<e5, e4, T, 8>(A, B, C, D, broken); break;
    default: probe<e5, e5, T, 8>(A, B, C, D, broken); break;
  }
}

// types: 0 f16, 1 bf16, 2 fp8 x fp8, 3 fp8 x bf8, 4 bf8 x fp8, 5 bf8 x bf8
// (fp8 = float8_e4m3fnuz, bf8 = float8_e5m2fnuz).
extern "C" __global__ void mfma_probe(tl::gptr<float> A, tl::gptr<float> B, tl::gptr<float> C,
                                      tl::gptr<float> D, int tile, int types, int broken) {
  if (tile == 32) {
    probe_types<32>(A, B, C, D, types, broken);
  } else {
    probe_types<16>(A, B, C, D, types, broken);
  }
}
)cu";

const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels, "mfma_probe.cu"); }

uint64_t Seed() {
  const char* env = std::getenv("TILEC_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20261127;
}

template <typename T>
void* Arg(T& value) {
  return &value;
}

void Check(int tile, int types) {
  const int ks = (types >= 2 ? 8 : 4) * 64 / tile;
  const uint64_t seed = Seed() + tile + types;
  std::printf("mfma tile %d types %d, seed %llu (TILEC_TEST_SEED)\n", tile, types,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  // Halves from -4 to 4: exact in float16, bfloat16 and both fnuz float8
  // formats; products and sums exact.
  auto value = [&] { return static_cast<float>(static_cast<int>(rng() % 17) - 8) / 2.0f; };
  std::vector<float> a(tile * ks), b(ks * tile), c(tile * tile), d(tile * tile);
  for (float& x : a) x = value();
  for (float& x : b) x = value();
  for (float& x : c) x = value();
  std::vector<float> want(tile * tile);
  for (int i = 0; i < tile; ++i) {
    for (int j = 0; j < tile; ++j) {
      float sum = c[i * tile + j];
      for (int k = 0; k < ks; ++k) sum += a[i * ks + k] * b[k * tile + j];
      want[i * tile + j] = sum;
    }
  }
  LaunchOptions options;
  options.warp_size = 64;
  for (int broken : {0, 1, 2}) {
    SCOPED_TRACE(::testing::Message() << "broken " << broken);
    float* pa = a.data();
    float* pb = b.data();
    float* pc = c.data();
    float* pd = d.data();
    std::fill(d.begin(), d.end(), -1000.0f);
    absl::Status s = Launch(*Module(), "mfma_probe", {1, 1, 1}, {64, 1, 1}, 0,
                            {Arg(pa), Arg(pb), Arg(pc), Arg(pd), Arg(tile), Arg(types), Arg(broken)},
                            options);
    ASSERT_TRUE(s.ok()) << s;
    int mismatches = 0;
    for (int i = 0; i < tile * tile; ++i) mismatches += d[i] != want[i];
    if (broken) {
      EXPECT_GT(mismatches, tile * tile / 4) << "operands in a wrong layout must give wrong numbers";
    } else {
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(MfmaTwin, F16_32x32x8FollowsTheLaneTables) {
  ASSERT_MODULE();
  Check(32, 0);
}
TEST(MfmaTwin, Bf16_32x32x8FollowsTheLaneTables) {
  ASSERT_MODULE();
  Check(32, 1);
}
TEST(MfmaTwin, F16_16x16x16FollowsTheLaneTables) {
  ASSERT_MODULE();
  Check(16, 0);
}
TEST(MfmaTwin, Bf16_16x16x16FollowsTheLaneTables) {
  ASSERT_MODULE();
  Check(16, 1);
}
// gfx942's float8 forms: eight values per lane, every pairing of fp8
// (e4m3fnuz) and bf8 (e5m2fnuz).
TEST(MfmaTwin, Float8_32x32x16FollowsTheLaneTables) {
  ASSERT_MODULE();
  for (int types = 2; types <= 5; ++types) Check(32, types);
}
TEST(MfmaTwin, Float8_16x16x32FollowsTheLaneTables) {
  ASSERT_MODULE();
  for (int types = 2; types <= 5; ++types) Check(16, types);
}

// MFMA is a wavefront instruction: on 32-lane warps the emulator refuses it.
TEST(MfmaTwin, NeedsA64LaneWavefront) {
  ASSERT_MODULE();
  std::vector<float> a(32 * 8, 1.0f), b(8 * 32, 1.0f), c(32 * 32, 0.0f), d(32 * 32);
  float* pa = a.data();
  float* pb = b.data();
  float* pc = c.data();
  float* pd = d.data();
  int tile = 32, types = 0, broken = 0;
  absl::Status s = Launch(*Module(), "mfma_probe", {1, 1, 1}, {64, 1, 1}, 0,
                          {Arg(pa), Arg(pb), Arg(pc), Arg(pd), Arg(tile), Arg(types), Arg(broken)});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mfma needs a full 64-lane wavefront"), std::string::npos) << s;
}

}  // namespace
}  // namespace tilec::host
