// Conformance: compute tile operators as TileLang documents them (T.gemm and
// its keyword arguments, T.reduce_*, T.reduce_argmax/argmin, T.cumsum). Each
// test checks the interpreter against a float64 (or exact) reference computed
// here on shapes that do not divide the tiles, then the emitted CUDA on the
// SIMT emulator against the interpreter.
#include <algorithm>
#include <cmath>
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

def gemm(M, N, K, tA=False, tB=False, policy="Square", kpack=1, bm=64, bn=64, bk=32,
         dtype="float16"):
    A_shape = (K, M) if tA else (M, K)
    B_shape = (N, K) if tB else (K, N)
    A_tile = (bk, bm) if tA else (bm, bk)
    B_tile = (bn, bk) if tB else (bk, bn)

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared(A_tile, dtype)
            B_s = T.alloc_shared(B_tile, dtype)
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                if tA:
                    T.copy(A[ko * bk, by * bm], A_s)
                else:
                    T.copy(A[by * bm, ko * bk], A_s)
                if tB:
                    T.copy(B[bx * bn, ko * bk], B_s)
                else:
                    T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, acc, transpose_A=tA, transpose_B=tB,
                       policy=getattr(T.GemmWarpPolicy, policy), k_pack=kpack)
            T.copy(acc, C[by * bm, bx * bn])
    return main

def gemm_clear(M, N, K, clear, bm=64, bn=64, bk=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.fill(acc, 5.0)
            T.copy(A[by * bm, 0], A_s)
            T.copy(B[0, bx * bn], B_s)
            T.gemm(A_s, B_s, acc, clear_accum=clear)
            T.copy(acc, C[by * bm, bx * bn])
    return main

def reduce(M, N, op, dim=1, clear=True, keep=False):
    out_len = M if dim == 1 or dim == -1 else N
    out_shape = ((M, 1) if dim != 0 else (1, N)) if keep else (out_len,)
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), O: T.Tensor(out_shape, "float32")):
        with T.Kernel(1, threads=128):
            F = T.alloc_fragment((M, N), "float32")
            R = T.alloc_fragment(out_shape, "float32")
            T.copy(A, F)
            T.copy(O, R)
            if op == "abssum":
                T.reduce_abssum(F, R, dim=dim)
            elif dim == -1:
                getattr(T, "reduce_" + op)(F, R, clear=clear)
            else:
                getattr(T, "reduce_" + op)(F, R, dim=dim, clear=clear)
            T.copy(R, O)
    return main

def argreduce(M, N, op, dim=1, keep=False):
    out_len = M if dim == 1 else N
    out_shape = (M, 1) if keep else (out_len,)
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), I: T.Tensor(out_shape, "int32")):
        with T.Kernel(1, threads=128):
            F = T.alloc_fragment((M, N), "float32")
            R = T.alloc_fragment(out_shape, "int32")
            T.copy(A, F)
            if op == "max":
                T.reduce_argmax(F, R, dim=dim)
            else:
                T.reduce_argmin(F, R, dim=dim)
            T.copy(R, I)
    return main

def cumsum(M, N, dim=0, reverse=False):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((M, N), "float32")
            D = T.alloc_shared((M, N), "float32")
            T.copy(A, S)
            T.cumsum(S, D, dim=dim, reverse=reverse)
            T.copy(D, B)
    return main

def cumsum_inplace(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            F = T.alloc_fragment((M, N), "float32")
            T.copy(A, F)
            T.cumsum(F, dim=1)
            T.copy(F, B)
    return main

# A in registers (a fragment operand), integer and float8 operands.
def gemm_operands(M, N, K, dtype="float16", acc="float32", a_frag=False, bm=64, bn=64, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            A_f = T.alloc_fragment((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_f = T.alloc_fragment((bm, bn), acc)
            T.clear(C_f)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                if a_frag:
                    T.copy(A_s, A_f)
                    T.gemm(A_f, B_s, C_f)
                else:
                    T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * bm, bx * bn])
    return main

def reduce_shared(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), O: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((M, N), dtype)
            R = T.alloc_shared((M,), dtype)
            T.copy(A, S)
            T.reduce_max(S, R, dim=1)
            T.copy(R, O)
    return main

def reduce_bits(M, N, op):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), O: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=128):
            F = T.alloc_fragment((M, N), "int32")
            R = T.alloc_fragment((M,), "int32")
            T.copy(A, F)
            getattr(T, "reduce_" + op)(F, R, dim=1)
            T.copy(R, O)
    return main
)";

// float16 products summed in float32 over K terms of magnitude <= 1.
interp::Tolerance GemmTolerance(int64_t k) {
  return {.atol = 1e-5 * std::sqrt(static_cast<double>(k)) * 4, .rtol = 1e-4};
}

