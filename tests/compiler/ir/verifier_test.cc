#include "compiler/ir/verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/limits.h"

namespace tilec::ir {
namespace {

constexpr DType kF16 = DType::kFloat16;
constexpr DType kF32 = DType::kFloat32;

Expr I(int64_t v) { return IntImm(v); }
Expr Add(Expr a, Expr b) { return Binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr Mul(Expr a, Expr b) { return Binary(BinaryOp::kMul, std::move(a), std::move(b)); }
Expr Lt(Expr a, Expr b) { return Binary(BinaryOp::kLt, std::move(a), std::move(b)); }
Expr CeilDiv(Expr a, Expr b) { return Call(CallFn::kCeilDiv, {std::move(a), std::move(b)}); }

// buffer[min0 : min0 + extent0, ...] from {min, extent} pairs.
Region Slice(const Buffer& b, std::vector<std::pair<Expr, Expr>> dims) {
  Region r{b, {}, {}};
  for (auto& [min, extent] : dims) {
    r.mins.push_back(min);
    r.extents.push_back(extent);
  }
  return r;
}

Buffer Alloc(std::string name, DType t, std::vector<int64_t> dims, Scope scope) {
  std::vector<Expr> shape;
  for (int64_t d : dims) shape.push_back(I(d));
  return MakeBuffer(std::move(name), t, std::move(shape), scope);
}

Stmt MakeKernel(std::vector<Expr> grid, std::vector<Var> vars, Expr threads, Stmt body) {
  auto k = std::make_shared<KernelNode>();
  k->grid = std::move(grid);
  k->block_vars = std::move(vars);
  k->threads = std::move(threads);
  k->body = std::move(body);
  return k;
}

Stmt MakeGemm(Region a, Region b, Region c, bool transpose_a = false, bool transpose_b = false) {
  auto g = std::make_shared<GemmNode>();
  g->a = std::move(a);
  g->b = std::move(b);
  g->c = std::move(c);
  g->transpose_a = transpose_a;
  g->transpose_b = transpose_b;
  return g;
}

std::shared_ptr<ForNode> MakeFor(Var v, Expr extent, ForKind kind, Stmt body) {
  auto f = std::make_shared<ForNode>();
  f->var = std::move(v);
  f->min = I(0);
  f->extent = std::move(extent);
  f->kind = kind;
  f->body = std::move(body);
  return f;
}

Stmt Pipelined(Var v, Expr extent, Expr stages, Stmt body) {
  auto f = MakeFor(std::move(v), std::move(extent), ForKind::kPipelined, std::move(body));
  f->num_stages = std::move(stages);
  return f;
}

Stmt Reduce(ReduceKind kind, Buffer src, Buffer dst, int dim, bool clear) {
  return std::make_shared<ReduceNode>(kind, std::move(src), std::move(dst), dim, clear);
}

class VerifierTest : public ::testing::Test {
 protected:
  // A program over tensors A [M, K], B [K, N], C [M, N] (float16) whose body
  // is `top`.
  Program Top(std::vector<Stmt> top) {
    Program p;
    p.name = "gemm";
    p.params = {{A, nullptr}, {B, nullptr}, {C, nullptr}};
    p.dyn_dims = {M, N, K};
    p.tile_params = {{block_M, 128, {64, 128}}, {num_stages, std::nullopt, {2, 3, 4}}};
    p.body = Seq(std::move(top));
    return p;
  }

  // The same with one 2-D kernel of 128 threads around `body`.
  Program InKernel(std::vector<Stmt> body) {
    return Top({MakeKernel({CeilDiv(N, I(128)), CeilDiv(M, I(128))}, {bx, by}, I(128),
                           Seq(std::move(body)))});
  }

  // C = A @ B with 128x128x32 tiles, pipelined with the unbound num_stages.
  Program GemmProgram() {
    Buffer as = Alloc("A_shared", kF16, {128, 32}, Scope::kShared);
    Buffer bs = Alloc("B_shared", kF16, {32, 128}, Scope::kShared);
    Buffer cl = Alloc("C_local", kF32, {128, 128}, Scope::kFragment);
    Var k = MakeVar("k");
    Stmt loop = Pipelined(
        k, CeilDiv(K, I(32)), num_stages,
        Seq({Copy(Slice(A, {{Mul(by, I(128)), I(128)}, {Mul(k, I(32)), I(32)}}), FullRegion(as)),
             Copy(Slice(B, {{Mul(k, I(32)), I(32)}, {Mul(bx, I(128)), I(128)}}), FullRegion(bs)),
             MakeGemm(FullRegion(as), FullRegion(bs), FullRegion(cl))}));
    return InKernel(
        {Allocate(as), Allocate(bs), Allocate(cl), Fill(FullRegion(cl), FloatImm(0.0)), loop,
         Copy(FullRegion(cl), Slice(C, {{Mul(by, I(128)), I(128)}, {Mul(bx, I(128)), I(128)}}))});
  }

  // The message of a verification that must fail.
  static std::string Error(const Program& p) {
    absl::Status s = Verify(p);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    return std::string(s.message());
  }

  Var M = MakeVar("M"), N = MakeVar("N"), K = MakeVar("K");
  Var bx = MakeVar("bx"), by = MakeVar("by");
  Var block_M = MakeVar("block_M"), num_stages = MakeVar("num_stages");
  Buffer A = MakeBuffer("A", kF16, {M, K}, Scope::kGlobal);
  Buffer B = MakeBuffer("B", kF16, {K, N}, Scope::kGlobal);
  Buffer C = MakeBuffer("C", kF16, {M, N}, Scope::kGlobal);
};

TEST_F(VerifierTest, WellFormedGemmVerifies) { EXPECT_TRUE(Verify(GemmProgram()).ok()); }

TEST_F(VerifierTest, LetAndAllocateScopeOverTheRestOfTheSeq) {
  Var base = MakeVar("base");
  Buffer s = Alloc("S", kF32, {64}, Scope::kShared);
  Var i = MakeVar("i");
  Program p = InKernel({Let(base, Mul(bx, I(64))), Allocate(s),
                        MakeFor(i, I(64), ForKind::kParallel,
                                Store(s, {i}, Cast(kF32, Load(A, {by, Add(base, i)}))))});
  EXPECT_TRUE(Verify(p).ok()) << Verify(p);
}

TEST_F(VerifierTest, UndefinedVariable) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Var i = MakeVar("i");
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {i}, FloatImm(1.0, kF16))})),
            "kernel 0 > store #1: undefined variable 'i'");
}

