// Conformance: atomics and warp reductions in every dtype they take.
// - T.atomic_add / max / min into bfloat16, uint32, int64 and uint64 (as
//   well as float16/32/64 and int32), tile and one-element forms; a
//   one-element update outside the destination tensor is dropped, as a store
//   is (upstream's split-K GEMM adds its tile element by element with no
//   guard of its own);
// - T.reduce_sum / max / min / absmax of int64, uint64 and float64
//   fragments whose rows span lanes: the values cross lanes as 64 bits
//   (uint64 once went through a 32-bit shuffle and lost its high half);
// - return_prev=True: the call's value is the element's value before the
//   update (one element, in per-thread code or a T.Parallel nest);
// - a float32 T.gemm (the CUDA-core path) on a slice X[b, :, :] of a 3-D
//   shared buffer.
// The interpreter is checked against references computed here, the emitted
// code on the emulator against the interpreter (sm_80, sm_90a, gfx942).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T

# The tile form updates B (one contribution per element); the one-element
# form folds every row into O. Columns past N are left to the bounds rule.
def atomics(M, N, dtype, op, fold=True):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), O: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(M, 16), T.ceildiv(N, 32), threads=64) as (bx, by):
            F = T.alloc_fragment((16, 32), dtype)
            T.copy(A[bx * 16, by * 32], F)
            if op == "add":
                T.atomic_add(B[bx * 16, by * 32], F)
            elif op == "max":
                T.atomic_max(B[bx * 16, by * 32], F)
            else:
                T.atomic_min(B[bx * 16, by * 32], F)
            if fold:
                for i, j in T.Parallel(16, 32):
                    if bx * 16 + i < M:
                        if op == "add":
                            T.atomic_add(O[by * 32 + j], F[i, j])
                        elif op == "max":
                            T.atomic_max(O[by * 32 + j], F[i, j])
                        else:
                            T.atomic_min(O[by * 32 + j], F[i, j])
    return main

def reduce_rows(M, N, dtype, op):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=128):
            F = T.alloc_fragment((M, N), dtype)
            R = T.alloc_fragment((M,), dtype)
            T.copy(A, F)
            if op == "sum":
                T.reduce_sum(F, R, dim=1)
            elif op == "max":
                T.reduce_max(F, R, dim=1)
            elif op == "min":
                T.reduce_min(F, R, dim=1)
            else:
                T.reduce_absmax(F, R, dim=1)
            T.copy(R, B)
    return main

def gemm_slice(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((2, M, K), "float32")
            B_s = T.alloc_shared((2, K, N), "float32")
            C_l = T.alloc_fragment((M, N), "float32")
            T.clear(C_l)
            T.copy(A, A_s[1, :, :])
            T.copy(B, B_s[1, :, :])
            T.gemm(A_s[1, :, :], B_s[1, :, :], C_l)
            T.copy(C_l, C)
    return main

# return_prev=True: each element once in a T.Parallel nest (the old values
# are B's), and per-thread slot claiming whose filled slots do not depend on
# the order threads run in.
def atomic_prev(M, N, op):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
             Old: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
            for i, j in T.Parallel(16, N):
                if bx * 16 + i < M:
                    if op == "add":
                        Old[bx * 16 + i, j] = T.atomic_add(B[bx * 16 + i, j], A[bx * 16 + i, j],
                                                           return_prev=True)
                    else:
                        Old[bx * 16 + i, j] = T.atomic_max(B[bx * 16 + i, j], A[bx * 16 + i, j],
                                                           return_prev=True)
    return main

def claim_slots(T_):
    @T.prim_func
    def main(Count: T.Tensor((4,), "int32"), Slots: T.Tensor((4, T_), "int32")):
        with T.Kernel(1, threads=T_):
            tx = T.get_thread_binding()
            if tx % 3 != 0:
                pos = T.atomic_add(Count[tx % 4], 1, return_prev=True)
                Slots[tx % 4, pos] = 1
    return main

def prev_tile(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            T.atomic_add(B, A, return_prev=True)
    return main

def prev_block(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            B[1] = T.atomic_add(A[0], 1.0, return_prev=True)
    return main

def atomic_int8(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int8")):
        with T.Kernel(1, threads=32):
            T.atomic_add(A[0], 1)
    return main
)";

// a op b on the integer dtype t, on its bits (adds wrap).
uint64_t IntCombine(const std::string& op, DType t, uint64_t a, uint64_t b) {
  const int bits = ir::DTypeBits(t);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (op == "add" || op == "sum") return (a + b) & mask;
  bool less;  // a < b in t
  if (ir::IsSigned(t)) {
    const int64_t sa = static_cast<int64_t>(a << (64 - bits)) >> (64 - bits);
    const int64_t sb = static_cast<int64_t>(b << (64 - bits)) >> (64 - bits);
    less = sa < sb;
  } else {
    less = a < b;
  }
  return (op == "max") == less ? b : a;
}

void ExpectBits(const interp::Tensor& t, const std::vector<uint64_t>& want,
                const std::string& what) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size()));
  int bad = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.GetBits(i) == want[i]) continue;
    if (bad++ < 8) {
      ADD_FAILURE() << what << " element " << i << ": bits 0x" << std::hex << t.GetBits(i)
                    << ", expected 0x" << want[i] << std::dec;
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

void CheckIntAtomics(DType t, const std::string& op, uint64_t default_seed) {
  const int64_t m = 37, n = 40;
  const std::string name(ir::DTypeName(t));
  SCOPED_TRACE(name + " " + op);
  ir::Program p = Compile(kSource, "atomics",
                          {{"M", "37"}, {"N", "40"}, {"dtype", Quoted(name)}, {"op", Quoted(op)}});
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(t, {m, n}, seed), Random(t, {m, n}, seed + 1), Random(t, {n}, seed + 2)};
  std::vector<uint64_t> b(m * n), o(n);
  for (int64_t e = 0; e < m * n; ++e)
    b[e] = IntCombine(op, t, args[1].GetBits(e), args[0].GetBits(e));
  for (int64_t j = 0; j < n; ++j) {
    o[j] = args[2].GetBits(j);
    for (int64_t i = 0; i < m; ++i) o[j] = IntCombine(op, t, o[j], args[0].GetBits(i * n + j));
  }
  Interpret(p, args);
  ExpectBits(args[1], b, "B (tile form)");
  ExpectBits(args[2], o, "O (one element per row)");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceDTypes, AtomicsUInt32) {
  for (const char* op : {"add", "max", "min"}) CheckIntAtomics(DType::kUInt32, op, 20261201);
}
TEST(ConformanceDTypes, AtomicsInt64) {
  for (const char* op : {"add", "max", "min"}) CheckIntAtomics(DType::kInt64, op, 20261202);
}
TEST(ConformanceDTypes, AtomicsUInt64) {
  for (const char* op : {"add", "max", "min"}) CheckIntAtomics(DType::kUInt64, op, 20261203);
}

