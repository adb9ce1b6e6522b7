// Expressions and scalar statements run through the interpreter: integer and
// float semantics per dtype, casts, lazy evaluation, NaN/inf, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "compiler/interp/interp.h"
#include "tests/compiler/interp/test_programs.h"

namespace tilec::interp {
namespace {

using ir::BinaryOp;
using ir::CallFn;
using ir::DType;
using testing::Global;
using testing::Ints;
using testing::MakeProgram;
using testing::OneBlock;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Runs `out[0] = e` in one block (with A, a float32[4] of 1, 2, 3, 4, in
// scope as `a`) and returns out, a 1-element tensor of `out_dtype` (e's
// dtype by default).
absl::StatusOr<Tensor> Eval(const ir::Expr& e, const ir::Buffer& a,
                            std::optional<DType> out_dtype = {}) {
  ir::Buffer out = Global("out", out_dtype.value_or(e->dtype), {1});
  ir::Program p = MakeProgram({a, out}, OneBlock(ir::Store(out, Ints({0}), e)));
  Tensor in(DType::kFloat32, {4});
  for (int i = 0; i < 4; ++i) in.SetDouble(i, i + 1);
  std::vector<Tensor> args = {in, Tensor(out->dtype, {1})};
  absl::Status st = RunProgram(p, args);
  if (!st.ok()) return st;
  return args[1];
}

class ExprTest : public ::testing::Test {
 protected:
  ir::Buffer a_ = Global("A", DType::kFloat32, {4});

  double F(const ir::Expr& e) {
    auto t = Eval(e, a_);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? t->GetDouble(0) : kNaN;
  }
  int64_t I(const ir::Expr& e) {
    auto t = Eval(e, a_);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? t->GetInt(0) : -999;
  }
  absl::Status Error(const ir::Expr& e) { return Eval(e, a_).status(); }
};

ir::Expr B(BinaryOp op, int64_t x, int64_t y, DType t = DType::kInt32) {
  return ir::Binary(op, ir::IntImm(x, t), ir::IntImm(y, t));
}
ir::Expr BF(BinaryOp op, double x, double y, DType t) {
  return ir::Binary(op, ir::FloatImm(x, t), ir::FloatImm(y, t));
}

TEST_F(ExprTest, IntegersWrapAtTheirWidth) {
  EXPECT_EQ(I(B(BinaryOp::kAdd, INT32_MAX, 1)), INT32_MIN);
  EXPECT_EQ(I(B(BinaryOp::kMul, 100, 3, DType::kInt8)), 44);
  EXPECT_EQ(I(B(BinaryOp::kSub, 0, 1, DType::kUInt8)), 255);
  const int64_t x = (int64_t{1} << 40) + 3, y = (int64_t{1} << 30) + 5;
  EXPECT_EQ(I(B(BinaryOp::kMul, x, y, DType::kInt64)),
            static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)));
  EXPECT_EQ(I(ir::Unary(ir::UnaryOp::kNeg, ir::IntImm(1, DType::kUInt8))), 255);
  EXPECT_EQ(I(ir::Unary(ir::UnaryOp::kBitNot, ir::IntImm(0, DType::kInt8))), -1);
  EXPECT_EQ(I(ir::Call(CallFn::kAbs, {ir::IntImm(INT32_MIN)})), INT32_MIN);
  EXPECT_EQ(I(B(BinaryOp::kDiv, INT32_MIN, -1)), INT32_MIN);
}

TEST_F(ExprTest, DivisionTruncatesAndFloorDivisionFloors) {
  for (auto [x, y] : {std::pair{-7, 2}, {7, -2}, {-7, -2}, {7, 2}, {6, -3}, {-1, 5}}) {
    SCOPED_TRACE(::testing::Message() << x << ", " << y);
    EXPECT_EQ(I(B(BinaryOp::kDiv, x, y)), x / y);
    EXPECT_EQ(I(B(BinaryOp::kMod, x, y)), x % y);
    const int64_t q = static_cast<int64_t>(std::floor(static_cast<double>(x) / y));
    EXPECT_EQ(I(B(BinaryOp::kFloorDiv, x, y)), q);
    EXPECT_EQ(I(B(BinaryOp::kFloorMod, x, y)), x - q * y);
  }
  EXPECT_EQ(I(ir::Call(CallFn::kCeilDiv, {ir::IntImm(7), ir::IntImm(2)})), 4);
  EXPECT_EQ(I(ir::Call(CallFn::kCeilDiv, {ir::IntImm(-7), ir::IntImm(2)})), -3);
}

TEST_F(ExprTest, IntegerDivisionByZeroIsAnError) {
  for (BinaryOp op : {BinaryOp::kDiv, BinaryOp::kMod, BinaryOp::kFloorDiv, BinaryOp::kFloorMod}) {
    absl::Status st = Error(B(op, 5, 0));
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("integer division by zero"), std::string::npos) << st;
    EXPECT_NE(st.message().find("in kernel 0 at block (bx=0)"), std::string::npos) << st;
  }
  // Float division by zero is IEEE.
  EXPECT_EQ(F(BF(BinaryOp::kDiv, 1.0, 0.0, DType::kFloat32)), kInf);
}

