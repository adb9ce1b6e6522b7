// Checks each reference on tiny inputs whose results are worked out by hand
// (or follow from an identity of the math), so that the references can serve
// as the oracle for the kernels.
#include "tests/reference/reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

namespace tilec::reference {
namespace {

using ::testing::DoubleNear;
using ::testing::Pointwise;

constexpr double kTol = 1e-12;

// Uniform values in [-1, 1] from a seed that the test prints.
std::vector<double> RandomVector(size_t n, uint32_t seed) {
  std::cout << "random inputs: seed " << seed << "\n";
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

std::vector<double> Identity(int n) {
  std::vector<double> v(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i) * n + i] = 1.0;
  return v;
}

// ---------------------------------------------------------------- GEMM

TEST(GemmRefTest, TwoByTwoByHand) {
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
  std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  EXPECT_THAT(GemmRef(a, b, 2, 2, 2, false, false),
              Pointwise(DoubleNear(kTol), std::vector<double>{19, 22, 43, 50}));
}

TEST(GemmRefTest, TransposedOperandsAreReadTransposed) {
  std::vector<double> a_t = {1, 3, 2, 4};  // [[1, 2], [3, 4]] stored as [k, m]
  std::vector<double> b_t = {5, 7, 6, 8};  // [[5, 6], [7, 8]] stored as [n, k]
  std::vector<double> want = {19, 22, 43, 50};
  EXPECT_THAT(GemmRef(a_t, {5, 6, 7, 8}, 2, 2, 2, true, false), Pointwise(DoubleNear(kTol), want));
  EXPECT_THAT(GemmRef({1, 2, 3, 4}, b_t, 2, 2, 2, false, true), Pointwise(DoubleNear(kTol), want));
  EXPECT_THAT(GemmRef(a_t, b_t, 2, 2, 2, true, true), Pointwise(DoubleNear(kTol), want));
}

TEST(GemmRefTest, NonSquareShapes) {
  // [1 x 3] @ [3 x 2]: [1, 2, 3] @ [[1, 0], [0, 1], [1, 1]] = [4, 5].
  EXPECT_THAT(GemmRef({1, 2, 3}, {1, 0, 0, 1, 1, 1}, 1, 2, 3, false, false),
              Pointwise(DoubleNear(kTol), std::vector<double>{4, 5}));
}

TEST(GemmRefTest, IdentityLeavesMatrixUnchanged) {
  std::vector<double> a = RandomVector(5 * 7, 20240601);
  EXPECT_THAT(GemmRef(a, Identity(7), 5, 7, 7, false, false), Pointwise(DoubleNear(kTol), a));
  EXPECT_THAT(GemmRef(Identity(5), a, 5, 7, 5, false, false), Pointwise(DoubleNear(kTol), a));
}

TEST(GemmRefTest, WrongInputSizeIsACallerBug) {
  EXPECT_DEATH(GemmRef({1, 2, 3}, {1, 2, 3, 4}, 2, 2, 2, false, false),
               "GemmRef: a has 3 elements, its shape needs 4");
}

TEST(BatchedGemmRefTest, EachBatchIsItsOwnProduct) {
  // Batch 0: the 2x2 product above; batch 1: [[1, 2], [3, 4]] @ 2I.
  std::vector<double> a = {1, 2, 3, 4, 1, 2, 3, 4};
  std::vector<double> b = {5, 6, 7, 8, 2, 0, 0, 2};
  EXPECT_THAT(BatchedGemmRef(a, b, 2, 2, 2, 2),
              Pointwise(DoubleNear(kTol), std::vector<double>{19, 22, 43, 50, 2, 4, 6, 8}));
}

TEST(GemmSplitKRefTest, AddsTheProductToTheInitialOutput) {
  std::vector<double> c_in = {1, -1, 0.5, 0};
  EXPECT_THAT(GemmSplitKRef({1, 2, 3, 4}, {5, 6, 7, 8}, c_in, 2, 2, 2),
              Pointwise(DoubleNear(kTol), std::vector<double>{20, 21, 43.5, 50}));
}

// ---------------------------------------------------------------- row-wise

TEST(ElementwiseAddRefTest, AddsElementByElement) {
  EXPECT_THAT(ElementwiseAddRef({1, 2, 3, 4, 5, 6}, {10, 20, 30, -4, -5, -6.5}, 2, 3),
              Pointwise(DoubleNear(kTol), std::vector<double>{11, 22, 33, 0, 0, -0.5}));
}

TEST(SoftmaxRefTest, EqualValuesGiveUniformRow) {
  EXPECT_THAT(SoftmaxRef({2, 2, 2, 2, -7, -7, -7, -7}, 2, 4),
              Pointwise(DoubleNear(kTol), std::vector<double>(8, 0.25)));
}

TEST(SoftmaxRefTest, RatioOfExponentials) {
  // exp(ln 3) / (exp(0) + exp(ln 3)) = 3/4; shifting a row changes nothing,
  // even by an amount whose exponential overflows.
  const double ln3 = std::log(3.0);
  EXPECT_THAT(SoftmaxRef({0, ln3, 1000, 1000 + ln3}, 2, 2),
              Pointwise(DoubleNear(1e-9), std::vector<double>{0.25, 0.75, 0.25, 0.75}));
}

TEST(RmsNormRefTest, DividesByRootMeanSquare) {
  // Row [2, -2]: mean square 4, rms 2. Row [3, 4]: mean square 12.5.
  std::vector<double> w = {1, 10};
  const double r = std::sqrt(12.5);
  EXPECT_THAT(RmsNormRef({2, -2, 3, 4}, w, 2, 2, 0.0),
              Pointwise(DoubleNear(kTol), std::vector<double>{1, -10, 3 / r, 40 / r}));
}

TEST(RmsNormRefTest, EpsilonIsAddedToTheMeanSquare) {
  // Mean square 1 plus eps 3 gives rms 2.
  EXPECT_THAT(RmsNormRef({1, -1}, {1, 1}, 1, 2, 3.0),
              Pointwise(DoubleNear(kTol), std::vector<double>{0.5, -0.5}));
}

TEST(LayerNormRefTest, CentresScalesAndShifts) {
  // Row [1, 3]: mean 2, biased variance 1, normalised [-1, 1].
  std::vector<double> gamma = {2, 3}, beta = {0.5, -1};
  EXPECT_THAT(LayerNormRef({1, 3}, gamma, beta, 1, 2, 0.0),
              Pointwise(DoubleNear(kTol), std::vector<double>{-1.5, 2}));
}

TEST(LayerNormRefTest, ConstantRowLeavesOnlyBeta) {
  // Variance 0: every centred value is 0, whatever eps.
  EXPECT_THAT(LayerNormRef({5, 5, 5}, {2, 3, 4}, {0.5, -1, 7}, 1, 3, 0.25),
              Pointwise(DoubleNear(kTol), std::vector<double>{0.5, -1, 7}));
}

TEST(LayerNormRefTest, VarianceIsBiased) {
  // [0, 0, 0, 4]: mean 1, biased variance (1 + 1 + 1 + 9) / 4 = 3.
  const double s = std::sqrt(3.0);
  EXPECT_THAT(LayerNormRef({0, 0, 0, 4}, {1, 1, 1, 1}, {0, 0, 0, 0}, 1, 4, 0.0),
              Pointwise(DoubleNear(kTol), std::vector<double>{-1 / s, -1 / s, -1 / s, 3 / s}));
}

TEST(RowSumRefTest, SumsEachRow) {
  EXPECT_THAT(RowSumRef({1, 2, 3, 4, 5, 6}, 2, 3),
              Pointwise(DoubleNear(kTol), std::vector<double>{6, 15}));
}

TEST(CumsumRefTest, ForwardAndReverse) {
  std::vector<double> x = {1, 2, 3, 4, -1, 0, 1, 0};
  EXPECT_THAT(CumsumRef(x, 2, 4, false),
              Pointwise(DoubleNear(kTol), std::vector<double>{1, 3, 6, 10, -1, -1, 0, 0}));
  EXPECT_THAT(CumsumRef(x, 2, 4, true),
              Pointwise(DoubleNear(kTol), std::vector<double>{10, 9, 7, 4, 0, 1, 1, 0}));
}

// ---------------------------------------------------------------- attention

TEST(AttentionRefTest, EqualScoresAverageTheValues) {
  // Zero keys give equal scores: each output is the mean of the value rows.
  // batch 1, seq_q 1, seq_kv 2, heads 2, dim 2; v[j, h, :].
  std::vector<double> q = {1, 2, 3, 4};
  std::vector<double> k(8, 0.0);
  std::vector<double> v = {1, 2, 10, 20,   // key 0: head 0, head 1
                           3, 6, 30, 60};  // key 1
  EXPECT_THAT(AttentionRef(q, k, v, 1, 2, 1, 2, 2, false, 1.0),
              Pointwise(DoubleNear(kTol), std::vector<double>{2, 4, 20, 40}));
}

TEST(AttentionRefTest, WeightsFollowTheScaledScores) {
  // q . k0 = 0, q . k1 = 2; with scale ln(3) / 2 the weights are 1/4, 3/4.
  const double scale = std::log(3.0) / 2;
  std::vector<double> q = {1, 1}, k = {0, 0, 1, 1}, v = {4, 0, 0, 8};
  EXPECT_THAT(AttentionRef(q, k, v, 1, 1, 1, 2, 2, false, scale),
              Pointwise(DoubleNear(1e-12), std::vector<double>{1, 6}));
}

TEST(AttentionRefTest, CausalFirstQuerySeesOnlyTheFirstKey) {
  std::vector<double> q = RandomVector(3 * 2, 7), k = RandomVector(3 * 2, 8);
  std::vector<double> v = RandomVector(3 * 2, 9);
  std::vector<double> o = AttentionRef(q, k, v, 1, 1, 3, 3, 2, true, 0.7);
  EXPECT_NEAR(o[0], v[0], kTol);
  EXPECT_NEAR(o[1], v[1], kTol);
  // The last query sees every key, as without the mask.
  std::vector<double> full = AttentionRef(q, k, v, 1, 1, 3, 3, 2, false, 0.7);
  EXPECT_NEAR(o[4], full[4], kTol);
  EXPECT_NEAR(o[5], full[5], kTol);
}

TEST(AttentionRefTest, CausalQueriesPastTheKeysSeeEveryKey) {
  // seq_q 3 > seq_kv 2: query 2 sees keys 0 and 1, like the unmasked case;
  // query 0 sees key 0 only.
  std::vector<double> q = RandomVector(3 * 2, 11), k = RandomVector(2 * 2, 12);
  std::vector<double> v = RandomVector(2 * 2, 13);
  std::vector<double> o = AttentionRef(q, k, v, 1, 1, 3, 2, 2, true, 1.0);
  std::vector<double> full = AttentionRef(q, k, v, 1, 1, 3, 2, 2, false, 1.0);
  EXPECT_NEAR(o[0], v[0], kTol);
  EXPECT_NEAR(o[1], v[1], kTol);
  EXPECT_NEAR(o[4], full[4], kTol);
  EXPECT_NEAR(o[5], full[5], kTol);
}

TEST(GqaDecodeRefTest, HeadsReadTheirGroupsKvHead) {
  // heads 4 in 2 groups: heads 0, 1 read KV head 0, heads 2, 3 KV head 1.
  // Zero keys: each output is the mean of the group's values.
  const int heads = 4, groups = 2, seqlen = 2, dim = 1;
  std::vector<double> q = {1, 2, 3, 4};
  std::vector<double> k(seqlen * groups * dim, 0.0);
  std::vector<double> v = {1, 100,   // position 0: group 0, group 1
                           3, 300};  // position 1
  EXPECT_THAT(GqaDecodeRef(q, k, v, 1, heads, groups, seqlen, dim, 1.0),
              Pointwise(DoubleNear(kTol), std::vector<double>{2, 2, 200, 200}));
}

TEST(GqaDecodeRefTest, MatchesAttentionWithRepeatedKvHeads) {
  const int batch = 2, heads = 6, groups = 3, seqlen = 5, dim = 3;
  std::vector<double> q = RandomVector(batch * heads * dim, 21);
  std::vector<double> k = RandomVector(batch * seqlen * groups * dim, 22);
  std::vector<double> v = RandomVector(batch * seqlen * groups * dim, 23);
  std::vector<double> k_full, v_full;  // [batch, seqlen, heads, dim]
  for (int b = 0; b < batch; ++b) {
    for (int j = 0; j < seqlen; ++j) {
      for (int h = 0; h < heads; ++h) {
        const int g = h / (heads / groups);
        const size_t src = ((static_cast<size_t>(b) * seqlen + j) * groups + g) * dim;
        k_full.insert(k_full.end(), k.begin() + src, k.begin() + src + dim);
        v_full.insert(v_full.end(), v.begin() + src, v.begin() + src + dim);
      }
    }
  }
  // q [batch, heads, dim] is q [batch, seq_q = 1, heads, dim].
  EXPECT_THAT(GqaDecodeRef(q, k, v, batch, heads, groups, seqlen, dim, 0.5),
              Pointwise(DoubleNear(kTol),
                        AttentionRef(q, k_full, v_full, batch, heads, 1, seqlen, dim, false, 0.5)));
}

TEST(GqaDecodeSplitRefTest, SlicesCombineToTheFullResult) {
  // 7 keys in slices of 3: [0, 3), [3, 6), [6, 7), and an empty fourth.
  const int batch = 1, heads = 2, groups = 1, seqlen = 7, dim = 2, num_split = 4;
  std::vector<double> q = RandomVector(batch * heads * dim, 31);
  std::vector<double> k = RandomVector(batch * seqlen * groups * dim, 32);
  std::vector<double> v = RandomVector(batch * seqlen * groups * dim, 33);
  GqaDecodeSplit split =
      GqaDecodeSplitRef(q, k, v, batch, heads, groups, seqlen, dim, 0.8, num_split, 3);
  std::vector<double> full = GqaDecodeRef(q, k, v, batch, heads, groups, seqlen, dim, 0.8);
  for (int h = 0; h < heads; ++h) {
    // The empty slice: lse -inf, zero output.
    EXPECT_EQ(split.lse[h * num_split + 3], -std::numeric_limits<double>::infinity());
    EXPECT_EQ(split.out_partial[(h * num_split + 3) * dim], 0.0);
    // The one-key slice is that key's value, with lse its scaled score.
    const double score6 = 0.8 * (q[h * dim] * k[6 * dim] + q[h * dim + 1] * k[6 * dim + 1]);
    EXPECT_NEAR(split.lse[h * num_split + 2], score6, kTol);
    EXPECT_NEAR(split.out_partial[(h * num_split + 2) * dim + 1], v[6 * dim + 1], kTol);
    double denom = 0, num[dim] = {0, 0};
    for (int s = 0; s < num_split; ++s) {
      const double weight = std::exp(split.lse[h * num_split + s]);
      denom += weight;
      for (int d = 0; d < dim; ++d)
        num[d] += weight * split.out_partial[(h * num_split + s) * dim + d];
    }
    for (int d = 0; d < dim; ++d) EXPECT_NEAR(num[d] / denom, full[h * dim + d], kTol);
  }
}

TEST(MlaDecodeRefTest, RotaryPartAddsToTheScore) {
  // Latent scores are 0 for both positions; the rotary part gives 0 and ln 3,
  // so the weights are 1/4 and 3/4 and the output mixes the latent rows.
  const double ln3 = std::log(3.0);
  std::vector<double> q = {5, -5}, q_pe = {1};
  std::vector<double> kv = {1, 1, 2, 2};  // q . kv_j = 0 for both rows
  std::vector<double> k_pe = {0, ln3};
  EXPECT_THAT(MlaDecodeRef(q, q_pe, kv, k_pe, 1, 1, 2, 2, 1, 1.0),
              Pointwise(DoubleNear(1e-12), std::vector<double>{1.75, 1.75}));
}

TEST(MlaDecodeRefTest, MatchesAttentionOnConcatenatedKeys) {
  const int batch = 2, heads = 3, seqlen = 4, dim = 3, pe_dim = 2, width = dim + pe_dim;
  std::vector<double> q = RandomVector(batch * heads * dim, 41);
  std::vector<double> q_pe = RandomVector(batch * heads * pe_dim, 42);
  std::vector<double> kv = RandomVector(batch * seqlen * dim, 43);
  std::vector<double> k_pe = RandomVector(batch * seqlen * pe_dim, 44);
  // Attention with key [kv, k_pe] and value kv, one head per MLA head; the
  // shared KV is repeated over heads.
  std::vector<double> q_cat, k_cat, v_rep;
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      const size_t bh = static_cast<size_t>(b) * heads + h;
      q_cat.insert(q_cat.end(), q.begin() + bh * dim, q.begin() + (bh + 1) * dim);
      q_cat.insert(q_cat.end(), q_pe.begin() + bh * pe_dim, q_pe.begin() + (bh + 1) * pe_dim);
    }
  }
  std::vector<double> v_pad;  // values padded to width, to share AttentionRef's dim
  for (int b = 0; b < batch; ++b) {
    for (int j = 0; j < seqlen; ++j) {
      const size_t bj = static_cast<size_t>(b) * seqlen + j;
      for (int h = 0; h < heads; ++h) {
        k_cat.insert(k_cat.end(), kv.begin() + bj * dim, kv.begin() + (bj + 1) * dim);
        k_cat.insert(k_cat.end(), k_pe.begin() + bj * pe_dim, k_pe.begin() + (bj + 1) * pe_dim);
        v_pad.insert(v_pad.end(), kv.begin() + bj * dim, kv.begin() + (bj + 1) * dim);
        v_pad.insert(v_pad.end(), pe_dim, 0.0);
      }
    }
  }
  const double scale = 1 / std::sqrt(static_cast<double>(width));
  std::vector<double> want_padded =
      AttentionRef(q_cat, k_cat, v_pad, batch, heads, 1, seqlen, width, false, scale);
  std::vector<double> got =
      MlaDecodeRef(q, q_pe, kv, k_pe, batch, heads, seqlen, dim, pe_dim, scale);
  ASSERT_EQ(got.size(), static_cast<size_t>(batch) * heads * dim);
  for (size_t bh = 0; bh < static_cast<size_t>(batch) * heads; ++bh) {
    for (int d = 0; d < dim; ++d) {
      EXPECT_NEAR(got[bh * dim + d], want_padded[bh * width + d], kTol);
    }
  }
}

