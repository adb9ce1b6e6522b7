#include "compiler/inference/layout.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tilec::inference {
namespace {

using ir::BinaryOp;

// A tiny evaluator for the integer index expressions layouts produce; written
// here, independently of the library's own folding, so the test checks the
// expressions themselves.
int64_t Eval(const ir::Expr& e, const std::map<const ir::VarNode*, int64_t>& env) {
  if (const auto* i = e->as<ir::IntImmNode>()) return i->value;
  if (const auto* v = e->as<ir::VarNode>()) {
    auto it = env.find(v);
    if (it == env.end()) {
      ADD_FAILURE() << "unbound variable " << v->name;
      return 0;
    }
    return it->second;
  }
  const auto* b = e->as<ir::BinaryNode>();
  if (b == nullptr) {
    ADD_FAILURE() << "unexpected expression kind";
    return 0;
  }
  int64_t x = Eval(b->a, env), y = Eval(b->b, env);
  switch (b->op) {
    case BinaryOp::kAdd: return x + y;
    case BinaryOp::kSub: return x - y;
    case BinaryOp::kMul: return x * y;
    case BinaryOp::kDiv: return x / y;
    case BinaryOp::kMod: return x % y;
    case BinaryOp::kLt: return x < y;
    case BinaryOp::kAnd: return x && y;
    case BinaryOp::kBitXor: return x ^ y;
    case BinaryOp::kBitAnd: return x & y;
    default: ADD_FAILURE() << "unexpected op " << ir::BinaryOpName(b->op); return 0;
  }
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t Flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// Checks, through the IR expressions, that the forward and inverse maps are
// mutually inverse and that every element is held exactly `replicate` times.
void CheckLayout(const FragmentLayout& l) {
  SCOPED_TRACE(l.ToString());
  ASSERT_EQ(l.logical.size(), l.shape.size());
  ASSERT_EQ(l.index_vars.size(), l.shape.size());
  const int64_t n = Elements(l.shape);
  std::vector<int64_t> count(n, 0);
  int64_t valid_slots = 0;
  for (int64_t t = 0; t < l.threads; ++t) {
    for (int64_t s = 0; s < l.local_size; ++s) {
      std::map<const ir::VarNode*, int64_t> env = {{l.thread_var.get(), t}, {l.local_var.get(), s}};
      std::vector<int64_t> index;
      for (const ir::Expr& e : l.logical) index.push_back(Eval(e, env));
      ASSERT_EQ(index, l.LogicalAt(t, s)) << "thread " << t << " local " << s;
      bool in_shape = true;
      for (size_t d = 0; d < index.size(); ++d) in_shape = in_shape && index[d] < l.shape[d];
      bool valid = l.valid == nullptr ? true : Eval(l.valid, env) != 0;
      ASSERT_EQ(valid, in_shape) << "thread " << t << " local " << s;
      ASSERT_EQ(valid, l.ValidAt(t, s));
      int64_t replica = Eval(l.replica, env);
      ASSERT_EQ(replica, l.ReplicaOf(t));
      ASSERT_GE(replica, 0);
      ASSERT_LT(replica, l.replicate);
      if (!valid) continue;
      ++valid_slots;
      ++count[Flatten(index, l.shape)];
      // Forward maps send the element (and this replica) back to this slot.
      std::map<const ir::VarNode*, int64_t> fwd = {{l.replica_var.get(), replica}};
      for (size_t d = 0; d < index.size(); ++d) fwd[l.index_vars[d].get()] = index[d];
      ASSERT_EQ(Eval(l.local, fwd), s);
      ASSERT_EQ(Eval(l.thread, fwd), t);
    }
  }
  EXPECT_EQ(valid_slots, n * l.replicate);
  for (int64_t f = 0; f < n; ++f) ASSERT_EQ(count[f], l.replicate) << "element " << f;
  // And every (element, replica) maps to a slot holding it.
  for (int64_t f = 0; f < n; ++f) {
    std::vector<int64_t> index = Unflatten(f, l.shape);
    for (int64_t r = 0; r < l.replicate; ++r) {
      std::map<const ir::VarNode*, int64_t> fwd = {{l.replica_var.get(), r}};
      for (size_t d = 0; d < index.size(); ++d) fwd[l.index_vars[d].get()] = index[d];
      int64_t t = Eval(l.thread, fwd), s = Eval(l.local, fwd);
      ASSERT_EQ(t, l.ThreadOf(index, r));
      ASSERT_EQ(s, l.LocalOf(index));
      ASSERT_GE(t, 0);
      ASSERT_LT(t, l.threads);
      ASSERT_LT(s, l.local_size);
      ASSERT_EQ(l.LogicalAt(t, s), index);
      ASSERT_EQ(l.ReplicaOf(t), r);
    }
  }
}

TEST(FragmentLayoutTest, MmaAccumulatorMapsAreInverse) {
  CheckLayout(MmaAccumulator(64, 64, {2, 2}));
  CheckLayout(MmaAccumulator(64, 32, {4, 1}));
  CheckLayout(MmaAccumulator(16, 32, {1, 4}));
  CheckLayout(MmaAccumulator(128, 64, {2, 4}));
}

TEST(FragmentLayoutTest, MmaAccumulatorMatchesDocumentedFormula) {
  struct Case {
    int64_t m, n, wm, wn;
  };
  for (Case c :
       {Case{64, 64, 2, 2}, Case{64, 32, 4, 1}, Case{32, 64, 1, 4}, Case{128, 128, 2, 4}}) {
    FragmentLayout l = MmaAccumulator(c.m, c.n, {c.wm, c.wn});
    SCOPED_TRACE(l.ToString());
    const int64_t WM = c.m / c.wm, WN = c.n / c.wn, MI = WM / 16, NI = WN / 8;
    ASSERT_EQ(l.threads, 32 * c.wm * c.wn);
    ASSERT_EQ(l.local_size, MI * NI * 4);
    ASSERT_EQ(l.local_size, c.m * c.n / l.threads);
    EXPECT_EQ(l.replicate, 1);
    EXPECT_EQ(l.valid, nullptr);
    for (int64_t tx = 0; tx < l.threads; ++tx) {
      const int64_t lane = tx % 32, g = lane / 4, q = lane % 4, w = tx / 32;
      const int64_t wm = w % c.wm, wn = w / c.wm;
      for (int64_t mi = 0; mi < MI; ++mi) {
        for (int64_t ni = 0; ni < NI; ++ni) {
          for (int64_t h = 0; h < 2; ++h) {
            for (int64_t e = 0; e < 2; ++e) {
              int64_t local = ((mi * NI + ni) * 2 + h) * 2 + e;
              std::vector<int64_t> expected = {wm * WM + mi * 16 + h * 8 + g,
                                               wn * WN + ni * 8 + 2 * q + e};
              ASSERT_EQ(l.LogicalAt(tx, local), expected) << "tx " << tx << " local " << local;
            }
          }
        }
      }
    }
  }
}

TEST(FragmentLayoutTest, PaddedAccumulatorMarksPaddingInvalid) {
  // M = 8 is below one m16 tile: rows 8..15 of each tile are padding.
  FragmentLayout l = MmaAccumulator(8, 32, {1, 4});
  ASSERT_NE(l.valid, nullptr);
  EXPECT_EQ(l.local_size, 4);
  CheckLayout(l);
  CheckLayout(MmaAccumulator(100, 72, {2, 2}));
}

TEST(FragmentLayoutTest, RegisterAMatchesDocumentedFormula) {
  for (GemmWarpPartition p :
       {GemmWarpPartition{4, 1}, GemmWarpPartition{2, 2}, GemmWarpPartition{1, 4}}) {
    const int64_t M = 64, K = 32;
    FragmentLayout l = RegisterA(M, K, p, /*transposed=*/false);
    SCOPED_TRACE(l.ToString());
    CheckLayout(l);
    EXPECT_EQ(l.replicate, p.warps_n);
    const int64_t WM = M / p.warps_m, MI = WM / 16, KI = K / 8;
    for (int64_t tx = 0; tx < l.threads; ++tx) {
      const int64_t lane = tx % 32, g = lane / 4, q = lane % 4, wm = (tx / 32) % p.warps_m;
      for (int64_t mi = 0; mi < MI; ++mi) {
        for (int64_t kk = 0; kk < KI; ++kk) {
          for (int64_t h = 0; h < 2; ++h) {
            for (int64_t e = 0; e < 2; ++e) {
              int64_t local = ((mi * KI + kk) * 2 + h) * 2 + e;
              std::vector<int64_t> expected = {wm * WM + mi * 16 + h * 8 + g, kk * 8 + 2 * q + e};
              ASSERT_EQ(l.LogicalAt(tx, local), expected);
            }
          }
        }
      }
    }
    // With warps_n == 1 it is exactly the accumulator of an [M, K] output.
    EXPECT_EQ(SameLayout(l, MmaAccumulator(M, K, p)), p.warps_n == 1);
  }
  FragmentLayout t = RegisterA(32, 64, {2, 2}, /*transposed=*/true);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{64, 32}));
  CheckLayout(t);
  FragmentLayout n = RegisterA(32, 64, {2, 2}, /*transposed=*/false);
  for (int64_t tx = 0; tx < t.threads; ++tx) {
    for (int64_t s = 0; s < t.local_size; ++s) {
      std::vector<int64_t> a = t.LogicalAt(tx, s), b = n.LogicalAt(tx, s);
      ASSERT_EQ(a[0], b[1]);
      ASSERT_EQ(a[1], b[0]);
    }
  }
}