TEST_F(ExprTest, Shifts) {
  EXPECT_EQ(I(B(BinaryOp::kShl, 1, 31)), INT32_MIN);
  EXPECT_EQ(I(B(BinaryOp::kShr, -8, 1)), -4);
  EXPECT_EQ(I(B(BinaryOp::kShr, 200, 2, DType::kUInt8)), 50);
  EXPECT_EQ(I(B(BinaryOp::kShl, 200, 1, DType::kUInt8)), 144);
  EXPECT_EQ(I(B(BinaryOp::kBitXor, 0b1100, 0b1010)), 0b0110);
  absl::Status st = Error(B(BinaryOp::kShl, 1, 32));
  EXPECT_NE(st.message().find("shift amount out of range: 1 << 32 in int32"), std::string::npos)
      << st;
  EXPECT_FALSE(Error(B(BinaryOp::kShr, 1, -1)).ok());
}

TEST_F(ExprTest, FloatArithmeticRoundsEachOpToItsDType) {
  const double h = std::ldexp(1.0, -11);  // half an ulp of 1.0 in float16
  // (1 + h) + h: each sum ties back to 1.0 in float16, but not in float32.
  auto sum = [&](DType t) {
    return ir::Binary(BinaryOp::kAdd, BF(BinaryOp::kAdd, 1.0, h, t), ir::FloatImm(h, t));
  };
  EXPECT_EQ(F(sum(DType::kFloat16)), 1.0);
  EXPECT_EQ(F(sum(DType::kFloat32)), 1.0 + 2 * h);
  // bfloat16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
  EXPECT_EQ(F(BF(BinaryOp::kAdd, 1.0, std::ldexp(1.0, -8), DType::kBFloat16)), 1.0);
  // float32 results are float32 results.
  EXPECT_EQ(F(BF(BinaryOp::kDiv, 1.0, 3.0, DType::kFloat32)), static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(F(BF(BinaryOp::kDiv, 1.0, 3.0, DType::kFloat64)), 1.0 / 3.0);
  EXPECT_EQ(F(BF(BinaryOp::kFloorDiv, -7.0, 2.0, DType::kFloat32)), -4.0);
  EXPECT_EQ(F(BF(BinaryOp::kFloorMod, -7.0, 2.0, DType::kFloat32)), 1.0);
}

TEST_F(ExprTest, MathFunctionsRoundToTheDType) {
  auto call = [](CallFn fn, double x, DType t) { return ir::Call(fn, {ir::FloatImm(x, t)}); };
  EXPECT_EQ(F(call(CallFn::kExp, 12.0, DType::kFloat16)), kInf);  // e^12 > 65504
  EXPECT_EQ(F(call(CallFn::kExp, 12.0, DType::kFloat32)), static_cast<double>(std::exp(12.0f)));
  EXPECT_EQ(F(call(CallFn::kExp, 1.0, DType::kFloat16)), 2.71875);
  EXPECT_EQ(F(call(CallFn::kRsqrt, 4.0, DType::kFloat32)), 0.5);
  EXPECT_EQ(F(call(CallFn::kSigmoid, 0.0, DType::kFloat32)), 0.5);
  EXPECT_EQ(F(ir::Call(CallFn::kPow, {ir::FloatImm(2.0), ir::FloatImm(10.0)})), 1024.0);
  // round() is round-half-to-even.
  EXPECT_EQ(F(call(CallFn::kRound, 2.5, DType::kFloat32)), 2.0);
  EXPECT_EQ(F(call(CallFn::kRound, 3.5, DType::kFloat32)), 4.0);
  EXPECT_EQ(F(call(CallFn::kRound, -2.5, DType::kFloat32)), -2.0);
  EXPECT_EQ(F(call(CallFn::kFloor, -2.5, DType::kFloat32)), -3.0);
  EXPECT_EQ(F(call(CallFn::kCeil, -2.5, DType::kFloat32)), -2.0);
}

TEST_F(ExprTest, NaNAndInfinity) {
  auto call = [](CallFn fn, double x) { return ir::Call(fn, {ir::FloatImm(x)}); };
  EXPECT_TRUE(std::isnan(F(call(CallFn::kExp, kNaN))));
  EXPECT_EQ(F(call(CallFn::kExp, -kInf)), 0.0);
  EXPECT_EQ(F(call(CallFn::kExp, kInf)), kInf);
  EXPECT_EQ(F(ir::Infinity(DType::kFloat16)), kInf);
  // max/min ignore a NaN operand, as fmaxf/fminf do.
  EXPECT_EQ(F(BF(BinaryOp::kMax, kNaN, 1.0, DType::kFloat32)), 1.0);
  EXPECT_EQ(F(BF(BinaryOp::kMin, 1.0, kNaN, DType::kFloat32)), 1.0);
  EXPECT_TRUE(std::isnan(F(BF(BinaryOp::kMax, kNaN, kNaN, DType::kFloat32))));
  // Arithmetic propagates NaN; comparisons with NaN are false except !=.
  EXPECT_TRUE(std::isnan(F(BF(BinaryOp::kAdd, kNaN, 1.0, DType::kFloat32))));
  EXPECT_EQ(I(BF(BinaryOp::kLt, kNaN, 1.0, DType::kFloat32)), 0);
  EXPECT_EQ(I(BF(BinaryOp::kNe, kNaN, kNaN, DType::kFloat32)), 1);
}

TEST_F(ExprTest, Casts) {
  EXPECT_EQ(F(ir::Cast(DType::kFloat16, ir::FloatImm(0.1))), 0.0999755859375);
  EXPECT_EQ(I(ir::Cast(DType::kInt32, ir::FloatImm(-2.7))), -2);
  EXPECT_EQ(I(ir::Cast(DType::kInt8, ir::FloatImm(1000.0))), 127);
  EXPECT_EQ(I(ir::Cast(DType::kInt32, ir::FloatImm(kNaN))), 0);
  EXPECT_EQ(F(ir::Cast(DType::kFloat16, ir::IntImm(2049))), 2048.0);
  EXPECT_EQ(F(ir::Cast(DType::kFloat8E4M3, ir::FloatImm(1000.0))), 448.0);
  EXPECT_EQ(F(ir::Cast(DType::kFloat8E4M3, ir::FloatImm(-kInf))), -448.0);
  EXPECT_EQ(F(ir::Cast(DType::kFloat8E5M2, ir::FloatImm(1e9))), 57344.0);
  EXPECT_EQ(I(ir::Cast(DType::kInt8, ir::IntImm(300))), 44);
  EXPECT_EQ(I(ir::Cast(DType::kInt4, ir::IntImm(9))), -7);
  EXPECT_EQ(I(ir::Cast(DType::kBool, ir::FloatImm(0.5))), 1);
  EXPECT_EQ(I(ir::Cast(DType::kUInt8, ir::IntImm(-1))), 255);
  // A store converts into the buffer's dtype as a cast would.
  auto stored = Eval(ir::FloatImm(-3.9), a_, DType::kInt16);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->GetInt(0), -3);
}

