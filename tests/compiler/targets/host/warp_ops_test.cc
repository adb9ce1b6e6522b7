// The warp collectives' ISA semantics (emulator/warp_ops.h), lane by lane,
// against the distributions the PTX ISA documents.
#include "compiler/targets/host/emulator/warp_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "compiler/device/host/tl/abi.h"
#include "compiler/device/host/tl/types.h"
#include "gtest/gtest.h"

namespace tilec::host {
namespace {

using tl::host::LdmatrixIn;
using tl::host::MmaIn;
using tl::host::ShflIn;
using tl::host::StmatrixIn;

template <typename In, typename Out>
std::vector<LaneOperands> Lanes(std::vector<In>& in, std::vector<Out>& out) {
  std::vector<LaneOperands> lanes(in.size());
  for (size_t i = 0; i < in.size(); ++i) lanes[i] = LaneOperands{&in[i], &out[i]};
  return lanes;
}

TEST(WarpOpsTest, ShflXorIsAButterfly) {
  for (int mask : {1, 2, 4, 8, 16, 31}) {
    std::vector<ShflIn> in(32);
    std::vector<uint32_t> out(32);
    for (int l = 0; l < 32; ++l) in[l] = ShflIn{static_cast<uint32_t>(1000 + l), mask};
    ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpShflBfly, Lanes(in, out), 32, {}).ok());
    for (int l = 0; l < 32; ++l) EXPECT_EQ(out[l], 1000u + (l ^ mask)) << "lane " << l;
  }
}

TEST(WarpOpsTest, ShflXorTakesEachLanesOwnMaskModuloTheWarp) {
  std::vector<ShflIn> in(32);
  std::vector<uint32_t> out(32);
  for (int l = 0; l < 32; ++l) in[l] = ShflIn{static_cast<uint32_t>(l * 3), (l % 5) + 32};
  ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpShflBfly, Lanes(in, out), 32, {}).ok());
  for (int l = 0; l < 32; ++l) EXPECT_EQ(out[l], static_cast<uint32_t>((l ^ (l % 5)) * 3));
}

TEST(WarpOpsTest, ShflIdxReadsTheSourceLane) {
  std::vector<ShflIn> in(32);
  std::vector<uint32_t> out(32);
  for (int l = 0; l < 32; ++l) in[l] = ShflIn{static_cast<uint32_t>(l * l), (l * 7 + 3) % 32};
  ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpShflIdx, Lanes(in, out), 32, {}).ok());
  for (int l = 0; l < 32; ++l) {
    const int src = (l * 7 + 3) % 32;
    EXPECT_EQ(out[l], static_cast<uint32_t>(src * src)) << "lane " << l;
  }
}

TEST(WarpOpsTest, ShflFromAMissingLaneOfAPartialWarpFails) {
  std::vector<ShflIn> in(20);
  std::vector<uint32_t> out(20);
  for (int l = 0; l < 20; ++l) in[l] = ShflIn{0, 16};
  absl::Status s = ExecuteWarpOp(tl::host::kWarpShflBfly, Lanes(in, out), 32, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("lane 4 reads lane 20"), std::string::npos) << s;
}

TEST(WarpOpsTest, Wave64ShuffleUsesSixLaneBits) {
  std::vector<ShflIn> in(64);
  std::vector<uint32_t> out(64);
  for (int l = 0; l < 64; ++l) in[l] = ShflIn{static_cast<uint32_t>(l), 32};
  ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpShflBfly, Lanes(in, out), 64, {}).ok());
  for (int l = 0; l < 64; ++l) EXPECT_EQ(out[l], static_cast<uint32_t>(l ^ 32));
}

// Shared memory holding four 8x8 matrices of 16-bit elements, element (r, c)
// of matrix m = 1000 * (m + 1) + 10 * r + c, rows stored 16 bytes apart.
struct Matrices {
  alignas(128) uint16_t data[4 * 64];
  Matrices() {
    for (int m = 0; m < 4; ++m)
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) data[m * 64 + r * 8 + c] = At(m, r, c);
  }
  static uint16_t At(int m, int r, int c) {
    return static_cast<uint16_t>(1000 * (m + 1) + 10 * r + c);
  }
  SharedWindow window() const { return {reinterpret_cast<const uint8_t*>(data), sizeof(data)}; }
};

