// Diagnostics of the TileLang frontend: malformed and unsupported kernels.
// Each case asserts the full first line, `file:line:col: error: message`,
// pointing at the offending construct.
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "gtest/gtest.h"

namespace tilec::frontend {
namespace {

struct Case {
  const char* name;
  const char* source;  // line 1 is `import tilelang.language as T`
  const char* function;
  std::vector<std::pair<std::string, std::string>> bindings;
  const char* first_line;
};

std::string FirstLine(std::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      {"EndlessStaticWhileInKernel",
       R"py(import tilelang.language as T
def f(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            while True:
                pass
    return main
)py",
       "f",
       {{"n", "4"}},
       "test.py:6:13: error: this `while` loop ran 100000 iterations at staging time without "
       "ending (its condition never became false?)"},

      {"SetOfRuntimeValues",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        xs = {A[i] for i in range(4)}
)py",
       "main",
       {},
       "test.py:5:14: error: a set of runtime values is not supported"},

      {"LayoutFunctionWithStarArgs",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((4,), "float32")
        T.annotate_layout({S: T.Layout((4,), lambda *i: i)})
)py",
       "main",
       {},
       "test.py:6:54: error: a T.Layout index function takes plain parameters only"},

      {"UnboundParamInStaticIf",
       R"py(import tilelang.language as T
def f(flag):
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            if flag:
                A[0] = 1.0
    return main
)py",
       "f",
       {},
       "test.py:6:16: error: parameter `flag` is not bound, but the condition of this `if` "
       "needs its value at staging time; bind it with -D flag=<value>"},

      {"UnboundParamInStagingRange",
       R"py(import tilelang.language as T
def f(n):
    sizes = []
    for i in range(n):
        sizes.append(i)
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        pass
    return main
)py",
       "f",
       {},
       "test.py:4:20: error: parameter `n` is not bound, but range() needs its value at staging "
       "time; bind it with -D n=<value>"},

      {"UnboundParamAsTupleLength",
       R"py(import tilelang.language as T
def f(rank):
    shape = (16,) * rank
    @T.prim_func
    def main(A: T.Tensor(shape, "float32")):
        pass
    return main
)py",
       "f",
       {},
       "test.py:3:21: error: parameter `rank` is not bound, but the repetition count of a tuple "
       "needs its value at staging time; bind it with -D rank=<value>"},

      {"UnboundParamAsDtype",
       R"py(import tilelang.language as T
def f(dtype):
    @T.prim_func
    def main(A: T.Tensor((4,), dtype)):
        pass
    return main
)py",
       "f",
       {},
       "test.py:4:32: error: parameter `dtype` is not bound, but the tensor dtype needs its value "
       "at staging time; bind it with -D dtype=<value>"},

      {"BindingNamesNoParameter",
       R"py(import tilelang.language as T
def gemm(M, block_M=64):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        pass
    return main
)py",
       "gemm",
       {{"M", "64"}, {"block_m", "32"}},
       "test.py:2:5: error: the binding -D block_m=32 names no parameter of `gemm`; its "
       "parameters are: M, block_M"},

      {"BindingNamesATensor",
       R"py(import tilelang.language as T
def add(A, block: int = 64):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
)py",
       "add",
       {{"A", "3"}},
       "test.py:2:5: error: the binding -D A=3 names a tensor parameter of `add`; its "
       "parameters are: block, N"},

      {"StagingAssert",
       R"py(import tilelang.language as T
def f(block):
    assert block % 16 == 0, f"block={block} is not a multiple of 16"
    @T.prim_func
    def main(A: T.Tensor((block,), "float32")):
        pass
    return main
)py",
       "f",
       {{"block", "24"}},
       "test.py:3:5: error: assertion failed: block=24 is not a multiple of 16"},

      {"CopyExtentMismatch",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((16, 32), "float32")
        T.copy(A[0:16, 0:16], S)
)py",
       "main",
       {},
       "test.py:6:9: error: T.copy: the extents of `A` [16, 16] and of `S` [16, 32] do not "
       "match"},

      {"IndexCountMismatch",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((4, 4), "float32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1.0
)py",
       "main",
       {},
       "test.py:5:10: error: buffer `A` has 2 dimensions but 1 index was given"},

      {"UndefinedName",
       R"py(import tilelang.language as T
def f():
    size = blok * 2
)py",
       "f",
       {},
       "test.py:3:12: error: name `blok` is not defined"},

      {"UnsupportedTFunction",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        T.tcgen05_mma_arrive()
)py",
       "main",
       {},
       "test.py:5:11: error: `T.tcgen05_mma_arrive` is not supported by tilec"},

      {"GemmWgWait",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16, 16), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((16, 16), "float16")
        C = T.alloc_fragment((16, 16), "float32")
        T.gemm(S, S, C, wg_wait=-1)
)py",
       "main",
       {},
       "test.py:7:25: error: T.gemm with wg_wait other than 0 (leaving the result pending) is "
       "not supported"},

      {"GemmUnknownKeyword",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16, 16), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((16, 16), "float16")
        C = T.alloc_fragment((16, 16), "float32")
        T.gemm(S, S, C, trans_A=True)
)py",
       "main",
       {},
       "test.py:7:25: error: T.gemm() got an unexpected keyword argument 'trans_A'"},

      {"ReduceOutputShape",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=128) as bx:
        X = T.alloc_fragment((16, 16), "float32")
        Y = T.alloc_fragment((16, 2), "float32")
        T.reduce_max(X, Y, dim=1)
)py",
       "main",
       {},
       "test.py:7:25: error: T.reduce_max: the output `Y` has shape [16, 2] but reducing dim 1 "
       "of `X` gives [16]"},

      {"ReduceDimOutOfRange",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=128) as bx:
        X = T.alloc_fragment((16, 16), "float32")
        Y = T.alloc_fragment((16,), "float32")
        T.reduce_sum(X, Y, dim=2)
)py",
       "main",
       {},
       "test.py:7:28: error: T.reduce_sum: dim 2 is out of range for a buffer of rank 2"},

      {"SharedOutsideKernel",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    S = T.alloc_shared((16,), "float32")
    with T.Kernel(1, threads=32):
        A[0] = 1.0
)py",
       "main",
       {},
       "test.py:4:9: error: T.alloc_shared must be inside a T.Kernel block"},

      {"Lop3IntrinsicGroup",
       R"py(import tilelang.language as T
from tilelang.quantize import get_lop3_intrin_group
def k(N):
    g = get_lop3_intrin_group(out_dtype="float16", source_format="int")
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0
    return main
)py",
       "k",
       {{"N", "4"}},
       "test.py:4:9: error: `tilelang.quantize.get_lop3_intrin_group` generates inline CUDA for "
       "LOP3 decoding (T.import_source), which tilec does not compile; decode with the plain path "
       "(tilelang.quantize's _tir_packed_* converters or T.Parallel arithmetic)"},

      {"InternalInstructionEmitter",
       R"py(import tilelang.language as T
from tilelang.intrinsics.mma_macro_generator import TensorCoreIntrinEmitter
def k(N):
    e = TensorCoreIntrinEmitter(a_dtype="float16")
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0
    return main
)py",
       "k",
       {{"N", "4"}},
       "test.py:4:9: error: `tilelang.intrinsics.mma_macro_generator.TensorCoreIntrinEmitter` is "
       "one of TileLang's internal instruction emitters, which tilec does not have; write the "
       "matrix product as T.gemm"},

      {"NestedKernel",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        with T.Kernel(1, threads=32) as by:
            pass
)py",
       "main",
       {},
       "test.py:5:14: error: T.Kernel blocks cannot be nested"},

      {"WithOnNonKernel",
       R"py(import tilelang.language as T
def f():
    with open("x") as fh:
        pass
)py",
       "f",
       {},
       "test.py:3:10: error: name `open` is not defined"},

      {"WithOnValue",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Parallel(4) as i:
        pass
)py",
       "main",
       {},
       "test.py:4:10: error: `with` is only supported with T.Kernel(...), got loop"},

      {"ReturnInsideRuntimeIfInMacro",
       R"py(import tilelang.language as T
@T.macro
def pick(x):
    if x > 0:
        return x
    return 0

@T.prim_func
def main(A: T.Tensor((16,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = pick(bx)
)py",
       "main",
       {},
       "test.py:5:9: error: `return` inside a kernel, a kernel loop or a runtime branch is not "
       "supported; assign a T.alloc_var inside and return it after"},

      {"BreakInParallelLoop",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            break
)py",
       "main",
       {},
       "test.py:6:13: error: `break` inside a T.Parallel loop is not supported"},

      {"IntegerTrueDivision",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            A[i / 2] = 0.0
)py",
       "main",
       {},
       "test.py:6:17: error: `/` between integer runtime values is ambiguous (as in TileLang); "
       "use `//` for floor division, or make an operand a float"},

      {"SliceStep",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((8,), "float32")
        T.copy(A[0:16:2], S)
)py",
       "main",
       {},
       "test.py:6:18: error: buffer slices with a step other than 1 are not supported"},

      {"RuntimeSliceExtent",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((16,), "float32")
        for i in T.serial(16):
            T.copy(A[0:i], S)
)py",
       "main",
       {},
       "test.py:7:22: error: the extent of this slice, `i`, depends on runtime values; region "
       "extents must be known when the kernel is launched"},

      {"GeneratorReturnsNothing",
       R"py(import tilelang.language as T
def f(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        pass
)py",
       "f",
       {{"n", "4"}},
       "test.py:2:5: error: `f` must return the @T.prim_func it defines, but it returned "
       "nothing"},

      {"EmptyOutsideEager",
       R"py(import tilelang.language as T
def f(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        B = T.empty((n,), "float32")
    return main
)py",
       "f",
       {{"n", "4"}},
       "test.py:5:13: error: T.empty is only supported in the body of an eager @tilelang.jit "
       "function, outside T.Kernel"},

      {"ClassWithMetaclass",
       R"py(import tilelang.language as T
def f():
    class Config(metaclass=type):
        block = 64
)py",
       "f",
       {},
       "test.py:3:18: error: class `Config`: class keywords (metaclass=, ...) are not "
       "supported"},

      {"TryStatement",
       R"py(import tilelang.language as T
def f():
    try:
        x = 1
    except Exception:
        x = 2
)py",
       "f",
       {},
       "test.py:3:5: error: try statements are not supported in kernel-building code"},

      {"LetUsedOutsideItsLoop",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(16):
            v = A[i] * 2.0
        A[0] = v
)py",
       "main",
       {},
       "test.py:7:16: error: `v` was bound inside a loop, branch or kernel body and is used "
       "outside it; use T.alloc_var to carry a value out"},

      {"RuntimeAssert",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        assert A[0] > 0.0
)py",
       "main",
       {},
       "test.py:5:9: error: an assert on a runtime value is not supported; tilec checks asserts "
       "at staging time, and at launch those that read only dynamic sizes"},

      {"EagerTensorUsedBeforeAnnotation",
       R"py(import tilelang.language as T
def add(A, block: int = 64):
    N = T.const("N")
    x = A
    A: T.Tensor((N,), "float32")
)py",
       "add",
       {},
       "test.py:4:9: error: tensor parameter `A` is used before its annotation `A: "
       "T.Tensor(shape, dtype)`"},

      {"EagerTensorAnnotatedTwice",
       R"py(import tilelang.language as T
def add(A, block: int = 64):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    A: T.Tensor((N,), "float16")
)py",
       "add",
       {},
       "test.py:5:5: error: tensor parameter `A` is annotated twice"},

      {"EagerAnnotationOfNonParameter",
       R"py(import tilelang.language as T
def add(A, block: int = 64):
    N = T.const("N")
    A: T.Tensor((N,), "float32")
    C: T.Tensor((N,), "float32")
)py",
       "add",
       {},
       "test.py:5:5: error: `C: T.Tensor(...)` declares a tensor parameter, but `add` has no "
       "parameter `C`"},

      {"KernelWithFourDims",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, 2, 3, 4) as bx:
        pass
)py",
       "main",
       {},
       "test.py:4:10: error: T.Kernel takes 0 to 3 grid extents, got 4"},

      {"StoreBufferIntoElement",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = B
)py",
       "main",
       {},
       "test.py:5:9: error: cannot store a buffer `B` into an element of `A`; use T.copy"},

      {"RaiseExecuted",
       R"py(import tilelang.language as T
def f(dtype="int8"):
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"unsupported dtype {dtype}")
)py",
       "f",
       {},
       "test.py:4:9: error: the kernel-building code raised ValueError: unsupported dtype int8"},

      {"AtomicAddReturnPrev",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        T.atomic_add(A, B, return_prev=True)
)py",
       "main",
       {},
       "test.py:5:28: error: T.atomic_add(return_prev=True) takes one element, not a tile: the "
       "old value is a scalar"},

      {"StagingOverflow",
       R"py(import tilelang.language as T
def f():
    big = 2 ** 70
)py",
       "f",
       {},
       "test.py:3:13: error: integer overflow in **"},

      {"IteratingASet",
       R"py(import tilelang.language as T
def f():
    s = [x for x in {1, 2}]
)py",
       "f",
       {},
       "test.py:3:21: error: iterating a set is not supported: Python's order is the hash "
       "order, which tilec does not reproduce; iterate sorted(...) instead"},

      {"UnknownDtype",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((16,), "float17")
)py",
       "main",
       {},
       "test.py:5:35: error: unknown dtype 'float17' for the dtype of T.alloc_shared"},

      {"ImportSource",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        T.import_source(None)
        T.import_source("__device__ void f() {}")
)py",
       "main",
       {},
       "test.py:6:9: error: T.import_source (hand-written CUDA inside a kernel) is not "
       "supported: tilec compiles only what it can check against its interpreter; write the "
       "operation in TileLang (for dequantization, the element-wise form of the kernel's slow "
       "path)"},

      {"FourDimThreads",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=(32, 4, 1, 1)) as bx:
        pass
)py",
       "main",
       {},
       "test.py:4:22: error: threads must be an int or a tuple of 1 to 3 ints"},

      {"ThreadBindingDimension",
       R"py(import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=(32, 4)) as bx:
        t = T.get_thread_binding(3)
)py",
       "main",
       {},
       "test.py:5:13: error: T.get_thread_binding(3): the dimension is 0, 1 or 2"},

      {"PrimFuncParamWithoutAnnotation",
       R"py(import tilelang.language as T
@T.prim_func
def main(A, B: T.Tensor((16,), "float32")):
    pass
)py",
       "main",
       {},
       "test.py:3:10: error: parameter `A` of the @T.prim_func `main` needs an annotation: "
       "T.Tensor(shape, dtype) or a scalar type such as T.int32"},

      {"TupleIndexOutOfRange",
       R"py(import tilelang.language as T
def f():
    sizes = (16, 32)
    x = sizes[2]
)py",
       "f",
       {},
       "test.py:4:15: error: tuple index 2 is out of range (length 2)"},

      {"WrongArgumentCount",
       R"py(import tilelang.language as T
def f():
    def helper(a, b):
        return a + b
    x = helper(1)
)py",
       "f",
       {},
       "test.py:5:9: error: `helper` is missing the argument 'b'"},

      {"RecursionLimit",
       R"py(import tilelang.language as T
def f():
    def g(n):
        return g(n + 1)
    g(0)
)py",
       "f",
       {},
       "test.py:4:16: error: call depth exceeds 100 (unbounded recursion?)"},

      {"SyntaxError",
       R"py(import tilelang.language as T
def f(:
    pass
)py",
       "f",
       {},
       nullptr},
  };
  return kCases;
}

