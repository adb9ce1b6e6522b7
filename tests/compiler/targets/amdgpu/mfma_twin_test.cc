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

// One wave: D = C + A @ B for a T x T tile (T = 32: k = 8; T = 16: k = 16).
// A is [T, KS] row-major, B [KS, T], C and D [T, T], all float (values exact
// in the operand type). broken = 1 loads A's k interleaved across the lane
// groups instead of in blocks of 4; broken = 2 stores D transposed.
template <typename AT, int T>
__device__ void probe(const float* A, const float* B, const float* C, float* D, int broken) {
  constexpr int KS = T == 32 ? 8 : 16, R = T * T / 64;
  const int lane = static_cast<int>(threadIdx.x);
  float d[R];
  for (int r = 0; r < R; ++r) {
    const int row = T == 32 ? 8 * (r / 4) + 4 * (lane / 32) + r % 4 : 4 * (lane / 16) + r;
    d[r] = C[row * T + lane % T];
  }
  AT a[4], b[4];
  for (int j = 0; j < 4; ++j) {
    const int k = 4 * (lane / T) + j;
    const int ka = broken == 1 ? j * (64 / T) + lane / T : k;
    a[j] = AT(A[(lane % T) * KS + ka]);
    b[j] = AT(B[k * T + lane % T]);
  }
  if constexpr (T == 32) {
    tl::mfma_32x32x8(d, a, b);
  } else {
    tl::mfma_16x16x16(d, a, b);
  }
  for (int r = 0; r < R; ++r) {
    const int row = T == 32 ? 8 * (r / 4) + 4 * (lane / 32) + r % 4 : 4 * (lane / 16) + r;
    const int col = lane % T;
    D[broken == 2 ? col * T + row : row * T + col] = d[r];
  }
}

extern "C" __global__ void mfma_probe(tl::gptr<float> A, tl::gptr<float> B, tl::gptr<float> C,
                                      tl::gptr<float> D, int tile, int bf16, int broken) {
  if (tile == 32) {
    if (bf16) probe<tl::bfloat16_t, 32>(A, B, C, D, broken);
    else probe<tl::half_t, 32>(A, B, C, D, broken);
  } else {
    if (bf16) probe<tl::bfloat16_t, 16>(A, B, C, D, broken);
    else probe<tl::half_t, 16>(A, B, C, D, broken);
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

void Check(int tile, int bf16) {
  const int ks = tile == 32 ? 8 : 16;
  const uint64_t seed = Seed() + tile + bf16;
  std::printf("mfma tile %d bf16 %d, seed %llu (TILEC_TEST_SEED)\n", tile, bf16,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  // Halves from -4 to 4: exact in float16 and bfloat16, products and sums exact.
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
                            {Arg(pa), Arg(pb), Arg(pc), Arg(pd), Arg(tile), Arg(bf16), Arg(broken)},
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

// MFMA is a wavefront instruction: on 32-lane warps the emulator refuses it.
TEST(MfmaTwin, NeedsA64LaneWavefront) {
  ASSERT_MODULE();
  std::vector<float> a(32 * 8, 1.0f), b(8 * 32, 1.0f), c(32 * 32, 0.0f), d(32 * 32);
  float* pa = a.data();
  float* pb = b.data();
  float* pc = c.data();
  float* pd = d.data();
  int tile = 32, bf16 = 0, broken = 0;
  absl::Status s = Launch(*Module(), "mfma_probe", {1, 1, 1}, {64, 1, 1}, 0,
                          {Arg(pa), Arg(pb), Arg(pc), Arg(pd), Arg(tile), Arg(bf16), Arg(broken)});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mfma needs a full 64-lane wavefront"), std::string::npos) << s;
}

}  // namespace
}  // namespace tilec::host