TEST(WarpOpsTest, LdmatrixDistributesRowsAsThePtxFigure) {
  Matrices smem;
  for (int num : {1, 2, 4}) {
    for (int trans : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "x" << num << (trans ? ".trans" : ""));
      std::vector<LdmatrixIn> in(32);
      std::vector<std::array<uint32_t, 4>> out(32);
      // Lane i addresses row i % 8 of matrix i / 8; with fewer matrices the
      // upper lanes' addresses are ignored (point them at garbage).
      for (int l = 0; l < 32; ++l) {
        const void* row = l < 8 * num
                              ? static_cast<const void*>(&smem.data[(l / 8) * 64 + (l % 8) * 8])
                              : reinterpret_cast<const void*>(uintptr_t{16});
        in[l] = LdmatrixIn{row, num, trans};
      }
      ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpLdmatrix, Lanes(in, out), 32, smem.window()).ok());
      for (int l = 0; l < 32; ++l) {
        for (int j = 0; j < num; ++j) {
          // Register j of lane l: (row l / 4, cols 2 (l % 4), +1) of matrix j.
          const int r = l / 4, c = 2 * (l % 4);
          const uint16_t lo = trans ? Matrices::At(j, c, r) : Matrices::At(j, r, c);
          const uint16_t hi = trans ? Matrices::At(j, c + 1, r) : Matrices::At(j, r, c + 1);
          EXPECT_EQ(out[l][j], lo | (uint32_t{hi} << 16)) << "lane " << l << " reg " << j;
        }
      }
    }
  }
}

TEST(WarpOpsTest, LdmatrixRowsMustLieInSharedMemoryAndBeAligned) {
  Matrices smem;
  std::vector<LdmatrixIn> in(32);
  std::vector<std::array<uint32_t, 4>> out(32);
  for (int l = 0; l < 32; ++l) in[l] = LdmatrixIn{&smem.data[l * 8], 4, 0};
  // The last row starts 8 bytes before the end: its 16 bytes overrun.
  in[31].row = reinterpret_cast<const uint8_t*>(smem.data) + sizeof(smem.data) - 8;
  absl::Status s = ExecuteWarpOp(tl::host::kWarpLdmatrix, Lanes(in, out), 32, smem.window());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("lane 31"), std::string::npos) << s;
  EXPECT_NE(s.message().find("outside the block's dynamic shared memory"), std::string::npos);

  in[31].row = &smem.data[31 * 8];
  in[5].row = reinterpret_cast<const uint8_t*>(&smem.data[5 * 8]) + 4;
  s = ExecuteWarpOp(tl::host::kWarpLdmatrix, Lanes(in, out), 32, smem.window());
  EXPECT_NE(s.message().find("lane 5's row address is at shared offset 84, not 16-byte aligned"),
            std::string::npos)
      << s;
}

TEST(WarpOpsTest, LdmatrixLanesMustAgreeOnTheVariant) {
  Matrices smem;
  std::vector<LdmatrixIn> in(32);
  std::vector<std::array<uint32_t, 4>> out(32);
  for (int l = 0; l < 32; ++l) in[l] = LdmatrixIn{&smem.data[l * 8], 4, 0};
  in[9].trans = 1;
  absl::Status s = ExecuteWarpOp(tl::host::kWarpLdmatrix, Lanes(in, out), 32, smem.window());
  EXPECT_NE(s.message().find("lane 9 executes ldmatrix_x4_trans while lane 0 executes ldmatrix_x4"),
            std::string::npos)
      << s;
}

// stmatrix, the inverse of ldmatrix: every lane's registers filled by the
// PTX table from Matrices::At (register j of lane l: row l / 4, cols
// 2 (l % 4), +1 of matrix j, lower column in the low half); lane i names row
// i % 8 of matrix i / 8, rows of matrix m stored 16 bytes apart from offset
// 128 m. With .trans, element (r, c) of the registers' matrix lands at row c,
// column r.
std::vector<StmatrixIn> StmatrixOperands(uint16_t* base, int num, int trans) {
  std::vector<StmatrixIn> in(32);
  for (int l = 0; l < 32; ++l) {
    StmatrixIn& f = in[l];
    f.row = l < 8 * num ? static_cast<void*>(&base[(l / 8) * 64 + (l % 8) * 8])
                        : reinterpret_cast<void*>(uintptr_t{16});
    f.num = num;
    f.trans = trans;
    const int r = l / 4, c = 2 * (l % 4);
    for (int j = 0; j < 4; ++j) {
      f.r[j] = j < num ? Matrices::At(j, r, c) | (uint32_t{Matrices::At(j, r, c + 1)} << 16)
                       : 0xDEADBEEF;
    }
  }
  return in;
}

