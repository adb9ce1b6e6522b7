// Unit tests of the TileLang frontend, one feature at a time, on small inline
// kernels. Expected IR is written by hand from TileLang's semantics.
#include "compiler/frontend/frontend.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/hash.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/visitor.h"
#include "gtest/gtest.h"

namespace tilec::frontend {
namespace {

using Binds = std::vector<std::pair<std::string, std::string>>;

constexpr char kPrelude[] = "import math\nimport tilelang\nimport tilelang.language as T\n";

absl::StatusOr<ir::Program> Build(const std::string& src, std::string_view fn,
                                  const Binds& binds = {}) {
  SourceFile file{"test.py", kPrelude + src};
  Bindings b;
  for (const auto& [k, v] : binds) b.Set(k, v);
  return CompileTileLang(file, fn, b);
}

// Builds and verifies; records a failure (and returns an empty program) if
// either step fails.
ir::Program Ok(const std::string& src, std::string_view fn, const Binds& binds = {}) {
  absl::StatusOr<ir::Program> p = Build(src, fn, binds);
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return ir::Program{};
  absl::Status v = ir::Verify(*p);
  EXPECT_TRUE(v.ok()) << v.message() << "\n" << ir::Print(*p);
  return *p;
}

// Statements of type N in pre-order.
template <typename N>
std::vector<const N*> Find(const ir::Program& p) {
  struct Collector : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    void Visit(const ir::Stmt& s) override {
      if (s) {
        if (const N* n = s->as<N>()) found.push_back(n);
      }
      ir::IRVisitor::Visit(s);
    }
    std::vector<const N*> found;
  } c;
  if (p.body) c.Visit(p.body);
  return c.found;
}

std::vector<int64_t> ConstShape(const ir::Buffer& b) {
  std::vector<int64_t> out;
  for (const ir::Expr& e : b->shape) out.push_back(ir::AsConstInt(e).value_or(-1));
  return out;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr char kGemm[] = R"py(
def gemm(M, N, K, block_M, block_N, block_K, dtype="float16", num_stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])
    return main
)py";

TEST(Frontend, GeneratorGemm) {
  ir::Program p = Ok(kGemm, "gemm",
                     {{"M", "256"},
                      {"N", "128"},
                      {"K", "64"},
                      {"block_M", "64"},
                      {"block_N", "32"},
                      {"block_K", "16"}});
  EXPECT_EQ(p.name, "gemm");
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[0].tensor->name, "A");
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(ConstShape(p.params[1].tensor), (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(p.params[2].tensor->dtype, ir::DType::kFloat16);
  EXPECT_TRUE(p.dyn_dims.empty());
  // Problem sizes (in tensor shapes) are not tile parameters; the block sizes
  // and the defaulted num_stages are.
  ASSERT_EQ(p.tile_params.size(), 4u);
  std::vector<std::pair<std::string, int64_t>> tiles;
  for (const ir::TileParam& t : p.tile_params)
    tiles.emplace_back(t.var->name, t.value.value_or(-1));
  EXPECT_EQ(tiles, (std::vector<std::pair<std::string, int64_t>>{
                       {"block_M", 64}, {"block_N", 32}, {"block_K", 16}, {"num_stages", 2}}));
  auto kernels = Find<ir::KernelNode>(p);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(ir::AsConstInt(kernels[0]->grid[0]), 4);
  EXPECT_EQ(ir::AsConstInt(kernels[0]->grid[1]), 4);
  EXPECT_EQ(ir::AsConstInt(kernels[0]->threads), 128);
  auto loops = Find<ir::ForNode>(p);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->kind, ir::ForKind::kPipelined);
  EXPECT_EQ(ir::AsConstInt(loops[0]->extent), 4);
  EXPECT_EQ(ir::AsConstInt(loops[0]->num_stages), 2);
  std::string text = ir::Print(p);
  EXPECT_TRUE(Contains(text, "T.copy(A[by * 64:by * 64 + 64, k * 16:k * 16 + 16], A_s)")) << text;
  EXPECT_TRUE(Contains(text, "T.copy(C_l, C[by * 64:by * 64 + 64, bx * 32:bx * 32 + 32])")) << text;
  EXPECT_EQ(Find<ir::GemmNode>(p).size(), 1u);
}

