#include "compiler/frontend/parser.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/source.h"
#include "gtest/gtest.h"

namespace tilec::frontend {

// Readable SourceLoc values in test failures.
void PrintTo(const SourceLoc& loc, std::ostream* os) { *os << loc.line << ":" << loc.col; }
namespace {

// A TileLang GEMM kernel file with the host code around it.
constexpr char kGemmKernel[] = R"py(import argparse

import tilelang
import tilelang.language as T
import torch


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float"):

    @T.prim_func
    def gemm(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K:(k + 1) * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main():
    parser = argparse.ArgumentParser(description="gemm")
    parser.add_argument("--m", type=int, default=1024)
    args, _ = parser.parse_known_args()
    kernel = matmul(args.m, 1024, 1024)
    a = torch.randn(args.m, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = kernel(a, b)
    print(f"max diff: {(c - a @ b).abs().max():.3f}")
    assert torch.allclose(c, a @ b, rtol=1e-2, atol=1e-2), "mismatch"


if __name__ == "__main__":
    main()
)py";

std::unique_ptr<Module> MustParse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = Parse(SourceFile{"k.py", text});
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

std::string Dump(const std::string& text) {
  std::unique_ptr<Module> m = MustParse(text);
  return m ? DumpAst(*m) : "";
}

std::string DumpExpression(const std::string& text) {
  absl::StatusOr<ExprPtr> e = ParseExpression(SourceFile{"e", text});
  if (!e.ok()) return "ERROR " + std::string(e.status().message());
  return DumpExpr(**e);
}

// The first line of the diagnostic, or "OK".
std::string ParseError(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = Parse(SourceFile{"k.py", text});
  if (m.ok()) return "OK";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(m.status().message());
  return message.substr(0, message.find('\n'));
}

template <typename T>
const T* As(const StmtPtr& s) {
  const T* t = s ? s->as<T>() : nullptr;
  EXPECT_NE(t, nullptr);
  return t;
}
template <typename T>
const T* As(const ExprPtr& e) {
  const T* t = e ? e->as<T>() : nullptr;
  EXPECT_NE(t, nullptr);
  return t;
}

// ---------------------------------------------------------------------------
// The GEMM kernel file: structure and locations.

TEST(ParserTest, GemmKernelFunctions) {
  std::unique_ptr<Module> m = MustParse(kGemmKernel);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->source.path, "k.py");
  ASSERT_EQ(m->body.size(), 7u);
  std::vector<const FunctionDefStmt*> fns = m->Functions();
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0]->name, "matmul");
  EXPECT_EQ(fns[1]->name, "main");
  EXPECT_EQ(m->FindFunction("matmul"), fns[0]);
  EXPECT_EQ(m->FindFunction("gemm"), nullptr);  // nested, not top level
  EXPECT_EQ(m->FindFunction("torch"), nullptr);

  const FunctionDefStmt* matmul = fns[0];
  EXPECT_EQ(matmul->loc, (SourceLoc{9, 1}));
  EXPECT_EQ(matmul->name_loc, (SourceLoc{9, 5}));
  ASSERT_EQ(matmul->decorators.size(), 1u);
  const auto* jit = As<CallExpr>(matmul->decorators[0]);
  EXPECT_EQ(jit->loc, (SourceLoc{8, 2}));
  EXPECT_EQ(jit->lparen_loc, (SourceLoc{8, 14}));
  EXPECT_EQ(DumpExpr(*jit->func), "(. tilelang jit)");
  ASSERT_EQ(jit->keywords.size(), 1u);
  EXPECT_EQ(jit->keywords[0].name, "out_idx");
  EXPECT_EQ(jit->keywords[0].loc, (SourceLoc{8, 15}));
  EXPECT_EQ(jit->keywords[0].value->loc, (SourceLoc{8, 23}));
  EXPECT_EQ(DumpExpr(*jit->keywords[0].value), "(list (- 1))");

  ASSERT_EQ(matmul->params.size(), 8u);
  const char* names[] = {"M", "N", "K", "block_M", "block_N", "block_K", "dtype", "accum_dtype"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(matmul->params[i].name, names[i]);
    EXPECT_EQ(matmul->params[i].kind, ParamKind::kNormal);
    EXPECT_EQ(matmul->params[i].default_value != nullptr, i >= 3) << names[i];
  }
  EXPECT_EQ(matmul->params[0].loc, (SourceLoc{9, 12}));
  EXPECT_EQ(matmul->params[3].loc, (SourceLoc{9, 21}));
  const auto* block_m = As<ConstantExpr>(matmul->params[3].default_value);
  EXPECT_EQ(block_m->value_kind, ConstantKind::kInt);
  EXPECT_EQ(block_m->int_value, 128);
  const auto* dtype = As<ConstantExpr>(matmul->params[6].default_value);
  EXPECT_EQ(dtype->value_kind, ConstantKind::kString);
  EXPECT_EQ(dtype->str_value, "float16");
  ASSERT_EQ(matmul->body.size(), 2u);
  EXPECT_EQ(As<ReturnStmt>(matmul->body[1])->loc, (SourceLoc{30, 5}));
}