// AMD's MFMA register layouts (wave64), written from the ISA documents'
// lane tables: D register r of lane l in a 32x32 tile is row 8 * (r / 4) +
// 4 * (l / 32) + r % 4, column l % 32; in a 16x16 tile row 4 * (l / 16) + r,
// column l % 16. A(i, k) is in lane i + T * (k / 4) (k within one k-step),
// element k % 4. tl::gemm_*_mfma compute C^T = B^T A^T, so C's accumulator
// is D transposed: lane l holds row l % T, the columns D's rows name.
GemmWarpPartition Mfma(int64_t wm, int64_t wn, int64_t tile, int64_t replicas = 1) {
  GemmWarpPartition p{wm, wn, replicas};
  p.mfma = tile;
  return p;
}

TEST(FragmentLayoutTest, MfmaAccumulatorMatchesTheIsaLaneTables) {
  struct Case {
    int64_t m, n, wm, wn, tile;
  };
  for (Case c : {Case{64, 64, 2, 2, 32}, Case{128, 64, 4, 1, 32}, Case{64, 64, 2, 2, 16},
                 Case{32, 128, 1, 2, 16}}) {
    FragmentLayout l = MmaAccumulator(c.m, c.n, Mfma(c.wm, c.wn, c.tile));
    SCOPED_TRACE(l.ToString());
    CheckLayout(l);
    const int64_t T = c.tile, R = T * T / 64;
    const int64_t WM = c.m / c.wm, WN = c.n / c.wn, MI = WM / T, NI = WN / T;
    ASSERT_EQ(l.threads, 64 * c.wm * c.wn);
    ASSERT_EQ(l.local_size, MI * NI * R);
    EXPECT_EQ(l.valid, nullptr);
    for (int64_t tx = 0; tx < l.threads; ++tx) {
      const int64_t lane = tx % 64, w = tx / 64, wm = w % c.wm, wn = w / c.wm;
      for (int64_t mi = 0; mi < MI; ++mi) {
        for (int64_t ni = 0; ni < NI; ++ni) {
          for (int64_t r = 0; r < R; ++r) {
            const int64_t row = lane % T;
            const int64_t col = T == 32 ? 8 * (r / 4) + 4 * (lane / 32) + r % 4 : 4 * (lane / 16) + r;
            std::vector<int64_t> expected = {wm * WM + mi * T + row, wn * WN + ni * T + col};
            ASSERT_EQ(l.LogicalAt(tx, (mi * NI + ni) * R + r), expected) << "tx " << tx;
          }
        }
      }
    }
  }
  // Ragged tiles are padded, replicas hold copies.
  CheckLayout(MmaAccumulator(100, 72, Mfma(2, 2, 16)));
  CheckLayout(MmaAccumulator(32, 32, Mfma(1, 1, 32, 4)));
}