TEST_F(VerifierTest, VariableUsedOutsideItsLoop) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Var i = MakeVar("i");
  Program p = InKernel({Allocate(s),
                        MakeFor(i, I(64), ForKind::kParallel, Store(s, {i}, FloatImm(0.0, kF16))),
                        Store(s, {i}, FloatImm(1.0, kF16))});
  EXPECT_EQ(Error(p), "kernel 0 > store #1: variable 'i' used outside its scope");
}

TEST_F(VerifierTest, VariableDeclaredTwice) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Var i = MakeVar("i");
  Stmt loop = MakeFor(i, I(64), ForKind::kParallel, Store(s, {i}, FloatImm(0.0, kF16)));
  EXPECT_EQ(Error(InKernel({Allocate(s), loop, loop})),
            "kernel 0 > for i: loop variable 'i' is declared twice (the same node is bound by two "
            "declarations)");
}

// A 0-d buffer would reach layout inference with no dimension to lay out;
// the frontend stores 0-d tensors and allocations as shape [1].
TEST_F(VerifierTest, BuffersHaveAtLeastOneDimension) {
  Program p = InKernel({});
  p.params.push_back({MakeBuffer("S", kF32, {}, Scope::kGlobal), nullptr});
  EXPECT_EQ(Error(p), "param S: S has no dimensions (a 0-d buffer is one element: shape [1])");
  Buffer f = Alloc("F", kF32, {}, Scope::kFragment);
  EXPECT_EQ(Error(InKernel({Allocate(f)})),
            "kernel 0 > T.alloc_fragment F: F has no dimensions (a 0-d buffer is one element: "
            "shape [1])");
}

TEST_F(VerifierTest, UndefinedBuffer) {
  Buffer s = Alloc("A_shared", kF16, {64, 64}, Scope::kShared);
  Program p = InKernel({Copy(Slice(A, {{I(0), I(64)}, {I(0), I(64)}}), FullRegion(s))});
  EXPECT_EQ(Error(p),
            "kernel 0 > T.copy #1: undefined buffer 'A_shared' (neither a parameter nor allocated "
            "in an enclosing scope)");
}

TEST_F(VerifierTest, BufferUsedOutsideTheLoopThatAllocatedIt) {
  Buffer t = Alloc("tmp", kF16, {4}, Scope::kLocal);
  Var i = MakeVar("i");
  Program p = InKernel(
      {MakeFor(i, I(4), ForKind::kSerial, Allocate(t)), Store(t, {I(0)}, FloatImm(0.0, kF16))});
  EXPECT_EQ(Error(p), "kernel 0 > store #1: buffer 'tmp' used outside its scope");
}

TEST_F(VerifierTest, NullOperand) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {I(0)}, nullptr)})),
            "kernel 0 > store #1: null expression as value stored to S");
  EXPECT_EQ(Error(InKernel({nullptr})), "kernel 0: null statement");
}

TEST_F(VerifierTest, IndexCountDiffersFromRank) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {I(0)}, Load(A, {I(1)}))})),
            "kernel 0 > store #1: A has rank 2 but is indexed with 1 index");
}

TEST_F(VerifierTest, RegionRankDiffersFromBufferRank) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Program p = InKernel({Allocate(s), Copy(Slice(A, {{I(0), I(64)}}), FullRegion(s))});
  EXPECT_EQ(Error(p),
            "kernel 0 > T.copy #1: source region of A has 1 mins and 1 extents but A has rank 2");
}