void CheckGemm(const BindingList& bindings, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
               uint64_t default_seed, DType dtype = DType::kFloat16,
               std::vector<cuda::CudaArch> archs = {cuda::CudaArch::kSm80}) {
  ir::Program p = Compile(kSource, "gemm", bindings);
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(dtype, ta ? std::vector<int64_t>{k, m} : std::vector{m, k}, seed),
                  Random(dtype, tb ? std::vector<int64_t>{n, k} : std::vector{k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, m, n, k, ta, tb), GemmTolerance(k));
  ExpectTargetsMatch(p, {.seed = seed}, archs);
}

TEST(ConformanceGemm, Plain) {
  CheckGemm({{"M", "80"}, {"N", "72"}, {"K", "100"}}, 80, 72, 100, false, false, 201,
            DType::kFloat16, kBothArchs);
}

TEST(ConformanceGemm, TransposeA) {
  CheckGemm({{"M", "80"}, {"N", "72"}, {"K", "100"}, {"tA", "True"}}, 80, 72, 100, true, false,
            202);
}

TEST(ConformanceGemm, TransposeB) {
  CheckGemm({{"M", "80"}, {"N", "72"}, {"K", "100"}, {"tB", "True"}}, 80, 72, 100, false, true,
            203);
}

TEST(ConformanceGemm, PolicyFullRowAndFullCol) {
  for (const char* policy : {"FullRow", "FullCol"}) {
    SCOPED_TRACE(policy);
    CheckGemm({{"M", "80"}, {"N", "72"}, {"K", "100"}, {"policy", Quoted(policy)}}, 80, 72, 100,
              false, false, 204);
  }
}

TEST(ConformanceGemm, KPackAccepted) {
  CheckGemm({{"M", "80"}, {"N", "72"}, {"K", "100"}, {"kpack", "2"}}, 80, 72, 100, false, false,
            205);
}

TEST(ConformanceGemm, ClearAccum) {
  const int64_t m = 70, n = 40, k = 50;
  for (bool clear : {true, false}) {
    SCOPED_TRACE(clear ? "clear_accum=True" : "clear_accum=False");
    ir::Program p =
        Compile(kSource, "gemm_clear",
                {{"M", "70"}, {"N", "40"}, {"K", "50"}, {"clear", clear ? "True" : "False"}});
    const uint64_t seed = Seed(206);
    Tensors args = {Random(DType::kFloat16, {m, k}, seed),
                    Random(DType::kFloat16, {k, n}, seed + 1), Zeros(DType::kFloat32, {m, n})};
    Interpret(p, args);
    std::vector<double> want = GemmReference(args, m, n, k, false, false);
    if (!clear) {
      for (double& w : want) w += 5.0;
    }
    ExpectClose(args[2], want, GemmTolerance(k));
    ExpectTargetsMatch(p, {.seed = seed});
  }
}

// The reduction of row i (dim 1) or column j (dim 0) of A, from `init`.
std::vector<double> ReduceReference(const interp::Tensor& a, int64_t m, int64_t n, int dim,
                                    const std::string& op, const interp::Tensor* init) {
  int64_t lines = dim == 0 ? n : m, len = dim == 0 ? m : n;
  std::vector<double> out(lines);
  for (int64_t l = 0; l < lines; ++l) {
    double acc = op == "max" || op == "absmax" ? -INFINITY : op == "min" ? INFINITY : 0.0;
    if (init != nullptr) acc = op == "absmax" ? std::fabs(init->GetDouble(l)) : init->GetDouble(l);
    for (int64_t e = 0; e < len; ++e) {
      double x = a.GetDouble(dim == 0 ? e * n + l : l * n + e);
      if (op == "sum") acc += x;
      if (op == "abssum") acc += std::fabs(x);
      if (op == "max") acc = std::max(acc, x);
      if (op == "min") acc = std::min(acc, x);
      if (op == "absmax") acc = std::max(acc, std::fabs(x));
    }
    out[l] = acc;
  }
  return out;
}

void CheckReduce(const std::string& op, int dim, bool clear, uint64_t default_seed) {
  const int64_t m = 6, n = 50;
  ir::Program p = Compile(kSource, "reduce",
                          {{"M", "6"},
                           {"N", "50"},
                           {"op", Quoted(op)},
                           {"dim", std::to_string(dim)},
                           {"clear", clear ? "True" : "False"}});
  const uint64_t seed = Seed(default_seed);
  int64_t lines = dim == 0 ? n : m;
  Tensors args = {Random(DType::kFloat32, {m, n}, seed),
                  Random(DType::kFloat32, {lines}, seed + 1)};
  interp::Tensor init = args[1];
  Interpret(p, args);
  ExpectClose(args[1], ReduceReference(args[0], m, n, dim, op, clear ? nullptr : &init),
              {.atol = 1e-5 * n, .rtol = 1e-5});
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceReduce, Sum) { CheckReduce("sum", -1, true, 211); }
TEST(ConformanceReduce, Max) { CheckReduce("max", -1, true, 212); }
TEST(ConformanceReduce, Min) { CheckReduce("min", -1, true, 213); }
TEST(ConformanceReduce, AbsSum) { CheckReduce("abssum", 1, true, 214); }
TEST(ConformanceReduce, AbsMax) { CheckReduce("absmax", -1, true, 215); }

