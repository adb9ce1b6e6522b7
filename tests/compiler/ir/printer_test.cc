#include "compiler/ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace tilec::ir {
namespace {

constexpr DType kF16 = DType::kFloat16;
constexpr DType kF32 = DType::kFloat32;

Expr I(int64_t v) { return IntImm(v); }
Expr Bin(BinaryOp op, Expr a, Expr b) { return Binary(op, std::move(a), std::move(b)); }
Expr Add(Expr a, Expr b) { return Bin(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr Sub(Expr a, Expr b) { return Bin(BinaryOp::kSub, std::move(a), std::move(b)); }
Expr Mul(Expr a, Expr b) { return Bin(BinaryOp::kMul, std::move(a), std::move(b)); }
Expr Div(Expr a, Expr b) { return Bin(BinaryOp::kDiv, std::move(a), std::move(b)); }
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

Stmt MakeKernel(std::vector<Expr> grid, std::vector<Var> vars, int64_t threads, Stmt body) {
  auto k = std::make_shared<KernelNode>();
  k->grid = std::move(grid);
  k->block_vars = std::move(vars);
  k->threads = I(threads);
  k->body = std::move(body);
  return k;
}

std::shared_ptr<ForNode> MakeFor(Var v, Expr min, Expr extent, ForKind kind, Stmt body) {
  auto f = std::make_shared<ForNode>();
  f->var = std::move(v);
  f->min = std::move(min);
  f->extent = std::move(extent);
  f->kind = kind;
  f->body = std::move(body);
  return f;
}

// for i, j in T.Parallel(rows, cols): body(i, j)
Stmt Parallel2(Var i, Var j, int64_t rows, int64_t cols, Stmt body) {
  return MakeFor(i, I(0), I(rows), ForKind::kParallel,
                 MakeFor(j, I(0), I(cols), ForKind::kParallel, std::move(body)));
}

TEST(PrinterTest, GemmProgram) {
  Var M = MakeVar("M"), N = MakeVar("N"), K = MakeVar("K");
  Var bx = MakeVar("bx"), by = MakeVar("by"), k = MakeVar("k");
  Var num_stages = MakeVar("num_stages");
  Buffer A = MakeBuffer("A", kF16, {M, K}, Scope::kGlobal);
  Buffer B = MakeBuffer("B", kF16, {N, K}, Scope::kGlobal);
  Buffer C = MakeBuffer("C", kF16, {M, N}, Scope::kGlobal);
  Buffer as = Alloc("A_shared", kF16, {128, 32}, Scope::kShared);
  Buffer bs = Alloc("B_shared", kF16, {128, 32}, Scope::kShared);
  Buffer cl = Alloc("C_local", kF32, {128, 128}, Scope::kFragment);

  auto gemm = std::make_shared<GemmNode>();
  gemm->a = FullRegion(as);
  gemm->b = FullRegion(bs);
  gemm->c = FullRegion(cl);
  gemm->transpose_b = true;
  gemm->policy = GemmPolicy::kFullRow;
  auto loop = MakeFor(
      k, I(0), CeilDiv(K, I(32)), ForKind::kPipelined,
      Seq({Copy(Slice(A, {{Mul(by, I(128)), I(128)}, {Mul(k, I(32)), I(32)}}), FullRegion(as)),
           Copy(Slice(B, {{Mul(bx, I(128)), I(128)}, {Mul(k, I(32)), I(32)}}), FullRegion(bs)),
           gemm}));
  loop->num_stages = num_stages;

  Program p;
  p.name = "matmul";
  p.params = {{A, nullptr}, {B, nullptr}, {C, nullptr}};
  p.dyn_dims = {M, N, K};
  p.tile_params = {{MakeVar("block_M"), 128, {}},
                   {MakeVar("block_N"), 128, {64, 128}},
                   {num_stages, std::nullopt, {2, 3, 4}}};
  p.body = Seq({MakeKernel(
      {CeilDiv(N, I(128)), CeilDiv(M, I(128))}, {bx, by}, 128,
      Seq({Allocate(as), Allocate(bs), Allocate(cl),
           std::make_shared<AnnotateLayoutNode>(as, Layout{}),
           std::make_shared<UseSwizzleNode>(I(10), false, true), Fill(FullRegion(cl), I(0)), loop,
           Copy(FullRegion(cl),
                Slice(C, {{Mul(by, I(128)), I(128)}, {Mul(bx, I(128)), I(128)}}))}))});

  EXPECT_EQ(Print(p), R"(# dyn dims: M, N, K
# tile params: block_M=128, block_N=128 (candidates 64,128), num_stages (unbound, candidates 2,3,4)
@T.prim_func
def matmul(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float16")):
    with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
        A_shared = T.alloc_shared((128, 32), "float16")
        B_shared = T.alloc_shared((128, 32), "float16")
        C_local = T.alloc_fragment((128, 128), "float32")
        T.annotate_layout({A_shared: tilelang.layout.make_swizzled_layout(A_shared)})
        T.use_swizzle(10)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=num_stages):
            T.copy(A[by * 128:by * 128 + 128, k * 32:k * 32 + 32], A_shared)
            T.copy(B[bx * 128:bx * 128 + 128, k * 32:k * 32 + 32], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.copy(C_local, C[by * 128:by * 128 + 128, bx * 128:bx * 128 + 128])
)");
}

TEST(PrinterTest, SoftmaxProgram) {
  Var M = MakeVar("M"), bx = MakeVar("bx"), scale = MakeVar("scale", kF32);
  Buffer X = MakeBuffer("X", kF32, {M, I(256)}, Scope::kGlobal);
  Buffer Y = MakeBuffer("Y", kF32, {M, I(256)}, Scope::kGlobal);
  Buffer S = Alloc("S", kF32, {64, 256}, Scope::kFragment);
  Buffer m = Alloc("m", kF32, {64}, Scope::kFragment);
  Buffer l = Alloc("l", kF32, {64}, Scope::kFragment);
  // Each loop has its own variables; the second pair prints with suffixes.
  Var i = MakeVar("i"), j = MakeVar("j"), i2 = MakeVar("i"), j2 = MakeVar("j");
  Expr scaled = Mul(Mul(Sub(Load(S, {i, j}), Load(m, {i})), scale), FloatImm(1.4426950408889634));
  Region rows = Slice(X, {{Mul(bx, I(64)), I(64)}, {I(0), I(256)}});

  Program p;
  p.name = "softmax";
  p.params = {{X, nullptr}, {Y, nullptr}, {nullptr, scale}};
  p.dyn_dims = {M};
  p.body = MakeKernel(
      {CeilDiv(M, I(64))}, {bx}, 128,
      Seq({Allocate(S), Allocate(m), Allocate(l), Copy(rows, FullRegion(S)),
           Fill(FullRegion(m), FloatImm(-std::numeric_limits<double>::infinity())),
           std::make_shared<ReduceNode>(ReduceKind::kMax, S, m, 1, false),
           Parallel2(i, j, 64, 256, Store(S, {i, j}, Call(CallFn::kExp2, {scaled}))),
           std::make_shared<ReduceNode>(ReduceKind::kSum, S, l, 1, true),
           Parallel2(i2, j2, 64, 256, Store(S, {i2, j2}, Div(Load(S, {i2, j2}), Load(l, {i2})))),
           Copy(FullRegion(S), Slice(Y, {{Mul(bx, I(64)), I(64)}, {I(0), I(256)}}))}));

  EXPECT_EQ(Print(p), R"(# dyn dims: M
@T.prim_func
def softmax(X: T.Tensor((M, 256), "float32"), Y: T.Tensor((M, 256), "float32"), scale: T.float32):
    with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
        S = T.alloc_fragment((64, 256), "float32")
        m = T.alloc_fragment((64,), "float32")
        l = T.alloc_fragment((64,), "float32")
        T.copy(X[bx * 64:bx * 64 + 64, 0:256], S)
        T.fill(m, -T.infinity("float32"))
        T.reduce_max(S, m, dim=1, clear=False)
        for i, j in T.Parallel(64, 256):
            S[i, j] = T.exp2((S[i, j] - m[i]) * scale * 1.4426950408889634)
        T.reduce_sum(S, l, dim=1, clear=True)
        for i_1, j_1 in T.Parallel(64, 256):
            S[i_1, j_1] = S[i_1, j_1] / l[i_1]
        T.copy(S, Y[bx * 64:bx * 64 + 64, 0:256])
)");
}

TEST(PrinterTest, TwoKernelsWithWorkspaceAndAtomicAdd) {
  Var N = MakeVar("N"), bx = MakeVar("bx"), bx2 = MakeVar("bx"), t = MakeVar("t");
  Buffer X = MakeBuffer("X", kF32, {N}, Scope::kGlobal);
  Buffer out = MakeBuffer("out", kF32, {I(1)}, Scope::kGlobal);
  Buffer partial = MakeBuffer("partial", kF32, {CeilDiv(N, I(256))}, Scope::kGlobal);
  Buffer buf = Alloc("buf", kF32, {256}, Scope::kFragment);
  Buffer total = Alloc("total", kF32, {1}, Scope::kFragment);
  Buffer acc = Alloc("acc", kF32, {1}, Scope::kVar);

  Stmt first = MakeKernel(
      {CeilDiv(N, I(256))}, {bx}, 256,
      Seq({Allocate(buf), Allocate(total),
           Copy(Slice(X, {{Mul(bx, I(256)), I(256)}}), FullRegion(buf)),
           std::make_shared<ReduceNode>(ReduceKind::kSum, buf, total, 0, true),
           Store(partial, {bx}, Load(total, {I(0)})),
           std::make_shared<AtomicAddNode>(FullRegion(out), FullRegion(total), nullptr)}));
  Stmt second =
      MakeKernel({I(1)}, {bx2}, 32,
                 Seq({Allocate(acc, FloatImm(0.0)),
                      MakeFor(t, I(0), CeilDiv(N, I(256)), ForKind::kSerial,
                              Store(acc, {I(0)}, Add(Load(acc, {I(0)}), Load(partial, {t})))),
                      If(Bin(BinaryOp::kEq, bx2, I(0)),
                         std::make_shared<AtomicAddNode>(Slice(out, {{I(0), I(1)}}), std::nullopt,
                                                         Load(acc, {I(0)})),
                         Store(acc, {I(0)}, FloatImm(0.0)))}));

  Program p;
  p.name = "split_sum";
  p.params = {{X, nullptr}, {out, nullptr}};
  p.dyn_dims = {N};
  p.body = Seq({Allocate(partial), first, second});

  EXPECT_EQ(Print(p), R"(# dyn dims: N
@T.prim_func
def split_sum(X: T.Tensor((N,), "float32"), out: T.Tensor((1,), "float32")):
    partial = T.alloc_global((T.ceildiv(N, 256),), "float32")
    with T.Kernel(T.ceildiv(N, 256), threads=256) as bx:
        buf = T.alloc_fragment((256,), "float32")
        total = T.alloc_fragment((1,), "float32")
        T.copy(X[bx * 256:bx * 256 + 256], buf)
        T.reduce_sum(buf, total, dim=0, clear=True)
        partial[bx] = total[0]
        T.atomic_add(out, total)
    with T.Kernel(1, threads=32) as bx_1:
        acc = T.alloc_var("float32", init=0.0)
        for t in T.serial(T.ceildiv(N, 256)):
            acc[0] = acc[0] + partial[t]
        if bx_1 == 0:
            T.atomic_add(out[0], acc[0])
        else:
            acc[0] = 0.0
)");
}

TEST(PrinterTest, OtherStatementForms) {
  Buffer S = Alloc("S", kF32, {64, 32}, Scope::kShared);
  Buffer r = Alloc("r", kF16, {8}, Scope::kLocal);
  Var i = MakeVar("i"), j = MakeVar("j"), u = MakeVar("u"), v = MakeVar("v"), x = MakeVar("x");
  Layout custom{Layout::Kind::kCustom, {u, v}, {u, Bin(BinaryOp::kBitXor, v, u)}};
  auto kernel = std::make_shared<KernelNode>();
  kernel->grid = {I(4), I(2), I(1)};
  kernel->block_vars = {MakeVar("bx"), MakeVar("by"), MakeVar("bz")};
  kernel->threads = I(64);
  kernel->prelude = "#define SCALE \"x\"";
  kernel->body = Seq({
      Allocate(S),
      Allocate(r),
      std::make_shared<AnnotateLayoutNode>(S, custom),
      std::make_shared<UseSwizzleNode>(I(4), true, false),
      Fill(Slice(S, {{I(16), I(16)}, {I(0), I(32)}}), FloatImm(1.0)),
      std::make_shared<CumsumNode>(S, S, 1, true),
      MakeFor(
          i, I(2), I(8), ForKind::kSerial,
          MakeFor(j, I(0), I(8), ForKind::kUnrolled, Store(r, {j}, Cast(kF16, Load(S, {i, j}))))),
      // Not folded into one Parallel: the inner loop starts at 1.
      MakeFor(i, I(0), I(4), ForKind::kParallel,
              MakeFor(j, I(1), I(3), ForKind::kVectorized, Seq({}))),
      Let(x, Bin(BinaryOp::kMax, I(3), I(-1))),
  });
  EXPECT_EQ(PrintStmt(kernel),
            R"(with T.Kernel(4, 2, 1, threads=64, prelude="#define SCALE \"x\"") as (bx, by, bz):
    S = T.alloc_shared((64, 32), "float32")
    r = T.alloc_local((8,), "float16")
    T.annotate_layout({S: T.Layout((64, 32), lambda u, v: [u, v ^ u])})
    T.use_swizzle(4, order="column", enable=False)
    T.fill(S[16:32, 0:32], 1.0)
    T.cumsum(S, S, dim=1, reverse=True)
    for i in T.serial(2, 10):
        for j in T.unroll(8):
            r[j] = T.cast(S[i, j], "float16")
    for i in T.Parallel(4):
        for j in T.vectorized(1, 4):
            pass
    x = T.max(3, -1)
)");
}

TEST(PrinterTest, ExpressionPrecedence) {
  Var a = MakeVar("a"), b = MakeVar("b"), c = MakeVar("c");
  Var x = MakeVar("x", kF32), y = MakeVar("y", kF32);
  Var p = MakeVar("p", DType::kBool), q = MakeVar("q", DType::kBool);
  auto Lt = [](Expr l, Expr r) { return Bin(BinaryOp::kLt, std::move(l), std::move(r)); };
  auto And = [](Expr l, Expr r) { return Bin(BinaryOp::kAnd, std::move(l), std::move(r)); };
  auto Or = [](Expr l, Expr r) { return Bin(BinaryOp::kOr, std::move(l), std::move(r)); };
  auto Neg = [](Expr e) { return Unary(UnaryOp::kNeg, std::move(e)); };
  auto Not = [](Expr e) { return Unary(UnaryOp::kNot, std::move(e)); };

  EXPECT_EQ(PrintExpr(Mul(Add(a, b), c)), "(a + b) * c");
  EXPECT_EQ(PrintExpr(Add(a, Mul(b, c))), "a + b * c");
  EXPECT_EQ(PrintExpr(Sub(a, Sub(b, c))), "a - (b - c)");
  EXPECT_EQ(PrintExpr(Sub(Sub(a, b), c)), "a - b - c");
  EXPECT_EQ(PrintExpr(Add(Sub(a, b), c)), "a - b + c");
  EXPECT_EQ(PrintExpr(Sub(a, Add(b, c))), "a - (b + c)");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kFloorDiv, a, Mul(b, c))), "a // (b * c)");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kFloorMod, Mul(a, b), c)), "a * b % c");
  EXPECT_EQ(PrintExpr(Neg(Add(a, b))), "-(a + b)");
  EXPECT_EQ(PrintExpr(Neg(a)), "-a");
  EXPECT_EQ(PrintExpr(Neg(I(-1))), "-(-1)");
  EXPECT_EQ(PrintExpr(Mul(I(-1), a)), "-1 * a");
  EXPECT_EQ(PrintExpr(Sub(a, I(-1))), "a - -1");
  EXPECT_EQ(PrintExpr(Mul(Neg(x), y)), "-x * y");
  EXPECT_EQ(PrintExpr(Neg(Mul(x, y))), "-(x * y)");
  EXPECT_EQ(PrintExpr(Mul(FloatImm(-0.5), x)), "-0.5 * x");
  EXPECT_EQ(PrintExpr(Mul(x, FloatImm(-0.5))), "x * -0.5");
  // Python chains comparisons: a comparison never appears bare inside another.
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kEq, Lt(a, b), Lt(c, a))), "(a < b) == (c < a)");
  EXPECT_EQ(PrintExpr(Lt(Add(a, b), c)), "a + b < c");
  EXPECT_EQ(PrintExpr(And(Lt(a, b), Or(p, q))), "a < b and (p or q)");
  EXPECT_EQ(PrintExpr(Or(And(p, q), p)), "p and q or p");
  EXPECT_EQ(PrintExpr(Not(And(p, q))), "not (p and q)");
  EXPECT_EQ(PrintExpr(And(Not(p), q)), "not p and q");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kBitAnd, a, Bin(BinaryOp::kBitOr, b, c))), "a & (b | c)");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kBitOr, a, Bin(BinaryOp::kBitAnd, b, c))), "a | b & c");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kShl, Add(a, b), c)), "a + b << c");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kBitXor, Bin(BinaryOp::kShr, a, b), c)), "a >> b ^ c");
  EXPECT_EQ(PrintExpr(Unary(UnaryOp::kBitNot, Add(a, b))), "~(a + b)");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kMax, Add(a, b), c)), "T.max(a + b, c)");
  EXPECT_EQ(PrintExpr(Mul(Bin(BinaryOp::kMin, a, b), c)), "T.min(a, b) * c");
  EXPECT_EQ(PrintExpr(Bin(BinaryOp::kMod, a, b)), "T.truncmod(a, b)");
  EXPECT_EQ(PrintExpr(Select(Lt(x, y), x, y)), "T.if_then_else(x < y, x, y)");
  EXPECT_EQ(PrintExpr(Cast(kF16, Add(x, y))), "T.cast(x + y, \"float16\")");
  EXPECT_EQ(PrintExpr(Call(CallFn::kExp, {Neg(x)})), "T.exp(-x)");
  EXPECT_EQ(PrintExpr(Call(CallFn::kPow, {x, FloatImm(2.0)})), "T.pow(x, 2.0)");
  EXPECT_EQ(PrintExpr(CeilDiv(a, I(128))), "T.ceildiv(a, 128)");
}