TEST(Frontend, UnboundParametersBecomeDynDimsAndTileParams) {
  ir::Program p =
      Ok(kGemm, "gemm", {{"M", "256"}, {"N", "128"}, {"block_N", "32"}, {"block_K", "16"}});
  ASSERT_EQ(p.dyn_dims.size(), 1u);
  EXPECT_EQ(p.dyn_dims[0]->name, "K");
  ASSERT_EQ(p.tile_params.size(), 4u);
  EXPECT_EQ(p.tile_params[0].var->name, "block_M");
  EXPECT_FALSE(p.tile_params[0].value.has_value());
  // The unbound tile parameter appears in the IR as its variable.
  auto allocs = Find<ir::AllocateNode>(p);
  ASSERT_FALSE(allocs.empty());
  EXPECT_EQ(allocs[0]->buffer->shape[0], ir::Expr(p.tile_params[0].var));
  EXPECT_EQ(p.params[0].tensor->shape[1], ir::Expr(p.dyn_dims[0]));
}

TEST(Frontend, DefaultsAndDtypeSpellings) {
  ir::Program p = Ok(R"py(
import torch
def f(n, a="float", b=T.float16, c=torch.bfloat16, d="half"):
    @T.prim_func
    def main(A: T.Tensor((n,), a), B: T.Tensor((n,), b), C: T.Tensor((n,), c),
             D: T.Tensor((n,), d), E: T.Tensor((n,), "float8_e4m3fn")):
        pass
    return main
)py",
                     "f", {{"n", "8"}});
  ASSERT_EQ(p.params.size(), 5u);
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kFloat32);
  EXPECT_EQ(p.params[1].tensor->dtype, ir::DType::kFloat16);
  EXPECT_EQ(p.params[2].tensor->dtype, ir::DType::kBFloat16);
  EXPECT_EQ(p.params[3].tensor->dtype, ir::DType::kFloat16);
  EXPECT_EQ(p.params[4].tensor->dtype, ir::DType::kFloat8E4M3);
}

constexpr char kBindingKinds[] = R"py(
def f(a, b, c, d, e, g, h):
    assert (undefined_name if False else a) == 3
    assert b == 0.5
    assert c is True
    assert d == "hello world"
    assert g == T.float16 and g == "float16"
    assert h == (64, 32)
    @T.prim_func
    def main(A: T.Tensor(h, e)):
        pass
    return main
)py";

TEST(Frontend, BindingValueForms) {
  ir::Program p = Ok(kBindingKinds, "f",
                     {{"a", "3"},
                      {"b", "0.5"},
                      {"c", "True"},
                      {"d", "'hello world'"},
                      {"e", "bfloat16"},
                      {"g", "T.float16"},
                      {"h", "(64, 32)"}});
  ASSERT_EQ(p.params.size(), 1u);
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kBFloat16);
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{64, 32}));
  // A bare tuple and torch dtype names work too; a later binding replaces an
  // earlier one.
  ir::Program q = Ok(kBindingKinds, "f",
                     {{"a", "3"},
                      {"b", "0.5"},
                      {"c", "True"},
                      {"d", "\"hello world\""},
                      {"e", "float32"},
                      {"e", "torch.float16"},
                      {"g", "float16"},
                      {"h", "64,32"}});
  ASSERT_EQ(q.params.size(), 1u);
  EXPECT_EQ(q.params[0].tensor->dtype, ir::DType::kFloat16);
}

TEST(Frontend, EagerStyle) {
  ir::Program p = Ok(R"py(
@tilelang.jit
def add(A, B, block: int = 64, threads: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B: T.Tensor[(M, N), T.float32]
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block), M, threads=threads) as (bx, by):
        for i in T.Parallel(block):
            C[by, bx * block + i] = A[by, bx * block + i] + B[by, bx * block + i]
    return C
)py",
                     "add", {{"M", "16"}});
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[0].tensor->name, "A");
  EXPECT_EQ(p.params[1].tensor->name, "B");
  EXPECT_EQ(p.params[2].tensor->name, "C");  // the output, after the inputs
  EXPECT_EQ(ir::AsConstInt(p.params[0].tensor->shape[0]), 16);
  ASSERT_EQ(p.dyn_dims.size(), 1u);
  EXPECT_EQ(p.dyn_dims[0]->name, "N");
  EXPECT_EQ(p.params[2].tensor->shape[1], ir::Expr(p.dyn_dims[0]));
  ASSERT_EQ(p.tile_params.size(), 2u);
  EXPECT_EQ(p.tile_params[0].var->name, "block");
  EXPECT_EQ(p.tile_params[0].value, 64);
  EXPECT_EQ(p.tile_params[1].var->name, "threads");
  auto loops = Find<ir::ForNode>(p);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->kind, ir::ForKind::kParallel);
}

