// T.clamp, T.any_of, T.all_of, T.atomic_max and T.atomic_min: what the
// frontend builds, checked on the reference interpreter against values
// computed here; atomic max/min also through the wire form and the hash.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/proto_convert.h"
#include "gtest/gtest.h"
#include "tests/compiler/frontend/frontend_test_util.h"

namespace tilec::frontend {
namespace {

using test_util::Build;
using test_util::Ok;

constexpr uint64_t kSeed = 1125;

constexpr char kClamp[] = R"py(
def clamp(M, N, lo, hi, block_M=16, block_N=16, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                r = by * block_M + i
                c = bx * block_N + j
                if r < M and c < N:
                    B[r, c] = T.clamp(A[r, c], lo, hi)
                    C[r, c] = T.clamp(r - c, -3, 5)
    return main
)py";

TEST(FrontendMathOps, ClampMatchesReferenceAndKeepsNaN) {
  const int64_t M = 21, N = 19;
  const double lo = -0.5, hi = 0.25;
  ir::Program p =
      Ok(kClamp, "clamp",
         {{"M", std::to_string(M)}, {"N", std::to_string(N)}, {"lo", "-0.5"}, {"hi", "0.25"}});
  ASSERT_TRUE(p.body);
  std::cout << "seed " << kSeed << "\n";
  absl::StatusOr<std::vector<interp::Tensor>> args = interp::MakeInputs(p, {}, kSeed);
  ASSERT_TRUE(args.ok()) << args.status();
  (*args)[0].SetDouble(5, std::numeric_limits<double>::quiet_NaN());
  const interp::Tensor a = (*args)[0];
  ASSERT_TRUE(interp::RunProgram(p, *args).ok());
  for (int64_t k = 0; k < M * N; ++k) {
    double x = a.GetDouble(k);
    double got = (*args)[1].GetDouble(k);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << k;
      continue;
    }
    // lo and hi are exact in float16, so the clamp is exact.
    EXPECT_EQ(got, std::min(std::max(x, lo), hi)) << "element " << k;
    int64_t r = k / N, c = k % N;
    EXPECT_EQ((*args)[2].GetInt(k), std::min<int64_t>(std::max<int64_t>(r - c, -3), 5));
  }
}

TEST(FrontendMathOps, ClampOfStagingNumbersFolds) {
  constexpr char kSrc[] = R"py(
def f():
    @T.prim_func
    def main(A: T.Tensor((T.clamp(100, 1, 64), T.clamp(-2, 3, 8)), "float32")):
        pass
    return main
)py";
  ir::Program p = Ok(kSrc, "f");
  ASSERT_FALSE(p.params.empty());
  EXPECT_EQ(test_util::ConstShape(p.params[0].tensor), (std::vector<int64_t>{64, 3}));
}

constexpr char kAnyAll[] = R"py(
def any_all(M, block_M=8):
    @T.prim_func
    def main(Mask: T.Tensor((M, 4), "bool"), B: T.Tensor((M,), "int32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i in T.Parallel(block_M):
                r = bx * block_M + i
                if r < M:
                    B[r] = T.if_then_else(T.any_of(Mask[r, 1:4]), 1, 0) + 2 * T.if_then_else(T.all_of(Mask[r, :]), 1, 0)
    return main
)py";

TEST(FrontendMathOps, AnyOfAllOfMatchReference) {
  const int64_t M = 37;
  ir::Program p = Ok(kAnyAll, "any_all", {{"M", std::to_string(M)}});
  ASSERT_TRUE(p.body);
  std::cout << "seed " << kSeed << "\n";
  absl::StatusOr<std::vector<interp::Tensor>> args = interp::MakeInputs(p, {}, kSeed);
  ASSERT_TRUE(args.ok()) << args.status();
  const interp::Tensor mask = (*args)[0];
  ASSERT_TRUE(interp::RunProgram(p, *args).ok());
  int seen[4] = {0, 0, 0, 0};
  for (int64_t r = 0; r < M; ++r) {
    bool any = false, all = true;
    for (int64_t c = 0; c < 4; ++c) {
      bool v = mask.GetInt(r * 4 + c) != 0;
      if (c >= 1) any = any || v;
      all = all && v;
    }
    int64_t want = (any ? 1 : 0) + 2 * (all ? 1 : 0);
    EXPECT_EQ((*args)[1].GetInt(r), want) << "row " << r;
    ++seen[want];
  }
  // The random mask exercises both answers of any_of.
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1] + seen[3], 0);
}