TEST(ParserTest, GemmKernelBody) {
  std::unique_ptr<Module> m = MustParse(kGemmKernel);
  ASSERT_NE(m, nullptr);
  const FunctionDefStmt* matmul = m->FindFunction("matmul");
  ASSERT_NE(matmul, nullptr);
  const auto* gemm = As<FunctionDefStmt>(matmul->body[0]);
  EXPECT_EQ(gemm->loc, (SourceLoc{12, 5}));
  EXPECT_EQ(gemm->name_loc, (SourceLoc{12, 9}));
  ASSERT_EQ(gemm->decorators.size(), 1u);
  const auto* prim = As<AttributeExpr>(gemm->decorators[0]);
  EXPECT_EQ(prim->loc, (SourceLoc{11, 6}));
  EXPECT_EQ(prim->attr, "prim_func");
  EXPECT_EQ(prim->attr_loc, (SourceLoc{11, 8}));
  ASSERT_EQ(gemm->params.size(), 3u);
  EXPECT_EQ(gemm->params[0].loc, (SourceLoc{13, 13}));
  EXPECT_EQ(gemm->params[0].annotation->loc, (SourceLoc{13, 16}));
  EXPECT_EQ(DumpExpr(*gemm->params[1].annotation), "(call (. T Tensor) (tuple K N) dtype)");
  EXPECT_TRUE(As<CallExpr>(gemm->params[2].annotation)->args[0]->as<TupleExpr>()->parenthesized);

  ASSERT_EQ(gemm->body.size(), 1u);
  const auto* with = As<WithStmt>(gemm->body[0]);
  EXPECT_EQ(with->loc, (SourceLoc{17, 9}));
  ASSERT_EQ(with->items.size(), 1u);
  EXPECT_EQ(with->items[0].loc, (SourceLoc{17, 14}));
  const auto* kernel = As<CallExpr>(with->items[0].context);
  EXPECT_EQ(kernel->lparen_loc, (SourceLoc{17, 22}));
  ASSERT_EQ(kernel->args.size(), 2u);
  ASSERT_EQ(kernel->keywords.size(), 1u);
  EXPECT_EQ(kernel->keywords[0].loc, (SourceLoc{17, 69}));
  const auto* block_vars = As<TupleExpr>(with->items[0].target);
  EXPECT_TRUE(block_vars->parenthesized);
  EXPECT_EQ(block_vars->loc, (SourceLoc{17, 85}));
  ASSERT_EQ(block_vars->elts.size(), 2u);
  EXPECT_EQ(block_vars->elts[0]->loc, (SourceLoc{17, 86}));

  ASSERT_EQ(with->body.size(), 7u);
  const auto* loop = As<ForStmt>(with->body[4]);
  EXPECT_EQ(loop->loc, (SourceLoc{22, 13}));
  EXPECT_EQ(loop->iter->loc, (SourceLoc{22, 22}));
  EXPECT_EQ(DumpExpr(*loop->iter),
            "(call (. T Pipelined) (call (. T ceildiv) K block_K) num_stages=3)");
  ASSERT_EQ(loop->body.size(), 3u);

  // T.copy(A[by * block_M, k * block_K], A_shared)
  const auto* copy_a = As<CallExpr>(As<ExprStmt>(loop->body[0])->value);
  const auto* a_region = As<SubscriptExpr>(copy_a->args[0]);
  EXPECT_EQ(a_region->loc, (SourceLoc{23, 24}));
  EXPECT_EQ(a_region->lbracket_loc, (SourceLoc{23, 25}));
  ASSERT_EQ(a_region->items.size(), 2u);
  EXPECT_FALSE(a_region->items[0].is_slice);
  EXPECT_EQ(a_region->items[0].loc, (SourceLoc{23, 26}));
  EXPECT_EQ(a_region->items[1].loc, (SourceLoc{23, 40}));
  const auto* by_times = As<BinOpExpr>(a_region->items[0].index);
  EXPECT_EQ(by_times->op, BinOpKind::kMul);
  EXPECT_EQ(by_times->loc, (SourceLoc{23, 26}));
  EXPECT_EQ(by_times->op_loc, (SourceLoc{23, 29}));

  // T.copy(B[k * block_K:(k + 1) * block_K, bx * block_N], B_shared)
  const auto* copy_b = As<CallExpr>(As<ExprStmt>(loop->body[1])->value);
  const auto* b_region = As<SubscriptExpr>(copy_b->args[0]);
  ASSERT_EQ(b_region->items.size(), 2u);
  const SubscriptItem& slice = b_region->items[0];
  EXPECT_TRUE(slice.is_slice);
  EXPECT_EQ(slice.loc, (SourceLoc{24, 26}));
  EXPECT_EQ(slice.step, nullptr);
  EXPECT_EQ(DumpExpr(*slice.lower), "(* k block_K)");
  const auto* upper = As<BinOpExpr>(slice.upper);
  EXPECT_EQ(upper->loc, (SourceLoc{24, 38}));  // the '(' of (k + 1)
  EXPECT_EQ(upper->op_loc, (SourceLoc{24, 46}));
  EXPECT_EQ(upper->lhs->loc, (SourceLoc{24, 39}));
  EXPECT_FALSE(b_region->items[1].is_slice);

  const auto* parallel = As<ForStmt>(with->body[5]);
  const auto* ij = As<TupleExpr>(parallel->target);
  EXPECT_FALSE(ij->parenthesized);
  EXPECT_EQ(ij->loc, (SourceLoc{26, 17}));
  const auto* store = As<AssignStmt>(parallel->body[0]);
  EXPECT_EQ(store->loc, (SourceLoc{27, 17}));
  ASSERT_EQ(store->targets.size(), 1u);
  EXPECT_EQ(DumpExpr(*store->targets[0]), "(sub C_local i j)");
  EXPECT_EQ(store->value->loc, (SourceLoc{27, 33}));
}