class Diagnostics : public ::testing::TestWithParam<size_t> {};

TEST_P(Diagnostics, FirstLine) {
  const Case& c = Cases()[GetParam()];
  SourceFile file{"test.py", c.source};
  Bindings b;
  for (const auto& [k, v] : c.bindings) b.Set(k, v);
  absl::StatusOr<ir::Program> p = CompileTileLang(file, c.function, b);
  ASSERT_FALSE(p.ok()) << c.name << " compiled";
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  std::string first = FirstLine(std::string(p.status().message()));
  if (c.first_line) {
    EXPECT_EQ(first, c.first_line) << c.name << "\n" << p.status().message();
  } else {
    // Syntax errors come from the parser; only the location's line is checked.
    EXPECT_EQ(first.rfind("test.py:2:", 0), 0u) << first;
    EXPECT_NE(first.find(": error: "), std::string::npos) << first;
  }
  // The diagnostic shows the source line and a caret under the column.
  std::string msg(p.status().message());
  EXPECT_NE(msg.find("\n"), std::string::npos);
  EXPECT_NE(msg.find("^"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(All, Diagnostics, ::testing::Range<size_t>(0, Cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(Cases()[info.param].name);
                         });

TEST(Diagnostics, AtLeastThirtyCases) { EXPECT_GE(Cases().size(), 30u); }

TEST(Diagnostics, MissingFunction) {
  SourceFile file{"k.py", "import tilelang.language as T\ndef a():\n    pass\n"};
  absl::StatusOr<ir::Program> p = CompileTileLang(file, "b", Bindings{});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(FirstLine(std::string(p.status().message())),
            "k.py: error: no top-level function named `b` (the file defines: a)");
}

TEST(Diagnostics, UnreadableBindingValue) {
  SourceFile file{"k.py", "import tilelang.language as T\ndef f(block):\n    pass\n"};
  Bindings b;
  b.Set("block", "(64,");
  absl::StatusOr<ir::Program> p = CompileTileLang(file, "f", b);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(FirstLine(std::string(p.status().message()))
                .rfind("k.py: error: cannot read -D block=(64,: ", 0),
            0u)
      << p.status().message();
}

}  // namespace
}  // namespace tilec::frontend