TEST_F(VerifierTest, CopyShapeMismatchNamesPathAndBothShapes) {
  Buffer as = Alloc("A_shared", kF16, {64, 32}, Scope::kShared);
  Buffer bs = Alloc("B_shared", kF16, {64, 64}, Scope::kShared);
  Var k = MakeVar("k");
  Stmt loop = MakeFor(
      k, CeilDiv(K, I(32)), ForKind::kSerial,
      Seq({Copy(Slice(A, {{Mul(by, I(64)), I(64)}, {Mul(k, I(32)), I(32)}}), FullRegion(as)),
           Copy(Slice(B, {{Mul(k, I(32)), I(64)}, {Mul(bx, I(64)), I(32)}}), FullRegion(bs))}));
  EXPECT_EQ(Error(InKernel({Allocate(as), Allocate(bs), loop})),
            "kernel 0 > for k > T.copy #2: shape mismatch: source region of B [64, 32] vs "
            "destination B_shared [64, 64]");
}

TEST_F(VerifierTest, CopyDropsExtentOneDims) {
  Buffer src = MakeBuffer("Q", kF16, {I(2), M, I(4), I(128)}, Scope::kGlobal);
  Buffer s = Alloc("Q_shared", kF16, {64, 128}, Scope::kShared);
  Program p = InKernel(
      {Allocate(s),
       Copy(Slice(src, {{I(1), I(1)}, {Mul(bx, I(64)), I(64)}, {by, I(1)}, {I(0), I(128)}}),
            FullRegion(s))});
  p.params.push_back({src, nullptr});
  EXPECT_TRUE(Verify(p).ok()) << Verify(p);

  Program bad = InKernel(
      {Allocate(s),
       Copy(Slice(src, {{I(0), I(2)}, {Mul(bx, I(64)), I(64)}, {by, I(1)}, {I(0), I(128)}}),
            FullRegion(s))});
  bad.params.push_back({src, nullptr});
  EXPECT_EQ(Error(bad),
            "kernel 0 > T.copy #1: shape mismatch: source region of Q [2, 64, 1, 128] vs "
            "destination Q_shared [64, 128]");
}

TEST_F(VerifierTest, GemmKMismatch) {
  Buffer as = Alloc("A_shared", kF16, {128, 32}, Scope::kShared);
  Buffer bs = Alloc("B_shared", kF16, {64, 128}, Scope::kShared);
  Buffer cl = Alloc("C_local", kF32, {128, 128}, Scope::kFragment);
  Program p = InKernel({Allocate(as), Allocate(bs), Allocate(cl),
                        MakeGemm(FullRegion(as), FullRegion(bs), FullRegion(cl))});
  EXPECT_EQ(Error(p),
            "kernel 0 > T.gemm #1: gemm shape mismatch: K is 32 in A A_shared [128, 32] but 64 "
            "in B B_shared [64, 128]");
}

TEST_F(VerifierTest, GemmShapesFollowTransposes) {
  Buffer as = Alloc("A_shared", kF16, {32, 128}, Scope::kShared);  // [K, M]
  Buffer bs = Alloc("B_shared", kF16, {64, 32}, Scope::kShared);   // [N, K]
  Buffer cl = Alloc("C_local", kF32, {128, 64}, Scope::kFragment);
  std::vector<Stmt> allocs = {Allocate(as), Allocate(bs), Allocate(cl)};
  auto with = [&](Stmt gemm) {
    std::vector<Stmt> body = allocs;
    body.push_back(std::move(gemm));
    return InKernel(std::move(body));
  };
  Program ok = with(MakeGemm(FullRegion(as), FullRegion(bs), FullRegion(cl), true, true));
  EXPECT_TRUE(Verify(ok).ok()) << Verify(ok);
  EXPECT_EQ(Error(with(MakeGemm(FullRegion(as), FullRegion(bs), FullRegion(cl), true, false))),
            "kernel 0 > T.gemm #1: gemm shape mismatch: K is 32 in A A_shared [32, 128] "
            "(transpose_A) but 64 in B B_shared [64, 32]");
  EXPECT_EQ(Error(with(MakeGemm(FullRegion(as), FullRegion(bs), FullRegion(cl), false, true))),
            "kernel 0 > T.gemm #1: gemm shape mismatch: M is 32 in A A_shared [32, 128] but 128 "
            "in C C_local [128, 64]");
}

TEST_F(VerifierTest, GemmOperandScopes) {
  Buffer as = Alloc("A_shared", kF16, {128, 32}, Scope::kShared);
  Buffer bs = Alloc("B_shared", kF16, {32, 128}, Scope::kShared);
  Buffer cs = Alloc("C_shared", kF32, {128, 128}, Scope::kShared);
  EXPECT_EQ(Error(InKernel({Allocate(as), Allocate(bs), Allocate(cs),
                            MakeGemm(FullRegion(as), FullRegion(bs), FullRegion(cs))})),
            "kernel 0 > T.gemm #1: T.gemm operand C (C_shared) must be in fragment or local "
            "memory, not shared");
  Buffer cl = Alloc("C_local", kF32, {128, 128}, Scope::kFragment);
  EXPECT_EQ(Error(InKernel({Allocate(bs), Allocate(cl),
                            MakeGemm(Slice(A, {{I(0), I(128)}, {I(0), I(32)}}), FullRegion(bs),
                                     FullRegion(cl))})),
            "kernel 0 > T.gemm #1: T.gemm operand A (A) must be in shared or fragment memory, "
            "not global");
}

