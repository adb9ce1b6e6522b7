#include "compiler/inference/loop_partition.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace tilec::inference {
namespace {

using ir::BinaryOp;
using ir::DType;
using ir::Expr;
using ir::Scope;

Expr Add(Expr a, Expr b) { return ir::Binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr Mul(Expr a, int64_t c) { return ir::Binary(BinaryOp::kMul, std::move(a), ir::IntImm(c)); }

ir::Buffer Buf(const char* name, DType t, std::vector<Expr> shape, Scope scope) {
  return ir::MakeBuffer(name, t, std::move(shape), scope);
}

// A [32, 64] nest over (i, j) with the given body.
ParallelNest Nest(ir::Var i, ir::Var j, ir::Stmt body) {
  ParallelNest n;
  n.vars = {i, j};
  n.extents = {32, 64};
  n.body = std::move(body);
  return n;
}

class NestVectorTest : public ::testing::Test {
 protected:
  ir::Var i = ir::MakeVar("i"), j = ir::MakeVar("j"), bx = ir::MakeVar("bx"),
          by = ir::MakeVar("by"), n_dyn = ir::MakeVar("N");
  TargetInfo target = TargetInfo::Sm80();

  // C[by * 32 + i, bx * 64 + j] = A[by * 32 + i, bx * 64 + j]
  int64_t CopyVector(const ir::Buffer& c, const ir::Buffer& a) {
    std::vector<Expr> idx = {Add(Mul(by, 32), i), Add(Mul(bx, 64), j)};
    return NestAccessVector(Nest(i, j, ir::Store(c, idx, ir::Load(a, idx))), target);
  }
};

TEST_F(NestVectorTest, ElementSizeAndRowStrideLimitTheVector) {
  ir::Buffer a16 = Buf("A", DType::kFloat16, {ir::IntImm(128), ir::IntImm(128)}, Scope::kGlobal);
  ir::Buffer c16 = Buf("C", DType::kFloat16, {ir::IntImm(128), ir::IntImm(128)}, Scope::kGlobal);
  ir::Buffer c32 = Buf("C", DType::kFloat32, {ir::IntImm(128), ir::IntImm(128)}, Scope::kGlobal);
  EXPECT_EQ(CopyVector(c16, a16), 8);  // 16 bytes of float16
  EXPECT_EQ(CopyVector(c32, a16), 4);  // 16 bytes of float32
  // Rows of 100 float16: a vector may not straddle rows, 4 divides 100.
  ir::Buffer a100 = Buf("A", DType::kFloat16, {ir::IntImm(128), ir::IntImm(100)}, Scope::kGlobal);
  EXPECT_EQ(CopyVector(c16, a100), 4);
  // A dynamic row length does not limit the vector: the emitter tests each
  // run's alignment at run time.
  ir::Buffer adyn = Buf("A", DType::kFloat16, {ir::IntImm(128), n_dyn}, Scope::kGlobal);
  EXPECT_EQ(CopyVector(c16, adyn), 8);
  // But a known odd row length does.
  ir::Buffer a99 = Buf("A", DType::kFloat16, {ir::IntImm(128), ir::IntImm(99)}, Scope::kGlobal);
  EXPECT_EQ(CopyVector(c16, a99), 1);
}

TEST_F(NestVectorTest, OnlyContiguousAccessesCount) {
  ir::Buffer s = Buf("S", DType::kFloat16, {ir::IntImm(32), ir::IntImm(64)}, Scope::kShared);
  ir::Buffer g = Buf("G", DType::kFloat32, {ir::IntImm(32), ir::IntImm(256)}, Scope::kGlobal);
  ir::Buffer f = Buf("F", DType::kFloat32, {ir::IntImm(32), ir::IntImm(64)}, Scope::kFragment);
  // G[i, j * 2] is strided: it runs element by element and limits nothing.
  ir::Stmt strided = ir::Store(s, {i, j}, ir::Cast(DType::kFloat16, ir::Load(g, {i, Mul(j, 2)})));
  EXPECT_EQ(NestAccessVector(Nest(i, j, strided), target), 8);
  // S[i, j + 1] starts off the 16-byte grid.
  ir::Stmt shifted = ir::Store(s, {i, Add(j, ir::IntImm(1))}, ir::Load(s, {i, j}));
  EXPECT_EQ(NestAccessVector(Nest(i, j, shifted), target), 1);
  // Fragments never limit (they follow their layout).
  ir::Stmt frag = ir::Store(f, {i, j}, ir::Cast(DType::kFloat32, ir::Load(s, {i, j})));
  EXPECT_EQ(NestAccessVector(Nest(i, j, frag), target), 8);
  // Let-bound indices are seen through.
  ir::Var x = ir::MakeVar("x");
  ir::Stmt let =
      ir::Seq({ir::Let(x, Add(Mul(bx, 64), j)), ir::Store(g, {i, x}, ir::Load(f, {i, j}))});
  EXPECT_EQ(NestAccessVector(Nest(i, j, let), target), 4);
}

TEST_F(NestVectorTest, ContiguousInSeesTheUnitTermOfTheLastIndex) {
  int64_t divisor = 0;
  EXPECT_TRUE(ContiguousIn({Add(Mul(by, 32), i), Add(Mul(bx, 64), j)}, j.get(), &divisor));
  EXPECT_EQ(divisor, 64);
  // j twice, j scaled, j in a leading index, or no j: not contiguous.
  EXPECT_FALSE(ContiguousIn({i, Add(j, j)}, j.get()));
  EXPECT_FALSE(ContiguousIn({i, Mul(j, 2)}, j.get()));
  EXPECT_FALSE(ContiguousIn({j, j}, j.get()));
  EXPECT_FALSE(ContiguousIn({i, bx}, j.get()));
  // j - 1 is contiguous with an odd base; a cast of j counts as j.
  EXPECT_TRUE(ContiguousIn({ir::Binary(BinaryOp::kSub, j, ir::IntImm(1))}, j.get(), &divisor));
  EXPECT_EQ(divisor, 1);
  EXPECT_TRUE(ContiguousIn({Add(ir::Cast(DType::kInt64, j), Mul(n_dyn, 8))}, j.get(), &divisor));
  EXPECT_EQ(divisor, 8);
}

TEST(RegionPartitionTest, CopiesIntoSharedUseWideVectors) {
  TargetInfo target = TargetInfo::Sm80();
  ir::Var by = ir::MakeVar("by"), ko = ir::MakeVar("ko");
  auto copy = [&](Expr k_dim, int64_t k_offset) {
    ir::Buffer a = Buf("A", DType::kFloat16, {ir::IntImm(1024), k_dim}, Scope::kGlobal);
    ir::Buffer s = Buf("A_s", DType::kFloat16, {ir::IntImm(64), ir::IntImm(32)}, Scope::kShared);
    ir::Region src{
        a, {Mul(by, 64), Add(Mul(ko, 32), ir::IntImm(k_offset))}, {ir::IntImm(64), ir::IntImm(32)}};
    return RegionPartition(LoopPartition::Kind::kCopy, src, ir::FullRegion(s), nullptr, nullptr,
                           128, target);
  };
  absl::StatusOr<LoopPartition> p = copy(ir::IntImm(64), 0);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->vector, 8);
  EXPECT_EQ(p->follows, nullptr);
  EXPECT_EQ(p->layout.shape, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(p->layout.ContiguousRun(), 8);
  EXPECT_EQ(p->layout.replicate, 1);
  EXPECT_EQ(copy(ir::IntImm(56), 0)->vector, 8);  // K = 56: rows of 7 vectors
  EXPECT_EQ(copy(ir::IntImm(100), 0)->vector, 4);
  EXPECT_EQ(copy(ir::MakeVar("K"), 0)->vector, 1);
  EXPECT_EQ(copy(ir::IntImm(64), 2)->vector, 2);  // starts 2 elements past the grid
}

TEST(RegionPartitionTest, SmallCopiesKeepEveryThreadBusy) {
  // [16, 32] float16 is 512 elements for 128 threads: 4 each, not 8.
  ir::Buffer a = Buf("A", DType::kFloat16, {ir::IntImm(16), ir::IntImm(32)}, Scope::kGlobal);
  ir::Buffer s = Buf("S", DType::kFloat16, {ir::IntImm(16), ir::IntImm(32)}, Scope::kShared);
  absl::StatusOr<LoopPartition> p =
      RegionPartition(LoopPartition::Kind::kCopy, ir::FullRegion(a), ir::FullRegion(s), nullptr,
                      nullptr, 128, TargetInfo::Sm80());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->vector, 4);
  EXPECT_EQ(p->layout.replicate, 1);
}

TEST(RegionPartitionTest, FragmentSidesDriveThePartition) {
  TargetInfo target = TargetInfo::Sm80();
  ir::Buffer f = Buf("F", DType::kFloat32, {ir::IntImm(64), ir::IntImm(64)}, Scope::kFragment);
  ir::Buffer c = Buf("C", DType::kFloat32, {ir::IntImm(256), ir::IntImm(256)}, Scope::kGlobal);
  ir::Var by = ir::MakeVar("by"), bx = ir::MakeVar("bx");
  ir::Region dst{c, {Mul(by, 64), Mul(bx, 64)}, {ir::IntImm(64), ir::IntImm(64)}};
  FragmentLayout acc = MmaAccumulator(64, 64, {2, 2});
  absl::StatusOr<LoopPartition> p = RegionPartition(
      LoopPartition::Kind::kAtomicAdd, ir::FullRegion(f), dst, &acc, nullptr, 128, target);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->follows, f);
  EXPECT_TRUE(SameLayout(p->layout, acc));
  EXPECT_EQ(p->vector, 2);  // the accumulator holds pairs of columns
  // A column of a tensor into a 1-D fragment: strided, one element at a time.
  ir::Buffer col = Buf("col", DType::kFloat32, {ir::IntImm(64)}, Scope::kFragment);
  ir::Region column{c, {ir::IntImm(0), bx}, {ir::IntImm(64), ir::IntImm(1)}};
  FragmentLayout blocked = Blocked({64}, 128, 1);
  p = RegionPartition(LoopPartition::Kind::kCopy, column, ir::FullRegion(col), nullptr, &blocked,
                      128, target);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->vector, 1);
  EXPECT_EQ(p->follows, col);
}

