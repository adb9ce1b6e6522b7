// Tile operators run through the interpreter, each against a naive loop
// written here: copy with clipping, gemm, fill, reduce, cumsum, atomic_add,
// and the loop kinds.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/interp/interp.h"
#include "tests/compiler/interp/test_programs.h"

namespace tilec::interp {
namespace {

using ir::DType;
using ir::ReduceKind;
using testing::Global;
using testing::Ints;
using testing::Local;
using testing::MakeProgram;
using testing::OneBlock;
using testing::RegionOf;

// Row-major element of a rank-2 tensor.
double At(const Tensor& t, int64_t r, int64_t c) { return t.GetDouble(r * t.shape()[1] + c); }

TEST(CopyTest, ClipsSourceOnEverySide) {
  const uint64_t seed = 101;
  ir::Buffer a = Global("A", DType::kFloat32, {5, 7});
  ir::Buffer s = Local("S", DType::kFloat32, {4, 4}, ir::Scope::kShared);
  // Tiles hanging over the top-left, bottom-right, top-right and bottom-left.
  const std::vector<std::pair<int64_t, int64_t>> offsets = {{-1, -2}, {3, 5}, {-2, 4}, {2, -3}};
  std::vector<ir::Buffer> params = {a};
  std::vector<ir::Stmt> body = {ir::Allocate(s)};
  for (size_t k = 0; k < offsets.size(); ++k) {
    ir::Buffer o = Global("O" + std::to_string(k), DType::kFloat32, {4, 4});
    params.push_back(o);
    body.push_back(ir::Copy(RegionOf(a, Ints({offsets[k].first, offsets[k].second}), Ints({4, 4})),
                            ir::FullRegion(s)));
    body.push_back(ir::Copy(ir::FullRegion(s), ir::FullRegion(o)));
  }
  ir::Program p = MakeProgram(params, OneBlock(ir::Seq(body)));
  std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {5, 7}, seed)};
  for (size_t k = 0; k < offsets.size(); ++k)
    args.push_back(RandomTensor(DType::kFloat32, {4, 4}, k));
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (size_t k = 0; k < offsets.size(); ++k) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t r = offsets[k].first + i, c = offsets[k].second + j;
        const double want = (r >= 0 && r < 5 && c >= 0 && c < 7) ? At(args[0], r, c) : 0.0;
        EXPECT_EQ(At(args[k + 1], i, j), want)
            << "tile " << k << " [" << i << ", " << j << "] seed " << seed;
      }
    }
  }
}

TEST(CopyTest, DropsWritesOutsideTheDestination) {
  const uint64_t seed = 102;
  ir::Buffer a = Global("A", DType::kFloat32, {4, 4});
  ir::Buffer b = Global("B", DType::kFloat32, {5, 7});
  // B[3:7, 5:9] = A: only B[3:5, 5:7] exists.
  ir::Program p = MakeProgram(
      {a, b}, OneBlock(ir::Copy(ir::FullRegion(a), RegionOf(b, Ints({3, 5}), Ints({4, 4})))));
  std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {4, 4}, seed),
                              RandomTensor(DType::kFloat32, {5, 7}, seed + 1)};
  const Tensor before = args[1];
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t c = 0; c < 7; ++c) {
      const double want = (r >= 3 && c >= 5) ? At(args[0], r - 3, c - 5) : At(before, r, c);
      EXPECT_EQ(At(args[1], r, c), want) << r << ", " << c << " seed " << seed;
    }
  }
}

TEST(CopyTest, DropsExtentOneDimsAndConverts) {
  const uint64_t seed = 103;
  ir::Buffer x = Global("X", DType::kFloat32, {2, 4, 3, 3});
  ir::Buffer o = Global("O", DType::kInt32, {4, 3});
  // O = int(X[1, 0:4, 2, 0:3] * 10)
  ir::Buffer f = Local("F", DType::kFloat32, {4, 3});
  ir::Var i = ir::MakeVar("i"), j = ir::MakeVar("j");
  ir::Program p = MakeProgram(
      {x, o},
      OneBlock(ir::Seq(
          {ir::Allocate(f),
           ir::Copy(RegionOf(x, Ints({1, 0, 2, 0}), Ints({1, 4, 1, 3})), ir::FullRegion(f)),
           ir::For(i, ir::IntImm(0), ir::IntImm(4), ir::ForKind::kParallel,
                   ir::For(j, ir::IntImm(0), ir::IntImm(3), ir::ForKind::kParallel,
                           ir::Store(f, {i, j},
                                     testing::Mul(ir::Load(f, {i, j}), ir::FloatImm(10.0))))),
           ir::Copy(ir::FullRegion(f), ir::FullRegion(o))})));
  std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {2, 4, 3, 3}, seed),
                              Tensor(DType::kInt32, {4, 3})};
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 3; ++c) {
      const float v = static_cast<float>(args[0].GetDouble(((1 * 4 + r) * 3 + 2) * 3 + c)) * 10.0f;
      EXPECT_EQ(args[1].GetInt(r * 3 + c), static_cast<int32_t>(v)) << "seed " << seed;
    }
  }
}