TEST(ParserTest, GemmKernelHostCode) {
  std::unique_ptr<Module> m = MustParse(kGemmKernel);
  ASSERT_NE(m, nullptr);
  const FunctionDefStmt* main_fn = m->FindFunction("main");
  ASSERT_NE(main_fn, nullptr);
  ASSERT_EQ(main_fn->body.size(), 9u);
  const auto* unpack = As<AssignStmt>(main_fn->body[2]);
  EXPECT_EQ(As<TupleExpr>(unpack->targets[0])->loc, (SourceLoc{36, 5}));
  const auto* print = As<CallExpr>(As<ExprStmt>(main_fn->body[7])->value);
  const auto* fstring = As<ConstantExpr>(print->args[0]);
  EXPECT_TRUE(fstring->is_fstring);
  EXPECT_EQ(fstring->str_value, "max diff: {(c - a @ b).abs().max():.3f}");
  const auto* check = As<AssertStmt>(main_fn->body[8]);
  EXPECT_EQ(As<ConstantExpr>(check->msg)->str_value, "mismatch");

  ASSERT_EQ(m->body.size(), 7u);
  const auto* guard = As<IfStmt>(m->body[6]);
  EXPECT_EQ(guard->loc, (SourceLoc{45, 1}));
  const auto* cmp = As<CompareExpr>(guard->test);
  EXPECT_EQ(cmp->loc, (SourceLoc{45, 4}));
  ASSERT_EQ(cmp->op_locs.size(), 1u);
  EXPECT_EQ(cmp->op_locs[0], (SourceLoc{45, 13}));

  const auto* import_t = As<ImportStmt>(m->body[2]);
  ASSERT_EQ(import_t->names.size(), 1u);
  EXPECT_EQ(import_t->names[0].name, "tilelang.language");
  EXPECT_EQ(import_t->names[0].asname, "T");
  EXPECT_EQ(import_t->names[0].loc, (SourceLoc{4, 8}));
}

// ---------------------------------------------------------------------------
// Expressions: precedence and every node kind.

