// Unit tests of the TileLang frontend, one feature at a time, on small inline
// kernels. Expected IR is written by hand from TileLang's semantics.
#include "compiler/frontend/frontend.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/hash.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/printer.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/frontend_test_util.h"

namespace tilec::frontend {
namespace {

using namespace test_util;  // NOLINT: the shared test helpers

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

// -U leaves a parameter with a Python default unbound: num_stages (default 2)
// becomes an unbound tile parameter, the other default (dtype) still applies.
TEST(Frontend, UnboundSetLeavesDefaultedParametersUnbound) {
  Bindings b;
  for (const auto& [k, v] : Binds{{"M", "256"},
                                  {"N", "128"},
                                  {"K", "64"},
                                  {"block_M", "64"},
                                  {"block_N", "32"},
                                  {"block_K", "16"}}) {
    b.Set(k, v);
  }
  b.unbound = {"num_stages"};
  absl::StatusOr<ir::Program> p =
      CompileTileLang({"test.py", kPrelude + std::string(kGemm)}, "gemm", b);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(ir::Verify(*p).ok());
  ASSERT_EQ(p->tile_params.size(), 4u);
  EXPECT_EQ(p->tile_params[3].var->name, "num_stages");
  EXPECT_FALSE(p->tile_params[3].value.has_value());
  EXPECT_EQ(p->tile_params[0].value, 64);
  EXPECT_EQ(p->params[0].tensor->dtype, ir::DType::kFloat16);
  auto loops = Find<ir::ForNode>(*p);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->num_stages, ir::Expr(p->tile_params[3].var));
  // Without -U the default applies, and the programs differ.
  b.unbound.clear();
  absl::StatusOr<ir::Program> bound =
      CompileTileLang({"test.py", kPrelude + std::string(kGemm)}, "gemm", b);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->tile_params[3].value, 2);
  EXPECT_NE(ir::ProgramHash(*bound), ir::ProgramHash(*p));
}

TEST(Frontend, UnboundSetErrorsNameTheParameter) {
  SourceFile file{"test.py", kPrelude + std::string(kGemm)};
  Bindings b;
  b.unbound = {"blocks_M"};
  absl::StatusOr<ir::Program> p = CompileTileLang(file, "gemm", b);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(std::string(p.status().message()),
                       "test.py:5:5: error: -U blocks_M "
                       "names no parameter of `gemm`"))
      << p.status();
  EXPECT_TRUE(Contains(std::string(p.status().message()), "block_M")) << p.status();
  b.unbound = {"num_stages"};
  b.Set("num_stages", "3");
  p = CompileTileLang(file, "gemm", b);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(Contains(std::string(p.status().message()),
                       "both bound (-D num_stages=3) and left unbound (-U num_stages)"))
      << p.status();
}

TEST(Frontend, DefaultsAndDtypeSpellings) {
  ir::Program p = Ok(R"py(
import torch
def f(n, a="float", b=T.float16, c=torch.bfloat16, d="half"):
    @T.prim_func
    def main(A: T.Tensor((n,), a), B: T.Tensor((n,), b), C: T.Tensor((n,), c),
             D: T.Tensor((n,), d), E: T.Tensor((n,), "float8_e4m3fn"),
             F: T.Tensor((n,), T.float8_e4m3fnuz), G: T.Tensor((n,), torch.float8_e5m2fnuz)):
        pass
    return main
)py",
                     "f", {{"n", "8"}});
  ASSERT_EQ(p.params.size(), 7u);
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kFloat32);
  EXPECT_EQ(p.params[1].tensor->dtype, ir::DType::kFloat16);
  EXPECT_EQ(p.params[2].tensor->dtype, ir::DType::kBFloat16);
  EXPECT_EQ(p.params[3].tensor->dtype, ir::DType::kFloat16);
  EXPECT_EQ(p.params[4].tensor->dtype, ir::DType::kFloat8E4M3);
  EXPECT_EQ(p.params[5].tensor->dtype, ir::DType::kFloat8E4M3FNUZ);
  EXPECT_EQ(p.params[6].tensor->dtype, ir::DType::kFloat8E5M2FNUZ);
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

namespace tilec::frontend {
namespace {

TEST(FrontendLimits, HugeNamesAreRefusedWithShortMessages) {
  const std::string huge(100000, 'n');
  const std::string kernel =
      "@T.prim_func\n"
      "def k(A: T.Tensor((128,), \"float32\")):\n"
      "    with T.Kernel(1, threads=128) as bx:\n"
      "        A[0] = 1.0\n";
  // The function to compile.
  absl::StatusOr<ir::Program> p = test_util::Build(kernel, huge);
  ASSERT_TRUE(absl::IsInvalidArgument(p.status()));
  EXPECT_NE(p.status().message().find("100000 characters long"), absl::string_view::npos);
  EXPECT_LT(p.status().message().size(), 300u);
  // An identifier in the source: located, the line shown as a window.
  std::string src = kernel;
  src.replace(src.find("A[0]"), 1, huge);
  p = test_util::Build(src, "k");
  ASSERT_TRUE(absl::IsInvalidArgument(p.status()));
  EXPECT_EQ(
      p.status().message().rfind("test.py:7:9: error: this name is 100000 characters long", 0), 0)
      << p.status().message().substr(0, 200);
  EXPECT_LT(p.status().message().size(), 500u);
  // A binding's name.
  p = test_util::Build(kernel, "k", {{huge, "1"}});
  ASSERT_TRUE(absl::IsInvalidArgument(p.status()));
  EXPECT_LT(p.status().message().size(), 300u);
  // 256 characters are fine.
  std::string ok = kernel;
  ok.replace(ok.find("bx"), 2, std::string(ir::kMaxNameLength, 'b'));
  test_util::Ok(ok, "k");
}

}  // namespace
}  // namespace tilec::frontend