TEST(PrinterTest, Literals) {
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(PrintExpr(FloatImm(0.1)), "0.1");
  EXPECT_EQ(PrintExpr(FloatImm(1.0)), "1.0");
  EXPECT_EQ(PrintExpr(FloatImm(123456.0)), "123456.0");
  EXPECT_EQ(PrintExpr(FloatImm(1.0 / 3)), "0.3333333333333333");
  EXPECT_EQ(PrintExpr(FloatImm(1e-6)), "1e-06");
  EXPECT_EQ(PrintExpr(FloatImm(1e20)), "1e+20");
  EXPECT_EQ(PrintExpr(FloatImm(-0.0)), "-0.0");
  EXPECT_EQ(PrintExpr(FloatImm(2.5, kF16)), "T.float16(2.5)");
  EXPECT_EQ(PrintExpr(FloatImm(3.0, DType::kBFloat16)), "T.bfloat16(3.0)");
  EXPECT_EQ(PrintExpr(Infinity(kF32)), "T.infinity(\"float32\")");
  EXPECT_EQ(PrintExpr(FloatImm(-inf, kF16)), "-T.infinity(\"float16\")");
  EXPECT_EQ(PrintExpr(FloatImm(std::nan(""))), "T.float32(\"nan\")");
  EXPECT_EQ(PrintExpr(Mul(MakeVar("x", kF16), FloatImm(-inf, kF16))),
            "x * -T.infinity(\"float16\")");
  EXPECT_EQ(PrintExpr(I(-3)), "-3");
  EXPECT_EQ(PrintExpr(IntImm(7, DType::kInt64)), "T.int64(7)");
  EXPECT_EQ(PrintExpr(IntImm(-2, DType::kInt8)), "T.int8(-2)");
  EXPECT_EQ(PrintExpr(IntImm(65535, DType::kUInt16)), "T.uint16(65535)");
  EXPECT_EQ(PrintExpr(IntImm(4294967295, DType::kUInt32)), "T.uint32(4294967295)");
  EXPECT_EQ(PrintExpr(IntImm(INT64_MAX, DType::kUInt64)), "T.uint64(9223372036854775807)");
  EXPECT_EQ(PrintExpr(Cast(DType::kUInt32, MakeVar("x"))), "T.cast(x, \"uint32\")");
  EXPECT_EQ(PrintExpr(BoolImm(true)), "True");
  EXPECT_EQ(PrintExpr(BoolImm(false)), "False");
}