TEST(FragmentLayoutTest, MfmaRegisterAMatchesTheIsaLaneTables) {
  for (int64_t T : {32, 16}) {
    const GemmWarpPartition p = Mfma(2, 2, T);
    const int64_t M = 64, K = 32, kstep = T == 32 ? 8 : 16;
    FragmentLayout l = RegisterA(M, K, p, /*transposed=*/false);
    SCOPED_TRACE(l.ToString());
    CheckLayout(l);
    EXPECT_EQ(l.replicate, 2);
    const int64_t WM = M / 2, MI = WM / T, KI = K / kstep;
    for (int64_t tx = 0; tx < l.threads; ++tx) {
      const int64_t lane = tx % 64, wm = (tx / 64) % 2;
      for (int64_t mi = 0; mi < MI; ++mi) {
        for (int64_t kk = 0; kk < KI; ++kk) {
          for (int64_t j = 0; j < 4; ++j) {
            std::vector<int64_t> expected = {wm * WM + mi * T + lane % T,
                                             kk * kstep + 4 * (lane / T) + j};
            ASSERT_EQ(l.LogicalAt(tx, (mi * KI + kk) * 4 + j), expected) << "tx " << tx;
          }
        }
      }
    }
    // With one column of waves the A operand is the accumulator's layout: a
    // product feeds the next gemm in registers (FlashAttention's P @ V).
    EXPECT_FALSE(SameLayout(l, MmaAccumulator(M, K, p)));
    EXPECT_TRUE(SameLayout(RegisterA(M, K, Mfma(2, 1, T), false), MmaAccumulator(M, K, Mfma(2, 1, T))));
    CheckLayout(RegisterA(K, M, p, /*transposed=*/true));
  }
}