TEST(ParserTest, ArithmeticPrecedence) {
  EXPECT_EQ(DumpExpression("a + b * c ** -d"), "(+ a (* b (** c (- d))))");
  EXPECT_EQ(DumpExpression("-a ** b"), "(- (** a b))");
  EXPECT_EQ(DumpExpression("a ** b ** c"), "(** a (** b c))");
  EXPECT_EQ(DumpExpression("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(DumpExpression("a // b % c @ d / e"), "(/ (@ (% (// a b) c) d) e)");
  EXPECT_EQ(DumpExpression("a | b ^ c & d << e + f"), "(| a (^ b (& c (<< d (+ e f)))))");
  EXPECT_EQ(DumpExpression("~a >> +b"), "(>> (~ a) (+ b))");
  EXPECT_EQ(DumpExpression("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(DumpExpression("await x ** 2"), "(** (await x) 2)");
}

TEST(ParserTest, BooleanAndComparisonPrecedence) {
  EXPECT_EQ(DumpExpression("not a == b and c or d"), "(or (and (not (cmp a == b)) c) d)");
  EXPECT_EQ(DumpExpression("a or b or c and d"), "(or a b (and c d))");
  EXPECT_EQ(DumpExpression("a < b <= c != d"), "(cmp a < b <= c != d)");
  EXPECT_EQ(DumpExpression("a is not b not in c in d is e > f >= g == h"),
            "(cmp a is not b not in c in d is e > f >= g == h)");
  EXPECT_EQ(DumpExpression("x if a < b else y if c else z"), "(if (cmp a < b) x (if c y z))");
  EXPECT_EQ(DumpExpression("a | b < c"), "(cmp (| a b) < c)");
}

TEST(ParserTest, BoolOpAndCompareLocations) {
  absl::StatusOr<ExprPtr> e = ParseExpression(SourceFile{"e", "a and b and (c < d not in e)"});
  ASSERT_TRUE(e.ok()) << e.status().message();
  const auto* b = (*e)->as<BoolOpExpr>();
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->op_locs.size(), 2u);
  EXPECT_EQ(b->op_locs[0], (SourceLoc{1, 3}));
  EXPECT_EQ(b->op_locs[1], (SourceLoc{1, 9}));
  const auto* c = b->values[2]->as<CompareExpr>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->loc, (SourceLoc{1, 14}));
  EXPECT_EQ(c->ops[1], CmpOpKind::kNotIn);
  EXPECT_EQ(c->op_locs[0], (SourceLoc{1, 16}));
  EXPECT_EQ(c->op_locs[1], (SourceLoc{1, 20}));
}

TEST(ParserTest, Constants) {
  EXPECT_EQ(DumpExpression("(None, True, False, 7, 2.5, 1e-3, 2j, ..., 'a' \"b\", b'x')"),
            "(tuple None True False 7 2.5 0.001 2.0j ... 'ab' b'x')");
  absl::StatusOr<ExprPtr> big = ParseExpression(SourceFile{"e", "0x1_0000_0000_0000_0000"});
  ASSERT_TRUE(big.ok());
  const auto* c = (*big)->as<ConstantExpr>();
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->int_overflows);
  EXPECT_EQ(c->str_value, "0x1_0000_0000_0000_0000");
  EXPECT_EQ(DumpExpression("f'{x}' 'y'"), "f'{x}y'");
}

TEST(ParserTest, AttributesSubscriptsAndSlices) {
  EXPECT_EQ(DumpExpression("T.language.x"), "(. (. T language) x)");
  EXPECT_EQ(DumpExpression("A[i]"), "(sub A i)");
  EXPECT_EQ(DumpExpression("A[i,]"), "(sub A i ,)");
  EXPECT_EQ(DumpExpression("A[i, j:k, ::2, :, l:]"),
            "(sub A i (slice j k _) (slice _ _ 2) (slice _ _ _) (slice l _ _))");
  EXPECT_EQ(DumpExpression("A[a:b:c][0]"), "(sub (sub A (slice a b c)) 0)");
  EXPECT_EQ(DumpExpression("A[*idx, 0]"), "(sub A (* idx) 0)");
  EXPECT_EQ(DumpExpression("A[...]"), "(sub A ...)");
}

TEST(ParserTest, Calls) {
  EXPECT_EQ(DumpExpression("f()"), "(call f)");
  EXPECT_EQ(DumpExpression("T.Kernel(*grid, threads=128, **opts)"),
            "(call (. T Kernel) (* grid) threads=128 (** opts))");
  EXPECT_EQ(DumpExpression("f(a, *b, c, k=1, *d, **e, j=2)"),
            "(call f a (* b) c (* d) k=1 (** e) j=2)");
  EXPECT_EQ(DumpExpression("sum(x * x for x in xs)"), "(call sum (genexp (* x x) (for x xs)))");
  EXPECT_EQ(DumpExpression("f(a,)(b)"), "(call (call f a) b)");
  EXPECT_EQ(DumpExpression("f(n := 3)"), "(call f (:= n 3))");
}

TEST(ParserTest, Displays) {
  EXPECT_EQ(DumpExpression("()"), "(tuple)");
  EXPECT_EQ(DumpExpression("(a,)"), "(tuple a)");
  EXPECT_EQ(DumpExpression("a, *b"), "(tuple a (* b))");
  EXPECT_EQ(DumpExpression("[]"), "(list)");
  EXPECT_EQ(DumpExpression("[1, *x, 2,]"), "(list 1 (* x) 2)");
  EXPECT_EQ(DumpExpression("{}"), "(dict)");
  EXPECT_EQ(DumpExpression("{'a': 1, **d, b: 2}"), "(dict ('a' 1) (** d) (b 2))");
  EXPECT_EQ(DumpExpression("{1, 2}"), "(set 1 2)");
  EXPECT_EQ(DumpExpression("{*a}"), "(set (* a))");
}

TEST(ParserTest, Comprehensions) {
  EXPECT_EQ(DumpExpression("[x * 2 for x in range(4) if x % 2 == 0]"),
            "(listcomp (* x 2) (for x (call range 4) (if (cmp (% x 2) == 0))))");
  EXPECT_EQ(DumpExpression("[a for i, a in enumerate(v) for b in a if b if not c]"),
            "(listcomp a (for (tuple i a) (call enumerate v)) (for b a (if b) (if (not c))))");
  EXPECT_EQ(DumpExpression("{k: v for k, v in d}"), "(dictcomp k v (for (tuple k v) d))");
  EXPECT_EQ(DumpExpression("{x for x in s}"), "(setcomp x (for x s))");
  EXPECT_EQ(DumpExpression("(y async for y in g)"), "(genexp y (async-for y g))");
  absl::StatusOr<ExprPtr> e = ParseExpression(SourceFile{"e", "[x for x in y]"});
  ASSERT_TRUE(e.ok());
  const auto* c = (*e)->as<ComprehensionExpr>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->comp_kind, ComprehensionKind::kList);
  EXPECT_EQ(ComprehensionKindName(c->comp_kind), "list comprehension");
  EXPECT_EQ(c->generators[0].loc, (SourceLoc{1, 4}));
}

TEST(ParserTest, LambdaStarredWalrusYield) {
  EXPECT_EQ(DumpExpression("lambda: 0"), "(lambda () 0)");
  EXPECT_EQ(DumpExpression("lambda x, y=1, *a, k, **kw: x + y"),
            "(lambda (x, y=1, *a, k, **kw) (+ x y))");
  EXPECT_EQ(DumpExpression("lambda a, /, b, *, c=2: a"), "(lambda (a, /, b, *, c=2) a)");
  EXPECT_EQ(DumpExpression("(y := f(x))"), "(:= y (call f x))");
  EXPECT_EQ(Dump("def g():\n    x = yield\n    yield a, b\n    yield from h()\n"),
            "def g():\n  x = (yield _)\n  (yield (tuple a b))\n  (yield-from (call h))\n");
}