TEST(CopyTest, MismatchedExtentsAreAnError) {
  ir::Buffer a = Global("A", DType::kFloat32, {4, 4});
  ir::Buffer b = Global("B", DType::kFloat32, {4, 2});
  ir::Program p = MakeProgram({a, b}, OneBlock(ir::Copy(ir::FullRegion(a), ir::FullRegion(b))));
  std::vector<Tensor> args = {Tensor(DType::kFloat32, {4, 4}), Tensor(DType::kFloat32, {4, 2})};
  absl::Status st = RunProgram(p, args);
  EXPECT_NE(st.message().find("copy from A[0:4, 0:4] to B[0:4, 0:2]: the extents do not match"),
            std::string::npos)
      << st;
}

// C (M x N, float32) = A @ B over K in two pipelined k-steps through shared
// memory, for every transpose combination, against a float loop.
class GemmTest : public ::testing::TestWithParam<std::pair<bool, bool>> {};

TEST_P(GemmTest, MatchesNaiveLoop) {
  const auto [ta, tb] = GetParam();
  const int64_t m = 16, n = 8, k = 32, bk = 16;
  const uint64_t seed = 200 + 2 * ta + tb;
  ir::Buffer a = ta ? Global("A", DType::kFloat16, {k, m}) : Global("A", DType::kFloat16, {m, k});
  ir::Buffer b = tb ? Global("B", DType::kFloat16, {n, k}) : Global("B", DType::kFloat16, {k, n});
  ir::Buffer c = Global("C", DType::kFloat32, {m, n});
  ir::Buffer as = ta ? Local("As", DType::kFloat16, {bk, m}, ir::Scope::kShared)
                     : Local("As", DType::kFloat16, {m, bk}, ir::Scope::kShared);
  ir::Buffer bs = tb ? Local("Bs", DType::kFloat16, {n, bk}, ir::Scope::kShared)
                     : Local("Bs", DType::kFloat16, {bk, n}, ir::Scope::kShared);
  ir::Buffer cf = Local("Cf", DType::kFloat32, {m, n});
  ir::Var ko = ir::MakeVar("ko");
  ir::Expr k0 = testing::Mul(ko, ir::IntImm(bk));
  ir::Region a_tile = ta ? RegionOf(a, {k0, ir::IntImm(0)}, Ints({bk, m}))
                         : RegionOf(a, {ir::IntImm(0), k0}, Ints({m, bk}));
  ir::Region b_tile = tb ? RegionOf(b, {ir::IntImm(0), k0}, Ints({n, bk}))
                         : RegionOf(b, {k0, ir::IntImm(0)}, Ints({bk, n}));
  auto gemm = std::make_shared<ir::GemmNode>();
  gemm->a = ir::FullRegion(as);
  gemm->b = ir::FullRegion(bs);
  gemm->c = ir::FullRegion(cf);
  gemm->transpose_a = ta;
  gemm->transpose_b = tb;
  ir::Program p = MakeProgram(
      {a, b, c},
      OneBlock(ir::Seq({ir::Allocate(as), ir::Allocate(bs), ir::Allocate(cf),
                        ir::Fill(ir::FullRegion(cf), ir::FloatImm(0.0)),
                        ir::For(ko, ir::IntImm(0), ir::IntImm(k / bk), ir::ForKind::kPipelined,
                                ir::Seq({ir::Copy(a_tile, ir::FullRegion(as)),
                                         ir::Copy(b_tile, ir::FullRegion(bs)), gemm})),
                        ir::Copy(ir::FullRegion(cf), ir::FullRegion(c))})));
  std::vector<Tensor> args = {
      RandomTensor(DType::kFloat16, ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k},
                   seed),
      RandomTensor(DType::kFloat16, tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
                   seed + 7),
      Tensor(DType::kFloat32, {m, n})};
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float av = static_cast<float>(ta ? At(args[0], kk, i) : At(args[0], i, kk));
        const float bv = static_cast<float>(tb ? At(args[1], j, kk) : At(args[1], kk, j));
        acc = acc + av * bv;
      }
      EXPECT_EQ(At(args[2], i, j), acc) << "[" << i << ", " << j << "] seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Transposes, GemmTest,
                         ::testing::Values(std::pair{false, false}, std::pair{false, true},
                                           std::pair{true, false}, std::pair{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.first ? "T" : "N") +
                                  (info.param.second ? "T" : "N");
                         });