TEST_F(VerifierTest, GemmAccumulatorDtype) {
  Buffer as = Alloc("A_shared", kF16, {128, 32}, Scope::kShared);
  Buffer bs = Alloc("B_shared", kF16, {32, 128}, Scope::kShared);
  Buffer cl = Alloc("C_local", DType::kInt32, {128, 128}, Scope::kFragment);
  EXPECT_EQ(Error(InKernel({Allocate(as), Allocate(bs), Allocate(cl),
                            MakeGemm(FullRegion(as), FullRegion(bs), FullRegion(cl))})),
            "kernel 0 > T.gemm #1: T.gemm accumulator C (C_local) is int32; float16 operands "
            "need a float accumulator");
}

TEST_F(VerifierTest, ReduceOnGlobalBuffer) {
  Buffer m = Alloc("m", kF16, {128}, Scope::kFragment);
  Buffer g = MakeBuffer("G", kF16, {I(128), I(64)}, Scope::kGlobal);
  Program p = InKernel({Allocate(m), Reduce(ReduceKind::kMax, g, m, 1, true)});
  p.params.push_back({g, nullptr});
  EXPECT_EQ(Error(p),
            "kernel 0 > T.reduce_max #1: T.reduce_max on global buffer G; it works on shared, "
            "fragment or local buffers");
}

TEST_F(VerifierTest, ReduceDimAndDestinationShape) {
  Buffer s = Alloc("S", kF32, {128, 64}, Scope::kFragment);
  Buffer m = Alloc("m", kF32, {128}, Scope::kFragment);
  Buffer row = Alloc("row", kF32, {64}, Scope::kFragment);
  Program ok = InKernel({Allocate(s), Allocate(m), Reduce(ReduceKind::kSum, s, m, 1, false)});
  EXPECT_TRUE(Verify(ok).ok()) << Verify(ok);
  EXPECT_EQ(Error(InKernel({Allocate(s), Allocate(m), Reduce(ReduceKind::kMax, s, m, 2, true)})),
            "kernel 0 > T.reduce_max #1: T.reduce_max dim 2 is out of range for S [128, 64] of "
            "rank 2");
  EXPECT_EQ(Error(InKernel({Allocate(s), Allocate(row), Allocate(m),
                            Reduce(ReduceKind::kSum, s, m, 1, true),
                            Reduce(ReduceKind::kSum, s, m, 0, true)})),
            "kernel 0 > T.reduce_sum #2: T.reduce_sum destination m [128] does not match "
            "reducing S [128, 64] along dim 0, which gives [64]");
}

TEST_F(VerifierTest, ReduceOfOneDimensionalSourceGivesShapeOne) {
  Buffer v = Alloc("v", kF32, {64}, Scope::kFragment);
  Buffer one = Alloc("total", kF32, {1}, Scope::kFragment);
  Buffer bad = Alloc("wrong", kF32, {2}, Scope::kFragment);
  Program ok = InKernel({Allocate(v), Allocate(one), Reduce(ReduceKind::kAbsMax, v, one, 0, true)});
  EXPECT_TRUE(Verify(ok).ok()) << Verify(ok);
  EXPECT_EQ(
      Error(InKernel({Allocate(v), Allocate(bad), Reduce(ReduceKind::kAbsMax, v, bad, 0, true)})),
      "kernel 0 > T.reduce_absmax #1: T.reduce_absmax destination wrong [2] does not match "
      "reducing v [64] along dim 0, which gives [1]");
}

TEST_F(VerifierTest, CumsumDimAndShape) {
  Buffer s = Alloc("S", kF32, {32, 64}, Scope::kShared);
  Buffer t = Alloc("T", kF32, {64, 32}, Scope::kShared);
  auto cumsum = [](Buffer a, Buffer b, int dim) {
    return std::make_shared<CumsumNode>(std::move(a), std::move(b), dim, false);
  };
  Program ok = InKernel({Allocate(s), cumsum(s, s, 1)});
  EXPECT_TRUE(Verify(ok).ok()) << Verify(ok);
  EXPECT_EQ(Error(InKernel({Allocate(s), cumsum(s, s, -1)})),
            "kernel 0 > T.cumsum #1: T.cumsum dim -1 is out of range for S [32, 64] of rank 2");
  EXPECT_EQ(Error(InKernel({Allocate(s), Allocate(t), cumsum(s, t, 0)})),
            "kernel 0 > T.cumsum #1: T.cumsum destination T [64, 32] does not have the shape of "
            "the source S [32, 64]");
}

TEST_F(VerifierTest, KernelNestedInKernel) {
  Var x = MakeVar("x");
  Program p = InKernel({MakeKernel({I(4)}, {x}, I(32), Seq({}))});
  EXPECT_EQ(Error(p), "kernel 0 > kernel 1: T.Kernel nested inside a T.Kernel");
}

TEST_F(VerifierTest, AllocationScopeVersusKernel) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  EXPECT_EQ(Error(Top({Allocate(s)})),
            "T.alloc_shared S: shared buffer S allocated outside a T.Kernel");
  Buffer ws = MakeBuffer("workspace", kF32, {M}, Scope::kGlobal);
  EXPECT_EQ(Error(InKernel({Allocate(ws)})),
            "kernel 0 > T.alloc_global workspace: global workspace workspace allocated inside a "
            "T.Kernel; T.alloc_global belongs at the top level, between kernels");
}