// ---------------------------------------------------------------------------
// Statements.

TEST(ParserTest, FunctionDefinitions) {
  EXPECT_EQ(Dump("@tilelang.jit(out_idx=[-1])\n@cache\ndef f(a, b: int = 2, *args, c, d=4, "
                 "**kw) -> T.Tensor:\n    pass\n"),
            "@(call (. tilelang jit) out_idx=(list (- 1)))\n@cache\n"
            "def f(a, b: int=2, *args, c, d=4, **kw) -> (. T Tensor):\n  pass\n");
  EXPECT_EQ(Dump("def f(a, b, /, c, *, d): return d\n"), "def f(a, b, /, c, *, d):\n  return d\n");
  EXPECT_EQ(Dump("async def f():\n    await g()\n"), "async def f():\n  (await (call g))\n");
  std::unique_ptr<Module> m = MustParse("def f(a, /, b, *c, d, **e): pass\n");
  ASSERT_NE(m, nullptr);
  const auto* f = As<FunctionDefStmt>(m->body[0]);
  ASSERT_EQ(f->params.size(), 5u);
  EXPECT_EQ(f->params[0].kind, ParamKind::kPositionalOnly);
  EXPECT_EQ(f->params[1].kind, ParamKind::kNormal);
  EXPECT_EQ(f->params[2].kind, ParamKind::kVarArgs);
  EXPECT_EQ(f->params[3].kind, ParamKind::kKeywordOnly);
  EXPECT_EQ(f->params[4].kind, ParamKind::kVarKeywords);
  EXPECT_EQ(f->params[4].loc, (SourceLoc{1, 25}));  // the name, after the stars
}

TEST(ParserTest, Assignments) {
  EXPECT_EQ(Dump("a = b = 1\nx, y = y, x\n[p, *q] = r\no.f[0] = 2\n"),
            "a = b = 1\n(tuple x y) = (tuple y x)\n(list p (* q)) = r\n(sub (. o f) 0) = 2\n");
  EXPECT_EQ(Dump("x += 1\ny //= 2\nz **= 3\nw @= m\n"), "x += 1\ny //= 2\nz **= 3\nw @= m\n");
  EXPECT_EQ(Dump("A: T.Tensor((M, K), dtype)\nn: int = 3\n"),
            "A: (call (. T Tensor) (tuple M K) dtype)\nn: int = 3\n");
  std::unique_ptr<Module> m = MustParse("acc  -=  v\n");
  ASSERT_NE(m, nullptr);
  const auto* aug = As<AugAssignStmt>(m->body[0]);
  EXPECT_EQ(aug->op, BinOpKind::kSub);
  EXPECT_EQ(aug->op_loc, (SourceLoc{1, 6}));
}

TEST(ParserTest, ControlFlow) {
  EXPECT_EQ(Dump("if a:\n    x\nelif b:\n    y\nelif c: z\nelse:\n    w\n"),
            "if a:\n  x\nelif b:\n  y\nelif c:\n  z\nelse:\n  w\n");
  EXPECT_EQ(Dump("if a:\n    x\nelse:\n    if b:\n        y\n"),
            "if a:\n  x\nelse:\n  if b:\n    y\n");
  EXPECT_EQ(Dump("for i, j in T.Parallel(4, 8):\n    continue\nelse:\n    pass\n"),
            "for (tuple i j) in (call (. T Parallel) 4 8):\n  continue\nelse:\n  pass\n");
  EXPECT_EQ(Dump("while (n := n - 1) > 0:\n    break\n"),
            "while (cmp (:= n (- n 1)) > 0):\n  break\n");
  EXPECT_EQ(Dump("x = 1; y = 2;\n"), "x = 1\ny = 2\n");
}

TEST(ParserTest, WithStatements) {
  EXPECT_EQ(Dump("with T.Kernel(4, threads=128) as (bx, by):\n    pass\n"),
            "with (call (. T Kernel) 4 threads=128) as (tuple bx by):\n  pass\n");
  EXPECT_EQ(Dump("with T.Kernel(4) as bx, open(p) as f, lock:\n    pass\n"),
            "with (call (. T Kernel) 4) as bx, (call open p) as f, lock:\n  pass\n");
  EXPECT_EQ(Dump("with (open(a) as f, open(b) as g,):\n    pass\n"),
            "with (call open a) as f, (call open b) as g:\n  pass\n");
  EXPECT_EQ(Dump("with (a, b):\n    pass\nwith (a) as c:\n    pass\n"),
            "with a, b:\n  pass\nwith a as c:\n  pass\n");
}

TEST(ParserTest, TryRaiseAssertDelete) {
  EXPECT_EQ(Dump("try:\n    f()\nexcept (A, B) as e:\n    raise C('x') from e\nexcept D:\n"
                 "    pass\nexcept:\n    raise\nelse:\n    g()\nfinally:\n    h()\n"),
            "try:\n  (call f)\nexcept (tuple A B) as e:\n  raise (call C 'x') from e\n"
            "except D:\n  pass\nexcept:\n  raise\nelse:\n  (call g)\nfinally:\n  (call h)\n");
  EXPECT_EQ(Dump("try:\n    pass\nexcept* E:\n    pass\n"), "try:\n  pass\nexcept* E:\n  pass\n");
  EXPECT_EQ(Dump("assert x > 0, 'msg'\nassert y\ndel a, b[0], c.d\n"),
            "assert (cmp x > 0), 'msg'\nassert y\ndel a, (sub b 0), (. c d)\n");
}

