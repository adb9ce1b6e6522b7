// Python at the staging level: `while`, comprehensions (also inside kernels),
// isinstance / getattr / hasattr, int and float methods, module constants and
// tuples of dtypes. Kernels that compute something are run on the reference
// interpreter and compared with values computed here in double precision.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/printer.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/frontend_test_util.h"

namespace tilec::frontend {
namespace {

using test_util::Build;
using test_util::ConstShape;
using test_util::ErrorOf;
using test_util::Ok;

// The first dimension of the program's first tensor parameter.
int64_t FirstDim(const ir::Program& p) {
  if (p.params.empty() || !p.params[0].tensor) return -1;
  return ConstShape(p.params[0].tensor)[0];
}

constexpr uint64_t kSeed = 20261125;

TEST(FrontendPython, WhileLoopComputesASize) {
  constexpr char kSrc[] = R"py(
def f(n):
    blk = 1
    while blk < n:
        blk *= 2
    else:
        blk += 0
    steps = 0
    while True:
        steps += 1
        if steps == 3:
            break
    @T.prim_func
    def main(A: T.Tensor((blk * steps,), "float32")):
        pass
    return main
)py";
  EXPECT_EQ(FirstDim(Ok(kSrc, "f", {{"n", "100"}})), 128 * 3);
  EXPECT_EQ(FirstDim(Ok(kSrc, "f", {{"n", "1"}})), 3);
}

TEST(FrontendPython, EndlessWhileIsALocatedError) {
  // The prelude is 3 lines and the snippet starts with an empty line: the
  // `while` is on line 7, column 5.
  constexpr char kSrc[] = R"py(
def f():
    x = 0
    while x >= 0:
        x = 1
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        pass
    return main
)py";
  EXPECT_EQ(ErrorOf(kSrc, "f"),
            "test.py:7:5: error: this `while` loop ran 100000 iterations at staging time "
            "without ending (its condition never became false?)");
}

// A runtime condition in kernel code: one loop of the kernel, whose
// condition is evaluated before each iteration.
TEST(FrontendPython, WhileOnARuntimeConditionIsAKernelLoop) {
  constexpr char kSrc[] = R"py(
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        while A[0] > 0:
            A[0] = A[0] - 1
)py";
  absl::StatusOr<ir::Program> p = Build(kSrc, "main");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::Print(*p);
  EXPECT_NE(text.find("while A[0] > "), std::string::npos) << text;
  EXPECT_NE(text.find("A[0] = A[0] - "), std::string::npos) << text;
}

// A generator may return a @T.prim_func a helper builds (a kernel factory
// shared by several entry points, a callback filling in the operation);
// such a function must not be taken for an eager kernel, which would build
// an empty program.
TEST(FrontendPython, GeneratorReturnsAPrimFuncAHelperBuilds) {
  constexpr char kSrc[] = R"py(
def _make(M, N, dtype, op):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            A_s = T.alloc_shared((M, N), dtype)
            B_s = T.alloc_shared((M,), dtype)
            T.copy(A, A_s)
            op(T, A_s, B_s)
            T.copy(B_s, B)
    return main

def rowsum(M, N, dtype="float32"):
    return _make(M, N, dtype, lambda T, src, dst: T.reduce_sum(src, dst, dim=1))

def rowmax(M, N, dtype="float32"):
    k = _make(M, N, dtype, lambda T, src, dst: T.reduce_max(src, dst, dim=1))
    return k

def nothing(M):
    x = M + 1
)py";
  for (const char* fn : {"rowsum", "rowmax"}) {
    ir::Program p = Ok(kSrc, fn, {{"M", "8"}, {"N", "16"}});
    EXPECT_EQ(p.params.size(), 2u) << fn;
    EXPECT_EQ(test_util::Find<ir::ReduceNode>(p).size(), 1u) << fn << "\n" << ir::Print(p);
    EXPECT_EQ(test_util::Find<ir::CopyNode>(p).size(), 2u) << fn;
  }
  EXPECT_EQ(ErrorOf(kSrc, "nothing", {{"M", "8"}}),
            "test.py:23:5: error: `nothing` must return a @T.prim_func (or be an eager "
            "kernel), but it returned nothing");
}

