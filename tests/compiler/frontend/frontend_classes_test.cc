// Python classes at the staging level: classes and dataclasses describing
// configurations, local classes and callable objects, super() in methods,
// and the class forms tilec refuses.
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/printer.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/frontend_test_util.h"

namespace tilec::frontend {
namespace {

using test_util::ConstShape;
using test_util::ErrorOf;
using test_util::Ok;

constexpr char kClassFile[] = R"py(
from dataclasses import dataclass
from typing import Optional


@dataclass
class Tiles:
    block_M: int = 64
    block_N: int = 32
    dtype: str = "float16"
    note: Optional[str] = None

    def __post_init__(self):
        self.area = self.block_M * self.block_N

    def count(self, M, N):
        return T.ceildiv(M, self.block_M) * T.ceildiv(N, self.block_N)


class Base:
    SCALE = 2
    created = 0

    def __init__(self, threads):
        self.threads = threads
        Base.created += 1

    @property
    def warps(self):
        return self.threads // 32

    @staticmethod
    def twice(x):
        return 2 * x

    @classmethod
    def make(cls, warps):
        return cls(warps * 32)


class Derived(Base):
    SCALE = 3

    def scaled(self, x):
        return x * self.SCALE + self.twice(self.warps)


def f(M, N):
    t = Tiles(block_N=16)
    d = Derived.make(4)
    assert isinstance(d, Base) and isinstance(d, Derived) and not isinstance(t, Base)
    assert getattr(t, "missing", 7) == 7 and hasattr(d, "warps") and not hasattr(d, "nope")
    assert Base.created == 1 and type_name(d) == "Derived"
    @T.prim_func
    def main(A: T.Tensor((M, N), t.dtype), B: T.Tensor((t.count(M, N), d.scaled(10)), "float32")):
        with T.Kernel(t.count(M, N), threads=d.threads) as bx:
            S = T.alloc_shared((t.block_M, t.block_N), t.dtype)
            T.fill(S, t.area)
    return main


def type_name(x):
    return x.__class__.__name__
)py";

TEST(FrontendClasses, ClassesAndDataclasses) {
  ir::Program p = Ok(kClassFile, "f", {{"M", "100"}, {"N", "40"}});
  ASSERT_EQ(p.params.size(), 2u);
  EXPECT_EQ(p.params[0].tensor->dtype, ir::DType::kFloat16);
  // ceil(100/64) * ceil(40/16) = 2 * 3 blocks; 10 * 3 + 2 * (128 // 32) = 38.
  EXPECT_EQ(ConstShape(p.params[1].tensor), (std::vector<int64_t>{6, 38}));
  auto allocs = test_util::Find<ir::AllocateNode>(p);
  ASSERT_FALSE(allocs.empty());
  EXPECT_EQ(ConstShape(allocs[0]->buffer), (std::vector<int64_t>{64, 16}));
  auto kernels = test_util::Find<ir::KernelNode>(p);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(ir::AsConstInt(kernels[0]->threads), 128);
}

TEST(FrontendClasses, LocalClassesAndCallableObjects) {
  constexpr char kSrc[] = R"py(
def f(n):
    class Acc:
        def __init__(self):
            self.total = 0
        def __call__(self, x):
            self.total += x
            return self
    acc = Acc()
    for k in range(n):
        acc(k)
    acc.total *= 2
    @T.prim_func
    def main(A: T.Tensor((acc.total,), "float32")):
        pass
    return main
)py";
  // 2 * (0 + 1 + 2 + 3) = 12.
  EXPECT_EQ(ConstShape(Ok(kSrc, "f", {{"n", "4"}}).params[0].tensor)[0], 12);
}

TEST(FrontendClasses, UnsupportedClassFormsAreRefused) {
  constexpr char kEnum[] = R"py(
import enum
class Mode(enum.Enum):
    A = 1
def f():
    return Mode.A
)py";
  EXPECT_EQ(ErrorOf(kEnum, "f"), "test.py:6:17: error: `enum.Enum` is not supported by tilec");
  constexpr char kDecorated[] = R"py(
import functools
@functools.total_ordering
class C:
    pass
def f():
    return C()
)py";
  EXPECT_EQ(ErrorOf(kDecorated, "f"),
            "test.py:6:2: error: class `C`: only the @dataclass decorator is supported on classes");
  constexpr char kSetter[] = R"py(
class C:
    @property
    def x(self):
        return 1
    @x.setter
    def x(self, v):
        pass
def f():
    return C()
)py";
  EXPECT_EQ(ErrorOf(kSetter, "f"), "test.py:9:6: error: property setters are not supported");
  constexpr char kArgs[] = R"py(
class C:
    pass
def f():
    return C(1)
)py";
  EXPECT_EQ(ErrorOf(kArgs, "f"),
            "test.py:8:12: error: `C()` takes no arguments (it has no __init__)");
}

TEST(FrontendClasses, SuperInMethods) {
  constexpr char kSrc[] = R"py(
class Base:
    def __init__(self, block):
        self.block = block

    def threads(self):
        return self.block * 2

    @classmethod
    def kind(cls):
        return cls.__name__


class Wide(Base):
    def __init__(self, block):
        super().__init__(block * 2)

    def threads(self):
        return super().threads() + 32

    def label(self):
        return super().kind()


def f():
    w = Wide(32)
    assert w.label() == "Wide"
    @T.prim_func
    def main(A: T.Tensor((w.block, w.threads()), "float32")):
        pass
    return main
)py";
  // block 64; threads 64 * 2 + 32 = 160.
  EXPECT_EQ(ConstShape(Ok(kSrc, "f").params[0].tensor), (std::vector<int64_t>{64, 160}));
  constexpr char kOutside[] = R"py(
def f():
    return super()
)py";
  EXPECT_EQ(ErrorOf(kOutside, "f"),
            "test.py:6:12: error: super() is only supported without arguments inside a method");
}

}  // namespace
}  // namespace tilec::frontend