// dim=0 here; dim=1 and the default dim=-1 are the tests above.
TEST(ConformanceReduce, DimKeyword) {
  for (const char* op : {"sum", "max", "min", "abssum", "absmax"}) {
    SCOPED_TRACE(op);
    CheckReduce(op, 0, true, 216);
  }
}

TEST(ConformanceReduce, ClearFalseStartsFromTheOutput) {
  for (const char* op : {"sum", "max", "min", "absmax"}) {
    SCOPED_TRACE(op);
    CheckReduce(op, 1, false, 217);
  }
}

// TileLang documents an output that keeps the reduced dim with extent 1
// (shape [M, 1] for dim=1) as well as the one without it.
TEST(ConformanceReduce, OutputKeepingTheDim) {
  const int64_t m = 6, n = 50;
  ir::Program p =
      Compile(kSource, "reduce",
              {{"M", "6"}, {"N", "50"}, {"op", Quoted("sum")}, {"dim", "1"}, {"keep", "True"}});
  const uint64_t seed = Seed(218);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, 1})};
  Interpret(p, args);
  ExpectClose(args[1], ReduceReference(args[0], m, n, 1, "sum", nullptr),
              {.atol = 1e-5 * n, .rtol = 1e-5});
  ExpectTargetsMatch(p, {.seed = seed});
}

void CheckArg(const std::string& op, int dim, uint64_t default_seed, bool keep = false) {
  const int64_t m = 7, n = 45;
  ir::Program p = Compile(kSource, "argreduce",
                          {{"M", "7"},
                           {"N", "45"},
                           {"op", Quoted(op)},
                           {"dim", std::to_string(dim)},
                           {"keep", keep ? "True" : "False"}});
  const uint64_t seed = Seed(default_seed);
  int64_t lines = dim == 0 ? n : m, len = dim == 0 ? m : n;
  Tensors args = {Random(DType::kFloat32, {m, n}, seed),
                  Zeros(DType::kInt32, keep ? std::vector<int64_t>{lines, 1} : std::vector{lines})};
  Interpret(p, args);
  std::vector<int64_t> want(lines);
  for (int64_t l = 0; l < lines; ++l) {
    int64_t best = 0;
    for (int64_t e = 1; e < len; ++e) {
      double x = args[0].GetDouble(dim == 0 ? e * n + l : l * n + e);
      double b = args[0].GetDouble(dim == 0 ? best * n + l : l * n + best);
      if (op == "max" ? x > b : x < b) best = e;
    }
    want[l] = best;
  }
  ExpectEqualInts(args[1], want);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceReduce, ArgMax) { CheckArg("max", 1, 221); }
TEST(ConformanceReduce, ArgMin) { CheckArg("min", 1, 222); }
TEST(ConformanceReduce, ArgMaxArgMinDim0) {
  CheckArg("max", 0, 223);
  CheckArg("min", 0, 224);
}

void CheckCumsum(int dim, bool reverse, uint64_t default_seed) {
  const int64_t m = 5, n = 37;
  ir::Program p = Compile(kSource, "cumsum",
                          {{"M", "5"},
                           {"N", "37"},
                           {"dim", std::to_string(dim)},
                           {"reverse", reverse ? "True" : "False"}});
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  std::vector<double> want(m * n);
  int64_t lines = dim == 0 ? n : m, len = dim == 0 ? m : n;
  for (int64_t l = 0; l < lines; ++l) {
    double s = 0;
    for (int64_t t = 0; t < len; ++t) {
      int64_t e = reverse ? len - 1 - t : t;
      int64_t k = dim == 0 ? e * n + l : l * n + e;
      s += args[0].GetDouble(k);
      want[k] = s;
    }
  }
  ExpectClose(args[1], want, {.atol = 1e-5 * len, .rtol = 1e-5});
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceCumsum, Dim0) { CheckCumsum(0, false, 231); }
TEST(ConformanceCumsum, Dim1) { CheckCumsum(1, false, 232); }
TEST(ConformanceCumsum, Reverse) {
  CheckCumsum(0, true, 233);
  CheckCumsum(1, true, 234);
}