TEST(FragmentLayoutTest, MfmaPartitionPrefers32x32TilesWhenTheyUseEveryWave) {
  GemmWarpPartition p = ChooseMfmaPartition(ir::GemmPolicy::kSquare, 128, 128, 4);
  EXPECT_EQ(p.mfma, 32);
  EXPECT_EQ(p.warps_m * p.warps_n, 4);
  EXPECT_TRUE(p.exact);
  // 64 x 32 over four waves: 32 x 32 tiles would leave waves replicating.
  p = ChooseMfmaPartition(ir::GemmPolicy::kSquare, 64, 32, 4);
  EXPECT_EQ(p.mfma, 16);
  EXPECT_EQ(p.replicas, 1);
  // Ragged: padded 16 x 16 tiles.
  p = ChooseMfmaPartition(ir::GemmPolicy::kSquare, 100, 72, 4);
  EXPECT_EQ(p.mfma, 16);
  EXPECT_FALSE(p.exact);
  p = ChooseMfmaPartition(ir::GemmPolicy::kFullRow, 128, 64, 4);
  EXPECT_EQ(p.mfma, 32);
  EXPECT_EQ(p.warps_m, 4);
  EXPECT_EQ(p.warps_n, 1);
}

TEST(FragmentLayoutTest, BlockedDealsRunsRoundRobin) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t threads, vector;
  };
  for (const Case& c : {Case{{8, 64}, 128, 4}, Case{{4, 1024}, 128, 4}, Case{{64, 64}, 128, 8},
                        Case{{16, 8, 32}, 256, 2}, Case{{512}, 128, 1}}) {
    FragmentLayout l = Blocked(c.shape, c.threads, c.vector);
    SCOPED_TRACE(l.ToString());
    CheckLayout(l);
    EXPECT_EQ(l.replicate, 1);
    EXPECT_EQ(l.ContiguousRun(), c.vector);
    const int64_t n = Elements(c.shape);
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t run = flat / c.vector;
      std::vector<int64_t> index = Unflatten(flat, c.shape);
      ASSERT_EQ(l.ThreadOf(index, 0), run % c.threads) << flat;
      ASSERT_EQ(l.LocalOf(index), (run / c.threads) * c.vector + flat % c.vector) << flat;
    }
  }
}