TEST(ParserTest, ImportsScopesAndClasses) {
  EXPECT_EQ(Dump("import a.b as c, d\nfrom ..x.y import (p as q, r,)\nfrom . import z\n"
                 "from m import *\n"),
            "import a.b as c, d\nfrom ..x.y import p as q, r\nfrom . import z\n"
            "from m import *\n");
  EXPECT_EQ(Dump("def f():\n    global g, h\n    def k():\n        nonlocal v\n"),
            "def f():\n  global g, h\n  def k():\n    nonlocal v\n");
  EXPECT_EQ(Dump("@dataclass\nclass C(Base, metaclass=M):\n    '''doc'''\n    x: int = 0\n"
                 "    def m(self): return self.x\nclass D: pass\n"),
            "@dataclass\nclass C(Base, metaclass=M):\n  'doc'\n  x: int = 0\n"
            "  def m(self):\n    return (. self x)\nclass D():\n  pass\n");
  std::unique_ptr<Module> m = MustParse("from ...pkg import a\n");
  ASSERT_NE(m, nullptr);
  const auto* from = As<ImportFromStmt>(m->body[0]);
  EXPECT_EQ(from->level, 3);
  EXPECT_EQ(from->module, "pkg");
}

TEST(ParserTest, LaterDefinitionWins) {
  std::unique_ptr<Module> m = MustParse(
      "def f(): return 1\nif x:\n    def f(): return 3\n"
      "def f(): return 2\n");
  ASSERT_NE(m, nullptr);
  const FunctionDefStmt* f = m->FindFunction("f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->loc, (SourceLoc{4, 1}));
  EXPECT_EQ(m->Functions().size(), 2u);
}

TEST(ParserTest, ParseExpressionRejectsTrailingTokens) {
  EXPECT_EQ(DumpExpression("M, 2 * N"), "(tuple M (* 2 N))");
  EXPECT_EQ(DumpExpression("a b"),
            "ERROR e:1:3: error: unexpected name 'b' after expression\na b\n  ^\n");
  EXPECT_EQ(DumpExpression(""), "ERROR e:1:1: error: expected expression\n\n^\n");
}

// ---------------------------------------------------------------------------
// Diagnostics: the exact first line.

TEST(ParserDiagnosticsTest, MissingColons) {
  EXPECT_EQ(ParseError("for i in range(3)\n    pass\n"),
            "k.py:1:18: error: expected ':' after 'for' header");
  EXPECT_EQ(ParseError("if x == 1\n    pass\n"),
            "k.py:1:10: error: expected ':' after 'if' condition");
  EXPECT_EQ(ParseError("def f(x) -> int\n    pass\n"),
            "k.py:1:16: error: expected ':' after function signature");
  EXPECT_EQ(ParseError("while x pass\n"), "k.py:1:9: error: expected ':' after 'while' condition");
  EXPECT_EQ(ParseError("with a as b\n    pass\n"),
            "k.py:1:12: error: expected ':' after 'with' header");
  EXPECT_EQ(ParseError("class C(B)\n    pass\n"),
            "k.py:1:11: error: expected ':' after 'class' header");
}

TEST(ParserDiagnosticsTest, Blocks) {
  EXPECT_EQ(ParseError("x = 1\n    y = 2\n"), "k.py:2:5: error: unexpected indent");
  EXPECT_EQ(ParseError("for i in x:\ny = 2\n"),
            "k.py:2:1: error: expected an indented block after 'for' statement on line 1");
  EXPECT_EQ(ParseError("def f():\n"),
            "k.py:2:1: error: expected an indented block after function definition on line 1");
  EXPECT_EQ(ParseError("if a:\n    pass\nelse:\n  # c\n\nx\n"),
            "k.py:6:1: error: expected an indented block after 'else' statement on line 3");
  EXPECT_EQ(ParseError("x = 1\nelse:\n    pass\n"),
            "k.py:2:1: error: 'else' does not follow an 'if', 'for', 'while' or 'try' block");
  EXPECT_EQ(ParseError("try:\n    pass\nx = 1\n"),
            "k.py:3:1: error: expected 'except' or 'finally' block");
}

TEST(ParserDiagnosticsTest, Expressions) {
  EXPECT_EQ(ParseError("x = (1 + )\n"), "k.py:1:10: error: expected expression, found ')'");
  EXPECT_EQ(ParseError("x = \n"), "k.py:1:4: error: expected expression");
  EXPECT_EQ(ParseError("T.copy(A B)\n"),
            "k.py:1:10: error: expected ',' or ')' after argument, found name 'B'");
  EXPECT_EQ(ParseError("y = [1, 2 3]\n"),
            "k.py:1:11: error: expected ',' or ']', found integer literal");
  EXPECT_EQ(ParseError("z = a if b\n"), "k.py:1:11: error: expected 'else' after 'if' expression");
  EXPECT_EQ(ParseError("A[i j]\n"),
            "k.py:1:5: error: expected ',' or ']' in subscript, found name 'j'");
  EXPECT_EQ(ParseError("x = T.\n"), "k.py:1:7: error: expected attribute name after '.'");
  EXPECT_EQ(ParseError("x = {'a' 1}\n"),
            "k.py:1:10: error: expected ',' or '}', found integer literal");
  EXPECT_EQ(ParseError("f(x for x in y, 1)\n"),
            "k.py:1:3: error: generator expression must be parenthesized");
  EXPECT_EQ(ParseError("s = b'a' 'b'\n"),
            "k.py:1:10: error: cannot mix bytes and nonbytes literals");
  EXPECT_EQ(ParseError("x = 1 2\n"), "k.py:1:7: error: unexpected integer literal after statement");
}

TEST(ParserDiagnosticsTest, ArgumentsAndParameters) {
  EXPECT_EQ(ParseError("f(a=1, b)\n"),
            "k.py:1:8: error: positional argument follows keyword argument");
  EXPECT_EQ(ParseError("f(**k, b)\n"),
            "k.py:1:8: error: positional argument follows keyword argument unpacking");
  EXPECT_EQ(ParseError("f(a=1, a=2)\n"), "k.py:1:8: error: keyword argument repeated: a");
  EXPECT_EQ(ParseError("f(x.y=1)\n"),
            "k.py:1:6: error: expression cannot contain assignment, perhaps you meant \"==\"?");
  EXPECT_EQ(ParseError("def f(a=1, b): pass\n"),
            "k.py:1:12: error: parameter without a default follows parameter with a default");
  EXPECT_EQ(ParseError("def f(a, a): pass\n"),
            "k.py:1:10: error: duplicate parameter 'a' in function definition");
  EXPECT_EQ(ParseError("def f(*): pass\n"),
            "k.py:1:7: error: named parameters must follow bare '*'");
  EXPECT_EQ(ParseError("def f(**k, a): pass\n"),
            "k.py:1:12: error: parameters cannot follow the '**' parameter");
  EXPECT_EQ(ParseError("def (x): pass\n"),
            "k.py:1:5: error: expected function name after 'def', found '('");
}

TEST(ParserDiagnosticsTest, Targets) {
  EXPECT_EQ(ParseError("f(x) = 1\n"), "k.py:1:1: error: cannot assign to function call");
  EXPECT_EQ(ParseError("a, 1 = t\n"), "k.py:1:4: error: cannot assign to literal");
  EXPECT_EQ(ParseError("a + b += 1\n"),
            "k.py:1:1: error: 'expression' is an illegal expression for augmented assignment");
  EXPECT_EQ(ParseError("for f() in x: pass\n"), "k.py:1:5: error: cannot assign to function call");
  EXPECT_EQ(ParseError("*a = b\n"),
            "k.py:1:1: error: starred assignment target must be in a list or tuple");
  EXPECT_EQ(ParseError("a, b: int\n"),
            "k.py:1:1: error: only a single target (not a tuple) can be annotated");
  EXPECT_EQ(ParseError("del f()\n"), "k.py:1:5: error: cannot delete function call");
  EXPECT_EQ(ParseError("None = 1\n"), "k.py:1:1: error: cannot assign to None");
}

TEST(ParserDiagnosticsTest, UnsupportedAndLexical) {
  EXPECT_EQ(ParseError("match x:\n    case 1:\n        pass\n"),
            "k.py:1:1: error: 'match' statements are not supported");
  EXPECT_EQ(ParseError("match = re.match(p, s)\nmatch(x)\n"), "OK");
  EXPECT_EQ(ParseError("type Alias = int\n"),
            "k.py:1:1: error: 'type' alias statements are not supported");
  EXPECT_EQ(ParseError("x = (1,\n     2))\n"), "k.py:2:8: error: unmatched ')'");
  EXPECT_EQ(ParseError("T.copy(A, B\n"), "k.py:1:7: error: '(' was never closed");
  EXPECT_EQ(ParseError("print 'x'\n"),
            "k.py:1:7: error: unexpected string literal after statement");
}

TEST(ParserDiagnosticsTest, MessageHasSourceLineAndCaret) {
  absl::StatusOr<std::unique_ptr<Module>> m =
      Parse(SourceFile{"kernels/gemm.py", "def f():\n    for k in T.serial(4)\n        pass\n"});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "kernels/gemm.py:2:25: error: expected ':' after 'for' header\n"
            "    for k in T.serial(4)\n"
            "                        ^\n");
}