// bfloat16: the tile form adds once per element (B + A rounded once); max
// and min also fold every row into O (a selection, so exact in any order).
TEST(ConformanceDTypes, AtomicsBFloat16) {
  const int64_t m = 37, n = 40;
  for (const std::string op : {"add", "max", "min"}) {
    SCOPED_TRACE(op);
    const bool fold = op != "add";  // a fold of 37 bf16 sums depends on the order
    ir::Program p = Compile(kSource, "atomics",
                            {{"M", "37"},
                             {"N", "40"},
                             {"dtype", Quoted("bfloat16")},
                             {"op", Quoted(op)},
                             {"fold", fold ? "True" : "False"}});
    const uint64_t seed = Seed(20261204);
    Tensors args = {Random(DType::kBFloat16, {m, n}, seed),
                    Random(DType::kBFloat16, {m, n}, seed + 1),
                    Random(DType::kBFloat16, {n}, seed + 2)};
    auto pick = [&](double a, double b) {
      return op == "add" ? a + b : op == "max" ? std::max(a, b) : std::min(a, b);
    };
    std::vector<double> b(m * n), o(n);
    for (int64_t e = 0; e < m * n; ++e) b[e] = pick(args[1].GetDouble(e), args[0].GetDouble(e));
    for (int64_t j = 0; j < n; ++j) {
      o[j] = args[2].GetDouble(j);
      for (int64_t i = 0; fold && i < m; ++i) o[j] = pick(o[j], args[0].GetDouble(i * n + j));
    }
    Interpret(p, args);
    ExpectClose(args[1], b, interp::DefaultTolerance(DType::kBFloat16), "B (tile form)");
    ExpectClose(args[2], o, {}, "O (one element per row)");
    ExpectAllTargetsMatch(p, seed);
  }
}

TEST(ConformanceDTypes, ReturnPrevInAParallelNest) {
  const int64_t m = 37, n = 24;
  for (const std::string op : {"add", "max"}) {
    SCOPED_TRACE(op);
    ir::Program p = Compile(kSource, "atomic_prev", {{"M", "37"}, {"N", "24"}, {"op", Quoted(op)}});
    const uint64_t seed = Seed(20261209);
    Tensors args = {Random(DType::kFloat32, {m, n}, seed),
                    Random(DType::kFloat32, {m, n}, seed + 1), Zeros(DType::kFloat32, {m, n})};
    std::vector<double> b(m * n), old(m * n);
    for (int64_t e = 0; e < m * n; ++e) {
      old[e] = args[1].GetDouble(e);
      const float a = static_cast<float>(args[0].GetDouble(e)), x = static_cast<float>(old[e]);
      b[e] = op == "add" ? static_cast<double>(x + a) : std::max(x, a);
    }
    Interpret(p, args);
    ExpectClose(args[1], b, {}, "B");
    ExpectClose(args[2], old, {}, "the old values");
    ExpectAllTargetsMatch(p, seed);
  }
}