// ---------------------------------------------------------------- dequant, conv

TEST(DequantInt4RefTest, NibbleOrderSignAndGroupScale) {
  // Bytes 0x21, 0x7F, 0x80, 0xF8 hold (low, high) nibbles (1, 2), (-1, 7),
  // (0, -8), (-8, -1). Groups of 4 with scales 0.5 and 2.
  std::vector<double> packed = {0x21, 0x7F, 0x80, 0xF8};
  std::vector<double> scales = {0.5, 2};
  EXPECT_THAT(DequantInt4Ref(packed, scales, 1, 8, 4),
              Pointwise(DoubleNear(kTol), std::vector<double>{0.5, 1, -0.5, 3.5, 0, -16, -16, -2}));
}

TEST(DequantInt4RefTest, PartialLastGroup) {
  // k = 6 with groups of 4: columns 4 and 5 use the second scale.
  std::vector<double> packed = {0x11, 0x11, 0x11};
  EXPECT_THAT(DequantInt4Ref(packed, {1, 3}, 1, 6, 4),
              Pointwise(DoubleNear(kTol), std::vector<double>{1, 1, 1, 1, 3, 3}));
}

TEST(DequantGemmRefTest, UnitRowsSelectWeightColumns) {
  // W (n = 2, k = 4): row 0 = [1, 2, -1, 7], row 1 = [0, -8, -8, -1] (scale 1).
  // A's rows are the unit vectors e_0 and e_3, so C[i, r] = W[r, 0] and W[r, 3].
  std::vector<double> packed = {0x21, 0x7F, 0x80, 0xF8};
  std::vector<double> scales = {1, 1};
  std::vector<double> a = {1, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_THAT(DequantGemmRef(a, packed, scales, 2, 2, 4, 4),
              Pointwise(DoubleNear(kTol), std::vector<double>{1, 0, 7, -1}));
}

TEST(Conv2dRefTest, OnesKernelCountsNeighboursInsideTheImage) {
  // 3x3 image of ones, 3x3 kernel of ones, pad 1: corners see 4 pixels,
  // edges 6, the centre 9.
  std::vector<double> x(9, 1.0), w(9, 1.0);
  EXPECT_THAT(Conv2dRef(x, w, 1, 3, 3, 1, 1, 3, 3, 1, 1),
              Pointwise(DoubleNear(kTol), std::vector<double>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
  // Stride 2: output 2x2 at input centres (0, 0), (0, 2), (2, 0), (2, 2).
  EXPECT_THAT(Conv2dRef(x, w, 1, 3, 3, 1, 1, 3, 3, 2, 1),
              Pointwise(DoubleNear(kTol), std::vector<double>{4, 4, 4, 4}));
}

TEST(Conv2dRefTest, CentreTapMapsChannelsToFilters) {
  // 3x3 kernel, pad 1, only the centre tap set: filter 0 = channel 0,
  // filter 1 = 2 * channel 1, filter 2 = channel 0 - channel 1. NHWC input of
  // 2 images, 2x3 pixels, 2 channels.
  const int batch = 2, h = 2, wd = 3, c = 2, f = 3;
  std::vector<double> x = RandomVector(batch * h * wd * c, 51);
  std::vector<double> w(3 * 3 * c * f, 0.0);
  auto tap = [&](int r, int s, int ch, int fi) -> double& {
    return w[((static_cast<size_t>(r) * 3 + s) * c + ch) * f + fi];
  };
  tap(1, 1, 0, 0) = 1;
  tap(1, 1, 1, 1) = 2;
  tap(1, 1, 0, 2) = 1;
  tap(1, 1, 1, 2) = -1;
  std::vector<double> want;
  for (size_t p = 0; p < static_cast<size_t>(batch) * h * wd; ++p) {
    want.push_back(x[p * c]);
    want.push_back(2 * x[p * c + 1]);
    want.push_back(x[p * c] - x[p * c + 1]);
  }
  EXPECT_THAT(Conv2dRef(x, w, batch, h, wd, c, f, 3, 3, 1, 1), Pointwise(DoubleNear(kTol), want));
}

TEST(Conv2dRefTest, OneByOneKernelIsAMatrixProduct) {
  // 1x1 kernel, no padding: every pixel's channels times w [c, f].
  const int pixels = 2 * 2, c = 3, f = 2;
  std::vector<double> x = RandomVector(pixels * c, 61), w = RandomVector(c * f, 62);
  EXPECT_THAT(Conv2dRef(x, w, 1, 2, 2, c, f, 1, 1, 1, 0),
              Pointwise(DoubleNear(kTol), GemmRef(x, w, pixels, f, c, false, false)));
}

}  // namespace
}  // namespace tilec::reference