// One gemm directly on global buffers: C = (clear ? 0 : C) + A @ B.
ir::Program SingleGemm(DType acc, bool clear_accum, int64_t m, int64_t n, int64_t k) {
  ir::Buffer a = Global("A", DType::kFloat16, {m, k});
  ir::Buffer b = Global("B", DType::kFloat16, {k, n});
  ir::Buffer c = Global("C", acc, {m, n});
  auto gemm = std::make_shared<ir::GemmNode>();
  gemm->a = ir::FullRegion(a);
  gemm->b = ir::FullRegion(b);
  gemm->c = ir::FullRegion(c);
  gemm->clear_accum = clear_accum;
  return MakeProgram({a, b, c}, OneBlock(gemm));
}

TEST(GemmAccumulateTest, ClearAccumIgnoresOldValuesAndOtherwiseAdds) {
  const uint64_t seed = 210;
  for (bool clear : {true, false}) {
    std::vector<Tensor> args = {RandomTensor(DType::kFloat16, {4, 8}, seed),
                                RandomTensor(DType::kFloat16, {8, 3}, seed + 1),
                                RandomTensor(DType::kFloat32, {4, 3}, seed + 2)};
    const Tensor old = args[2];
    ASSERT_TRUE(RunProgram(SingleGemm(DType::kFloat32, clear, 4, 3, 8), args).ok());
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        float acc = clear ? 0.0f : static_cast<float>(At(old, i, j));
        for (int64_t kk = 0; kk < 8; ++kk) {
          acc =
              acc + static_cast<float>(At(args[0], i, kk)) * static_cast<float>(At(args[1], kk, j));
        }
        EXPECT_EQ(At(args[2], i, j), acc) << "clear=" << clear << " seed " << seed;
      }
    }
  }
}

#if defined(__FLT16_MAX__)
TEST(GemmAccumulateTest, Float16AccumulatorSumsInFloat32AndRoundsOncePerGemm) {
  const uint64_t seed = 211;
  const int64_t k = 256;  // long enough for rounding every step to differ
  for (bool clear : {true, false}) {
    std::vector<Tensor> args = {RandomTensor(DType::kFloat16, {2, k}, seed),
                                RandomTensor(DType::kFloat16, {k, 2}, seed + 1),
                                RandomTensor(DType::kFloat16, {2, 2}, seed + 2)};
    const Tensor old = args[2];
    ASSERT_TRUE(RunProgram(SingleGemm(DType::kFloat16, clear, 2, 2, k), args).ok());
    bool differs_from_every_step = false;
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const float start = clear ? 0.0f : static_cast<float>(At(old, i, j));
        float acc32 = start;
        _Float16 step = static_cast<_Float16>(start);
        for (int64_t kk = 0; kk < k; ++kk) {
          const float a = static_cast<float>(At(args[0], i, kk)),
                      b = static_cast<float>(At(args[1], kk, j));
          acc32 += a * b;
          step = static_cast<_Float16>(static_cast<float>(step) +
                                       static_cast<float>(static_cast<_Float16>(a * b)));
        }
        EXPECT_EQ(At(args[2], i, j), static_cast<double>(static_cast<_Float16>(acc32)))
            << "clear=" << clear << " seed " << seed;
        differs_from_every_step |= static_cast<double>(step) != At(args[2], i, j);
      }
    }
    EXPECT_TRUE(differs_from_every_step) << "the test data does not tell the two roundings apart";
  }
}
#endif