TEST_F(ExprTest, SelectAndLogicalOpsAreLazy) {
  // A[10] would be out of bounds; the untaken branch is never evaluated.
  ir::Expr oob = ir::Load(a_, Ints({10}));
  ir::Expr f = ir::Binary(BinaryOp::kLt, ir::IntImm(10), ir::IntImm(4));
  EXPECT_EQ(F(ir::Select(f, oob, ir::FloatImm(-1.0))), -1.0);
  EXPECT_EQ(F(ir::Select(ir::BoolImm(true), ir::Load(a_, Ints({2})), oob)), 3.0);
  EXPECT_EQ(I(ir::Binary(BinaryOp::kAnd, f, ir::Binary(BinaryOp::kGt, oob, ir::FloatImm(0.0)))), 0);
  EXPECT_EQ(I(ir::Binary(BinaryOp::kOr, ir::BoolImm(true),
                         ir::Binary(BinaryOp::kGt, oob, ir::FloatImm(0.0)))),
            1);
}

TEST_F(ExprTest, OutOfBoundsLoadNamesBufferIndexAndBlock) {
  absl::Status st = Error(ir::Load(a_, Ints({10})));
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("load A[10] is out of bounds of shape [4]"), std::string::npos) << st;
  EXPECT_NE(st.message().find("kernel 0 at block (bx=0)"), std::string::npos) << st;
  EXPECT_FALSE(Error(ir::Load(a_, Ints({-1}))).ok());
}

