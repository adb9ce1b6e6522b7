// The MFMA operand reads of tl::gemm_ss_mfma (compiler/device/common/tl/
// gemm_mfma.h) from the shared layouts inference gives its operands
// (tl::Swizzled, compiler/device/common/tl/layout.h), against the LDS bank
// model of AMD's CDNA documentation for composable_kernel: 32 banks of 4
// bytes; a ds_read of W bytes per lane is served in phases of 128 / W
// consecutive lanes (ds_read_b128: lanes 0-7, 8-15, ...), and two lanes of
// one phase that touch the same bank at different addresses conflict. A
// second grouping of ds_read_b128's lanes has been reported for gfx942
// (lanes 0-3 with 20-23, 4-7 with 16-19, 8-11 with 28-31, 12-15 with 24-27,
// the same again from 32); the reads are checked under both.
//
// gemm_ss_mfma reads, for a K-contiguous operand (A stored [M, K], B stored
// [N, K]), 16 consecutive bytes per lane and tile: row r = base + lane % T,
// k = k0 + (16 / E) * (lane / T) (two k-steps of the MFMA, T = 32 or 16,
// E the element size). Every such read, for every row width the layouts take
// (32, 64, 128 and 256 bytes), 16- and 8-bit elements and both tiles, must be
// one aligned 16-byte chunk and free of conflicts; the same reads from a
// row-major layout of 128-byte rows conflict 8 ways, so the model is not
// vacuous.
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

#define __device__
#define __forceinline__ inline
#include "tl/layout.h"

namespace {

constexpr int kBanks = 32;

// The phases of a 16-byte-per-lane read: eight groups of eight lanes.
std::vector<std::vector<int>> ConsecutivePhases() {
  std::vector<std::vector<int>> phases(8);
  for (int l = 0; l < 64; ++l) phases[l / 8].push_back(l);
  return phases;
}
std::vector<std::vector<int>> ReportedGfx942Phases() {
  std::vector<std::vector<int>> phases;
  for (int half : {0, 32}) {
    for (auto [a, b] : {std::pair{0, 20}, {4, 16}, {8, 28}, {12, 24}}) {
      std::vector<int> p;
      for (int i = 0; i < 4; ++i) {
        p.push_back(half + a + i);
        p.push_back(half + b + i);
      }
      phases.push_back(p);
    }
  }
  return phases;
}

// The worst number of distinct 4-byte words one bank serves in one phase,
// over the phases of one 16-byte-per-lane read, under both groupings: 1 is
// conflict-free.
int WorstConflict(const std::vector<int>& lane_bytes) {
  int worst = 1;
  for (const auto& phases : {ConsecutivePhases(), ReportedGfx942Phases()}) {
    for (const std::vector<int>& phase : phases) {
      std::vector<std::set<int>> words(kBanks);
      for (int l : phase) {
        for (int w = 0; w < 4; ++w) {
          const int word = lane_bytes[l] / 4 + w;
          words[word % kBanks].insert(word);
        }
      }
      for (const std::set<int>& s : words) worst = std::max(worst, static_cast<int>(s.size()));
    }
  }
  return worst;
}

// The byte addresses of the 64 lanes' reads of one tile (rows from `base`),
// from k0, in layout L of E-byte elements; fails the test when a lane's 16
// bytes are not one aligned chunk of L.
template <typename L, int E>
std::vector<int> TileReads(int tile, int base, int k0) {
  constexpr int kValues = 16 / E;
  std::vector<int> bytes;
  for (int lane = 0; lane < 64; ++lane) {
    const int r = base + lane % tile, k = k0 + kValues * (lane / tile);
    const int first = L::offset(r, k);
    for (int j = 1; j < kValues; ++j) {
      EXPECT_EQ(L::offset(r, k + j), first + j) << "lane " << lane << " row " << r << " k " << k;
    }
    EXPECT_EQ(first * E % 16, 0) << "lane " << lane << ": not 16-byte aligned";
    bytes.push_back(first * E);
  }
  return bytes;
}

// Every tile of an [R, C] operand (C the K extent) in layout L.
template <typename L, int E>
int WorstOverTheOperand(int tile) {
  constexpr int kValues = 16 / E;
  const int k_pair = kValues * (64 / tile);  // k covered by one read of all 64 lanes
  int worst = 1;
  for (int base = 0; base + tile <= L::kRows; base += tile) {
    for (int k0 = 0; k0 + k_pair <= L::kCols; k0 += k_pair) {
      worst = std::max(worst, WorstConflict(TileReads<L, E>(tile, base, k0)));
    }
  }
  return worst;
}

template <int C, int E>
void ExpectConflictFree() {
  SCOPED_TRACE(::testing::Message() << C * E << "-byte rows of " << E << "-byte elements");
  for (int tile : {32, 16}) {
    SCOPED_TRACE(::testing::Message() << "tile " << tile);
    if (C / (16 / E) < 64 / tile) continue;  // K shorter than one read of the wavefront
    EXPECT_EQ((WorstOverTheOperand<tl::Swizzled<128, C, E>, E>(tile)), 1);
  }
}

TEST(MfmaLdsBanks, SixteenBitOperandReadsAreConflictFree) {
  ExpectConflictFree<16, 2>();   // block_K 16: 32-byte rows
  ExpectConflictFree<32, 2>();   // 64
  ExpectConflictFree<64, 2>();   // 128
  ExpectConflictFree<128, 2>();  // 256: 128-byte column blocks
}

TEST(MfmaLdsBanks, Float8OperandReadsAreConflictFree) {
  ExpectConflictFree<32, 1>();
  ExpectConflictFree<64, 1>();
  ExpectConflictFree<128, 1>();
  ExpectConflictFree<256, 1>();
}

TEST(MfmaLdsBanks, TheModelSeesConflictsOfARowMajorLayout) {
  // 128-byte rows, unswizzled: the 8 lanes of a phase read 8 rows at the
  // same column, all in the same 4 banks.
  EXPECT_EQ((WorstOverTheOperand<tl::RowMajor<128, 64>, 2>(32)), 8);
  EXPECT_EQ((WorstOverTheOperand<tl::RowMajor<128, 128>, 1>(16)), 8);
}

}  // namespace