TEST(GemmAccumulateTest, ShapeMismatchIsAnError) {
  ir::Buffer a = Global("A", DType::kFloat16, {4, 8});
  ir::Buffer b = Global("B", DType::kFloat16, {6, 3});
  ir::Buffer c = Global("C", DType::kFloat32, {4, 3});
  auto gemm = std::make_shared<ir::GemmNode>();
  gemm->a = ir::FullRegion(a);
  gemm->b = ir::FullRegion(b);
  gemm->c = ir::FullRegion(c);
  std::vector<Tensor> args = {Tensor(DType::kFloat16, {4, 8}), Tensor(DType::kFloat16, {6, 3}),
                              Tensor(DType::kFloat32, {4, 3})};
  absl::Status st = RunProgram(MakeProgram({a, b, c}, OneBlock(gemm)), args);
  EXPECT_NE(st.message().find("gemm shapes do not agree: op(A) is [4, 8]"), std::string::npos)
      << st;
}

TEST(FillTest, FillsARegionAndClipsAtTheBorder) {
  const uint64_t seed = 300;
  ir::Buffer b = Global("B", DType::kFloat16, {5, 7});
  ir::Program p = MakeProgram(
      {b},
      OneBlock(ir::Seq({ir::Fill(RegionOf(b, Ints({1, 2}), Ints({2, 2})), ir::FloatImm(7.0)),
                        ir::Fill(RegionOf(b, Ints({3, 5}), Ints({4, 4})), ir::FloatImm(-1.5))})));
  std::vector<Tensor> args = {RandomTensor(DType::kFloat16, {5, 7}, seed)};
  const Tensor before = args[0];
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t c = 0; c < 7; ++c) {
      double want = At(before, r, c);
      if (r >= 1 && r < 3 && c >= 2 && c < 4) want = 7.0;
      if (r >= 3 && c >= 5) want = -1.5;
      EXPECT_EQ(At(args[0], r, c), want) << r << ", " << c << " seed " << seed;
    }
  }
}

// The reduction of `xs` by `kind` as TileLang defines it, in float.
float NaiveReduce(ReduceKind kind, const std::vector<float>& xs, bool clear, float old) {
  const float inf = std::numeric_limits<float>::infinity();
  float acc = 0;
  switch (kind) {
    case ReduceKind::kSum:
      for (float x : xs) acc = acc + x;
      return clear ? acc : old + acc;
    case ReduceKind::kAbsSum:
      for (float x : xs) acc = acc + std::fabs(x);
      return clear ? acc : old + acc;
    case ReduceKind::kMax:
      acc = clear ? -inf : old;
      for (float x : xs) acc = std::fmax(acc, x);
      return acc;
    case ReduceKind::kMin:
      acc = clear ? inf : old;
      for (float x : xs) acc = std::fmin(acc, x);
      return acc;
    case ReduceKind::kAbsMax:
      acc = clear ? 0.0f : std::fabs(old);
      for (float x : xs) acc = std::fmax(acc, std::fabs(x));
      return acc;
  }
  return 0;
}

TEST(ReduceTest, EveryKindAlongEachDimWithAndWithoutClear) {
  const uint64_t seed = 400;
  const ReduceKind kinds[] = {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin,
                              ReduceKind::kAbsSum, ReduceKind::kAbsMax};
  for (ReduceKind kind : kinds) {
    for (int dim : {0, 1}) {
      for (bool clear : {true, false}) {
        SCOPED_TRACE(::testing::Message() << ir::ReduceKindName(kind) << " dim " << dim << " clear "
                                          << clear << " seed " << seed);
        const int64_t rows = 3, cols = 5, out = dim == 0 ? cols : rows;
        ir::Buffer x = Global("X", DType::kFloat32, {rows, cols});
        ir::Buffer y = Global("Y", DType::kFloat32, {out});
        ir::Program p =
            MakeProgram({x, y}, OneBlock(std::make_shared<ir::ReduceNode>(kind, x, y, dim, clear)));
        std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {rows, cols}, seed),
                                    RandomTensor(DType::kFloat32, {out}, seed + 1)};
        const Tensor old = args[1];
        ASSERT_TRUE(RunProgram(p, args).ok());
        for (int64_t o = 0; o < out; ++o) {
          std::vector<float> xs;
          for (int64_t r = 0; r < (dim == 0 ? rows : cols); ++r) {
            xs.push_back(static_cast<float>(dim == 0 ? At(args[0], r, o) : At(args[0], o, r)));
          }
          const float want = NaiveReduce(kind, xs, clear, static_cast<float>(old.GetDouble(o)));
          EXPECT_EQ(args[1].GetDouble(o), want) << "output " << o;
        }
      }
    }
  }
}