TEST(FragmentLayoutTest, BlockedSmallAndRaggedShapes) {
  // Fewer runs than threads: the extra threads are replicas.
  FragmentLayout small = Blocked({2}, 128, 1);
  EXPECT_EQ(small.replicate, 64);
  EXPECT_EQ(small.local_size, 1);
  CheckLayout(small);
  // Dimensions that do not divide are padded.
  FragmentLayout ragged = Blocked({5, 25}, 128, 1);
  EXPECT_NE(ragged.valid, nullptr);
  CheckLayout(ragged);
  // A vector that does not divide the last dim falls back to 1.
  FragmentLayout odd = Blocked({8, 6}, 32, 4);
  EXPECT_EQ(odd.ContiguousRun(), 1);
  CheckLayout(odd);
  CheckLayout(Blocked({3, 7, 5}, 96, 1));
}

TEST(FragmentLayoutTest, ReplicatedHoldsEverythingEverywhere) {
  FragmentLayout l = Replicated({4, 3}, 64);
  EXPECT_EQ(l.replicate, 64);
  EXPECT_EQ(l.local_size, 12);
  CheckLayout(l);
  for (int64_t t = 0; t < 64; t += 7) {
    for (int64_t s = 0; s < 12; ++s) EXPECT_EQ(l.LogicalAt(t, s), Unflatten(s, {4, 3}));
  }
}

