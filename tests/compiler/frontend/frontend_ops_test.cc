// Frontend unit tests for the kernel-level constructs: loops, tile operators,
// layouts, dynamic dims, runtime names, promotion, scalar functions, kernels
// and workspaces.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/printer.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/frontend_test_util.h"

namespace tilec::frontend {
namespace {

using namespace test_util;  // NOLINT: the shared test helpers

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

// group= gives each order/stage entry a group of statements; the loop keeps
// one entry per statement.
constexpr char kGroups[] = R"py(
def f(group):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32):
            for k in T.Pipelined(4, num_stages=2, order=[1, -1, 0], stage=[0, -1, 1],
                                 group=group):
                A[k] = 1.0
                A[k + 4] = 2.0
                A[k + 8] = 3.0
                A[k + 12] = 4.0
    return main
)py";

TEST(Frontend, PipelinedGroups) {
  ir::Program p = Ok(kGroups, "f", {{"group", "[[0], [1, 3], [2]]"}});
  auto loops = Find<ir::ForNode>(p);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0]->order, (std::vector<int64_t>{1, -1, 0, -1}));
  EXPECT_EQ(loops[0]->stage, (std::vector<int64_t>{0, -1, 1, -1}));
  const std::pair<const char*, const char*> bad[] = {
      {"[[0], [1, 3], [2, 3]]", "puts statement 3 in groups 1 and 2"},
      {"[[0], [1], [2]]", "leaves statement 3 out of every group"},
      {"[[0], [1, 3], [2, 4]]", "names statement 4 but the loop body has 4 statements"},
      {"[[0, 1, 2, 3]]", "order= has 3 entries but group= has 1 groups"},
  };
  for (const auto& [group, message] : bad) {
    absl::StatusOr<ir::Program> r = Build(kGroups, "f", {{"group", group}});
    ASSERT_FALSE(r.ok()) << group;
    EXPECT_TRUE(Contains(std::string(r.status().message()), message)) << r.status();
  }
}

// A slice between two locals whose values differ by a constant
// (`kv_start = base + k * bn`, `kv_end = base + (k + 1) * bn`) has that
// constant extent.
TEST(Frontend, SliceBetweenLocalsHasTheirConstantDifference) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(KV: T.Tensor((4, 256, 64), "float16")):
    with T.Kernel(2, 4, threads=128) as (bz, bid):
        S = T.alloc_shared((32, 64), "float16")
        for k in T.serial(4):
            kv_start = 128 * bz + k * 32
            kv_end = 128 * bz + (k + 1) * 32
            T.copy(KV[bid, kv_start:kv_end, :], S)
            T.copy(S, KV[bid, kv_start:kv_end, :])
)py",
                     "main");
  auto copies = Find<ir::CopyNode>(p);
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(ir::AsConstInt(copies[0]->src.extents[1]), 32);
  absl::StatusOr<ir::Program> bad = Build(R"py(
@T.prim_func
def main(KV: T.Tensor((256,), "float16"), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((32,), "float16")
        lo = n * 2
        hi = n * 3
        T.copy(KV[lo:hi], S)
)py",
                                          "main");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(std::string(bad.status().message()), "depends on runtime values"))
      << bad.status();
}

// A copy region written as constant slices must lie inside its buffer;
// one spanned from a head address (the tile's extents) is clipped instead.
TEST(Frontend, ConstantCopyRegionsOutsideTheirBufferAreRefused) {
  constexpr char kCopy[] = R"py(
def f(lo_src, lo_dst):
    @T.prim_func
    def main(src: T.Tensor((8,), "int32"), dst: T.Tensor((8,), "int32")):
        with T.Kernel(1, threads=8):
            s = T.alloc_shared((6,), "int32")
            T.copy(src[lo_src:lo_src + 6], s)
            T.copy(s, dst[lo_dst:lo_dst + 6])
            T.copy(src[4], s)
    return main
)py";
  Ok(kCopy, "f", {{"lo_src", "2"}, {"lo_dst", "2"}});
  absl::StatusOr<ir::Program> bad = Build(kCopy, "f", {{"lo_src", "6"}, {"lo_dst", "0"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(std::string(bad.status().message()),
                       "T.copy source region src[6:12] along dimension 0 lies outside `src` (8 "
                       "elements)"))
      << bad.status();
  bad = Build(kCopy, "f", {{"lo_src", "0"}, {"lo_dst", "3"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(std::string(bad.status().message()), "T.copy destination region dst[3:9]"))
      << bad.status();
}

// T.fill / T.clear of a single element is a store.
TEST(Frontend, FillOfASingleElementIsAStore) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((8,), "int32")):
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((4,), "int32")
        T.fill(s[2], 7)
        T.clear(s[1])
        A[0] = s[2] + s[1]
)py",
                     "main");
  std::string text = ir::Print(p);
  EXPECT_TRUE(Contains(text, "s[2] = 7")) << text;
  EXPECT_TRUE(Contains(text, "s[1] = 0")) << text;
}

// A T.alloc_var name assigned after its block ended is a fresh local (as in
// Python), not a store into the ended variable.
TEST(Frontend, AVarNameReboundAfterItsBlockEnded) {
  ir::Program p = Ok(R"py(
@T.prim_func
def main(A: T.Tensor((4,), "int32")):
    with T.Kernel(1, threads=32):
        for j in T.serial(2):
            d = T.alloc_var("int32", init=j)
            A[j] = d
        for k in T.serial(2):
            d = k + 10
            A[k + 2] = d
)py",
                     "main");
  EXPECT_TRUE(p.body);
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

// The unsigned types under TileLang's and PyTorch's spellings: literals take
// the unsigned operand's type, T.max_value(uint64) is ~0 (2^64 - 1 is beyond
// a literal), and a literal out of the type's range is an error.
TEST(Frontend, UnsignedTypes) {
  ir::Program p = Ok(R"py(
import torch

@T.prim_func
def main(A: T.Tensor((16,), T.uint16), B: T.Tensor((16,), "uint32"),
         C: T.Tensor((16,), torch.uint64)):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            A[i] = ~A[i] >> 3
            B[i] = (B[i] << 5) ^ 4294967295
            C[i] = T.max_value(T.uint64) - C[i] // 7
            C[i] = T.max_value("uint32") + T.min_value(C.dtype)
)py",
                     "main");
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kUInt16);
  EXPECT_EQ(p.params[1].tensor->dtype, ir::DType::kUInt32);
  EXPECT_EQ(p.params[2].tensor->dtype, ir::DType::kUInt64);
  auto stores = Find<ir::StoreNode>(p);
  ASSERT_EQ(stores.size(), 4u);
  EXPECT_EQ(ir::PrintExpr(stores[0]->value), "~A[i] >> T.uint16(3)");
  EXPECT_EQ(ir::PrintExpr(stores[1]->value), "B[i] << T.uint32(5) ^ T.uint32(4294967295)");
  EXPECT_EQ(ir::PrintExpr(stores[2]->value), "~T.uint64(0) - C[i] // T.uint64(7)");
  EXPECT_EQ(stores[3]->value->dtype, ir::DType::kUInt64);

  absl::StatusOr<ir::Program> bad = Build(R"py(
@T.prim_func
def main(B: T.Tensor((16,), "uint32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            B[i] = T.uint32(4294967296)
)py",
                                          "main");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(std::string(bad.status().message()), "does not fit in uint32"))
      << bad.status();
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

}  // namespace
}  // namespace tilec::frontend