TEST(StmtTest, LetIfElseAndStoreBounds) {
  ir::Buffer out = Global("out", DType::kInt32, {4});
  ir::Var x = ir::MakeVar("x"), i = ir::MakeVar("i");
  // for i in range(4): let x = i * 3; out[i] = x + 1 if i % 2 == 0 else -x
  ir::Stmt body = ir::For(
      i, ir::IntImm(0), ir::IntImm(4), ir::ForKind::kSerial,
      ir::Seq({ir::Let(x, testing::Mul(i, ir::IntImm(3))),
               ir::If(ir::Binary(BinaryOp::kEq, ir::Binary(BinaryOp::kFloorMod, i, ir::IntImm(2)),
                                 ir::IntImm(0)),
                      ir::Store(out, {i}, testing::Add(x, ir::IntImm(1))),
                      ir::Store(out, {i}, ir::Unary(ir::UnaryOp::kNeg, x)))}));
  ir::Program p = MakeProgram({out}, OneBlock(body));
  std::vector<Tensor> args = {Tensor(DType::kInt32, {4})};
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int k = 0; k < 4; ++k) EXPECT_EQ(args[0].GetInt(k), k % 2 == 0 ? 3 * k + 1 : -3 * k);

  ir::Program bad = MakeProgram({out}, OneBlock(ir::Store(out, Ints({4}), ir::IntImm(0))));
  absl::Status st = RunProgram(bad, args);
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("store out[4] is out of bounds of shape [4]"), std::string::npos)
      << st;
}

TEST(StmtTest, AllocVarInitAndPerBlockZeroedAllocations) {
  // Each block: v = alloc_var(init=5); F = alloc_fragment([2]); F[0] += 1;
  // out[bx] = F[0] * 10 + v. Fresh zeroed F per block gives 15 everywhere.
  ir::Buffer out = Global("out", DType::kFloat32, {3});
  ir::Buffer v = testing::Local("v", DType::kFloat32, {1}, ir::Scope::kVar);
  ir::Buffer f = testing::Local("F", DType::kFloat32, {2});
  ir::Var bx = ir::MakeVar("bx");
  ir::Stmt body =
      ir::Seq({ir::Allocate(v, ir::FloatImm(5.0)), ir::Allocate(f),
               ir::Store(f, Ints({0}), testing::Add(ir::Load(f, Ints({0})), ir::FloatImm(1.0))),
               ir::Store(out, {bx},
                         testing::Add(testing::Mul(ir::Load(f, Ints({0})), ir::FloatImm(10.0)),
                                      ir::Load(v, Ints({0}))))});
  ir::Program p = MakeProgram({out}, testing::Kernel(Ints({3}), {bx}, body));
  std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {3}, 1)};
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(args[0].GetDouble(k), 15.0);
}

}  // namespace
}  // namespace tilec::interp