TEST(ConformanceDTypes, ReturnPrevClaimsSlotsPerThread) {
  ir::Program p = Compile(kSource, "claim_slots", {{"T_", "64"}});
  const uint64_t seed = Seed(20261210);
  Tensors args = {Zeros(DType::kInt32, {4}), Zeros(DType::kInt32, {4, 64})};
  Interpret(p, args);
  std::vector<int64_t> count(4, 0), slots(4 * 64, 0);
  for (int64_t t = 0; t < 64; ++t) {
    if (t % 3 != 0) slots[(t % 4) * 64 + count[t % 4]++] = 1;
  }
  ExpectEqualInts(args[0], count, "counts");
  ExpectEqualInts(args[1], slots, "claimed slots");
  EmulatorCheck check{.seed = seed, .zero = {"Count", "Slots"}};
  check.launch.check_uninit = true;
  ExpectTargetsMatch(p, check, kBothArchs);
}

TEST(ConformanceDTypes, ReturnPrevRefusals) {
  ExpectRefused(kSource, "prev_tile", {{"N", "8"}},
                "T.atomic_add(return_prev=True) takes one element, not a tile");
  ir::Program p = Compile(kSource, "prev_block", {{"N", "8"}});
  absl::StatusOr<cuda::CudaSource> src = ::tilec::testing::EmitFor(p, cuda::CudaArch::kSm90a);
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.status().message().find("T.atomic_add(return_prev=True) at block level"),
            std::string::npos)
      << src.status();
}

TEST(ConformanceDTypes, AtomicIntoInt8Refused) {
  ExpectRefused(kSource, "atomic_int8", {{"N", "4"}},
                "T.atomic_add into int8 (`A`) is not supported; the 16-, 32- and 64-bit floats "
                "and the 32- and 64-bit integers are");
}

void CheckReduce(DType t, const std::string& op, uint64_t default_seed) {
  const int64_t m = 8, n = 128;
  const std::string name(ir::DTypeName(t));
  SCOPED_TRACE(name + " " + op);
  ir::Program p = Compile(kSource, "reduce_rows",
                          {{"M", "8"}, {"N", "128"}, {"dtype", Quoted(name)}, {"op", Quoted(op)}});
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(t, {m, n}, seed), Zeros(t, {m})};
  Interpret(p, args);
  if (t == DType::kFloat64) {
    std::vector<double> want(m);
    for (int64_t r = 0; r < m; ++r) {
      double acc = op == "sum" ? 0 : op == "min" ? INFINITY : -INFINITY;
      for (int64_t c = 0; c < n; ++c) {
        const double x = args[0].GetDouble(r * n + c);
        acc = op == "sum"   ? acc + x
              : op == "max" ? std::max(acc, x)
              : op == "min" ? std::min(acc, x)
                            : std::max(acc, std::abs(x));
      }
      want[r] = acc;
    }
    ExpectClose(args[1], want, interp::DefaultTolerance(t));
  } else {
    std::vector<uint64_t> want(m);
    for (int64_t r = 0; r < m; ++r) {
      uint64_t acc = args[0].GetBits(r * n);
      for (int64_t c = 1; c < n; ++c) {
        uint64_t x = args[0].GetBits(r * n + c);
        if (op == "absmax") {
          if (ir::IsSigned(t) && static_cast<int64_t>(acc) < 0) acc = 0 - acc;
          if (ir::IsSigned(t) && static_cast<int64_t>(x) < 0) x = 0 - x;
        }
        acc = IntCombine(op == "absmax" ? "max" : op, t, acc, x);
      }
      want[r] = acc;
    }
    ExpectBits(args[1], want, "B");
  }
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceDTypes, WarpReductionsInt64) {
  for (const char* op : {"sum", "max", "min", "absmax"}) CheckReduce(DType::kInt64, op, 20261205);
}
TEST(ConformanceDTypes, WarpReductionsUInt64) {
  for (const char* op : {"sum", "max", "min", "absmax"}) CheckReduce(DType::kUInt64, op, 20261206);
}
TEST(ConformanceDTypes, WarpReductionsFloat64) {
  for (const char* op : {"sum", "max", "min", "absmax"}) {
    CheckReduce(DType::kFloat64, op, 20261207);
  }
}

TEST(ConformanceDTypes, Float32GemmOnASliceOfA3DSharedBuffer) {
  const int64_t m = 64, n = 64, k = 32;
  ir::Program p = Compile(kSource, "gemm_slice", {{"M", "64"}, {"N", "64"}, {"K", "32"}});
  const uint64_t seed = Seed(20261208);
  Tensors args = {Random(DType::kFloat32, {m, k}, seed), Random(DType::kFloat32, {k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, m, n, k), interp::DefaultTolerance(DType::kFloat32));
  ExpectAllTargetsMatch(p, seed);
}

}  // namespace
}  // namespace tilec::conformance
