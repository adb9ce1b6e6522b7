#include "compiler/inference/index_expr.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>

#include "compiler/ir/printer.h"
#include "gtest/gtest.h"

namespace tilec::inference {
namespace {

using ir::BinaryOp;

TEST(IndexBuilderTest, SimplifiesWhatTheBoundsAllow) {
  IndexBuilder b;
  ir::Var x = ir::MakeVar("x"), y = ir::MakeVar("y"), z = ir::MakeVar("z");
  b.SetBound(x, 8);
  b.SetBound(y, 8);
  auto P = [](const ir::Expr& e) { return ir::PrintExpr(e); };
  EXPECT_EQ(P(b.Mod(x, 8)), "x");
  EXPECT_EQ(P(b.Div(x, 8)), "0");
  EXPECT_EQ(P(b.Mod(x, 4)), "T.truncmod(x, 4)");
  EXPECT_EQ(P(b.Div(b.Div(z, 4), 2)), "z / 8");
  EXPECT_EQ(P(b.Mul(b.Mul(z, 4), 2)), "z * 8");
  EXPECT_EQ(P(b.Div(b.Mul(z, 8), 8)), "z");
  EXPECT_EQ(P(b.Div(b.Mul(z, 8), 4)), "z * 2");
  EXPECT_EQ(P(b.Mod(b.Mul(z, 8), 4)), "0");
  // (z * 8 + y) / 8 is z, (z * 8 + y) % 8 is y, with y < 8.
  ir::Expr sum = b.Add(b.Mul(z, 8), y);
  EXPECT_EQ(P(b.Div(sum, 8)), "z");
  EXPECT_EQ(P(b.Mod(sum, 8)), "y");
  EXPECT_EQ(P(b.Add(b.Const(0), z)), "z");
  EXPECT_EQ(P(b.Mul(z, 1)), "z");
  EXPECT_EQ(P(b.Mul(z, 0)), "0");
  EXPECT_EQ(P(b.Add(b.Const(3), b.Const(4))), "7");
  EXPECT_EQ(b.UpperBound(b.Add(b.Mul(x, 8), y)), 64);
  EXPECT_EQ(b.UpperBound(z), std::nullopt);
}

// Random index expressions: whatever the builder simplifies, the value is the
// one of the plain formula.
TEST(IndexBuilderTest, SimplifiedExpressionsKeepTheirValue) {
  const char* env = std::getenv("TILEC_TEST_SEED");
  const uint64_t seed = env ? std::strtoull(env, nullptr, 10) : 7;
  std::printf("seed %llu (set TILEC_TEST_SEED to change)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  ir::Var vars[3] = {ir::MakeVar("a"), ir::MakeVar("b"), ir::MakeVar("c")};
  const int64_t bounds[3] = {16, 8, 32};
  IndexBuilder b;
  for (int i = 0; i < 3; ++i) b.SetBound(vars[i], bounds[i]);
  // An expression and the function computing its intended value.
  struct Built {
    ir::Expr e;
    std::function<int64_t(const int64_t*)> f;
  };
  std::function<Built(int)> gen = [&](int depth) -> Built {
    int pick = depth == 0 ? static_cast<int>(rng() % 2) : static_cast<int>(rng() % 6);
    int64_t c = 1 + static_cast<int64_t>(rng() % 8);
    if (pick == 0) {
      int v = static_cast<int>(rng() % 3);
      return {vars[v], [v](const int64_t* x) { return x[v]; }};
    }
    if (pick == 1) return {b.Const(c - 1), [c](const int64_t*) { return c - 1; }};
    Built l = gen(depth - 1);
    switch (pick) {
      case 2: {
        Built r = gen(depth - 1);
        return {b.Add(l.e, r.e), [l, r](const int64_t* x) { return l.f(x) + r.f(x); }};
      }
      case 3: return {b.Mul(l.e, c), [l, c](const int64_t* x) { return l.f(x) * c; }};
      case 4: return {b.Div(l.e, c), [l, c](const int64_t* x) { return l.f(x) / c; }};
      default: return {b.Mod(l.e, c), [l, c](const int64_t* x) { return l.f(x) % c; }};
    }
  };
  for (int trial = 0; trial < 300; ++trial) {
    Built t = gen(4);
    for (int s = 0; s < 20; ++s) {
      int64_t x[3];
      std::map<const ir::VarNode*, int64_t> env_values;
      for (int i = 0; i < 3; ++i) {
        x[i] = static_cast<int64_t>(rng() % bounds[i]);
        env_values[vars[i].get()] = x[i];
      }
      std::optional<int64_t> got = EvalInt(t.e, env_values);
      ASSERT_TRUE(got.has_value()) << ir::PrintExpr(t.e);
      ASSERT_EQ(*got, t.f(x)) << ir::PrintExpr(t.e) << " at " << x[0] << ", " << x[1] << ", "
                              << x[2];
      auto ub = b.UpperBound(t.e);
      if (!ub) continue;
      ASSERT_LT(*got, *ub) << ir::PrintExpr(t.e);
    }
  }
}

TEST(EvalIntTest, FoldsConstantsWithTheirSemantics) {
  auto B = [](BinaryOp op, int64_t a, int64_t b) {
    return EvalInt(ir::Binary(op, ir::IntImm(a), ir::IntImm(b)));
  };
  EXPECT_EQ(B(BinaryOp::kFloorDiv, -7, 2), -4);
  EXPECT_EQ(B(BinaryOp::kFloorMod, -7, 2), 1);
  EXPECT_EQ(B(BinaryOp::kDiv, -7, 2), -3);
  EXPECT_EQ(B(BinaryOp::kMod, -7, 2), -1);
  EXPECT_EQ(B(BinaryOp::kMax, 3, 9), 9);
  EXPECT_EQ(B(BinaryOp::kShl, 3, 4), 48);
  EXPECT_EQ(B(BinaryOp::kDiv, 1, 0), std::nullopt);
  EXPECT_EQ(EvalInt(ir::Call(ir::CallFn::kCeilDiv, {ir::IntImm(7), ir::IntImm(2)})), 4);
  ir::Var v = ir::MakeVar("v");
  ir::Expr e = ir::Binary(BinaryOp::kAdd, v, ir::IntImm(1));
  EXPECT_EQ(EvalInt(e), std::nullopt);
  EXPECT_EQ(EvalInt(e, {{v.get(), 41}}), 42);
  EXPECT_EQ(EvalInt(ir::FloatImm(1.0)), std::nullopt);
}

TEST(KnownPow2DivisorTest, TracksMultiples) {
  ir::Var bx = ir::MakeVar("bx"), k = ir::MakeVar("k");
  auto mul = [](ir::Expr a, int64_t c) { return ir::Binary(BinaryOp::kMul, a, ir::IntImm(c)); };
  auto add = [](ir::Expr a, ir::Expr b) { return ir::Binary(BinaryOp::kAdd, a, b); };
  EXPECT_EQ(KnownPow2Divisor(mul(bx, 64)), 64);
  EXPECT_EQ(KnownPow2Divisor(add(mul(bx, 64), ir::IntImm(32))), 32);
  EXPECT_EQ(KnownPow2Divisor(add(mul(bx, 64), mul(k, 24))), 8);
  EXPECT_EQ(KnownPow2Divisor(ir::Binary(BinaryOp::kDiv, mul(bx, 64), ir::IntImm(4))), 16);
  EXPECT_EQ(KnownPow2Divisor(bx), 1);
  EXPECT_EQ(KnownPow2Divisor(bx, {{bx.get(), 16}}), 16);
  EXPECT_EQ(KnownPow2Divisor(ir::IntImm(0)), int64_t{1} << 30);
  EXPECT_EQ(KnownPow2Divisor(ir::IntImm(-12)), 4);
}

}  // namespace
}  // namespace tilec::inference