TEST_F(VerifierTest, TileOperatorOutsideKernel) {
  EXPECT_EQ(Error(Top({Fill(FullRegion(C), FloatImm(0.0, kF16))})),
            "T.fill #1: T.fill outside a T.Kernel");
}

TEST_F(VerifierTest, AtomicAddNeedsGlobalOrSharedDestination) {
  Buffer f = Alloc("acc", kF32, {16}, Scope::kFragment);
  Stmt add = std::make_shared<AtomicAddNode>(Slice(f, {{I(0), I(1)}}), std::nullopt, FloatImm(1.0));
  EXPECT_EQ(Error(InKernel({Allocate(f), add})),
            "kernel 0 > T.atomic_add #1: T.atomic_add destination acc is a fragment buffer; "
            "atomics need global or shared memory");
}

TEST_F(VerifierTest, StoreValueDtype) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {I(0)}, FloatImm(0.5, kF32))})),
            "kernel 0 > store #1: value stored to S has dtype float32, expected float16 (0.5)");
}

TEST_F(VerifierTest, BinaryOperandDtypes) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Expr sum = Add(Load(s, {I(0)}), FloatImm(1.5, kF32));
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {I(1)}, sum)})),
            "kernel 0 > store #1: operands of '+' have different dtypes: float16 vs float32 "
            "(S[0] + 1.5)");
}

TEST_F(VerifierTest, ConditionsMustBeBool) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Stmt store = Store(s, {I(0)}, FloatImm(0.0, kF16));
  EXPECT_EQ(Error(InKernel({Allocate(s), If(bx, store)})),
            "kernel 0 > if #1: if condition must be bool, got int32 (bx)");
  Expr sel = Select(by, FloatImm(1.0, kF16), FloatImm(2.0, kF16));
  EXPECT_EQ(Error(InKernel({Allocate(s), If(Lt(bx, I(2)), store, Store(s, {I(1)}, sel))})),
            "kernel 0 > if #1 > else > store #1: T.if_then_else condition must be bool, got "
            "int32 (by)");
}

TEST_F(VerifierTest, IndicesAndLoopBoundsAreIntegers) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {FloatImm(1.0)}, FloatImm(0.0, kF16))})),
            "kernel 0 > store #1: index 0 of S must be an integer, got float32 (1.0)");
  Var i = MakeVar("i");
  EXPECT_EQ(Error(InKernel({MakeFor(i, FloatImm(8.0), ForKind::kSerial, Seq({}))})),
            "kernel 0 > for i: loop extent must be an integer, got float32 (8.0)");
}

TEST_F(VerifierTest, NumStagesOnlyOnPipelinedAndPositive) {
  Var k = MakeVar("k");
  auto serial = MakeFor(k, I(4), ForKind::kSerial, Seq({}));
  serial->num_stages = I(2);
  EXPECT_EQ(Error(InKernel({serial})),
            "kernel 0 > for k: num_stages is only allowed on T.Pipelined loops, not T.serial");
  EXPECT_EQ(Error(InKernel({Pipelined(k, I(4), I(0), Seq({}))})),
            "kernel 0 > for k: num_stages must be >= 1, got 0");
}

TEST_F(VerifierTest, OrderAndStageHaveOneEntryPerStatement) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Var k = MakeVar("k");
  auto loop =
      MakeFor(k, I(4), ForKind::kPipelined,
              Seq({Store(s, {k}, FloatImm(0.0, kF16)), Store(s, {k}, FloatImm(1.0, kF16))}));
  loop->num_stages = I(2);
  loop->order = {0, 1};
  loop->stage = {0, 0, 1};
  EXPECT_EQ(Error(InKernel({Allocate(s), loop})),
            "kernel 0 > for k: stage has 3 entries but the pipelined body has 2 statements");
  loop->stage = {0, 1};
  EXPECT_TRUE(Verify(InKernel({Allocate(s), loop})).ok());
}

// A let in the body (a Python local bound inside the loop) is not one of the
// statements order and stage index.
TEST_F(VerifierTest, OrderAndStageDoNotCountLets) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Var k = MakeVar("k"), j = MakeVar("j");
  auto loop = MakeFor(k, I(4), ForKind::kPipelined,
                      Seq({Let(j, Add(k, I(1))), Store(s, {j}, FloatImm(0.0, kF16)),
                           Store(s, {k}, FloatImm(1.0, kF16))}));
  loop->num_stages = I(2);
  loop->order = {0, 1};
  loop->stage = {0, 1};
  EXPECT_TRUE(Verify(InKernel({Allocate(s), loop})).ok());
  loop->order = {0, 1, 2};
  EXPECT_EQ(Error(InKernel({Allocate(s), loop})),
            "kernel 0 > for k: order has 3 entries but the pipelined body has 2 statements");
}

TEST_F(VerifierTest, GridRankAndBlockVariables) {
  Var x = MakeVar("x"), y = MakeVar("y"), z = MakeVar("z"), w = MakeVar("w");
  EXPECT_EQ(Error(Top({MakeKernel({I(1), I(2), I(3), I(4)}, {x, y, z, w}, I(32), Seq({}))})),
            "kernel 0: T.Kernel grid has 4 extents; it takes 1 to 3");
  EXPECT_EQ(Error(Top({MakeKernel({I(1), I(2)}, {x}, I(32), Seq({}))})),
            "kernel 0: T.Kernel has 2 grid extents but 1 block variables");
  EXPECT_EQ(Error(Top({MakeKernel({I(0)}, {x}, I(32), Seq({}))})),
            "kernel 0: grid extent 0 must be >= 1, got 0");
}