TEST(WarpOpsTest, StmatrixStoresRowsAsThePtxFigure) {
  for (int num : {1, 2, 4}) {
    for (int trans : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "x" << num << (trans ? ".trans" : ""));
      Matrices smem;
      std::fill(std::begin(smem.data), std::end(smem.data), uint16_t{0xFFFF});
      std::vector<StmatrixIn> in = StmatrixOperands(smem.data, num, trans);
      std::vector<int> out(32);
      ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpStmatrix, Lanes(in, out), 32, smem.window()).ok());
      for (int m = 0; m < 4; ++m) {
        for (int r = 0; r < 8; ++r) {
          for (int c = 0; c < 8; ++c) {
            const uint16_t want = m >= num ? uint16_t{0xFFFF}
                                  : trans  ? Matrices::At(m, c, r)
                                           : Matrices::At(m, r, c);
            EXPECT_EQ(smem.data[m * 64 + r * 8 + c], want)
                << "matrix " << m << " row " << r << " col " << c;
          }
        }
      }
    }
  }
}

TEST(WarpOpsTest, StmatrixThenLdmatrixIsTheIdentity) {
  for (int trans : {0, 1}) {
    Matrices smem;
    std::vector<StmatrixIn> in = StmatrixOperands(smem.data, 4, trans);
    std::vector<int> unused(32);
    ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpStmatrix, Lanes(in, unused), 32, smem.window()).ok());
    std::vector<LdmatrixIn> ld(32);
    std::vector<std::array<uint32_t, 4>> out(32);
    for (int l = 0; l < 32; ++l) ld[l] = LdmatrixIn{in[l].row, 4, trans};
    ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpLdmatrix, Lanes(ld, out), 32, smem.window()).ok());
    for (int l = 0; l < 32; ++l) {
      for (int j = 0; j < 4; ++j) EXPECT_EQ(out[l][j], in[l].r[j]) << "lane " << l << " reg " << j;
    }
  }
}

TEST(WarpOpsTest, StmatrixRowsMustLieInSharedMemoryBeAlignedAndAgree) {
  Matrices smem;
  const Matrices before = smem;
  std::vector<StmatrixIn> in = StmatrixOperands(smem.data, 4, 0);
  std::vector<int> out(32);
  in[30].row = reinterpret_cast<uint8_t*>(smem.data) + sizeof(smem.data) - 8;
  absl::Status s = ExecuteWarpOp(tl::host::kWarpStmatrix, Lanes(in, out), 32, smem.window());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("stmatrix: lane 30's row address"), std::string::npos) << s;
  EXPECT_NE(s.message().find("(row 6 of matrix 3) is outside the block's dynamic shared memory"),
            std::string::npos)
      << s;
  // Nothing was written: the rows are checked before any is stored.
  EXPECT_EQ(std::memcmp(smem.data, before.data, sizeof(smem.data)), 0);

  in = StmatrixOperands(smem.data, 4, 0);
  in[3].row = reinterpret_cast<uint8_t*>(&smem.data[3 * 8]) + 2;
  s = ExecuteWarpOp(tl::host::kWarpStmatrix, Lanes(in, out), 32, smem.window());
  EXPECT_NE(s.message().find("lane 3's row address is at shared offset 50, not 16-byte aligned"),
            std::string::npos)
      << s;

  in = StmatrixOperands(smem.data, 4, 0);
  in[12].num = 2;
  s = ExecuteWarpOp(tl::host::kWarpStmatrix, Lanes(in, out), 32, smem.window());
  EXPECT_NE(s.message().find("lane 12 executes stmatrix_x2 while lane 0 executes stmatrix_x4"),
            std::string::npos)
      << s;

  in.resize(16);
  out.resize(16);
  s = ExecuteWarpOp(tl::host::kWarpStmatrix, Lanes(in, out), 32, smem.window());
  EXPECT_NE(s.message().find("stmatrix needs a full 32-lane warp"), std::string::npos) << s;
}