// ---------------------------------------------------------------------------
// Robustness: no input crashes the parser; every error has a location.

// Checks that parsing `text` either succeeds or fails with a positioned
// diagnostic that points inside the file (or just past its end).
void ExpectParsesOrLocatedError(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = Parse(SourceFile{"fuzz.py", text});
  if (m.ok()) return;
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(m.status().message());
  ASSERT_EQ(message.rfind("fuzz.py:", 0), 0u) << message;
  int line = 0, col = 0;
  ASSERT_EQ(std::sscanf(message.c_str(), "fuzz.py:%d:%d: error: ", &line, &col), 2) << message;
  int lines = 1;
  for (char c : text) lines += c == '\n';
  EXPECT_GE(line, 1) << message;
  EXPECT_LE(line, lines + 1) << message;
  EXPECT_GE(col, 1) << message;
  EXPECT_NE(message.find(": error: "), std::string::npos);
  EXPECT_EQ(message.back(), '\n');
}

TEST(ParserRobustnessTest, EveryTruncationOfTheKernel) {
  std::string text = kGemmKernel;
  for (size_t n = 0; n <= text.size(); ++n) {
    ExpectParsesOrLocatedError(text.substr(0, n));
    if (testing::Test::HasFatalFailure()) FAIL() << "truncated at " << n;
  }
}