TEST(Frontend, EagerScalarParameterAndBareStringBinding) {
  ir::Program p = Ok(R"py(
@tilelang.jit(out_idx=[-1])
def scale(X, n, mode="copy"):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    n: T.int32
    Y = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
        for i in T.Parallel(32):
            if mode == "causal-only":
                Y[bx * 32 + i] = X[bx * 32 + i] * n
            else:
                Y[bx * 32 + i] = X[bx * 32 + i]
    return Y
)py",
                     "scale", {{"N", "64"}, {"mode", "causal-only"}});
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[0].tensor->name, "X");
  ASSERT_TRUE(p.params[1].scalar);
  EXPECT_EQ(p.params[1].scalar->name, "n");
  EXPECT_EQ(p.params[2].tensor->name, "Y");
  std::string text = ir::Print(p);
  EXPECT_TRUE(Contains(text, "X[bx * 32 + i] * T.cast(n, \"float32\")")) << text;
}

TEST(Frontend, DirectPrimFuncWithScalarParam) {
  ir::Program p = Ok(R"py(
@T.prim_func
def direct(A: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            A[i] = A[i] * 2.0 + n
)py",
                     "direct");
  ASSERT_EQ(p.params.size(), 2u);
  ASSERT_TRUE(p.params[1].scalar);
  EXPECT_EQ(p.params[1].scalar->name, "n");
  EXPECT_EQ(p.params[1].scalar->dtype, ir::DType::kInt32);
  auto stores = Find<ir::StoreNode>(p);
  ASSERT_EQ(stores.size(), 1u);
  // The int scalar is cast to float32 to meet the float operand (TVM's rule).
  const auto* add = stores[0]->value->as<ir::BinaryNode>();
  ASSERT_TRUE(add);
  EXPECT_EQ(add->op, ir::BinaryOp::kAdd);
  const auto* cast = add->b->as<ir::CastNode>();
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->dtype, ir::DType::kFloat32);
  EXPECT_EQ(cast->value, ir::Expr(p.params[1].scalar));
}

TEST(Frontend, StagingArithmeticFollowsPython) {
  ir::Program p = Ok(R"py(
def f(x):
    a = -7 // 2 + 10
    b = -7 % 3
    c = 2 ** 10
    d = int(7 / 2 * 2)
    e = max(3, x) + min(4, 9)
    g = len((1, 2, 3)) + len([4]) + len("ab")
    h = (1, 2) + (3,)
    i = sum([1, 2, 3])
    j = 10 if x > 3 else 20
    k = (x > 3 and 7) or 8
    m = int(math.log2(256))
    n = math.ceil(7 / 2)
    p = abs(-3) * True
    q = T.ceildiv(10, 3)
    r = {"a": 5, "b": 6}["b"]
    s = [v * 2 for v in range(4)][3]
    t = (10, 20, 30)[-1] // 10
    u = divmod(17, 5)[1]
    @T.prim_func
    def main(A: T.Tensor((a, b, c, d, e, g, len(h), i, j, k, m, n, p, q, r, s, t, u), "float32")):
        pass
    return main
)py",
                     "f", {{"x", "5"}});
  ASSERT_EQ(p.params.size(), 1u);
  EXPECT_EQ(ConstShape(p.params[0].tensor),
            (std::vector<int64_t>{6, 2, 1024, 7, 9, 6, 3, 6, 10, 7, 8, 4, 3, 4, 6, 6, 3, 2}));
}

TEST(Frontend, StaticIfPicksABranchRuntimeIfBuildsIr) {
  constexpr char kSrc[] = R"py(
def f(flag):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                if flag:
                    A[i] = 1.0
                else:
                    A[i] = 2.0
                if i < 32:
                    A[i] = A[i] + 1.0
    return main
)py";
  for (bool flag : {true, false}) {
    ir::Program p = Ok(kSrc, "f", {{"flag", flag ? "True" : "False"}});
    auto ifs = Find<ir::IfNode>(p);
    ASSERT_EQ(ifs.size(), 1u);
    EXPECT_EQ(ir::PrintExpr(ifs[0]->cond), "i < 32");
    EXPECT_FALSE(ifs[0]->else_case);
    auto stores = Find<ir::StoreNode>(p);
    ASSERT_EQ(stores.size(), 2u);
    const auto* lit = stores[0]->value->as<ir::FloatImmNode>();
    ASSERT_TRUE(lit);
    EXPECT_EQ(lit->value, flag ? 1.0 : 2.0);
  }
}