TEST(ReduceTest, OneDimensionalSourceAndNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ir::Buffer x = Global("X", DType::kFloat32, {4});
  ir::Buffer y = Global("Y", DType::kFloat32, {1});
  ir::Program p = MakeProgram(
      {x, y}, OneBlock(std::make_shared<ir::ReduceNode>(ReduceKind::kMax, x, y, 0, true)));
  Tensor in(DType::kFloat32, {4});
  for (int i = 0; i < 4; ++i) in.SetDouble(i, std::vector<double>{1.0, nan, 3.0, -2.0}[i]);
  std::vector<Tensor> args = {in, Tensor(DType::kFloat32, {1})};
  ASSERT_TRUE(RunProgram(p, args).ok());
  EXPECT_EQ(args[1].GetDouble(0), 3.0);  // max ignores the NaN
}

TEST(ReduceTest, IntegerSumWrapsInTheDestinationDType) {
  ir::Buffer x = Global("X", DType::kInt32, {3});
  ir::Buffer y = Global("Y", DType::kInt8, {1});
  ir::Program p = MakeProgram(
      {x, y}, OneBlock(std::make_shared<ir::ReduceNode>(ReduceKind::kSum, x, y, 0, true)));
  Tensor in(DType::kInt32, {3});
  in.SetInt(0, 100);
  in.SetInt(1, 100);
  in.SetInt(2, 1);
  std::vector<Tensor> args = {in, Tensor(DType::kInt8, {1})};
  ASSERT_TRUE(RunProgram(p, args).ok());
  EXPECT_EQ(args[1].GetInt(0), static_cast<int8_t>(201));
}

TEST(CumsumTest, ForwardReverseAlongEachDimAndInPlace) {
  const uint64_t seed = 500;
  for (int dim : {0, 1}) {
    for (bool reverse : {false, true}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "dim " << dim << " reverse " << reverse << " in place "
                                          << in_place << " seed " << seed);
        ir::Buffer x = Global("X", DType::kFloat32, {3, 4});
        ir::Buffer y = Global("Y", DType::kFloat32, {3, 4});
        ir::Program p = MakeProgram(
            {x, y}, OneBlock(std::make_shared<ir::CumsumNode>(x, in_place ? x : y, dim, reverse)));
        std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {3, 4}, seed),
                                    Tensor(DType::kFloat32, {3, 4})};
        const Tensor in = args[0];
        ASSERT_TRUE(RunProgram(p, args).ok());
        const Tensor& out = in_place ? args[0] : args[1];
        const int64_t lines = dim == 0 ? 4 : 3, len = dim == 0 ? 3 : 4;
        for (int64_t l = 0; l < lines; ++l) {
          float acc = 0;
          for (int64_t s = 0; s < len; ++s) {
            const int64_t r = reverse ? len - 1 - s : s;
            const int64_t row = dim == 0 ? r : l, col = dim == 0 ? l : r;
            acc = acc + static_cast<float>(At(in, row, col));
            EXPECT_EQ(At(out, row, col), acc) << row << ", " << col;
          }
        }
      }
    }
  }
}

TEST(AtomicAddTest, ScalarFormFromEveryBlock) {
  ir::Buffer out = Global("out", DType::kFloat32, {2});
  ir::Var bx = ir::MakeVar("bx");
  auto add = std::make_shared<ir::AtomicAddNode>(
      RegionOf(out, Ints({1}), Ints({1})), std::nullopt,
      ir::Cast(DType::kFloat32, testing::Add(bx, ir::IntImm(1))));
  ir::Program p = MakeProgram({out}, testing::Kernel(Ints({8}), {bx}, add));
  Tensor init(DType::kFloat32, {2});
  init.SetDouble(0, 0.5);
  init.SetDouble(1, 0.25);
  std::vector<Tensor> args = {init};
  ASSERT_TRUE(RunProgram(p, args).ok());
  EXPECT_EQ(args[0].GetDouble(0), 0.5);
  EXPECT_EQ(args[0].GetDouble(1), 0.25 + 36);

  auto oob = std::make_shared<ir::AtomicAddNode>(RegionOf(out, Ints({2}), Ints({1})), std::nullopt,
                                                 ir::FloatImm(1.0));
  absl::Status st = RunProgram(MakeProgram({out}, OneBlock(oob)), args);
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("atomic_add out[2] is out of bounds of shape [2]"), std::string::npos)
      << st;
}

