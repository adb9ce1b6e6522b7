#include "compiler/ir/ir.h"

#include <gtest/gtest.h>

#include "compiler/ir/visitor.h"

namespace tilec::ir {
namespace {

TEST(DTypeTest, EveryCanonicalNameRoundTrips) {
  for (DType t : kAllDTypes) {
    auto parsed = ParseDType(DTypeName(t));
    ASSERT_TRUE(parsed.has_value()) << DTypeName(t);
    EXPECT_EQ(*parsed, t);
  }
}

TEST(DTypeTest, AcceptsTileLangAndTorchAliases) {
  EXPECT_EQ(ParseDType("float8_e4m3fn"), DType::kFloat8E4M3);
  EXPECT_EQ(ParseDType("half"), DType::kFloat16);
  EXPECT_EQ(ParseDType("float"), DType::kFloat32);
  EXPECT_EQ(ParseDType("float17"), std::nullopt);
}

TEST(DTypeTest, AmdFloat8) {
  EXPECT_EQ(ParseDType("float8_e4m3fnuz"), DType::kFloat8E4M3FNUZ);
  EXPECT_EQ(ParseDType("float8_e5m2fnuz"), DType::kFloat8E5M2FNUZ);
  for (DType t : {DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2FNUZ}) {
    EXPECT_EQ(DTypeBits(t), 8);
    EXPECT_TRUE(IsFloat(t));
    EXPECT_TRUE(IsFloat8(t));
    EXPECT_TRUE(IsFnuz(t));
  }
  EXPECT_TRUE(IsFloat8(DType::kFloat8E4M3));
  EXPECT_FALSE(IsFnuz(DType::kFloat8E4M3));
  EXPECT_FALSE(IsFloat8(DType::kFloat16));
}

TEST(DTypeTest, UnsignedTypes) {
  struct Case {
    DType t;
    const char* name;
    int bits;
  };
  for (Case c : {Case{DType::kUInt8, "uint8", 8}, Case{DType::kUInt16, "uint16", 16},
                 Case{DType::kUInt32, "uint32", 32}, Case{DType::kUInt64, "uint64", 64}}) {
    EXPECT_EQ(DTypeName(c.t), c.name);
    EXPECT_EQ(ParseDType(c.name), c.t);
    EXPECT_EQ(DTypeBits(c.t), c.bits) << c.name;
    EXPECT_TRUE(IsInt(c.t)) << c.name;
    EXPECT_FALSE(IsSigned(c.t)) << c.name;
    EXPECT_FALSE(IsFloat(c.t)) << c.name;
  }
  EXPECT_TRUE(IsSigned(DType::kInt16));
  EXPECT_FALSE(IsSigned(DType::kBool));
  EXPECT_EQ(ParseDType("uint128"), std::nullopt);
}

TEST(ExprTest, ComparisonsYieldBoolArithmeticKeepsType) {
  Var i = MakeVar("i");
  EXPECT_EQ(Binary(BinaryOp::kLt, i, IntImm(4))->dtype, DType::kBool);
  EXPECT_EQ(Binary(BinaryOp::kAdd, FloatImm(1.0, DType::kFloat16), FloatImm(2.0, DType::kFloat16))->dtype,
            DType::kFloat16);
  EXPECT_EQ(AsConstInt(IntImm(7)), 7);
  EXPECT_EQ(AsConstInt(i), std::nullopt);
}

TEST(CallFnTest, NamesRoundTrip) {
  for (int i = 0; i < kNumCallFns; ++i) {
    CallFn fn = static_cast<CallFn>(i);
    EXPECT_EQ(ParseCallFn(CallFnName(fn)), fn);
  }
}

class CountVars : public IRVisitor {
 public:
  using IRVisitor::Visit;
  void Visit(const Expr& e) override {
    if (e && e->kind == ExprKind::kVar) ++count;
    IRVisitor::Visit(e);
  }
  int count = 0;
};

class ReplaceVar : public IRMutator {
 public:
  ReplaceVar(Var from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}
  using IRMutator::Mutate;
  Expr Mutate(const Expr& e) override { return e == from_ ? to_ : IRMutator::Mutate(e); }

 private:
  Var from_;
  Expr to_;
};

TEST(VisitorTest, VisitsLoopVarsIndicesAndValues) {
  Var i = MakeVar("i"), n = MakeVar("n");
  Buffer a = MakeBuffer("A", DType::kFloat32, {n}, Scope::kGlobal);
  Stmt s = For(i, IntImm(0), n, ForKind::kSerial, Store(a, {i}, Load(a, {i})));
  CountVars c;
  c.Visit(s);
  // i (loop var), n (extent), n (shape, twice), i (store index), i (load index)
  EXPECT_EQ(c.count, 6);
}

TEST(MutatorTest, UnchangedTreesStayShared) {
  Var i = MakeVar("i"), j = MakeVar("j");
  Buffer a = MakeBuffer("A", DType::kFloat32, {IntImm(8)}, Scope::kShared);
  Stmt body = Seq({Store(a, {i}, FloatImm(1.0)), Store(a, {IntImm(0)}, FloatImm(2.0))});
  Stmt s = For(i, IntImm(0), IntImm(8), ForKind::kParallel, body);

  ReplaceVar nothing(j, IntImm(3));
  EXPECT_EQ(nothing.Mutate(s), s);

  ReplaceVar some(i, IntImm(3));
  Stmt out = some.Mutate(s);
  ASSERT_NE(out, s);
  const auto* seq = out->as<ForNode>()->body->as<SeqNode>();
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(AsConstInt(seq->stmts[0]->as<StoreNode>()->indices[0]), 3);
  // The second store did not mention i: the same node is reused.
  EXPECT_EQ(seq->stmts[1], body->as<SeqNode>()->stmts[1]);
}

}  // namespace
}  // namespace tilec::ir