TEST(ParserRobustnessTest, EveryOneCharacterDeletionOfTheKernel) {
  std::string text = kGemmKernel;
  for (size_t i = 0; i < text.size(); ++i) {
    ExpectParsesOrLocatedError(text.substr(0, i) + text.substr(i + 1));
    if (testing::Test::HasFatalFailure()) FAIL() << "deleted " << i;
  }
}

TEST(ParserRobustnessTest, RandomBytes) {
  uint32_t seed = std::random_device{}();
  std::cout << "ParserRobustnessTest.RandomBytes seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 2000; ++iter) {
    // Odd iterations draw from printable ASCII and layout characters, which
    // gets past the UTF-8 check into the lexer and parser proper.
    static constexpr char kAscii[] = " \t\n\n\n    ()[]{}:,.=+-*/%<>!@#'\"\\abcdefxyzT01239_";
    std::string text(1 + rng() % 200, ' ');
    for (char& c : text) {
      c = iter % 2 == 0 ? static_cast<char>(1 + rng() % 255)  // never a zero byte
                        : kAscii[rng() % (sizeof(kAscii) - 1)];
    }
    ExpectParsesOrLocatedError(text);
    if (testing::Test::HasFatalFailure()) FAIL() << "iteration " << iter;
  }
}

TEST(ParserRobustnessTest, RandomTokenSoup) {
  // Python-shaped noise reaches much deeper into the parser than raw bytes.
  static const char* kPieces[] = {
      "def ",    "f",    "(",       ")",      "[",        "]",       "{",     "}",       ":",
      ",",       " = ",  "\n",      "    ",   "if ",      "else",    "elif ", "for ",    " in ",
      "with ",   " as ", "lambda",  "*",      "**",       ".",       "T",     "x",       "1",
      "2.5",     "'s'",  "f'{a}'",  " and ",  " not ",    " is ",    "@",     "return ", "yield ",
      "->",      ":=",   "try:",    "except", "finally:", "import ", "from ", "class ",  ";",
      "\\\n",    "#c\n", "-",       "~",      "<",        "==",      "pass",  "async ",  "await ",
      "global ", "del ", "assert ", "...",
  };
  uint32_t seed = std::random_device{}();
  std::cout << "ParserRobustnessTest.RandomTokenSoup seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    int n = 1 + rng() % 40;
    for (int i = 0; i < n; ++i) text += kPieces[rng() % std::size(kPieces)];
    ExpectParsesOrLocatedError(text);
    if (testing::Test::HasFatalFailure()) FAIL() << "iteration " << iter << ": " << text;
    parsed += Parse(SourceFile{"fuzz.py", text}).ok();
  }
  EXPECT_LT(parsed, 3000);  // most soups are not Python
}

TEST(ParserRobustnessTest, DeepNestingIsAnErrorNotACrash) {
  EXPECT_EQ(ParseError("x = " + std::string(100000, '-') + "1\n"),
            "k.py:1:454: error: expression is too deeply nested");
  std::string nots;
  for (int i = 0; i < 50000; ++i) nots += "not ";
  EXPECT_EQ(ParseError("x = " + nots + "y\n").substr(0, 12), "k.py:1:1801:");
  std::string lambdas;
  for (int i = 0; i < 50000; ++i) lambdas += "lambda: ";
  EXPECT_NE(ParseError(lambdas + "0\n").find("expression is too deeply nested"), std::string::npos);
  EXPECT_EQ(ParseError("x = " + std::string(199, '(') + "1" + std::string(199, ')') + "\n"), "OK");
  // Long but flat constructs are fine.
  std::string chain = "x = a";
  for (int i = 0; i < 20000; ++i) chain += ".b[0](1) + c";
  EXPECT_EQ(ParseError(chain + "\n"), "OK");
  std::string elifs = "if a:\n    pass\n";
  for (int i = 0; i < 20000; ++i) elifs += "elif a:\n    pass\n";
  EXPECT_EQ(ParseError(elifs), "OK");
}

#ifdef TILEC_SOURCE_DIR
TEST(ParserTest, ExampleKernelsParse) {
  std::filesystem::path dir = std::filesystem::path(TILEC_SOURCE_DIR) / "examples";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no examples directory";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".py") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::unique_ptr<Module>> m =
        Parse(SourceFile{entry.path().string(), text.str()});
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (m.ok()) {
      EXPECT_FALSE((*m)->Functions().empty()) << entry.path();
    }
    ++count;
  }
  EXPECT_GT(count, 0);
}
#endif

}  // namespace
}  // namespace tilec::frontend