TEST(ConformanceGemm, BFloat16Operands) {
  CheckGemm({{"M", "80"}, {"N", "72"}, {"K", "100"}, {"dtype", Quoted("bfloat16")}}, 80, 72, 100,
            false, false, 207, DType::kBFloat16);
}

// float32 operands run on the CUDA cores.
TEST(ConformanceGemm, Float32Operands) {
  CheckGemm({{"M", "80"}, {"N", "72"}, {"K", "100"}, {"dtype", Quoted("float32")}}, 80, 72, 100,
            false, false, 208, DType::kFloat32);
}

TEST(ConformanceReduce, ArgMaxOutputKeepingTheDim) { CheckArg("max", 1, 225, true); }

TEST(ConformanceCumsum, InPlaceWithoutDst) {
  const int64_t m = 5, n = 37;
  ir::Program p = Compile(kSource, "cumsum_inplace", {{"M", "5"}, {"N", "37"}});
  const uint64_t seed = Seed(235);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  std::vector<double> want(m * n);
  for (int64_t r = 0; r < m; ++r) {
    double s = 0;
    for (int64_t c = 0; c < n; ++c) want[r * n + c] = s += args[0].GetDouble(r * n + c);
  }
  ExpectClose(args[1], want, {.atol = 1e-5 * n, .rtol = 1e-5});
  ExpectTargetsMatch(p, {.seed = seed});
}

void CheckGemmOperands(const BindingList& extra, DType in, DType acc, double tol,
                       uint64_t default_seed,
                       std::vector<cuda::CudaArch> archs = {cuda::CudaArch::kSm80}) {
  const int64_t m = 80, n = 72, k = 100;
  BindingList bindings = {{"M", "80"}, {"N", "72"}, {"K", "100"}};
  bindings.insert(bindings.end(), extra.begin(), extra.end());
  ir::Program p = Compile(kSource, "gemm_operands", bindings);
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(in, {m, k}, seed), Random(in, {k, n}, seed + 1), Zeros(acc, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, m, n, k, false, false), {.atol = tol, .rtol = tol});
  ExpectTargetsMatch(p, {.seed = seed}, archs);
}

TEST(ConformanceGemm, FragmentOperandA) {
  CheckGemmOperands({{"a_frag", "True"}}, DType::kFloat16, DType::kFloat32, 1e-4, 241);
}

TEST(ConformanceGemm, Int8IntoInt32) {
  CheckGemmOperands({{"dtype", Quoted("int8")}, {"acc", Quoted("int32")}}, DType::kInt8,
                    DType::kInt32, 0, 242);
}

TEST(ConformanceGemm, Float8E4M3Operands) {
  CheckGemmOperands({{"dtype", Quoted("float8_e4m3")}}, DType::kFloat8E4M3, DType::kFloat32, 1e-4,
                    243, kBothArchs);
}

TEST(ConformanceReduce, SharedSourceAndDestination) {
  const int64_t m = 6, n = 50;
  for (auto [name, dtype] :
       std::vector<std::pair<std::string, DType>>{{"float32", DType::kFloat32},
                                                  {"bfloat16", DType::kBFloat16},
                                                  {"int32", DType::kInt32}}) {
    SCOPED_TRACE(name);
    ir::Program p =
        Compile(kSource, "reduce_shared", {{"M", "6"}, {"N", "50"}, {"dtype", Quoted(name)}});
    const uint64_t seed = Seed(244);
    Tensors args = {Random(dtype, {m, n}, seed), Zeros(dtype, {m})};
    Interpret(p, args);
    ExpectClose(args[1], ReduceReference(args[0], m, n, 1, "max", nullptr), {});
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

// TileLang documents T.reduce_bitand / bitor / bitxor for integer buffers.
TEST(ConformanceReduce, BitwiseReductions) {
  const int64_t m = 6, n = 20;
  for (const char* op : {"bitand", "bitor", "bitxor"}) {
    SCOPED_TRACE(op);
    ir::Program p = Compile(kSource, "reduce_bits", {{"M", "6"}, {"N", "20"}, {"op", Quoted(op)}});
    const uint64_t seed = Seed(245);
    Tensors args = {Random(DType::kInt32, {m, n}, seed), Zeros(DType::kInt32, {m})};
    Interpret(p, args);
    const std::string o = op;
    std::vector<int64_t> want(m);
    for (int64_t r = 0; r < m; ++r) {
      int64_t acc = o == "bitand" ? -1 : 0;
      for (int64_t c = 0; c < n; ++c) {
        int64_t a = args[0].GetInt(r * n + c);
        acc = o == "bitand" ? acc & a : o == "bitor" ? acc | a : acc ^ a;
      }
      want[r] = acc;
    }
    ExpectEqualInts(args[1], want);
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

}  // namespace
}  // namespace tilec::conformance