// Fills every lane's m16n8k16 fragments from row-major A[16][16], B[16][8]
// (k, n) and C[16][8] by the documented layout.
template <typename T>
std::vector<MmaIn> MmaFragments(int32_t kind, const float (&a)[16][16], const float (&b)[16][8],
                                const float (&c)[16][8]) {
  auto pack = [](float lo, float hi) {
    return uint32_t{T(lo).bits()} | (uint32_t{T(hi).bits()} << 16);
  };
  std::vector<MmaIn> in(32);
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, q = l % 4;
    MmaIn& f = in[l];
    f.kind = kind;
    f.a[0] = pack(a[g][2 * q], a[g][2 * q + 1]);
    f.a[1] = pack(a[g + 8][2 * q], a[g + 8][2 * q + 1]);
    f.a[2] = pack(a[g][2 * q + 8], a[g][2 * q + 9]);
    f.a[3] = pack(a[g + 8][2 * q + 8], a[g + 8][2 * q + 9]);
    f.b[0] = pack(b[2 * q][g], b[2 * q + 1][g]);
    f.b[1] = pack(b[2 * q + 8][g], b[2 * q + 9][g]);
    f.c[0] = c[g][2 * q];
    f.c[1] = c[g][2 * q + 1];
    f.c[2] = c[g + 8][2 * q];
    f.c[3] = c[g + 8][2 * q + 1];
  }
  return in;
}

template <typename T>
void CheckMma(int32_t kind, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);
  float a[16][16], b[16][8], c[16][8];
  // Small integers: every product and sum is exact, so the expected values do
  // not depend on the order of accumulation.
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) a[r][k] = static_cast<float>((r * 16 + k) % 13 - 6 + small(rng));
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) b[k][n] = static_cast<float>((k * 8 + n) % 11 - 5 + small(rng));
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) c[r][n] = static_cast<float>(r * 8 + n);
  std::vector<MmaIn> in = MmaFragments<T>(kind, a, b, c);
  std::vector<std::array<float, 4>> out(32);
  ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpMma, Lanes(in, out), 32, {}).ok());
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, q = l % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = g + (i / 2) * 8, col = 2 * q + i % 2;
      float want = c[row][col];
      for (int k = 0; k < 16; ++k) want += a[row][k] * b[k][col];
      EXPECT_EQ(out[l][i], want) << "lane " << l << " d[" << i << "]";
    }
  }
}

TEST(WarpOpsTest, MmaF16MatchesTheNaiveProduct) {
  CheckMma<tl::half_t>(tl::host::kMmaM16N8K16F16F32, std::random_device()());
}

TEST(WarpOpsTest, MmaBf16MatchesTheNaiveProduct) {
  CheckMma<tl::bfloat16_t>(tl::host::kMmaM16N8K16Bf16F32, std::random_device()());
}

TEST(WarpOpsTest, MmaWithSwappedARegistersComputesAnotherProduct) {
  float a[16][16], b[16][8], c[16][8] = {};
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) a[r][k] = static_cast<float>(r * 16 + k);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) b[k][n] = static_cast<float>(k == n ? 1 : 0);  // picks A's columns
  std::vector<MmaIn> in = MmaFragments<tl::half_t>(tl::host::kMmaM16N8K16F16F32, a, b, c);
  for (MmaIn& f : in) std::swap(f.a[1], f.a[2]);
  std::vector<std::array<float, 4>> out(32);
  ASSERT_TRUE(ExecuteWarpOp(tl::host::kWarpMma, Lanes(in, out), 32, {}).ok());
  // D = A' @ I: with a[1] and a[2] swapped, rows 8-15 of the first 8 columns
  // read A's rows 0-7 at columns 8-15.
  const int l = 4 * 3 + 1;            // g = 3, q = 1
  EXPECT_EQ(out[l][2], a[3][8 + 2]);  // should have been a[11][2]
  EXPECT_NE(out[l][2], a[11][2]);
  EXPECT_EQ(out[l][0], a[3][2]);  // a[0] untouched
}

TEST(WarpOpsTest, MmaLanesMustAgreeAndNeedAFullWarp) {
  std::vector<MmaIn> in(32);
  std::vector<std::array<float, 4>> out(32);
  for (MmaIn& f : in) f = MmaIn{tl::host::kMmaM16N8K16F16F32, {}, {}, {}};
  in[17].kind = tl::host::kMmaM16N8K16Bf16F32;
  absl::Status s = ExecuteWarpOp(tl::host::kWarpMma, Lanes(in, out), 32, {});
  EXPECT_NE(s.message().find("lane 17 executes a different mma variant"), std::string::npos) << s;

  in.resize(16);
  out.resize(16);
  s = ExecuteWarpOp(tl::host::kWarpMma, Lanes(in, out), 32, {});
  EXPECT_NE(s.message().find("mma needs a full 32-lane warp; this warp has 16 lanes"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace tilec::host