// Any finite double prints as text that reads back as the same double.
TEST(PrinterTest, FloatsRoundTrip) {
  const uint64_t seed = std::random_device{}();
  std::printf("FloatsRoundTrip seed: %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  int checked = 0;
  while (checked < 2000) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    if (!std::isfinite(v)) continue;
    std::string text = PrintExpr(FloatImm(v));
    char* end = nullptr;
    double back = std::strtod(text.c_str(), &end);
    ASSERT_EQ(*end, '\0') << text << " (seed " << seed << ")";
    ASSERT_EQ(back, v) << text << " (seed " << seed << ")";
    ASSERT_TRUE(text.find_first_of(".e") != std::string::npos) << text;
    ++checked;
  }
}

TEST(PrinterTest, DistinctNodesWithOneNameAreToldApart) {
  Buffer s = Alloc("S", kF32, {4}, Scope::kShared);
  Buffer s2 = Alloc("S", kF32, {4}, Scope::kShared);
  Var i = MakeVar("i"), i2 = MakeVar("i"), i_1 = MakeVar("i_1");
  Stmt body = Seq({
      Allocate(s),
      Allocate(s2),
      MakeFor(i, I(0), I(4), ForKind::kSerial, Store(s, {i}, Load(s2, {i}))),
      // "i_1" is the user's own name below, so the second i becomes i_2.
      MakeFor(i2, I(0), I(4), ForKind::kSerial, Store(s2, {i2}, Add(Load(s, {i2}), FloatImm(1.0)))),
      Let(i_1, I(0)),
  });
  EXPECT_EQ(PrintStmt(body), R"(S = T.alloc_shared((4,), "float32")
S_1 = T.alloc_shared((4,), "float32")
for i in T.serial(4):
    S[i] = S_1[i]
for i_2 in T.serial(4):
    S_1[i_2] = S[i_2] + 1.0
i_1 = 0
)");

  // Variables and buffers share one namespace; the same node keeps its name.
  Buffer x = Alloc("x", DType::kInt32, {1}, Scope::kLocal);
  Var xv = MakeVar("x");
  EXPECT_EQ(PrintStmt(Seq({Allocate(x), Let(xv, Load(x, {I(0)})), Store(x, {I(0)}, Add(xv, xv))})),
            R"(x = T.alloc_local((1,), "int32")
x_1 = x[0]
x[0] = x_1 + x_1
)");
}

TEST(PrinterTest, NullNodesPrintWithoutCrashing) {
  EXPECT_EQ(PrintExpr(nullptr), "<null>");
  EXPECT_EQ(PrintStmt(nullptr), "<null>\n");
  EXPECT_EQ(PrintExpr(Add(MakeVar("a"), nullptr)), "a + <null>");
  EXPECT_EQ(PrintStmt(If(BoolImm(true), nullptr)), "if True:\n    <null>\n");
}

}  // namespace
}  // namespace tilec::ir