// T.copy between two single elements copies one element (TileLang lowers
// it to a store).
TEST(FrontendPython, CopyOfTwoElementsCopiesOne) {
  constexpr char kSrc[] = R"py(
@T.prim_func
def main(A: T.Tensor((4, 4), "float32"), B: T.Tensor((4, 4), "float32")):
    with T.Kernel(1, threads=32) as bx:
        T.copy(A[0, 2], B[1, 1])
)py";
  ir::Program p = Ok(kSrc, "main");
  std::vector<const ir::CopyNode*> copies = test_util::Find<ir::CopyNode>(p);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(ir::PrintExpr(copies[0]->src.mins[1]), "2");
  for (const ir::Region* r : {&copies[0]->src, &copies[0]->dst}) {
    ASSERT_EQ(r->extents.size(), 2u);
    EXPECT_EQ(ir::AsConstInt(r->extents[0]), 1);
    EXPECT_EQ(ir::AsConstInt(r->extents[1]), 1);
  }
}

// Python's annotations of local variables are not evaluated, so typing
// constructs need no support (`x: Optional[str] = None`).
TEST(FrontendPython, LocalAnnotationsAreNotEvaluated) {
  constexpr char kSrc[] = R"py(
from typing import Optional

def f(n):
    source: Optional[str] = None
    width: int = n * 2
    @T.prim_func
    def main(A: T.Tensor((width,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0
    return main
)py";
  ir::Program p = Ok(kSrc, "f", {{"n", "4"}});
  ASSERT_EQ(p.params.size(), 1u);
  EXPECT_EQ(ir::AsConstInt(p.params[0].tensor->shape[0]), 8);
}

// `from tilelang.cuda import language as T` is the language module.
TEST(FrontendPython, TheCudaSpellingOfTheLanguageModule) {
  constexpr char kSrc[] = R"py(
from tilelang.cuda import language as TC
import tilelang.cuda.language as TL

def f(n):
    @TC.prim_func
    def main(A: TC.Tensor((n,), TL.float32)):
        with TL.Kernel(1, threads=32) as bx:
            for i in TC.Parallel(n):
                A[i] = 1.0
    return main
)py";
  ir::Program p = Ok(kSrc, "f", {{"n", "4"}});
  EXPECT_EQ(p.params.size(), 1u);
}

// A T.Layout of a global tensor (a storage order two kernels agree on) is
// accepted and dropped: global tensors stay in logical order. The same
// annotation of a shared buffer is kept.
TEST(FrontendPython, CustomLayoutOfAGlobalTensorIsDropped) {
  constexpr char kSrc[] = R"py(
def f(n):
    @T.prim_func
    def main(dQ: T.Tensor((n, 8), "float32"), B: T.Tensor((n, 8), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((n, 8), "float32")
            T.annotate_layout({dQ: T.Layout((n, 8), lambda i, j: [j, i]),
                               S: T.Layout((n, 8), lambda i, j: [i, (j + i) % 8])})
            T.copy(dQ, S)
            T.copy(S, B)
    return main
)py";
  ir::Program p = Ok(kSrc, "f", {{"n", "8"}});
  std::vector<const ir::AnnotateLayoutNode*> notes = test_util::Find<ir::AnnotateLayoutNode>(p);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]->buffer->name, "S");
}

// An eager kernel whose tensor parameters are annotated in the signature,
// as a @T.prim_func's are (`@tilelang.jit def k(A: T.Tensor(...), ...)`).
TEST(FrontendPython, EagerKernelWithAnnotatedSignature) {
  constexpr char kSrc[] = R"py(
N = 64

@tilelang.jit
def bind_kernel(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), s: T.float32):
    with T.Kernel(1, threads=32):
        A_shared = T.alloc_shared((32,), T.float16)
        for k in T.Pipelined(2, num_stages=2):
            T.copy(A[k * 32], A_shared)
            for i in T.Parallel(32):
                x = A_shared[i] + s
                B[k * 32 + i] = x
)py";
  ir::Program p = Ok(kSrc, "bind_kernel");
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[0].tensor->name, "A");
  EXPECT_EQ(ir::AsConstInt(p.params[1].tensor->shape[0]), 64);
  EXPECT_NE(p.params[2].scalar, nullptr);
  EXPECT_EQ(test_util::Find<ir::CopyNode>(p).size(), 1u);
}

