// The unsigned integer types run through the interpreter: wrap-around,
// division, shifts, comparison, min/max, reductions and conversions, with
// values at and above 2^31 (uint32) and 2^63 (uint64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>

#include "compiler/interp/interp.h"
#include "tests/compiler/interp/test_programs.h"

namespace tilec::interp {
namespace {

using ir::BinaryOp;
using ir::DType;
using testing::Global;
using testing::Ints;
using testing::MakeProgram;
using testing::OneBlock;

// Runs `out[0] = e` in one block and returns out.
absl::StatusOr<Tensor> Eval(const ir::Expr& e) {
  ir::Buffer out = Global("out", e->dtype, {1});
  ir::Program p = MakeProgram({out}, OneBlock(ir::Store(out, Ints({0}), e)));
  std::vector<Tensor> args = {Tensor(out->dtype, {1})};
  absl::Status st = RunProgram(p, args);
  if (!st.ok()) return st;
  return args[0];
}
// out[0]'s bits as int64_t (the bits of a uint64), or -999 after a failure.
int64_t I(const ir::Expr& e) {
  absl::StatusOr<Tensor> t = Eval(e);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->GetInt(0) : -999;
}
uint64_t U(const ir::Expr& e) { return static_cast<uint64_t>(I(e)); }
double F(const ir::Expr& e) {
  absl::StatusOr<Tensor> t = Eval(e);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->GetDouble(0) : -999;
}
absl::Status Error(const ir::Expr& e) { return Eval(e).status(); }

// A value of dtype t from its bits: a literal when it fits an IntImm, else a
// cast of the int64 with the same bits (uint64 values of 2^63 and above).
ir::Expr Lit(uint64_t v, DType t) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) return ir::IntImm(static_cast<int64_t>(v), t);
  return ir::Cast(t, ir::IntImm(static_cast<int64_t>(v), DType::kInt64));
}
ir::Expr B(BinaryOp op, uint64_t x, uint64_t y, DType t) {
  return ir::Binary(op, Lit(x, t), Lit(y, t));
}

constexpr uint64_t kTop64 = uint64_t{1} << 63;

TEST(UnsignedExprTest, ArithmeticWrapsModulo2ToTheBits) {
  EXPECT_EQ(U(B(BinaryOp::kAdd, 65535, 2, DType::kUInt16)), 1u);
  EXPECT_EQ(U(B(BinaryOp::kSub, 0, 1, DType::kUInt16)), 65535u);
  EXPECT_EQ(U(B(BinaryOp::kMul, 300, 300, DType::kUInt16)), 90000u % 65536);
  EXPECT_EQ(U(B(BinaryOp::kAdd, 4294967295u, 1, DType::kUInt32)), 0u);
  EXPECT_EQ(U(B(BinaryOp::kSub, 3, 5, DType::kUInt32)), 4294967294u);
  EXPECT_EQ(U(B(BinaryOp::kMul, 65536, 65537, DType::kUInt32)), 65536u);
  EXPECT_EQ(U(B(BinaryOp::kSub, 0, 1, DType::kUInt64)), UINT64_MAX);
  EXPECT_EQ(U(B(BinaryOp::kAdd, UINT64_MAX, 3, DType::kUInt64)), 2u);
  EXPECT_EQ(U(B(BinaryOp::kMul, kTop64 + 1, 3, DType::kUInt64)), kTop64 + 3);
  EXPECT_EQ(U(ir::Unary(ir::UnaryOp::kNeg, Lit(1, DType::kUInt32))), 4294967295u);
  EXPECT_EQ(U(ir::Unary(ir::UnaryOp::kBitNot, Lit(0, DType::kUInt16))), 65535u);
  EXPECT_EQ(U(ir::Unary(ir::UnaryOp::kBitNot, Lit(5, DType::kUInt32))), 4294967290u);
  EXPECT_EQ(U(ir::Unary(ir::UnaryOp::kBitNot, Lit(5, DType::kUInt64))), UINT64_MAX - 5);
  EXPECT_EQ(U(ir::Call(ir::CallFn::kAbs, {Lit(kTop64 + 9, DType::kUInt64)})), kTop64 + 9);
}