TEST(FragmentLayoutTest, ProjectedKeepsTheThreadsThatHeldEachRow) {
  std::vector<FragmentLayout> parents = {MmaAccumulator(64, 64, {2, 2}),
                                         MmaAccumulator(16, 32, {1, 4}), Blocked({8, 64}, 128, 4),
                                         Blocked({4, 1024}, 128, 4), MmaAccumulator(8, 32, {1, 4})};
  for (const FragmentLayout& parent : parents) {
    for (int dim = 0; dim < 2; ++dim) {
      FragmentLayout p = Projected(parent, dim);
      SCOPED_TRACE(p.ToString());
      CheckLayout(p);
      // A thread holds element x of the projection iff it held some element
      // of the parent whose index without `dim` is x.
      std::set<std::pair<int64_t, int64_t>> expected, actual;
      for (int64_t t = 0; t < parent.threads; ++t) {
        for (int64_t s = 0; s < parent.local_size; ++s) {
          if (!parent.ValidAt(t, s)) continue;
          std::vector<int64_t> idx = parent.LogicalAt(t, s);
          expected.insert({t, idx[1 - dim]});
        }
        for (int64_t s = 0; s < p.local_size; ++s) {
          if (p.ValidAt(t, s)) actual.insert({t, p.LogicalAt(t, s)[0]});
        }
      }
      EXPECT_EQ(actual, expected);
    }
  }
  // 1-D source: the result has shape [1], held by every thread that held any.
  FragmentLayout flat = Projected(Blocked({32}, 128, 1), 0);
  EXPECT_EQ(flat.shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(flat.replicate, 128);
  CheckLayout(flat);
}

TEST(FragmentLayoutTest, SameLayoutComparesPlacement) {
  EXPECT_TRUE(SameLayout(MmaAccumulator(64, 64, {2, 2}), MmaAccumulator(64, 64, {2, 2})));
  EXPECT_FALSE(SameLayout(MmaAccumulator(64, 64, {2, 2}), MmaAccumulator(64, 64, {4, 1})));
  EXPECT_FALSE(SameLayout(MmaAccumulator(64, 64, {2, 2}), Blocked({64, 64}, 128, 2)));
  // Different constructions of the same placement are the same layout.
  EXPECT_TRUE(SameLayout(Projected(MmaAccumulator(64, 32, {4, 1}), 1),
                         Projected(MmaAccumulator(64, 64, {4, 1}), 1)));
  EXPECT_FALSE(SameLayout(Projected(MmaAccumulator(64, 64, {2, 2}), 1),
                          Projected(MmaAccumulator(64, 64, {4, 1}), 1)));
}

TEST(FragmentLayoutTest, MakeFragmentLayoutRejectsBrokenDigits) {
  // Thread strides with a gap.
  EXPECT_FALSE(MakeFragmentLayout("gap", {8}, 4, {{0, 2, true, 1, 0}, {0, 4, false, 1, 0}}).ok());
  // Not enough digits for the dimension.
  EXPECT_FALSE(MakeFragmentLayout("short", {8}, 2, {{0, 2, true, 1, 0}, {0, 2, false, 1, 0}}).ok());
  // Thread digits numbering fewer threads than the block has.
  EXPECT_FALSE(MakeFragmentLayout("few", {8}, 4, {{0, 2, true, 1, 0}, {0, 4, false, 1, 0}}).ok());
  absl::StatusOr<FragmentLayout> ok =
      MakeFragmentLayout("ok", {8}, 2, {{0, 4, false, 1, 0}, {0, 2, true, 1, 0}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  CheckLayout(*ok);
}

// ---------------------------------------------------------------------------

// docs/cuda_backend.md, "Shared-memory layouts", written out again here
// (TR: the rows of one matrix).
int64_t DocSwizzle(int64_t r, int64_t c, int64_t C, int64_t E, int64_t TR) {
  const int64_t RB = C * E, k = c * E / 16, e = c % (16 / E);
  if (RB > 128) {
    const int64_t t = r / TR, i = r % TR;
    return (t * TR * RB + (k / 8) * TR * 128 + i * 128 + ((k % 8) ^ (i % 8)) * 16) / E + e;
  }
  const int64_t k2 = k ^ ((r / (128 / RB)) % (RB / 16));
  return r * C + k2 * (16 / E) + e;
}

TEST(SharedLayoutTest, SwizzledMatchesDocsAndPermutesTheMatrix) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t E;
  };
  for (const Case& c : {Case{{64, 32}, 2}, Case{{64, 64}, 2}, Case{{32, 16}, 2},
                        Case{{16, 128}, 2}, Case{{64, 32}, 4}, Case{{32, 8}, 4},
                        Case{{32, 64}, 1}, Case{{16, 256}, 1}, Case{{3, 16, 192}, 2},
                        Case{{2, 8, 256}, 2}}) {
    const int64_t cols = c.shape.back(), tr = c.shape[c.shape.size() - 2];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < c.shape.size(); ++d) rows *= c.shape[d];
    ASSERT_TRUE(CanSwizzle(cols, c.E)) << cols << " x " << c.E;
    SharedLayout s = SwizzledLayout(c.shape, c.E);
    SCOPED_TRACE(s.ToString());
    ir::Var r = ir::MakeVar("r"), col = ir::MakeVar("c");
    ir::Expr e = s.OffsetExpr(r, col);
    std::set<int64_t> seen;
    for (int64_t row = 0; row < rows; ++row) {
      for (int64_t cc = 0; cc < cols; ++cc) {
        int64_t off = s.Offset(row, cc);
        ASSERT_EQ(off, DocSwizzle(row, cc, cols, c.E, tr));
        ASSERT_EQ(Eval(e, {{r.get(), row}, {col.get(), cc}}), off);
        if (cols * c.E <= 128) {  // short rows stay within themselves
          ASSERT_GE(off, row * cols);
          ASSERT_LT(off, (row + 1) * cols);
        }
        seen.insert(off);
      }
    }
    // A permutation of the buffer.
    ASSERT_EQ(static_cast<int64_t>(seen.size()), rows * cols);
    ASSERT_EQ(*seen.rbegin(), rows * cols - 1);
    // 8 consecutive rows, same 16-byte chunk: distinct bank groups.
    for (int64_t r0 = 0; r0 + 8 <= rows; r0 += 8) {
      for (int64_t k = 0; k < cols * c.E / 16; ++k) {
        std::set<int64_t> groups;
        for (int64_t row = r0; row < r0 + 8; ++row) {
          groups.insert((s.Offset(row, k * 16 / c.E) * c.E / 16) % 8);
        }
        ASSERT_EQ(groups.size(), 8u) << "rows " << r0 << " chunk " << k;
      }
    }
  }
}

