// Two example kernels written out as the IR the frontend builds for
// examples/gemm.py and examples/softmax.py, run at ragged sizes and compared
// with the float64 references of tests/reference, in order and shuffled.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "tests/compiler/interp/test_programs.h"
#include "tests/reference/reference.h"

namespace tilec::interp {
namespace {

using ir::BinaryOp;
using ir::CallFn;
using ir::DType;
using ir::Expr;
using testing::Add;
using testing::Global;
using testing::Ints;
using testing::Local;
using testing::Mul;
using testing::RegionOf;

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.GetDouble(i);
  return v;
}

Expr CeilDiv(int64_t a, int64_t b) {
  return ir::Call(CallFn::kCeilDiv, {ir::IntImm(a), ir::IntImm(b)});
}

void ExpectMatches(const Tensor& out, const std::vector<double>& want, uint64_t seed) {
  Tensor ref(DType::kFloat64, out.shape());
  for (int64_t i = 0; i < ref.num_elements(); ++i) ref.SetDouble(i, want[i]);
  auto cmp = CompareTensors(out, ref, DefaultTolerance(out.dtype()));
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  std::printf("  %s: %s\n", out.TypeString().c_str(), cmp->Summary().c_str());
  EXPECT_TRUE(cmp->ok) << cmp->Summary() << " seed " << seed;
}

// gemm.py: C = A @ B with A [M, K], B [K, N] float16, C float32, one
// (block_M x block_N) tile of C per block, K in block_K steps.
ir::Program TiledGemm(int64_t m, int64_t n, int64_t k, int64_t bm, int64_t bn, int64_t bk) {
  ir::Buffer a = Global("A", DType::kFloat16, {m, k});
  ir::Buffer b = Global("B", DType::kFloat16, {k, n});
  ir::Buffer c = Global("C", DType::kFloat32, {m, n});
  ir::Buffer as = Local("A_shared", DType::kFloat16, {bm, bk}, ir::Scope::kShared);
  ir::Buffer bs = Local("B_shared", DType::kFloat16, {bk, bn}, ir::Scope::kShared);
  ir::Buffer cl = Local("C_local", DType::kFloat32, {bm, bn});
  ir::Var bx = ir::MakeVar("bx"), by = ir::MakeVar("by"), ko = ir::MakeVar("ko");
  Expr row = Mul(by, ir::IntImm(bm)), col = Mul(bx, ir::IntImm(bn)), kk = Mul(ko, ir::IntImm(bk));
  auto gemm = std::make_shared<ir::GemmNode>();
  gemm->a = ir::FullRegion(as);
  gemm->b = ir::FullRegion(bs);
  gemm->c = ir::FullRegion(cl);
  ir::Stmt loop = ir::For(
      ko, ir::IntImm(0), CeilDiv(k, bk), ir::ForKind::kPipelined,
      ir::Seq({ir::Copy(RegionOf(a, {row, kk}, Ints({bm, bk})), ir::FullRegion(as)),
               ir::Copy(RegionOf(b, {kk, col}, Ints({bk, bn})), ir::FullRegion(bs)), gemm}));
  ir::Stmt body = ir::Seq({ir::Allocate(as), ir::Allocate(bs), ir::Allocate(cl),
                           std::make_shared<ir::UseSwizzleNode>(ir::IntImm(10), false, true),
                           ir::Fill(ir::FullRegion(cl), ir::FloatImm(0.0)), loop,
                           ir::Copy(ir::FullRegion(cl), RegionOf(c, {row, col}, Ints({bm, bn})))});
  return testing::MakeProgram({a, b, c},
                              testing::Kernel({CeilDiv(n, bn), CeilDiv(m, bm)}, {bx, by}, body));
}

TEST(ExamplesTest, TiledGemmAtRaggedSizes) {
  const uint64_t seed = 1000;
  const int64_t m = 100, n = 72, k = 56;
  ir::Program p = TiledGemm(m, n, k, 64, 64, 32);
  auto in = MakeInputs(p, {}, seed);
  ASSERT_TRUE(in.ok()) << in.status();
  const std::vector<double> want =
      reference::GemmRef(Values((*in)[0]), Values((*in)[1]), m, n, k, false, false);
  for (bool shuffle : {false, true}) {
    std::vector<Tensor> args = *in;
    ASSERT_TRUE(RunProgram(p, args, {shuffle, seed}).ok());
    ExpectMatches(args[2], want, seed);
  }
}

// softmax.py: two passes over each row in block_N tiles with an online
// maximum and sum, exponentials through exp2 and log2(e).
ir::Program Softmax(int64_t m, int64_t n, int64_t bm, int64_t bn) {
  const DType f32 = DType::kFloat32;
  ir::Buffer x = Global("X", DType::kFloat16, {m, n});
  ir::Buffer y = Global("Y", DType::kFloat16, {m, n});
  ir::Buffer xt = Local("x_tile", f32, {bm, bn});
  ir::Buffer yt = Local("y_tile", DType::kFloat16, {bm, bn});
  ir::Buffer row_max = Local("row_max", f32, {bm});
  ir::Buffer row_max_prev = Local("row_max_prev", f32, {bm});
  ir::Buffer row_sum = Local("row_sum", f32, {bm});
  ir::Buffer tile_sum = Local("tile_sum", f32, {bm});
  ir::Var bx = ir::MakeVar("bx"), ko = ir::MakeVar("ko"), i = ir::MakeVar("i"),
          j = ir::MakeVar("j");
  const Expr log2e = ir::FloatImm(1.44269504088896, f32);
  const Expr neg_inf = ir::Unary(ir::UnaryOp::kNeg, ir::Infinity(f32));
  auto sub = [](Expr a, Expr b) { return ir::Binary(BinaryOp::kSub, std::move(a), std::move(b)); };
  auto exp2 = [&](Expr a) { return ir::Call(CallFn::kExp2, {Mul(std::move(a), log2e)}); };
  auto parallel2 = [&](ir::Stmt s) {
    return ir::For(i, ir::IntImm(0), ir::IntImm(bm), ir::ForKind::kParallel,
                   ir::For(j, ir::IntImm(0), ir::IntImm(bn), ir::ForKind::kParallel, std::move(s)));
  };
  Expr row = Mul(bx, ir::IntImm(bm)), col = Mul(ko, ir::IntImm(bn));
  ir::Region x_tile_src = RegionOf(x, {row, col}, Ints({bm, bn}));
  Expr xij = ir::Load(xt, {i, j}), max_i = ir::Load(row_max, {i});

  ir::Stmt pass1 = ir::For(
      ko, ir::IntImm(0), CeilDiv(n, bn), ir::ForKind::kSerial,
      ir::Seq({ir::Copy(x_tile_src, ir::FullRegion(xt)),
               parallel2(ir::Store(xt, {i, j},
                                   ir::Select(ir::Binary(BinaryOp::kLt, Add(col, j), ir::IntImm(n)),
                                              xij, neg_inf))),
               ir::Copy(ir::FullRegion(row_max), ir::FullRegion(row_max_prev)),
               std::make_shared<ir::ReduceNode>(ir::ReduceKind::kMax, xt, row_max, 1, false),
               parallel2(ir::Store(xt, {i, j}, exp2(sub(xij, max_i)))),
               std::make_shared<ir::ReduceNode>(ir::ReduceKind::kSum, xt, tile_sum, 1, true),
               ir::For(i, ir::IntImm(0), ir::IntImm(bm), ir::ForKind::kParallel,
                       ir::Store(row_sum, {i},
                                 Add(Mul(ir::Load(row_sum, {i}),
                                         exp2(sub(ir::Load(row_max_prev, {i}), max_i))),
                                     ir::Load(tile_sum, {i}))))}));
  ir::Stmt pass2 = ir::For(
      ko, ir::IntImm(0), CeilDiv(n, bn), ir::ForKind::kSerial,
      ir::Seq({ir::Copy(x_tile_src, ir::FullRegion(xt)),
               parallel2(ir::Store(
                   yt, {i, j},
                   ir::Cast(DType::kFloat16, ir::Binary(BinaryOp::kDiv, exp2(sub(xij, max_i)),
                                                        ir::Load(row_sum, {i}))))),
               ir::Copy(ir::FullRegion(yt), RegionOf(y, {row, col}, Ints({bm, bn})))}));
  ir::Stmt body = ir::Seq({ir::Allocate(xt), ir::Allocate(yt), ir::Allocate(row_max),
                           ir::Allocate(row_max_prev), ir::Allocate(row_sum),
                           ir::Allocate(tile_sum), ir::Fill(ir::FullRegion(row_max), neg_inf),
                           ir::Fill(ir::FullRegion(row_sum), ir::FloatImm(0.0)), pass1, pass2});
  return testing::MakeProgram({x, y}, testing::Kernel({CeilDiv(m, bm)}, {bx}, body));
}

TEST(ExamplesTest, SoftmaxAtRaggedSizes) {
  const uint64_t seed = 1001;
  const int64_t m = 37, n = 100;
  ir::Program p = Softmax(m, n, 8, 64);
  auto in = MakeInputs(p, {}, seed);
  ASSERT_TRUE(in.ok()) << in.status();
  const std::vector<double> want = reference::SoftmaxRef(Values((*in)[0]), m, n);
  for (bool shuffle : {false, true}) {
    std::vector<Tensor> args = *in;
    ASSERT_TRUE(RunProgram(p, args, {shuffle, seed}).ok());
    ExpectMatches(args[1], want, seed);
  }
}

}  // namespace
}  // namespace tilec::interp