TEST(FrontendMathOps, AnyOfRefusals) {
  constexpr char kScalar[] = R"py(
@T.prim_func
def main(A: T.Tensor((4,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = T.if_then_else(T.any_of(A[0]), 1, 0)
)py";
  absl::StatusOr<ir::Program> p = Build(kScalar, "main");
  ASSERT_FALSE(p.ok());
  std::string m(p.status().message());
  EXPECT_EQ(m.substr(0, m.find('\n')),
            "test.py:8:40: error: T.any_of() needs a buffer or a buffer region, got element of "
            "buffer `A`");
  constexpr char kHuge[] = R"py(
@T.prim_func
def main(A: T.Tensor((4096,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = T.if_then_else(T.all_of(A), 1, 0)
)py";
  p = Build(kHuge, "main");
  ASSERT_FALSE(p.ok());
  m = std::string(p.status().message());
  EXPECT_EQ(m.substr(0, m.find('\n')),
            "test.py:8:40: error: T.all_of() of more than 1024 elements is not supported");
}

constexpr char kExtrema[] = R"py(
def row_extrema(M, N, block_N=16, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Mx: T.Tensor((M,), dtype), Mn: T.Tensor((M,), dtype),
             Ci: T.Tensor((M,), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), M, threads=32) as (bx, by):
            for j in T.Parallel(block_N):
                c = bx * block_N + j
                if c < N:
                    T.atomic_max(Mx[by], A[by, c])
                    T.atomic_min(Mn[by], A[by, c], memory_order="relaxed")
                    T.atomic_max(Ci[by], T.cast(A[by, c] * 100, "int32"))
    return main
)py";

TEST(FrontendMathOps, AtomicMaxMinMatchReference) {
  const int64_t M = 9, N = 45;
  ir::Program p = Ok(kExtrema, "row_extrema", {{"M", std::to_string(M)}, {"N", std::to_string(N)}});
  ASSERT_TRUE(p.body);
  const std::string text = ir::Print(p);
  EXPECT_TRUE(test_util::Contains(text, "T.atomic_max(Mx[by], A[by, c])")) << text;
  EXPECT_TRUE(test_util::Contains(text, "T.atomic_min(Mn[by], A[by, c])")) << text;
  std::cout << "seed " << kSeed << "\n";
  absl::StatusOr<std::vector<interp::Tensor>> args = interp::MakeInputs(p, {}, kSeed);
  ASSERT_TRUE(args.ok()) << args.status();
  const std::vector<interp::Tensor> before = *args;
  ASSERT_TRUE(interp::RunProgram(p, *args).ok());
  for (int64_t r = 0; r < M; ++r) {
    double mx = before[1].GetDouble(r), mn = before[2].GetDouble(r);
    int64_t ci = before[3].GetInt(r);
    for (int64_t c = 0; c < N; ++c) {
      double x = before[0].GetDouble(r * N + c);
      mx = std::max(mx, x);
      mn = std::min(mn, x);
      ci = std::max<int64_t>(ci, static_cast<int64_t>(static_cast<float>(x) * 100.0f));
    }
    EXPECT_EQ((*args)[1].GetDouble(r), mx) << "row " << r;
    EXPECT_EQ((*args)[2].GetDouble(r), mn) << "row " << r;
    EXPECT_EQ((*args)[3].GetInt(r), ci) << "row " << r;
  }
}

TEST(FrontendMathOps, AtomicOpSurvivesTheWireAndChangesTheHash) {
  ir::Program p = Ok(kExtrema, "row_extrema", {{"M", "4"}, {"N", "8"}});
  absl::StatusOr<ir::Program> back = ir::FromProto(ir::ToProto(p));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ir::Print(*back), ir::Print(p));
  EXPECT_EQ(ir::ProgramHash(*back), ir::ProgramHash(p));
  // The same kernel with max and min swapped hashes differently.
  std::string swapped = kExtrema;
  swapped.replace(swapped.find("T.atomic_max(Mx"), 12, "T.atomic_min");
  ir::Program q = Ok(swapped, "row_extrema", {{"M", "4"}, {"N", "8"}});
  EXPECT_NE(ir::ProgramHash(q), ir::ProgramHash(p));
}

TEST(FrontendMathOps, AtomicMaxMinRefusals) {
  struct Case {
    const char* body;
    const char* first_line;
  };
  const Case cases[] = {
      {"        T.atomic_max(3, 1.0)\n",
       "test.py:8:22: error: T.atomic_max needs a buffer element or a tile as its destination, "
       "got int"},
      {"        T.atomic_min(H, A)\n",
       "test.py:8:22: error: T.atomic_min into int8 (`H`) is not supported; the 16-, 32- and "
       "64-bit floats and the 32- and 64-bit integers are"},
      {"        T.atomic_min(H[0], 1.0)\n",
       "test.py:8:22: error: T.atomic_min into int8 (`H`) is not supported; the 16-, 32- and "
       "64-bit floats and the 32- and 64-bit integers are"},
      {"        T.atomic_max(A, B, return_prev=True)\n",
       "test.py:8:28: error: T.atomic_max(return_prev=True) takes one element, not a tile: the "
       "old value is a scalar"},
      {"        L = T.alloc_local((4,), \"float32\")\n        T.atomic_max(L[0], 1.0)\n",
       "test.py:9:22: error: T.atomic_max needs a global or shared destination; `L` is a local "
       "buffer"},
  };
  for (const Case& c : cases) {
    std::string src = std::string(R"py(
@T.prim_func
def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32"), H: T.Tensor((4,), "int8")):
    with T.Kernel(1, threads=32) as bx:
)py") + c.body;
    absl::StatusOr<ir::Program> p = Build(src, "main");
    ASSERT_FALSE(p.ok()) << c.body;
    std::string m(p.status().message());
    EXPECT_EQ(m.substr(0, m.find('\n')), c.first_line);
  }
}

constexpr char kDequant[] = R"py(
import tvm
from tvm import tir


def _unpack(nbit, val, pos, dtype):
    assert val.dtype == "uint8" and isinstance(pos, tir.PrimExpr) and not isinstance(nbit, tir.PrimExpr)
    mask = tir.const((1 << nbit) - 1, "uint8")
    return ((val >> (pos * nbit).astype("uint8")) & mask).astype(dtype)


def dequant(M, N, num_bits=4, block_M=16, storage="uint8"):
    per = tvm.DataType(storage).bits // num_bits

    @T.prim_func
    def main(B: T.Tensor((M, N // per), storage), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i, j in T.Parallel(block_M, N):
                r = bx * block_M + i
                if r < M:
                    C[r, j] = _unpack(num_bits, B[r, j // per], j % per, "float16")
    return main
)py";

TEST(FrontendMathOps, TirHelpersCalledFromKernelCode) {
  const int64_t M = 19, N = 8;
  ir::Program p = Ok(kDequant, "dequant", {{"M", std::to_string(M)}, {"N", std::to_string(N)}});
  ASSERT_TRUE(p.body);
  std::cout << "seed " << kSeed << "\n";
  absl::StatusOr<std::vector<interp::Tensor>> args = interp::MakeInputs(p, {}, kSeed);
  ASSERT_TRUE(args.ok()) << args.status();
  // Random bytes over the whole range, so both nibbles vary.
  uint64_t x = kSeed;
  for (int64_t k = 0; k < (*args)[0].num_elements(); ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    (*args)[0].SetInt(k, static_cast<int64_t>(x >> 56));
  }
  const interp::Tensor packed = (*args)[0];
  ASSERT_TRUE(interp::RunProgram(p, *args).ok());
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t j = 0; j < N; ++j) {
      int64_t byte = packed.GetInt(r * (N / 2) + j / 2);
      EXPECT_EQ((*args)[1].GetDouble(r * N + j), static_cast<double>((byte >> (4 * (j % 2))) & 15))
          << r << ", " << j;
    }
  }
}

TEST(FrontendMathOps, TirConstDefaultsAndRefusals) {
  constexpr char kSrc[] = R"py(
from tvm import tir
@T.prim_func
def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = tir.const(1.5) + tir.Cast("float32", tir.const(2, "int8"))
        B[0] = tir.if_then_else(A[1] > 0, tir.const(7), tir.floordiv(B[1], 2))
        B[1] = tir.Select(A[2] > 0, tir.Max(B[2], 3), tir.Min(B[3], 1))
)py";
  ir::Program p = Ok(kSrc, "main");
  std::string text = ir::Print(p);
  // The int8 literal cast to float32 folds.
  EXPECT_TRUE(test_util::Contains(text, "A[0] = 1.5 + 2.0")) << text;
  EXPECT_TRUE(test_util::Contains(text, "B[0] = T.if_then_else(A[1] > 0.0, 7, B[1] // 2)")) << text;
  EXPECT_TRUE(test_util::Contains(
      text, "B[1] = T.if_then_else(A[2] > 0.0, T.max(B[2], 3), T.min(B[3], 1))"))
      << text;
  constexpr char kBad[] = R"py(
from tvm import tir
@T.prim_func
def main(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        A[0] = tir.const(A[1])
)py";
  absl::StatusOr<ir::Program> bad = Build(kBad, "main");
  ASSERT_FALSE(bad.ok());
  std::string m(bad.status().message());
  EXPECT_EQ(m.substr(0, m.find('\n')),
            "test.py:9:26: error: tvm.tir.const() needs a number known at staging time, got "
            "element of buffer `A`");
}

TEST(FrontendMathOps, FragmentLayoutHintsAreIgnoredOnFragmentsOnly) {
  constexpr char kOk[] = R"py(
@T.prim_func
def main(A: T.Tensor((8, 64), "float32")):
    with T.Kernel(1, threads=64) as bx:
        x = T.alloc_fragment((8, 64), "float32")
        T.annotate_layout({x: T.Fragment(x.shape, forward_thread_fn=lambda i, j: j)})
        T.copy(A, x)
        T.copy(x, A)
)py";
  ir::Program p = Ok(kOk, "main");
  EXPECT_TRUE(test_util::Find<ir::AnnotateLayoutNode>(p).empty());
  // On a local buffer (every thread keeps a copy, with the same values).
  constexpr char kLocal[] = R"py(
@T.prim_func
def main(A: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_local((1,), "float32")
        T.annotate_layout({s: T.Fragment(s.shape, forward_thread_fn=lambda i: i)})
        s[0] = A[0] * 2.0
        A[0] = s[0]
)py";
  p = Ok(kLocal, "main");
  EXPECT_TRUE(test_util::Find<ir::AnnotateLayoutNode>(p).empty());
  constexpr char kShared[] = R"py(
@T.prim_func
def main(A: T.Tensor((8, 64), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((8, 64), "float32")
        T.annotate_layout({s: T.Fragment(s.shape, forward_thread_fn=lambda i, j: j)})
)py";
  absl::StatusOr<ir::Program> bad = Build(kShared, "main");
  ASSERT_FALSE(bad.ok());
  std::string m(bad.status().message());
  EXPECT_EQ(m.substr(0, m.find('\n')),
            "test.py:9:27: error: T.annotate_layout: T.Fragment(...) is for fragments, but `s` is "
            "a shared buffer");
}

constexpr char kTileExtrema[] = R"py(
def tile_extrema(K, M, N, block_M=16, block_N=16):
    @T.prim_func
    def main(A: T.Tensor((K, M, N), "float32"), Mx: T.Tensor((M, N), "float32"),
             Mn: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), K, threads=64) as (bx, by, bz):
            frag = T.alloc_fragment((block_M, block_N), "float32")
            T.copy(A[bz, bx * block_M:(bx + 1) * block_M, by * block_N:(by + 1) * block_N], frag)
            T.atomic_max(Mx[bx * block_M:(bx + 1) * block_M, by * block_N:(by + 1) * block_N], frag)
            T.atomic_min(Mn[bx * block_M, by * block_N], frag)
    return main
)py";

TEST(FrontendMathOps, TileAtomicMaxMinMatchReference) {
  const int64_t K = 3, M = 21, N = 18;
  ir::Program p =
      Ok(kTileExtrema, "tile_extrema",
         {{"K", std::to_string(K)}, {"M", std::to_string(M)}, {"N", std::to_string(N)}});
  ASSERT_TRUE(p.body);
  std::cout << "seed " << kSeed << "\n";
  absl::StatusOr<std::vector<interp::Tensor>> args = interp::MakeInputs(p, {}, kSeed);
  ASSERT_TRUE(args.ok()) << args.status();
  const std::vector<interp::Tensor> before = *args;
  ASSERT_TRUE(interp::RunProgram(p, *args).ok());
  for (int64_t e = 0; e < M * N; ++e) {
    double mx = before[1].GetDouble(e);
    int64_t mn = before[2].GetInt(e);
    for (int64_t k = 0; k < K; ++k) {
      double a = before[0].GetDouble(k * M * N + e);
      mx = std::max(mx, a);
      // The float source converts to the int32 destination (truncation).
      mn = std::min<int64_t>(mn, static_cast<int64_t>(a));
    }
    EXPECT_EQ((*args)[1].GetDouble(e), mx) << "element " << e;
    EXPECT_EQ((*args)[2].GetInt(e), mn) << "element " << e;
  }
}

}  // namespace
}  // namespace tilec::frontend