TEST(AtomicAddTest, TileFormClipsAtTheBorder) {
  const uint64_t seed = 600;
  // Y[5, 5] += X tiles of 3x3 from a 2x2 grid; the last row/column of tiles
  // hangs over Y's border, and X (6x6) supplies the values.
  ir::Buffer x = Global("X", DType::kFloat32, {6, 6});
  ir::Buffer y = Global("Y", DType::kFloat32, {5, 5});
  ir::Buffer s = Local("S", DType::kFloat32, {3, 3}, ir::Scope::kShared);
  ir::Var bx = ir::MakeVar("bx"), by = ir::MakeVar("by");
  std::vector<ir::Expr> origin = {testing::Mul(by, ir::IntImm(3)), testing::Mul(bx, ir::IntImm(3))};
  auto add = std::make_shared<ir::AtomicAddNode>(RegionOf(y, origin, Ints({3, 3})),
                                                 ir::FullRegion(s), nullptr);
  ir::Program p = MakeProgram(
      {x, y}, testing::Kernel(
                  Ints({2, 2}), {bx, by},
                  ir::Seq({ir::Allocate(s),
                           ir::Copy(RegionOf(x, origin, Ints({3, 3})), ir::FullRegion(s)), add})));
  std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {6, 6}, seed),
                              RandomTensor(DType::kFloat32, {5, 5}, seed + 1)};
  const Tensor before = args[1];
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t c = 0; c < 5; ++c) {
      const float want =
          static_cast<float>(At(before, r, c)) + static_cast<float>(At(args[0], r, c));
      EXPECT_EQ(At(args[1], r, c), want) << r << ", " << c << " seed " << seed;
    }
  }
}

TEST(LoopTest, EveryLoopKindRunsItsIterationsInOrder) {
  // out[i] = i * 10 + (sum over j < 3 of j), with every loop kind.
  for (ir::ForKind kind : {ir::ForKind::kSerial, ir::ForKind::kParallel, ir::ForKind::kPipelined,
                           ir::ForKind::kUnrolled, ir::ForKind::kVectorized}) {
    SCOPED_TRACE(ir::ForKindName(kind));
    ir::Buffer out = Global("out", DType::kInt32, {4});
    ir::Buffer acc = Local("acc", DType::kInt32, {1}, ir::Scope::kVar);
    ir::Buffer order = Global("order", DType::kInt32, {12});
    ir::Buffer n = Local("n", DType::kInt32, {1}, ir::Scope::kVar);
    ir::Var i = ir::MakeVar("i"), j = ir::MakeVar("j");
    ir::Expr acc0 = ir::Load(acc, Ints({0})), n0 = ir::Load(n, Ints({0}));
    ir::Stmt inner =
        ir::Seq({ir::Store(acc, Ints({0}), testing::Add(acc0, j)),
                 ir::Store(order, {n0}, testing::Add(testing::Mul(i, ir::IntImm(10)), j)),
                 ir::Store(n, Ints({0}), testing::Add(n0, ir::IntImm(1)))});
    ir::Stmt body = ir::Seq(
        {ir::Allocate(acc, ir::IntImm(0)), ir::For(j, ir::IntImm(0), ir::IntImm(3), kind, inner),
         ir::Store(out, {i}, testing::Add(testing::Mul(i, ir::IntImm(10)), acc0))});
    ir::Program p = MakeProgram(
        {out, order}, OneBlock(ir::Seq({ir::Allocate(n, ir::IntImm(0)),
                                        ir::For(i, ir::IntImm(0), ir::IntImm(4), kind, body)})));
    std::vector<Tensor> args = {Tensor(DType::kInt32, {4}), Tensor(DType::kInt32, {12})};
    ASSERT_TRUE(RunProgram(p, args).ok());
    for (int k = 0; k < 4; ++k) EXPECT_EQ(args[0].GetInt(k), k * 10 + 3);
    for (int k = 0; k < 12; ++k) EXPECT_EQ(args[1].GetInt(k), (k / 3) * 10 + k % 3);
  }
}

}  // namespace
}  // namespace tilec::interp