TEST(UnsignedExprTest, DivisionIsUnsignedAndFloorEqualsTruncation) {
  for (BinaryOp op : {BinaryOp::kDiv, BinaryOp::kFloorDiv}) {
    EXPECT_EQ(U(B(op, 4000000000u, 7, DType::kUInt32)), 4000000000u / 7);
    EXPECT_EQ(U(B(op, 65535, 256, DType::kUInt16)), 255u);
    EXPECT_EQ(U(B(op, UINT64_MAX, 7, DType::kUInt64)), UINT64_MAX / 7);
    EXPECT_EQ(U(B(op, kTop64 + 5, kTop64, DType::kUInt64)), 1u);
    EXPECT_EQ(U(B(op, 5, kTop64, DType::kUInt64)), 0u);
  }
  for (BinaryOp op : {BinaryOp::kMod, BinaryOp::kFloorMod}) {
    EXPECT_EQ(U(B(op, 4000000000u, 7, DType::kUInt32)), 4000000000u % 7);
    EXPECT_EQ(U(B(op, UINT64_MAX, 10, DType::kUInt64)), UINT64_MAX % 10);
    EXPECT_EQ(U(B(op, kTop64 + 5, kTop64, DType::kUInt64)), 5u);
  }
  EXPECT_EQ(
      U(ir::Call(ir::CallFn::kCeilDiv, {Lit(UINT64_MAX, DType::kUInt64), Lit(2, DType::kUInt64)})),
      kTop64);
  EXPECT_EQ(
      U(ir::Call(ir::CallFn::kCeilDiv, {Lit(4000000001u, DType::kUInt32), Lit(2, DType::kUInt32)})),
      2000000001u);
  absl::Status st = Error(B(BinaryOp::kFloorDiv, UINT64_MAX, 0, DType::kUInt64));
  EXPECT_NE(st.message().find("integer division by zero: 18446744073709551615 // 0 in uint64"),
            std::string::npos)
      << st;
}

TEST(UnsignedExprTest, ShiftsAreLogical) {
  EXPECT_EQ(U(B(BinaryOp::kShr, 0x80000000u, 31, DType::kUInt32)), 1u);
  EXPECT_EQ(U(B(BinaryOp::kShr, 0xFFFF, 4, DType::kUInt16)), 0x0FFFu);
  EXPECT_EQ(U(B(BinaryOp::kShr, UINT64_MAX, 60, DType::kUInt64)), 0xFu);
  EXPECT_EQ(U(B(BinaryOp::kShr, kTop64, 63, DType::kUInt64)), 1u);
  EXPECT_EQ(U(B(BinaryOp::kShl, 0xFFFFFFFFu, 4, DType::kUInt32)), 0xFFFFFFF0u);
  EXPECT_EQ(U(B(BinaryOp::kShl, 0xABCD, 8, DType::kUInt16)), 0xCD00u);
  EXPECT_EQ(U(B(BinaryOp::kShl, 3, 62, DType::kUInt64)), kTop64 | (kTop64 >> 1));
  EXPECT_EQ(U(B(BinaryOp::kBitXor, kTop64 | 6, 3, DType::kUInt64)), kTop64 | 5);
  EXPECT_EQ(U(B(BinaryOp::kBitAnd, 0xF0F0F0F0u, 0xFF00FF00u, DType::kUInt32)), 0xF000F000u);
  EXPECT_EQ(U(B(BinaryOp::kBitOr, 0x8000, 1, DType::kUInt16)), 0x8001u);
  absl::Status st = Error(B(BinaryOp::kShr, 1, 32, DType::kUInt32));
  EXPECT_NE(st.message().find("shift amount out of range: 1 >> 32 in uint32"), std::string::npos)
      << st;
}

TEST(UnsignedExprTest, ComparisonsAndMinMaxAreUnsigned) {
  EXPECT_EQ(I(B(BinaryOp::kLt, 1, kTop64, DType::kUInt64)), 1);
  EXPECT_EQ(I(B(BinaryOp::kGt, UINT64_MAX, 1, DType::kUInt64)), 1);
  EXPECT_EQ(I(B(BinaryOp::kLe, UINT64_MAX, kTop64, DType::kUInt64)), 0);
  EXPECT_EQ(I(B(BinaryOp::kGe, kTop64, kTop64, DType::kUInt64)), 1);
  EXPECT_EQ(I(B(BinaryOp::kLt, 0x7FFFFFFF, 0x80000000u, DType::kUInt32)), 1);
  EXPECT_EQ(I(B(BinaryOp::kGt, 0xFFFF, 0x7FFF, DType::kUInt16)), 1);
  EXPECT_EQ(U(B(BinaryOp::kMax, 3, kTop64, DType::kUInt64)), kTop64);
  EXPECT_EQ(U(B(BinaryOp::kMin, 3, kTop64, DType::kUInt64)), 3u);
  EXPECT_EQ(U(B(BinaryOp::kMax, 0x80000000u, 1, DType::kUInt32)), 0x80000000u);
}