TEST(Frontend, RangeIsStagingInPythonAndSerialInKernels) {
  ir::Program p = Ok(R"py(
def f():
    sizes = []
    for s in range(3):
        sizes.append(s + 1)
    @T.prim_func
    def main(A: T.Tensor((sizes[0], sizes[1], sizes[2]), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in range(4):
                A[0, 1, i % 3] = 0.0
    return main
)py",
                     "f");
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{1, 2, 3}));
  auto loops = Find<ir::ForNode>(p);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->kind, ir::ForKind::kSerial);
  EXPECT_EQ(ir::AsConstInt(loops[0]->min), 0);
  EXPECT_EQ(ir::AsConstInt(loops[0]->extent), 4);
}

TEST(Frontend, MacrosAreInlined) {
  ir::Program p = Ok(R"py(
def f():
    @T.macro
    def scale(buf, factor):
        for i in T.Parallel(16):
            buf[i] = buf[i] * factor

    @T.macro
    def twice(x):
        return x * 2

    @T.prim_func
    def main(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            scale(A, twice(3.0))
            scale(A, twice(bx))
    return main
)py",
                     "f");
  auto loops = Find<ir::ForNode>(p);
  ASSERT_EQ(loops.size(), 2u);
  std::string text = ir::Print(p);
  EXPECT_TRUE(Contains(text, "A[i] = A[i] * 6.0")) << text;
  EXPECT_TRUE(Contains(text, "T.cast(bx * 2, \"float32\")")) << text;
}

TEST(Frontend, LocalHelperFunctionsRunAtStaging) {
  constexpr char kSrc[] = R"py(
def f(n):
    def pick(x, big=64):
        if x >= 128:
            return big
        return big // 2
    blk = pick(n)
    @T.prim_func
    def main(A: T.Tensor((blk,), "float32")):
        pass
    return main
)py";
  EXPECT_EQ(ConstShape(Ok(kSrc, "f", {{"n", "256"}}).params[0].tensor), (std::vector<int64_t>{64}));
  EXPECT_EQ(ConstShape(Ok(kSrc, "f", {{"n", "64"}}).params[0].tensor), (std::vector<int64_t>{32}));
}

constexpr char kLoops[] = R"py(
def f():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((16, 64), "float16")
            F = T.alloc_fragment((16, 64), "float32")
            for i, j in T.Parallel(4, 8):
                A[i, j] = 0
            for k in T.Pipelined(4, num_stages=3, order=[0, 1], stage=[0, 1]):
                T.copy(A[k * 16, 0], S)
                T.copy(S, B[k * 16, 0])
            for a in T.serial(2, 10):
                A[a, 0] = 0
            for s in T.serial(0, 10, 3):
                A[s, 1] = 0
            for u in T.unroll(4):
                A[u, 2] = 0
            for v in T.vectorized(8):
                A[0, v] = 0
            for g, h in T.grid(2, 3):
                A[g, h] = 0
            for z in T.Pipelined(2, num_stages=0):
                A[z, 3] = 0
    return main
)py";