TEST_F(VerifierTest, CallArityAndArgumentTypes) {
  Buffer s = Alloc("S", kF32, {64}, Scope::kShared);
  Expr two = Call(CallFn::kExp, {FloatImm(1.0), FloatImm(2.0)});
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {I(0)}, two)})),
            "kernel 0 > store #1: T.exp takes 1 argument, got 2");
  Buffer n = Alloc("n", DType::kInt32, {1}, Scope::kLocal);
  EXPECT_EQ(Error(InKernel({Allocate(n), Store(n, {I(0)}, Call(CallFn::kExp, {bx}))})),
            "kernel 0 > store #1: T.exp needs float arguments, got int32");
}

TEST_F(VerifierTest, BoundTileParameterMustNotAppear) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {block_M}, FloatImm(0.0, kF16))})),
            "kernel 0 > store #1: tile parameter 'block_M' is bound to 128 and must not appear "
            "in the body");
  // The unbound one is in scope everywhere.
  Buffer t = MakeBuffer("T", kF16, {num_stages}, Scope::kShared);
  Program ok = InKernel({Allocate(t), Store(t, {I(0)}, FloatImm(0.0, kF16))});
  EXPECT_TRUE(Verify(ok).ok()) << Verify(ok);
}

TEST_F(VerifierTest, TensorParamsAreGlobal) {
  Program p = InKernel({});
  p.params.push_back({Alloc("X", kF16, {16}, Scope::kShared), nullptr});
  EXPECT_EQ(Error(p), "param X: tensor parameter X must be global, not shared");
}

TEST_F(VerifierTest, LiteralMustFitItsDtype) {
  Buffer s = Alloc("S", DType::kInt8, {4}, Scope::kLocal);
  EXPECT_EQ(Error(InKernel({Allocate(s), Store(s, {I(0)}, IntImm(300, DType::kInt8))})),
            "kernel 0 > store #1: literal 300 does not fit its dtype int8");
  struct Case {
    DType t;
    int64_t max;
  };
  for (Case c : {Case{DType::kUInt16, 65535}, Case{DType::kUInt32, 4294967295},
                 Case{DType::kUInt64, INT64_MAX}}) {
    Buffer u = Alloc("U", c.t, {4}, Scope::kLocal);
    auto store = [&](int64_t v) {
      return InKernel({Allocate(u), Store(u, {I(0)}, IntImm(v, c.t))});
    };
    EXPECT_TRUE(Verify(store(c.max)).ok()) << Verify(store(c.max));
    EXPECT_TRUE(Verify(store(0)).ok()) << Verify(store(0));
    EXPECT_EQ(Error(store(-1)),
              absl::StrCat("kernel 0 > store #1: literal -1 does not fit its dtype ",
                           std::string(DTypeName(c.t))));
    if (c.max < INT64_MAX) {
      EXPECT_EQ(Error(store(c.max + 1)),
                absl::StrCat("kernel 0 > store #1: literal ", c.max + 1, " does not fit its dtype ",
                             std::string(DTypeName(c.t))));
    }
  }
}

TEST_F(VerifierTest, FillAcceptsLiteralOfOtherDtypeButNotExpression) {
  Buffer f = Alloc("acc", kF32, {16}, Scope::kFragment);
  EXPECT_TRUE(Verify(InKernel({Allocate(f), Fill(FullRegion(f), I(0))})).ok());
  EXPECT_EQ(Error(InKernel({Allocate(f), Fill(FullRegion(f), bx)})),
            "kernel 0 > T.fill #1: fill value for acc has dtype int32, expected float32 (bx)");
}

TEST_F(VerifierTest, CustomLayoutTakesOneVariablePerDim) {
  Buffer s = Alloc("S", kF16, {8, 8}, Scope::kShared);
  Var i = MakeVar("i");
  Layout layout{Layout::Kind::kCustom, {i}, {i}};
  EXPECT_EQ(Error(InKernel({Allocate(s), std::make_shared<AnnotateLayoutNode>(s, layout)})),
            "kernel 0 > T.annotate_layout #1: layout of S takes 1 variables but the buffer has "
            "rank 2");
}

// --- Limits (compiler/ir/limits.h) ---------------------------------------

// s[0] + s[1] + ... + s[terms - 1] over a local float32 buffer, stored to S[0].
Stmt SumStore(const Buffer& s, int terms) {
  Expr sum = Load(s, {IntImm(0)});
  for (int i = 1; i < terms; ++i) sum = Binary(BinaryOp::kAdd, sum, Load(s, {IntImm(i % 4)}));
  return Store(s, {IntImm(0)}, sum);
}