TEST(SharedLayoutTest, RowMajorAndHigherRanks) {
  SharedLayout s = RowMajorLayout({2, 4, 16}, 2);
  EXPECT_EQ(s.rows, 8);
  EXPECT_EQ(s.cols, 16);
  ir::Var a = ir::MakeVar("a"), b = ir::MakeVar("b"), c = ir::MakeVar("c");
  ir::Expr e = s.IndexExpr({a, b, c});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t k = 0; k < 16; ++k) {
        ASSERT_EQ(Eval(e, {{a.get(), i}, {b.get(), j}, {c.get(), k}}), (i * 4 + j) * 16 + k);
      }
    }
  }
  SharedLayout z = SwizzledLayout({2, 8, 64}, 2);
  ir::Expr ze = z.IndexExpr({a, b, c});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      for (int64_t k = 0; k < 64; ++k) {
        ASSERT_EQ(Eval(ze, {{a.get(), i}, {b.get(), j}, {c.get(), k}}), z.Offset(i * 8 + j, k));
      }
    }
  }
}

TEST(SharedLayoutTest, CanSwizzleOnlyWhenTheSwizzleStaysInTheRow) {
  EXPECT_TRUE(CanSwizzle(16, 2));   // 32 bytes
  EXPECT_TRUE(CanSwizzle(32, 2));   // 64
  EXPECT_TRUE(CanSwizzle(64, 2));   // 128
  EXPECT_TRUE(CanSwizzle(128, 2));  // 256
  EXPECT_FALSE(CanSwizzle(8, 2));   // 16
  EXPECT_FALSE(CanSwizzle(48, 2));  // 96
  EXPECT_FALSE(CanSwizzle(80, 2));  // 160
  EXPECT_FALSE(CanSwizzle(33, 4));
}

// ---------------------------------------------------------------------------