TEST(Frontend, LoopForms) {
  ir::Program p = Ok(kLoops, "f");
  auto loops = Find<ir::ForNode>(p);
  ASSERT_EQ(loops.size(), 10u);
  // T.Parallel(4, 8): two directly nested parallel loops.
  EXPECT_EQ(loops[0]->kind, ir::ForKind::kParallel);
  EXPECT_EQ(loops[0]->body.get(), loops[1]);
  EXPECT_EQ(ir::AsConstInt(loops[1]->extent), 8);
  EXPECT_EQ(loops[2]->kind, ir::ForKind::kPipelined);
  EXPECT_EQ(ir::AsConstInt(loops[2]->num_stages), 3);
  EXPECT_EQ(loops[2]->order, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(loops[2]->stage, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ir::AsConstInt(loops[3]->min), 2);
  EXPECT_EQ(ir::AsConstInt(loops[3]->extent), 8);
  // range(0, 10, 3) has 4 iterations; the index is 0 + s * 3.
  EXPECT_EQ(ir::AsConstInt(loops[4]->extent), 4);
  std::string text = ir::Print(p);
  EXPECT_TRUE(Contains(text, "A[s * 3, 1] = T.float16(0.0)")) << text;
  EXPECT_EQ(loops[5]->kind, ir::ForKind::kUnrolled);
  EXPECT_EQ(loops[6]->kind, ir::ForKind::kVectorized);
  EXPECT_EQ(loops[7]->kind, ir::ForKind::kSerial);
  EXPECT_EQ(loops[7]->body.get(), loops[8]);
  // num_stages=0 turns pipelining off.
  EXPECT_EQ(loops[9]->kind, ir::ForKind::kSerial);
  EXPECT_FALSE(loops[9]->num_stages);
}

TEST(Frontend, CopyRegions) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(Q: T.Tensor((2, 128, 4, 64), "float16"), O: T.Tensor((128, 64), "float16"),
         X: T.Tensor((8, 64, 32), "float16")):
    with T.Kernel(4, 2, threads=128) as (bx, bz):
        Q_s = T.alloc_shared((32, 64), "float16")
        X_s = T.alloc_shared((16, 32), "float16")
        T.copy(Q[bz, bx * 32:(bx + 1) * 32, 1, :], Q_s)
        T.copy(Q_s, O[bx * 32, 0])
        T.copy(X[bz, bx * 16, 0], X_s)
        T.copy(X_s, X_s)
)py",
                     "main");
  auto copies = Find<ir::CopyNode>(p);
  ASSERT_EQ(copies.size(), 4u);
  auto exts = [](const ir::Region& r) {
    std::vector<int64_t> out;
    for (const ir::Expr& e : r.extents) out.push_back(ir::AsConstInt(e).value_or(-1));
    return out;
  };
  // A scalar index is an extent-1 dim; `:` spans the dim; (bx+1)*32 - bx*32 = 32.
  EXPECT_EQ(exts(copies[0]->src), (std::vector<int64_t>{1, 32, 1, 64}));
  EXPECT_EQ(ir::PrintExpr(copies[0]->src.mins[1]), "bx * 32");
  // A head address takes the other operand's extents.
  EXPECT_EQ(exts(copies[1]->dst), (std::vector<int64_t>{32, 64}));
  // ... aligned from the trailing dim.
  EXPECT_EQ(exts(copies[2]->src), (std::vector<int64_t>{1, 16, 32}));
  EXPECT_EQ(exts(copies[3]->src), (std::vector<int64_t>{16, 32}));
}

TEST(Frontend, SliceExtentsSimplifyOverSymbols) {
  ir::Program p = Ok(R"py(
def f(bk):
    @T.prim_func
    def main(A: T.Tensor((1024,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((bk,), "float32")
            for k in T.serial(4):
                T.copy(A[k * bk:(k + 1) * bk], S)
    return main
)py",
                     "f");
  ASSERT_EQ(p.tile_params.size(), 1u);
  auto copies = Find<ir::CopyNode>(p);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]->src.extents[0], ir::Expr(p.tile_params[0].var));
}

TEST(Frontend, GemmFlagsAndPolicy) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((64, 32), "float16")
        C = T.alloc_fragment((64, 64), "float32")
        T.gemm(A_s, B_s, C, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True,
               k_pack=2)
        T.gemm(A_s, B_s[0:64, 0:32], C, False, True)
)py",
                     "main");
  auto gemms = Find<ir::GemmNode>(p);
  ASSERT_EQ(gemms.size(), 2u);
  EXPECT_FALSE(gemms[0]->transpose_a);
  EXPECT_TRUE(gemms[0]->transpose_b);
  EXPECT_EQ(gemms[0]->policy, ir::GemmPolicy::kFullRow);
  EXPECT_TRUE(gemms[0]->clear_accum);
  EXPECT_TRUE(gemms[1]->transpose_b);
  EXPECT_EQ(gemms[1]->policy, ir::GemmPolicy::kSquare);
  EXPECT_FALSE(gemms[1]->clear_accum);
}