TEST(UnsignedExprTest, ConversionsReadTheValueAsUnsigned) {
  EXPECT_EQ(F(ir::Cast(DType::kFloat64, Lit(kTop64, DType::kUInt64))), 9223372036854775808.0);
  EXPECT_EQ(F(ir::Cast(DType::kFloat32, Lit(UINT64_MAX, DType::kUInt64))), 18446744073709551616.0);
  EXPECT_EQ(F(ir::Cast(DType::kFloat64, Lit(4294967295u, DType::kUInt32))), 4294967295.0);
  EXPECT_EQ(F(ir::Cast(DType::kFloat32, Lit(65535, DType::kUInt16))), 65535.0);
  EXPECT_EQ(U(ir::Cast(DType::kUInt64, ir::FloatImm(1.5e19, DType::kFloat64))),
            uint64_t{15000000000000000000u});
  EXPECT_EQ(U(ir::Cast(DType::kUInt32, ir::FloatImm(3.9e9, DType::kFloat64))), 3900000000u);
  EXPECT_EQ(U(ir::Cast(DType::kUInt32, ir::FloatImm(-2.0, DType::kFloat32))), 0u);
  // Between integer types: wrap-around, and zero extension from unsigned.
  EXPECT_EQ(U(ir::Cast(DType::kUInt32, ir::IntImm(-1, DType::kInt32))), 4294967295u);
  EXPECT_EQ(I(ir::Cast(DType::kInt64, Lit(4294967295u, DType::kUInt32))), 4294967295);
  EXPECT_EQ(I(ir::Cast(DType::kInt32, Lit(4294967295u, DType::kUInt32))), -1);
  EXPECT_EQ(U(ir::Cast(DType::kUInt16, Lit(kTop64 | 0x12345, DType::kUInt64))), 0x2345u);
  EXPECT_EQ(U(ir::Cast(DType::kUInt64, ir::IntImm(-2, DType::kInt16))), UINT64_MAX - 1);
}

// T.reduce_max / reduce_min over uint64 values on both sides of 2^63, and
// uint32 ones on both sides of 2^31, against a host computation.
TEST(UnsignedTileOpsTest, ReduceMaxMinCompareUnsigned) {
  const uint64_t seed = 4242;
  std::mt19937_64 rng(seed);
  for (DType t : {DType::kUInt32, DType::kUInt64}) {
    for (ir::ReduceKind kind : {ir::ReduceKind::kMax, ir::ReduceKind::kMin}) {
      SCOPED_TRACE(::testing::Message() << ir::DTypeName(t) << " seed " << seed);
      ir::Buffer a = Global("A", t, {3, 5});
      ir::Buffer out = Global("out", t, {3});
      ir::Program p =
          MakeProgram({a, out}, OneBlock(std::make_shared<ir::ReduceNode>(kind, a, out, 1, true)));
      Tensor in(t, {3, 5});
      for (int64_t i = 0; i < 15; ++i) in.SetBits(i, rng());
      std::vector<Tensor> args = {in, Tensor(t, {3})};
      absl::Status st = RunProgram(p, args);
      ASSERT_TRUE(st.ok()) << st;
      for (int64_t r = 0; r < 3; ++r) {
        uint64_t want = static_cast<uint64_t>(in.GetInt(r * 5));
        for (int64_t c = 1; c < 5; ++c) {
          const uint64_t v = static_cast<uint64_t>(in.GetInt(r * 5 + c));
          want = kind == ir::ReduceKind::kMax ? std::max(want, v) : std::min(want, v);
        }
        EXPECT_EQ(static_cast<uint64_t>(args[1].GetInt(r)), want) << "row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace tilec::interp