TEST_F(VerifierTest, DeepButValidProgramsVerify) {
  Buffer s = Alloc("S", kF32, {4}, Scope::kLocal);
  EXPECT_TRUE(Verify(InKernel({Allocate(s), SumStore(s, 41)})).ok());
  // 30 nested ifs and 23 nested loops, each body a block.
  Stmt ifs = SumStore(s, 2);
  for (int i = 0; i < 30; ++i) ifs = Seq({If(Lt(bx, I(i + 1)), Seq({ifs}))});
  EXPECT_TRUE(Verify(InKernel({Allocate(s), ifs})).ok()) << Verify(InKernel({Allocate(s), ifs}));
  Stmt loops = SumStore(s, 2);
  for (int i = 0; i < 23; ++i) {
    loops = Seq({MakeFor(MakeVar("i" + std::to_string(i)), I(2), ForKind::kSerial, loops)});
  }
  EXPECT_TRUE(Verify(InKernel({Allocate(s), loops})).ok());
}

TEST_F(VerifierTest, NestingPastTheLimitIsLocated) {
  Buffer s = Alloc("S", kF32, {4}, Scope::kLocal);
  std::string e = Error(InKernel({Allocate(s), SumStore(s, kMaxNesting + 10)}));
  EXPECT_EQ(e.rfind("kernel 0 > store #1: statements and expressions nest more than 256", 0), 0)
      << e;
  Stmt loops = SumStore(s, 2);
  for (int i = 0; i < kMaxNesting; ++i) {
    loops = MakeFor(MakeVar("i" + std::to_string(i)), I(2), ForKind::kSerial, loops);
  }
  e = Error(InKernel({Allocate(s), loops}));
  EXPECT_NE(e.find("nest more than 256"), std::string::npos) << e;
  EXPECT_NE(e.find("kernel 0 > for i255 > for i254 > ("), std::string::npos) << e;  // path elided
  EXPECT_LT(e.size(), 400u);
}