TEST(FrontendPython, ComprehensionsAndGenerators) {
  constexpr char kSrc[] = R"py(
def f(n):
    sizes = [2 ** k for k in range(n) if k % 2 == 0]
    pairs = {k: v for k, v in zip("ab", (3, 4))}
    total = sum(x * pairs["b"] for x in sizes)
    ok = all(isinstance(s, int) for s in sizes) and not any(s > 64 for s in sizes)
    @T.prim_func
    def main(A: T.Tensor((total if ok else 1, len(sizes)), "float32")):
        pass
    return main
)py";
  // n=5: sizes [1, 4, 16], total (1 + 4 + 16) * 4 = 84.
  ir::Program p = Ok(kSrc, "f", {{"n", "5"}});
  ASSERT_FALSE(p.params.empty());
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{84, 3}));
}

// A generator expression inside a kernel: Python's range, runtime elements.
constexpr char kStridedSum[] = R"py(
def strided_sum(M, N, step, block_M=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i in T.Parallel(block_M):
                row = bx * block_M + i
                if row < M:
                    B[row] = sum(A[row, k] for k in range(0, N, step)) + len([k for k in range(step)])
    return main
)py";

TEST(FrontendPython, GeneratorInsideAKernelMatchesReference) {
  const int64_t M = 37, N = 11, step = 3;
  ir::Program p =
      Ok(kStridedSum, "strided_sum",
         {{"M", std::to_string(M)}, {"N", std::to_string(N)}, {"step", std::to_string(step)}});
  ASSERT_TRUE(p.body);
  std::cout << "seed " << kSeed << "\n";
  absl::StatusOr<std::vector<interp::Tensor>> args = interp::MakeInputs(p, {}, kSeed);
  ASSERT_TRUE(args.ok()) << args.status();
  const interp::Tensor a = (*args)[0];
  ASSERT_TRUE(interp::RunProgram(p, *args).ok());
  const interp::Tensor& b = (*args)[1];
  for (int64_t i = 0; i < M; ++i) {
    double want = static_cast<double>(step);
    for (int64_t k = 0; k < N; k += step) want += a.GetDouble(i * N + k);
    EXPECT_NEAR(b.GetDouble(i), want, 1e-5 * (1 + std::fabs(want))) << "row " << i;
  }
}

TEST(FrontendPython, IsinstanceGetattrHasattr) {
  constexpr char kSrc[] = R"py(
def f(block, dtype="float16"):
    assert isinstance(block, int) and not isinstance(block, (float, str))
    assert isinstance(dtype, str) and isinstance(T.float16, T.dtype)
    assert isinstance(True, int) and isinstance((1,), tuple) and isinstance([], list)
    width = getattr(T, "float32")
    ctor = getattr(T, "alloc_shared")
    assert hasattr(T, "copy")
    @T.prim_func
    def main(A: T.Tensor((block,), width)):
        with T.Kernel(1, threads=32) as bx:
            S = ctor((block,), width)
            T.copy(A, S)
            assert isinstance(A, T.Tensor) and not isinstance(bx, int)
    return main
)py";
  ir::Program p = Ok(kSrc, "f", {{"block", "64"}});
  ASSERT_FALSE(p.params.empty());
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kFloat32);
}

TEST(FrontendPython, GetattrDefaultOnlyWhereTheAnswerIsKnown) {
  constexpr char kSrc[] = R"py(
def f():
    x = getattr(T, "no_such_thing", None)
)py";
  EXPECT_EQ(ErrorOf(kSrc, "f"),
            "test.py:6:20: error: getattr(): tilec cannot tell whether a module "
            "`tilelang.language` has the attribute `no_such_thing`");
  constexpr char kMissing[] = R"py(
def f():
    x = getattr(3, "real")
)py";
  EXPECT_EQ(ErrorOf(kMissing, "f"), "test.py:6:20: error: int has no attribute `real`");
}

TEST(FrontendPython, IsinstanceOfAnUnboundParameterNeedsItsValue) {
  constexpr char kSrc[] = R"py(
def f(N, block):
    assert isinstance(block, int)
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        pass
    return main
)py";
  EXPECT_EQ(ErrorOf(kSrc, "f", {{"N", "8"}}),
            "test.py:6:23: error: parameter `block` is not bound, but the value isinstance() "
            "looks at needs its value at staging time; bind it with -D block=<value>");
}