TEST(Frontend, FillReduceCumsum) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((16, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        X = T.alloc_fragment((16, 32), "float16")
        R = T.alloc_fragment((16,), "float16")
        S = T.alloc_fragment((32,), "float16")
        T.fill(X, 1)
        T.clear(R)
        T.reduce_max(X, R, dim=-1)
        T.reduce_sum(X, S, dim=0, clear=False)
        T.reduce_absmax(X, R, 1)
        T.cumsum(X)
        T.cumsum(X, X, dim=1, reverse=True)
)py",
                     "main");
  auto fills = Find<ir::FillNode>(p);
  ASSERT_EQ(fills.size(), 2u);
  const auto* one = fills[0]->value->as<ir::FloatImmNode>();
  ASSERT_TRUE(one);
  EXPECT_EQ(one->dtype, ir::DType::kFloat16);
  EXPECT_EQ(one->value, 1.0);
  EXPECT_EQ(fills[1]->value->dtype, ir::DType::kFloat16);
  auto reduces = Find<ir::ReduceNode>(p);
  ASSERT_EQ(reduces.size(), 3u);
  EXPECT_EQ(reduces[0]->reduce_kind, ir::ReduceKind::kMax);
  EXPECT_EQ(reduces[0]->dim, 1);
  EXPECT_TRUE(reduces[0]->clear);
  EXPECT_EQ(reduces[1]->reduce_kind, ir::ReduceKind::kSum);
  EXPECT_EQ(reduces[1]->dim, 0);
  EXPECT_FALSE(reduces[1]->clear);
  EXPECT_EQ(reduces[2]->reduce_kind, ir::ReduceKind::kAbsMax);
  auto scans = Find<ir::CumsumNode>(p);
  ASSERT_EQ(scans.size(), 2u);
  EXPECT_EQ(scans[0]->src, scans[0]->dst);
  EXPECT_EQ(scans[0]->dim, 0);
  EXPECT_FALSE(scans[0]->reverse);
  EXPECT_EQ(scans[1]->dim, 1);
  EXPECT_TRUE(scans[1]->reverse);
}

TEST(Frontend, AtomicAddScalarAndTile) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=128) as bx:
        F = T.alloc_fragment((16,), "float32")
        for i in T.Parallel(16):
            T.atomic_add(C[bx * 16 + i], A[i])
        T.atomic_add(C[bx * 16], F)
        T.atomic_add(C[0:16], F, memory_order="relaxed")
)py",
                     "main");
  auto adds = Find<ir::AtomicAddNode>(p);
  ASSERT_EQ(adds.size(), 3u);
  EXPECT_FALSE(adds[0]->src.has_value());
  ASSERT_TRUE(adds[0]->value);
  EXPECT_EQ(ir::AsConstInt(adds[0]->dst.extents[0]), 1);
  ASSERT_TRUE(adds[1]->src.has_value());
  EXPECT_EQ(adds[1]->src->buffer->name, "F");
  EXPECT_EQ(ir::AsConstInt(adds[1]->dst.extents[0]), 16);
  EXPECT_EQ(ir::PrintExpr(adds[1]->dst.mins[0]), "bx * 16");
  ASSERT_TRUE(adds[2]->src.has_value());
}

TEST(Frontend, AnnotateLayoutAndSwizzle) {
  ir::Program p = Ok(R"py(
from tilelang.layout import make_swizzled_layout
@T.prim_func
def main(A: T.Tensor((16, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((16, 32), "float16")
        B_s = T.alloc_shared((16, 32), "float16")
        T.annotate_layout({
            A_s: T.Layout((16, 32), lambda i, j: (i, (j + i) % 32)),
            B_s: make_swizzled_layout(B_s),
        })
        T.use_swizzle(panel_size=8, order="column", enable=False)
        T.copy(A, A_s)
)py",
                     "main");
  auto layouts = Find<ir::AnnotateLayoutNode>(p);
  ASSERT_EQ(layouts.size(), 2u);
  EXPECT_EQ(layouts[0]->buffer->name, "A_s");
  EXPECT_EQ(layouts[0]->layout.kind, ir::Layout::Kind::kCustom);
  ASSERT_EQ(layouts[0]->layout.vars.size(), 2u);
  ASSERT_EQ(layouts[0]->layout.indices.size(), 2u);
  EXPECT_EQ(layouts[0]->layout.indices[0], ir::Expr(layouts[0]->layout.vars[0]));
  EXPECT_EQ(ir::PrintExpr(layouts[0]->layout.indices[1]), "(j + i) % 32");
  EXPECT_EQ(layouts[1]->layout.kind, ir::Layout::Kind::kSwizzled);
  auto swizzles = Find<ir::UseSwizzleNode>(p);
  ASSERT_EQ(swizzles.size(), 1u);
  EXPECT_EQ(ir::AsConstInt(swizzles[0]->panel_size), 8);
  EXPECT_TRUE(swizzles[0]->column_major);
  EXPECT_FALSE(swizzles[0]->enable);
}

TEST(Frontend, DynamicDims) {
  ir::Program p = Ok(R"py(
def f(block=64):
    n = T.dynamic("n")
    @T.prim_func
    def main(A: T.Tensor((n, 16), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i, j in T.Parallel(block, 16):
                A[bx * block + i, j] = 0.0
    return main
)py",
                     "f");
  ASSERT_EQ(p.dyn_dims.size(), 1u);
  EXPECT_EQ(p.dyn_dims[0]->name, "n");
  EXPECT_EQ(ir::PrintExpr(Find<ir::KernelNode>(p)[0]->grid[0]), "T.ceildiv(n, 64)");
}

TEST(Frontend, RuntimeNamesBecomeLets) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((256,), "float32")):
    with T.Kernel(4, threads=64) as bx:
        base = bx * 64
        alias = bx
        lit = 3
        for i in T.Parallel(64):
            A[base + i] = A[alias] + lit
)py",
                     "main");
  auto lets = Find<ir::LetNode>(p);
  ASSERT_EQ(lets.size(), 1u);
  EXPECT_EQ(lets[0]->var->name, "base");
  std::string text = ir::Print(p);
  EXPECT_TRUE(Contains(text, "A[base + i] = A[bx] + 3.0")) << text;
}