TEST_F(VerifierTest, LongNamesAreRefused) {
  const std::string huge(100000, 'x');
  Program p = GemmProgram();
  p.name = huge;
  std::string e = Error(p);
  EXPECT_NE(e.find("is 100000 characters long; names are at most 256"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u);

  Buffer s = Alloc(huge, kF32, {4}, Scope::kShared);
  e = Error(InKernel({Allocate(s)}));
  EXPECT_NE(e.find("100000 characters"), std::string::npos) << e;
  EXPECT_LT(e.size(), 400u);

  Program q = GemmProgram();
  q.params.push_back({nullptr, MakeVar(huge)});
  e = Error(q);
  EXPECT_NE(e.find("scalar parameter"), std::string::npos) << e;
  EXPECT_LT(e.size(), 400u);
  Var k = MakeVar(std::string(kMaxNameLength, 'k'));
  EXPECT_TRUE(Verify(InKernel({MakeFor(k, I(2), ForKind::kSerial, Seq({}))})).ok());
}

// Names end up in generated CUDA and HIP source: only identifiers are
// accepted, wherever the name is, and the message quotes the name escaped.
TEST_F(VerifierTest, NamesThatAreNotIdentifiersAreRefused) {
  using namespace std::string_literals;
  for (const std::string& bad : {"k\n__device__ int marker = 42;\n//"s, "a\"b"s, "x*/y"s,
                                 "#include"s, "a\0b"s, "k\\"s, "a b"s, "1x"s}) {
    Program p = GemmProgram();
    p.name = bad;
    std::string e = Error(p);
    EXPECT_NE(e.find("is not an identifier"), std::string::npos) << e;
    EXPECT_EQ(e.find_first_of("\n\r"s + '\0'), std::string::npos) << e;

    Buffer s = Alloc(bad, kF32, {4}, Scope::kShared);
    e = Error(InKernel({Allocate(s)}));
    EXPECT_NE(e.find("the name of buffer"), std::string::npos) << e;

    Program q = GemmProgram();
    q.params.push_back({nullptr, MakeVar(bad)});
    e = Error(q);
    EXPECT_NE(e.find("the name of scalar parameter"), std::string::npos) << e;

    Var i = MakeVar(bad);
    e = Error(InKernel({MakeFor(i, I(2), ForKind::kSerial, Seq({}))}));
    EXPECT_NE(e.find("is not an identifier"), std::string::npos) << e;
  }
  // Non-ASCII names are spelled as identifiers by MakeVar and MakeBuffer.
  Buffer s = Alloc("\xce\xb1", kF32, {4}, Scope::kShared);
  EXPECT_TRUE(Verify(InKernel({Allocate(s)})).ok());
  Program p = GemmProgram();
  p.name = "caf\xc3\xa9";  // a raw string, not through MakeVar: refused
  EXPECT_NE(Error(p).find("(not ASCII)"), std::string::npos);
}

TEST_F(VerifierTest, GemmWindowsMustLieInsideTheirOnChipBuffers) {
  Buffer as = Alloc("A_shared", kF16, {128, 32}, Scope::kShared);
  Buffer bs = Alloc("B_shared", kF16, {32, 128}, Scope::kShared);
  Buffer cl = Alloc("C_local", kF32, {128, 128}, Scope::kFragment);
  auto gemm = [&](Region a) {
    return InKernel({Allocate(as), Allocate(bs), Allocate(cl),
                     MakeGemm(std::move(a), FullRegion(bs), FullRegion(cl))});
  };
  EXPECT_TRUE(Verify(gemm(FullRegion(as))).ok());
  std::string e = Error(gemm(Slice(as, {{I(0), I(128)}, {I(16), I(32)}})));
  EXPECT_NE(e.find("T.gemm operand A window"), std::string::npos) << e;
  EXPECT_NE(e.find("lies outside its shared buffer A_shared [128, 32]: dim 1 covers 16 to 47, the "
                   "buffer has 32"),
            std::string::npos)
      << e;
  // A window longer than the buffer, wherever it starts.
  e = Error(gemm(Slice(as, {{I(0), I(256)}, {I(0), I(32)}})));
  EXPECT_NE(e.find("dim 0 covers 0 to 255"), std::string::npos) << e;
}

TEST_F(VerifierTest, FloatLiteralsMustBeFiniteAndNonzeroInTheirDtype) {
  Buffer f32 = Alloc("X", kF32, {4}, Scope::kLocal);
  Buffer f16 = Alloc("H", kF16, {4}, Scope::kLocal);
  auto scale = [](const Buffer& b, double v) {
    return Store(b, {I(0)}, Binary(BinaryOp::kMul, Load(b, {I(0)}), FloatImm(v, b->dtype)));
  };
  EXPECT_EQ(Error(InKernel({Allocate(f32), scale(f32, 1e300)})),
            "kernel 0 > store #1: float literal 1e+300 is out of range for float32 (largest "
            "finite value 3.40282e+38) (right operand of '*')");
  EXPECT_NE(Error(InKernel({Allocate(f16), scale(f16, 1e5)})).find("out of range for float16"),
            std::string::npos);
  EXPECT_NE(Error(InKernel({Allocate(f32), scale(f32, 1e-320)})).find("underflows to 0"),
            std::string::npos);
  // A literal converted by T.fill is checked against the buffer's dtype.
  EXPECT_NE(Error(InKernel({Allocate(f16), Fill(FullRegion(f16), FloatImm(1e6))}))
                .find("out of range for float16"),
            std::string::npos);
  // Infinity is meant; 0, subnormals and the largest finite value are fine.
  for (double v : {std::numeric_limits<double>::infinity(), 0.0, 1e-40, 3.4e38, -65504.0}) {
    const Buffer& b = std::fabs(v) == 65504.0 ? f16 : f32;
    EXPECT_TRUE(Verify(InKernel({Allocate(b), scale(b, v)})).ok()) << v;
  }
}

TEST_F(VerifierTest, GridExtentsWithinCudaLimits) {
  auto kernel = [&](Expr x, Expr y) {
    return Top({MakeKernel({std::move(x), std::move(y)}, {bx, by}, I(128), Seq({}))});
  };
  EXPECT_TRUE(Verify(kernel(I((int64_t{1} << 31) - 1), I(65535))).ok());
  EXPECT_EQ(Error(kernel(IntImm(int64_t{1} << 56, DType::kInt64), I(1))),
            "kernel 0: grid extent 0 is 72057594037927936; CUDA launches at most 2147483647 "
            "blocks along x");
  EXPECT_EQ(Error(kernel(I(1), I(65536))),
            "kernel 0: grid extent 1 is 65536; CUDA launches at most 65535 blocks along y");
  EXPECT_TRUE(Verify(kernel(Mul(M, I(1 << 20)), I(1))).ok());  // dynamic: checked at launch
}

TEST_F(VerifierTest, RegionExtentsAreFixedAtLaunch) {
  Buffer s = Alloc("S", kF16, {64}, Scope::kShared);
  Var i = MakeVar("i");
  // A[by, 0 : i + 1] -> S: the extent changes with the loop variable.
  Stmt loop =
      MakeFor(i, I(64), ForKind::kSerial,
              Copy(Slice(A, {{by, I(1)}, {I(0), Add(i, I(1))}}), Slice(s, {{I(0), Add(i, I(1))}})));
  EXPECT_EQ(Error(InKernel({Allocate(s), loop})),
            "kernel 0 > for i > T.copy #1: extent 1 of source region of A depends on 'i', which "
            "changes while the kernel runs; region extents must be known when the kernel is "
            "launched (constants, dynamic dims, scalar and tile parameters)");
  // Dynamic dims are fixed at launch.
  Buffer g = MakeBuffer("G", kF16, {M}, Scope::kGlobal);
  Program p = InKernel({Copy(FullRegion(g), Slice(C, {{I(0), I(1)}, {I(0), M}}))});
  p.params.push_back({g, nullptr});
  EXPECT_TRUE(Verify(p).ok()) << Verify(p);
}

TEST_F(VerifierTest, PreludeMayNotReachTheFileSystem) {
  auto with_prelude = [&](std::string prelude) {
    auto k = std::make_shared<KernelNode>();
    k->grid = {I(1)};
    k->block_vars = {bx};
    k->threads = I(128);
    k->body = Seq({});
    k->prelude = std::move(prelude);
    return Top({k});
  };
  EXPECT_TRUE(Verify(with_prelude("__device__ float twice(float x) { return 2 * x; }")).ok());
  std::string e = Error(with_prelude("// helpers\n#include \"/etc/passwd\"\n"));
  EXPECT_EQ(e.rfind("kernel 0 > prelude:2:2: `include` is refused", 0), 0) << e;
  EXPECT_EQ(e.find("root:"), std::string::npos);
}

}  // namespace
}  // namespace tilec::ir