TEST(FrontendPython, IntAndFloatMethods) {
  constexpr char kSrc[] = R"py(
def f(n):
    bits = n.bit_length()
    neg = (-n).bit_length()
    assert (0).bit_length() == 0 and (1.0).is_integer() and not (2.5).is_integer()
    pow2 = 1 << (n - 1).bit_length()
    @T.prim_func
    def main(A: T.Tensor((pow2, bits, neg), "float32")):
        pass
    return main
)py";
  // 100 = 0b1100100: 7 bits; the next power of two is 128.
  EXPECT_EQ(ConstShape(Ok(kSrc, "f", {{"n", "100"}}).params[0].tensor),
            (std::vector<int64_t>{128, 7, 7}));
  EXPECT_EQ(ConstShape(Ok(kSrc, "f", {{"n", "64"}}).params[0].tensor),
            (std::vector<int64_t>{64, 7, 7}));
}

TEST(FrontendPython, RangeWithStepsAndTuplesOfDtypes) {
  constexpr char kSrc[] = R"py(
BLOCK = 16
DTYPES = (T.float16, "bfloat16", T.float32)
SIZES = tuple(range(BLOCK * 4, 0, -BLOCK))

def f():
    bits = 0
    for dt in DTYPES:
        bits += 32 if dt == T.float32 else 16
    @T.prim_func
    def main(A: T.Tensor((SIZES[0], bits, len(SIZES)), DTYPES[1])):
        with T.Kernel(SIZES[-1] // BLOCK, threads=BLOCK * 2) as bx:
            S = T.alloc_shared((BLOCK, bits), DTYPES[1])
            T.fill(S, 0)
    return main
)py";
  ir::Program p = Ok(kSrc, "f");
  ASSERT_FALSE(p.params.empty());
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{64, 64, 4}));
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kBFloat16);
}

TEST(FrontendPython, TilelangMathAndDtypeObjects) {
  constexpr char kSrc[] = R"py(
from tilelang.math import next_power_of_2
import tilelang.math as tm

def f(M, N, dtype="bfloat16", acc=T.float32):
    grid = tilelang.cdiv(M, 64) * tm.cdiv(N, 32)
    width = T.dtype(dtype).bits + acc.bits + T.dtype("int8").lanes + T.bool.bits
    assert T.float16.itemsize == 2 and T.float8_e4m3.bits == 8 and T.int4.bits == 4
    assert acc.is_floating_point and not T.int32.is_floating_point
    @T.prim_func
    def main(A: T.Tensor((grid, width, next_power_of_2(N), tilelang.next_power_of_2(1)), dtype)):
        pass
    return main
)py";
  // cdiv(100, 64) * cdiv(40, 32) = 4; 16 + 32 + 1 + 1 = 50; next_power_of_2(40) = 64.
  ir::Program p = Ok(kSrc, "f", {{"M", "100"}, {"N", "40"}});
  ASSERT_FALSE(p.params.empty());
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{4, 50, 64, 1}));
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kBFloat16);
}

TEST(FrontendPython, CdivOfARuntimeSizeIsAFloorDivision) {
  constexpr char kSrc[] = R"py(
def f(N, block=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(tilelang.cdiv(N, block), threads=32) as bx:
            pass
    return main
)py";
  ir::Program p = Ok(kSrc, "f");
  auto kernels = test_util::Find<ir::KernelNode>(p);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(ir::PrintExpr(kernels[0]->grid[0]), "(N + 32 - 1) // 32");
}

TEST(FrontendPython, NextPowerOfTwoNeedsAStagingInt) {
  constexpr char kSrc[] = R"py(
def f(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(tilelang.next_power_of_2(N), threads=32) as bx:
            pass
    return main
)py";
  EXPECT_EQ(ErrorOf(kSrc, "f"),
            "test.py:8:48: error: parameter `N` is not bound, but next_power_of_2() needs its "
            "value at staging time; bind it with -D N=<value>");
}