TEST(Frontend, AllocVarReadsAndStores) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((64,), "float32"), B: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=1) as bx:
        acc = T.alloc_var("float32", init=0)
        cnt: T.int32 = 5
        for i in T.serial(64):
            acc = acc + A[i]
            acc += 1
            cnt += 1
        B[0] = acc
)py",
                     "main");
  auto allocs = Find<ir::AllocateNode>(p);
  ASSERT_EQ(allocs.size(), 2u);
  EXPECT_EQ(allocs[0]->buffer->scope, ir::Scope::kVar);
  ASSERT_TRUE(allocs[0]->init);
  EXPECT_EQ(allocs[0]->init->dtype, ir::DType::kFloat32);
  EXPECT_EQ(allocs[1]->buffer->dtype, ir::DType::kInt32);
  EXPECT_EQ(ir::AsConstInt(allocs[1]->init), 5);
  auto stores = Find<ir::StoreNode>(p);
  ASSERT_EQ(stores.size(), 4u);
  EXPECT_EQ(stores[0]->buffer, allocs[0]->buffer);
  EXPECT_EQ(stores[1]->buffer, allocs[0]->buffer);
  EXPECT_EQ(stores[2]->buffer, allocs[1]->buffer);
  std::string text = ir::Print(p);
  EXPECT_TRUE(Contains(text, "B[0] = acc[0]")) << text;
}

TEST(Frontend, ImplicitTypePromotion) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((16,), "float16"), F: T.Tensor((16,), "float32"),
         I: T.Tensor((16,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            A[i] = A[i] * 0.5 + 1
            A[i] = F[i]
            F[i] = I[i] // 2
)py",
                     "main");
  auto stores = Find<ir::StoreNode>(p);
  ASSERT_EQ(stores.size(), 3u);
  // Python literals take the float16 operand's dtype; no cast is needed.
  EXPECT_EQ(stores[0]->value->dtype, ir::DType::kFloat16);
  EXPECT_EQ(stores[0]->value->kind, ir::ExprKind::kBinary);
  const auto* add = stores[0]->value->as<ir::BinaryNode>();
  EXPECT_EQ(add->b->dtype, ir::DType::kFloat16);
  EXPECT_EQ(add->b->kind, ir::ExprKind::kFloatImm);
  // A float32 value stored into a float16 buffer is cast, as TVM does.
  const auto* cast = stores[1]->value->as<ir::CastNode>();
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->dtype, ir::DType::kFloat16);
  const auto* icast = stores[2]->value->as<ir::CastNode>();
  ASSERT_TRUE(icast);
  EXPECT_EQ(icast->value->dtype, ir::DType::kInt32);
}