TEST(WarpPartitionTest, PoliciesFollowTheDocs) {
  using P = ir::GemmPolicy;
  auto wp = [](P p, int64_t m, int64_t n, int64_t w) {
    GemmWarpPartition r = ChooseWarpPartition(p, m, n, w);
    return std::vector<int64_t>{r.warps_m, r.warps_n, r.replicas, r.exact ? 1 : 0};
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(wp(P::kSquare, 64, 64, 4), (V{2, 2, 1, 1}));
  EXPECT_EQ(wp(P::kSquare, 128, 128, 8), (V{4, 2, 1, 1}));  // tie |32-64| = |64-32|: larger warps_m
  EXPECT_EQ(wp(P::kSquare, 16, 32, 4), (V{1, 4, 1, 1}));
  EXPECT_EQ(wp(P::kSquare, 128, 32, 4), (V{4, 1, 1, 1}));
  EXPECT_EQ(wp(P::kFullRow, 64, 32, 4), (V{4, 1, 1, 1}));
  EXPECT_EQ(wp(P::kFullRow, 32, 32, 4), (V{2, 2, 1, 1}));  // falls back to Square
  EXPECT_EQ(wp(P::kFullRow, 16, 64, 4), (V{1, 4, 1, 1}));  // falls back to Square
  EXPECT_EQ(wp(P::kFullCol, 16, 64, 4), (V{1, 4, 1, 1}));
  EXPECT_EQ(wp(P::kFullCol, 64, 16, 4), (V{4, 1, 1, 1}));  // falls back to Square
  EXPECT_EQ(wp(P::kSquare, 64, 64, 1), (V{1, 1, 1, 1}));
  // No exact partition of 4 warps: 2 warps compute the tile, twice.
  EXPECT_EQ(wp(P::kSquare, 16, 16, 4), (V{1, 2, 2, 1}));
  EXPECT_EQ(wp(P::kFullRow, 16, 8, 4), (V{1, 1, 4, 1}));
  // Nothing divides even with one warp: all warps, padded.
  EXPECT_EQ(wp(P::kFullCol, 8, 32, 4), (V{1, 4, 1, 0}));  // FullCol's own condition holds
  EXPECT_EQ(wp(P::kSquare, 8, 8, 4), (V{2, 2, 1, 0}));    // equal padding: the squarest
  EXPECT_EQ(wp(P::kSquare, 8, 64, 4), (V{1, 4, 1, 0}));   // 16 x 64 beats 32 x 64 and 64 x 64
}

// Independent of the implementation: the partition uses the most warps that
// admit an exact factorisation, and among those the squarest.
TEST(WarpPartitionTest, SquareIsTheSquarestExactFactorisation) {
  auto exact = [](int64_t m, int64_t n, int64_t a, int64_t b) {
    return m % (16 * a) == 0 && n % (8 * b) == 0;
  };
  for (int64_t warps : {1, 2, 4, 8, 16}) {
    for (int64_t m : {16, 32, 48, 64, 96, 128, 256}) {
      for (int64_t n : {8, 16, 32, 64, 128, 256}) {
        GemmWarpPartition p = ChooseWarpPartition(ir::GemmPolicy::kSquare, m, n, warps);
        SCOPED_TRACE(::testing::Message() << m << "x" << n << " warps " << warps);
        ASSERT_TRUE(p.exact);  // one warp always divides these
        const int64_t used = p.warps_m * p.warps_n;
        ASSERT_EQ(used * p.replicas, warps);
        ASSERT_TRUE(exact(m, n, p.warps_m, p.warps_n));
        for (int64_t w = used + 1; w <= warps; ++w) {
          if (warps % w != 0) continue;
          for (int64_t a = 1; a <= w; ++a) {
            if (w % a != 0) continue;
            ASSERT_FALSE(exact(m, n, a, w / a)) << w << " warps as " << a;
          }
        }
        double diff = std::abs(double(m) / p.warps_m - double(n) / p.warps_n);
        for (int64_t a = 1; a <= used; ++a) {
          int64_t b = used / a;
          if (used % a != 0 || !exact(m, n, a, b)) continue;
          double d = std::abs(double(m) / a - double(n) / b);
          ASSERT_TRUE(d > diff || (d == diff && a <= p.warps_m)) << a << "x" << b;
        }
      }
    }
  }
}

TEST(FragmentLayoutTest, ReplicatedWarpGroupsHoldTheSameTile) {
  GemmWarpPartition p{1, 2, 2, true};
  FragmentLayout acc = MmaAccumulator(16, 16, p);
  EXPECT_EQ(acc.threads, 128);
  EXPECT_EQ(acc.replicate, 2);
  CheckLayout(acc);
  // Warps 2 and 3 hold what warps 0 and 1 hold.
  for (int64_t t = 0; t < 64; ++t) {
    for (int64_t s = 0; s < acc.local_size; ++s) {
      ASSERT_EQ(acc.LogicalAt(t, s), acc.LogicalAt(t + 64, s));
    }
  }
  EXPECT_TRUE(SameLayout(Projected(acc, 1), Projected(MmaAccumulator(16, 32, {1, 4}), 1)));
  FragmentLayout a = RegisterA(16, 16, p, false);
  EXPECT_EQ(a.replicate, 4);
  CheckLayout(a);
}

}  // namespace
}  // namespace tilec::inference