TEST(FrontendPython, LambdasAndSortKeys) {
  constexpr char kSrc[] = R"py(
cdiv = lambda a, b=32: (a + b - 1) // b

def f(n):
    configs = [(64, 2), (128, 1), (32, 4), (16, 4)]
    by_stages = sorted(configs, key=lambda c: c[1], reverse=True)
    widest = max(configs, key=lambda c: c[0])
    smallest = min((c for c in configs if c[1] == 4), key=lambda c: c[0])
    firsts = sorted(c[0] for c in configs)
    empty = max([], default=7)
    scale = lambda x, *rest, k=1: x * k + len(rest)
    @T.prim_func
    def main(A: T.Tensor((cdiv(n), by_stages[0][0], by_stages[1][0], widest[0], smallest[0],
                          firsts[0], empty, scale(2, 0, 0, k=3)), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((4,), "float32")
            T.fill(S, (lambda v: v * 2)(1.5))
    return main
)py";
  // cdiv(100) = 4; stable descending by stages: (32, 4), (16, 4), (64, 2), (128, 1).
  ir::Program p = Ok(kSrc, "f", {{"n", "100"}});
  ASSERT_FALSE(p.params.empty());
  EXPECT_EQ(ConstShape(p.params[0].tensor), (std::vector<int64_t>{4, 32, 16, 128, 16, 16, 7, 8}));
  auto fills = test_util::Find<ir::FillNode>(p);
  ASSERT_EQ(fills.size(), 1u);
  EXPECT_EQ(ir::PrintExpr(fills[0]->value), "3.0");
}

TEST(FrontendPython, StringMethodsAndDataType) {
  constexpr char kSrc[] = R"py(
from tilelang import DataType

def f(storage_dtype="int8", in_dtype="float16", num_bits=4):
    storage_type = "".join(c for c in storage_dtype if not c.isdigit())
    storage_nbit = int("".join(c for c in storage_dtype if c.isdigit()))
    micro = 128 // DataType(in_dtype).bits
    assert storage_type in ("int", "uint") and "  x ".strip() == "x" and " x".lstrip() == "x"
    assert "x ".rstrip() == "x" and "float16".find("16") == 5 and "float16".find("8") == -1
    assert "a.b.c".count(".") == 2 and "ab1".isalnum() and "ab".isalpha() and not "".isdigit()
    @T.prim_func
    def main(A: T.Tensor((storage_nbit, micro // (storage_nbit // num_bits)), in_dtype)):
        pass
    return main
)py";
  EXPECT_EQ(ConstShape(Ok(kSrc, "f").params[0].tensor), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(ConstShape(Ok(kSrc, "f", {{"storage_dtype", "uint32"}}).params[0].tensor),
            (std::vector<int64_t>{32, 1}));
}

TEST(FrontendPython, KernelWithoutGridIsOneBlock) {
  constexpr char kSrc[] = R"py(
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(threads=32):
        for i in T.Parallel(4):
            A[i] = A[i] + 1
)py";
  ir::Program p = Ok(kSrc, "main");
  auto kernels = test_util::Find<ir::KernelNode>(p);
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(kernels[0]->grid.size(), 1u);
  EXPECT_EQ(ir::AsConstInt(kernels[0]->grid[0]), 1);
  EXPECT_EQ(ir::AsConstInt(kernels[0]->threads), 32);
  constexpr char kBound[] = R"py(
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(threads=32) as bx:
        pass
)py";
  EXPECT_EQ(ErrorOf(kBound, "main"),
            "test.py:7:34: error: T.Kernel without grid extents has no block index to bind; give "
            "the grid (T.Kernel(1, threads=...))");
}

TEST(FrontendPython, SliceObjectsIndexBuffers) {
  constexpr char kSrc[] = R"py(
def f(shape=(4, 8, 16)):
    full = tuple(slice(None) for _ in shape)
    @T.prim_func
    def main(A: T.Tensor(shape, "float32"), B: T.Tensor(shape[1:], "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared(shape, "float32")
            R = T.alloc_shared(shape[1:], "float32")
            T.copy(A[full], S)
            T.copy(S[(1,) + full[1:]], R)
            T.copy(R[slice(0, 8), slice(4, None)], B[0:8, 4:16])
    return main
)py";
  ir::Program p = Ok(kSrc, "f");
  auto copies = test_util::Find<ir::CopyNode>(p);
  ASSERT_EQ(copies.size(), 3u);
  EXPECT_EQ(ir::AsConstInt(copies[1]->src.mins[0]), 1);
  EXPECT_EQ(ir::AsConstInt(copies[1]->src.extents[2]), 16);
  EXPECT_EQ(ir::AsConstInt(copies[2]->src.mins[1]), 4);
  EXPECT_EQ(ir::AsConstInt(copies[2]->src.extents[1]), 12);
}

TEST(FrontendPython, FunctoolsOperatorItertools) {
  constexpr char kSrc[] = R"py(
import functools
import itertools
import operator
from functools import reduce

def f(shape=(2, 3, 4)):
    numel = functools.reduce(operator.mul, shape)
    total = reduce(lambda a, b: a + b, shape, 100)
    pairs = list(itertools.product(range(2), "ab"))
    cube = len(list(itertools.product((0, 1), repeat=3)))
    assert pairs[1] == (0, "b") and pairs[2] == (1, "a")
    @T.prim_func
    def main(A: T.Tensor((numel, total, len(pairs), cube), "float32")):
        pass
    return main
)py";
  EXPECT_EQ(ConstShape(Ok(kSrc, "f").params[0].tensor), (std::vector<int64_t>{24, 109, 4, 8}));
}

TEST(FrontendPython, GeneratorsAreConsumedOnce) {
  constexpr char kSrc[] = R"py(
@T.prim_func
def main(B: T.Tensor((8,), "int32")):
    values = (i for i in range(4))
    with T.Kernel(1, threads=32) as bx:
        for i in values:
            B[i] = i
            break
        for i in values:
            B[i + 4] = i
        rest = list(values)
        assert next(values, -1) == -1 and next(x for x in (5, 6)) == 5
        B[0] = len(rest) + sum(x for x in range(3)) + len(dict((k, k) for k in range(2)))
)py";
  ir::Program p = Ok(kSrc, "main");
  // The first loop takes item 0, the second items 1..3, list() nothing.
  auto stores = test_util::Find<ir::StoreNode>(p);
  ASSERT_EQ(stores.size(), 5u);
  EXPECT_EQ(ir::PrintExpr(stores[0]->indices[0]), "0");
  EXPECT_EQ(ir::PrintExpr(stores[1]->indices[0]), "5");
  EXPECT_EQ(ir::PrintExpr(stores[3]->indices[0]), "7");
  EXPECT_EQ(ir::PrintExpr(stores[4]->value), "5");
}

TEST(FrontendPython, SetsForOrderFreeUses) {
  constexpr char kSrc[] = R"py(
@T.prim_func
def main(B: T.Tensor((6,), "int32")):
    unique = {i % 2 for i in range(4)}
    widths = set([16, 32, 16, 64])
    with T.Kernel(1, threads=32) as bx:
        B[0] = len(unique)
        B[1] = sum(widths) + max(widths)
        B[2] = sorted(widths)[0]
        B[3] = 1 if 32 in widths and 48 not in widths else 0
        B[4] = 1 if {1, 0} == unique and set() != unique and any({0, 1}) else 0
        B[5] = len({1, 1.0, True}) if isinstance(widths, set) and not isinstance(widths, list) else 9
)py";
  ir::Program p = Ok(kSrc, "main");
  auto stores = test_util::Find<ir::StoreNode>(p);
  ASSERT_EQ(stores.size(), 6u);
  const char* want[] = {"2", "176", "16", "1", "1", "1"};
  for (size_t k = 0; k < 6; ++k) EXPECT_EQ(ir::PrintExpr(stores[k]->value), want[k]) << k;
  constexpr char kIter[] = R"py(
def f():
    for x in {3, 1}:
        pass
)py";
  EXPECT_EQ(ErrorOf(kIter, "f"),
            "test.py:6:14: error: iterating a set is not supported: Python's order is the hash "
            "order, which tilec does not reproduce; iterate sorted(...) instead");
  constexpr char kList[] = R"py(
def f():
    xs = list({3, 1})
)py";
  EXPECT_EQ(ErrorOf(kList, "f"),
            "test.py:6:15: error: list() of a set is not supported: Python's order is the hash "
            "order, which tilec does not reproduce; use sorted(...)");
}

}  // namespace
}  // namespace tilec::frontend