TEST(RegionPartitionTest, SymbolicExtentsAreUnimplemented) {
  ir::Var n = ir::MakeVar("N");
  ir::Buffer a = Buf("A", DType::kFloat32, {n}, Scope::kGlobal);
  ir::Buffer b = Buf("B", DType::kFloat32, {n}, Scope::kGlobal);
  absl::StatusOr<LoopPartition> p =
      RegionPartition(LoopPartition::Kind::kCopy, ir::FullRegion(a), ir::FullRegion(b), nullptr,
                      nullptr, 128, TargetInfo::Sm80());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(p.status().message().find("non-constant extent N"), std::string::npos) << p.status();
}

TEST(DefaultLayoutTest, VectorFromElementSizeShapeAndThreads) {
  TargetInfo target = TargetInfo::Sm80();
  EXPECT_EQ(DefaultFragmentLayout({8, 64}, 4, 128, target).ContiguousRun(), 4);
  EXPECT_EQ(DefaultFragmentLayout({64, 64}, 2, 128, target).ContiguousRun(), 8);
  EXPECT_EQ(DefaultFragmentLayout({8, 64}, 2, 128, target).ContiguousRun(), 4);  // 512 / 128
  EXPECT_EQ(DefaultFragmentLayout({4, 6}, 4, 128, target).ContiguousRun(), 1);
  EXPECT_EQ(Pow2Divisor(96), 32);
  EXPECT_EQ(FloorPow2(96), 64);
}

}  // namespace
}  // namespace tilec::inference