TEST(Frontend, ScalarFunctions) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((16,), "float16"), I: T.Tensor((16,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            A[i] = -T.infinity("float16")
            A[i] = T.cast(I[i], "float16")
            I[i] = A[i].astype(T.int32)
            A[i] = T.max(A[i], 0) + T.exp2(A[i]) * T.float16(2)
            A[i] = T.if_then_else(i < 8, A[i], T.rsqrt(A[i]))
            A[i] = T.Cast("float16", T.max_value("float16") + T.min_value("float16"))
)py",
                     "main");
  auto stores = Find<ir::StoreNode>(p);
  ASSERT_EQ(stores.size(), 6u);
  const auto* inf = stores[0]->value->as<ir::FloatImmNode>();
  ASSERT_TRUE(inf);
  EXPECT_EQ(inf->dtype, ir::DType::kFloat16);
  EXPECT_TRUE(std::isinf(inf->value) && inf->value < 0);
  EXPECT_EQ(stores[1]->value->kind, ir::ExprKind::kCast);
  EXPECT_EQ(stores[2]->value->kind, ir::ExprKind::kCast);
  EXPECT_EQ(stores[2]->value->dtype, ir::DType::kInt32);
  EXPECT_EQ(ir::PrintExpr(stores[3]->value),
            "T.max(A[i], T.float16(0.0)) + T.exp2(A[i]) * T.float16(2.0)");
  EXPECT_EQ(stores[4]->value->kind, ir::ExprKind::kSelect);
  EXPECT_EQ(ir::PrintExpr(stores[5]->value), "T.float16(65504.0) + T.float16(-65504.0)");
}

TEST(Frontend, KernelsAndWorkspaces) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    W = T.alloc_global((64,), "float32")
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            W[bx * 32 + i] = A[bx * 32 + i] * 2.0
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            B[bx * 32 + i] = W[bx * 32 + i]
)py",
                     "main");
  const auto* seq = p.body->as<ir::SeqNode>();
  ASSERT_TRUE(seq);
  ASSERT_EQ(seq->stmts.size(), 3u);
  const auto* ws = seq->stmts[0]->as<ir::AllocateNode>();
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->buffer->scope, ir::Scope::kGlobal);
  EXPECT_EQ(ws->buffer->name, "W");
  EXPECT_EQ(seq->stmts[1]->kind, ir::StmtKind::kKernel);
  EXPECT_EQ(seq->stmts[2]->kind, ir::StmtKind::kKernel);
}

constexpr char kHostFile[] = R"py(
import argparse
import torch

BLOCK = 32
SHAPE = (BLOCK * 2, 16)
X = torch.randn(3, 4)


def kernel(dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor(SHAPE, dtype)):
        with T.Kernel(2, threads=BLOCK) as bx:
            S = T.alloc_shared((BLOCK, 16), dtype)
            T.copy(A[bx * BLOCK, 0], S)
    return main


def main():
    parser = argparse.ArgumentParser()
    args = parser.parse_args()
    kernel()(torch.randn(64, 16))


if __name__ == "__main__":
    main()
)py";

TEST(Frontend, HostCodeIsNotEvaluated) {
  ir::Program p = Ok(kHostFile, "kernel");
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{64, 16}));
}

TEST(Frontend, UnboundParameterAssertsAreDeferred) {
  constexpr char kSrc[] = R"py(
def f(block):
    assert block % 16 == 0, "block must be a multiple of 16"
    @T.prim_func
    def main(A: T.Tensor((256,), "float32")):
        with T.Kernel(T.ceildiv(256, block), threads=128) as bx:
            S = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], S)
    return main
)py";
  ir::Program p = Ok(kSrc, "f");
  ASSERT_EQ(p.tile_params.size(), 1u);
  EXPECT_FALSE(p.tile_params[0].value.has_value());
  absl::StatusOr<ir::Program> bad = Build(kSrc, "f", {{"block", "8"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(std::string(bad.status().message()),
                       "error: assertion failed: block must be a multiple of 16"))
      << bad.status().message();
}

TEST(Frontend, HashIsStableAndFollowsTileSizes) {
  Binds binds = {{"M", "256"},      {"N", "128"},      {"K", "64"},
                 {"block_M", "64"}, {"block_N", "32"}, {"block_K", "16"}};
  std::string h1 = ir::ProgramHash(Ok(kGemm, "gemm", binds));
  std::string h2 = ir::ProgramHash(Ok(kGemm, "gemm", binds));
  EXPECT_EQ(h1, h2);
  binds[3].second = "128";
  EXPECT_NE(h1, ir::ProgramHash(Ok(kGemm, "gemm", binds)));
}

}  // namespace
}  // namespace tilec::frontend
