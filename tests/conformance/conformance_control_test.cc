// Conformance: loops and scheduling as TileLang documents them (T.Parallel,
// T.Pipelined with num_stages / order / stage / group, T.serial with start,
// stop and step, T.unroll, T.vectorized, T.grid, T.use_swizzle,
// T.alloc_reducer / T.finalize_reducer, and the refused kernel-code
// `while`). The interpreter is checked against references computed here,
// the emitted CUDA on the SIMT emulator against the interpreter.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/conformance_testing.h"

namespace tilec::conformance {
namespace {

using ir::DType;

constexpr char kSource[] = R"(
import tilelang
import tilelang.language as T

def parallel(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=96):
            for i, j in T.Parallel(M, N):
                B[i, j] = A[i, j] * A[i, j] + i - j
    return main

def pipelined(M, N, K, stages=2, order=None, stage=None, group=None, bm=32, bn=32, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=stages, order=order, stage=stage,
                                  group=group):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * bm, bx * bn])
    return main

def serial(N, K, start, step):
    @T.prim_func
    def main(A: T.Tensor((N, K), "float32"), B: T.Tensor((N,), "float32"),
             C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            tx = T.get_thread_binding()
            acc = T.alloc_local((2,), "float32")
            acc[0] = 0.0
            acc[1] = 0.0
            for k in T.serial(start, K, step):
                acc[0] += A[bx * 64 + tx, k] * (k + 1)
            for k in T.serial(K):
                acc[1] = acc[1] * 0.5 + A[bx * 64 + tx, k]
            B[bx * 64 + tx] = acc[0]
            C[bx * 64 + tx] = acc[1]
    return main

def unroll(N, K):
    @T.prim_func
    def main(A: T.Tensor((N, K), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            tx = T.get_thread_binding()
            acc = T.alloc_var("float32")
            acc = 0.0
            for k in T.unroll(K):
                acc = acc * 2.0 + A[bx * 64 + tx, k]
            B[bx * 64 + tx] = acc
    return main

def vectorized(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, 256), threads=64) as bx:
            for i in T.Parallel(64):
                for v in T.vectorized(4):
                    B[bx * 256 + i * 4 + v] = A[bx * 256 + i * 4 + v] * 2.0
    return main

def grid(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
            tx = T.get_thread_binding()
            s = T.alloc_var("float32")
            s = 0.0
            for i, j in T.grid(1, N):
                s += A[bx * 32 + tx + i, j] * (j % 3)
            B[bx * 32 + tx] = s
    return main

def swizzle(M, N, panel, order="row", enable=True, bm=8, bn=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            T.use_swizzle(panel_size=panel, order=order, enable=enable)
            S = T.alloc_shared((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], S)
            for i, j in T.Parallel(bm, bn):
                S[i, j] = S[i, j] + 1.0
            T.copy(S, B[by * bm, bx * bn])
    return main

def reducer(M, N, op):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), R: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_reducer((N,), "float32", op=op, replication="all")
            if op == "sum":
                T.clear(s)
            elif op == "max":
                T.fill(s, -T.infinity("float32"))
            else:
                T.fill(s, T.infinity("float32"))
            for i, j in T.Parallel(M, N):
                if op == "sum":
                    s[j] += A[i, j]
                elif op == "max":
                    s[j] = T.max(s[j], A[i, j])
                else:
                    s[j] = T.min(s[j], A[i, j])
            T.finalize_reducer(s)
            T.copy(s, R)
    return main

def while_loop(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32):
            i = T.alloc_var("int32")
            i = 0
            while i < N:
                A[i] = 1
                i += 1
    return main

def parallel_span(N, cap=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), L: T.Tensor((1,), "int32"),
             B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            span = T.min(L[0], cap)
            for i in T.Parallel(span):
                B[i] = A[i] + 1.0
    return main

def parallel_unbounded(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), L: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(L[0]):
                A[i] = 1.0
    return main

def serial_down(N, K):
    @T.prim_func
    def main(A: T.Tensor((N, K), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            tx = T.get_thread_binding()
            acc = T.alloc_var("float32")
            acc = 0.0
            for k in T.serial(K - 1, -1, -2):
                acc = acc * 0.5 + A[bx * 64 + tx, k]
            B[bx * 64 + tx] = acc
    return main

def parallel_race(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), R: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            r = T.alloc_fragment((N,), "float32")
            T.clear(r)
            for i, j in T.Parallel(M, N):
                r[j] += A[i, j]
            T.copy(r, R)
    return main
)";

const interp::Tolerance kF32 = interp::DefaultTolerance(DType::kFloat32);

TEST(ConformanceParallel, NestOverATile) {
  const int64_t m = 13, n = 29;
  ir::Program p = Compile(kSource, "parallel", {{"M", "13"}, {"N", "29"}});
  const uint64_t seed = Seed(401);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m * n,
                    [&](int64_t k) {
                      double a = args[0].GetDouble(k);
                      return a * a + static_cast<double>(k / n - k % n);
                    }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed});
}

void CheckPipelined(const BindingList& extra, uint64_t default_seed) {
  const int64_t m = 40, n = 48, k = 200;
  BindingList bindings = {{"M", "40"}, {"N", "48"}, {"K", "200"}};
  bindings.insert(bindings.end(), extra.begin(), extra.end());
  ir::Program p = Compile(kSource, "pipelined", bindings);
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(DType::kFloat16, {m, k}, seed), Random(DType::kFloat16, {k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2],
              Table(m * n,
                    [&](int64_t e) {
                      double s = 0;
                      for (int64_t l = 0; l < k; ++l) {
                        s += args[0].GetDouble(e / n * k + l) * args[1].GetDouble(l * n + e % n);
                      }
                      return s;
                    }),
              {.atol = 1e-4, .rtol = 1e-4});
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformancePipelined, NumStages) {
  for (const char* stages : {"0", "1", "3"}) {
    SCOPED_TRACE(stages);
    CheckPipelined({{"stages", stages}}, 402);
  }
}

TEST(ConformancePipelined, OrderAndStage) {
  CheckPipelined({{"stages", "2"}, {"order", "[0, 1, 2]"}, {"stage", "[0, 0, 1]"}}, 403);
}

TEST(ConformancePipelined, Group) {
  CheckPipelined(
      {{"stages", "2"}, {"order", "[0, 1]"}, {"stage", "[0, 1]"}, {"group", "[[0, 1], [2]]"}}, 404);
}

TEST(ConformanceLoop, SerialStartStopStep) {
  const int64_t n = 70, k = 11;
  for (auto [start, step] : std::vector<std::pair<int, int>>{{0, 1}, {2, 3}, {1, 4}}) {
    ir::Program p = Compile(kSource, "serial",
                            {{"N", "70"},
                             {"K", "11"},
                             {"start", std::to_string(start)},
                             {"step", std::to_string(step)}});
    const uint64_t seed = Seed(405);
    Tensors args = {Random(DType::kFloat32, {n, k}, seed), Zeros(DType::kFloat32, {n}),
                    Zeros(DType::kFloat32, {n})};
    Interpret(p, args);
    ExpectClose(args[1],
                Table(n,
                      [&](int64_t r) {
                        double s = 0;
                        for (int64_t j = start; j < k; j += step)
                          s += args[0].GetDouble(r * k + j) * (j + 1);
                        return s;
                      }),
                kF32, "strided");
    ExpectClose(args[2],
                Table(n,
                      [&](int64_t r) {
                        double s = 0;
                        for (int64_t j = 0; j < k; ++j) s = s * 0.5 + args[0].GetDouble(r * k + j);
                        return s;
                      }),
                kF32, "T.serial(K)");
    ExpectTargetsMatch(p, {.seed = seed});
  }
}

TEST(ConformanceLoop, Unroll) {
  const int64_t n = 70, k = 6;
  ir::Program p = Compile(kSource, "unroll", {{"N", "70"}, {"K", "6"}});
  const uint64_t seed = Seed(406);
  Tensors args = {Random(DType::kFloat32, {n, k}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t r) {
                      double s = 0;
                      for (int64_t j = 0; j < k; ++j) s = s * 2 + args[0].GetDouble(r * k + j);
                      return s;
                    }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceLoop, Vectorized) {
  const int64_t n = 600;
  ir::Program p = Compile(kSource, "vectorized", {{"N", "600"}});
  const uint64_t seed = Seed(407);
  Tensors args = {Random(DType::kFloat16, {n}, seed), Zeros(DType::kFloat16, {n})};
  Interpret(p, args);
  ExpectClose(args[1], Table(n, [&](int64_t i) { return args[0].GetDouble(i) * 2; }), {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceLoop, Grid) {
  const int64_t m = 45, n = 10;
  ir::Program p = Compile(kSource, "grid", {{"M", "45"}, {"N", "10"}});
  const uint64_t seed = Seed(408);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(m,
                    [&](int64_t r) {
                      double s = 0;
                      for (int64_t j = 0; j < n; ++j) s += args[0].GetDouble(r * n + j) * (j % 3);
                      return s;
                    }),
              kF32);
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceSwizzle, PanelSizeAndOrder) {
  const int64_t m = 50, n = 70;
  for (auto [panel, order, enable] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"2", "row", "True"}, {"3", "column", "True"}, {"4", "row", "False"}}) {
    SCOPED_TRACE(std::string(order) + " panel " + panel);
    ir::Program p = Compile(
        kSource, "swizzle",
        {{"M", "50"}, {"N", "70"}, {"panel", panel}, {"order", Quoted(order)}, {"enable", enable}});
    const uint64_t seed = Seed(409);
    Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m, n})};
    Interpret(p, args);
    ExpectClose(args[1],
                Table(m * n,
                      [&](int64_t e) {
                        return static_cast<double>(static_cast<float>(args[0].GetDouble(e) + 1));
                      }),
                {});
    ExpectTargetsMatch(p, {.seed = seed, .exact = true});
  }
}

TEST(ConformanceReducer, AllocReducerFinalizeReducer) {
  const int64_t m = 9, n = 40;
  for (const char* op : {"sum", "max", "min"}) {
    SCOPED_TRACE(op);
    ir::Program p = Compile(kSource, "reducer", {{"M", "9"}, {"N", "40"}, {"op", Quoted(op)}});
    const uint64_t seed = Seed(410);
    Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {n})};
    Interpret(p, args);
    const std::string o = op;
    ExpectClose(args[1],
                Table(n,
                      [&](int64_t j) {
                        double s = o == "sum" ? 0.0 : o == "max" ? -INFINITY : INFINITY;
                        for (int64_t i = 0; i < m; ++i) {
                          double a = args[0].GetDouble(i * n + j);
                          s = o == "sum" ? s + a : o == "max" ? std::max(s, a) : std::min(s, a);
                        }
                        return s;
                      }),
                kF32);
    ExpectTargetsMatch(p, {.seed = seed});
  }
}

TEST(ConformanceLoop, WhileInKernelCodeRefused) {
  ExpectRefused(kSource, "while_loop", {{"N", "8"}},
                "a `while` loop in kernel code is not supported; tilec runs `while` only at "
                "staging time");
}

TEST(ConformanceParallel, RunTimeExtentBoundedByAConstant) {
  const int64_t n = 100;
  ir::Program p = Compile(kSource, "parallel_span", {{"N", "100"}});
  for (int64_t len : {0, 37, 64, 90}) {
    const uint64_t seed = Seed(411);
    Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kInt32, {1}),
                    Random(DType::kFloat32, {n}, seed + 1)};
    args[1].SetInt(0, len);
    interp::Tensor before = args[2];
    Interpret(p, args);
    ExpectClose(
        args[2],
        Table(n,
              [&](int64_t i) {
                return i < std::min<int64_t>(len, 64)
                           ? static_cast<double>(static_cast<float>(args[0].GetDouble(i) + 1))
                           : before.GetDouble(i);
              }),
        {}, "span " + std::to_string(len));
  }
  ExpectTargetsMatch(p, {.seed = Seed(411)});
}

TEST(ConformanceParallel, RunTimeExtentWithoutABoundRefused) {
  ExpectRefused(kSource, "parallel_unbounded", {{"N", "16"}},
                "T.Parallel loops need a constant extent, or one bounded by a constant");
}

TEST(ConformanceLoop, SerialNegativeStep) {
  const int64_t n = 70, k = 9;
  ir::Program p = Compile(kSource, "serial_down", {{"N", "70"}, {"K", "9"}});
  const uint64_t seed = Seed(412);
  Tensors args = {Random(DType::kFloat32, {n, k}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t r) {
                      double s = 0;
                      for (int64_t j = k - 1; j > -1; j -= 2)
                        s = s * 0.5 + args[0].GetDouble(r * k + j);
                      return s;
                    }),
              interp::DefaultTolerance(DType::kFloat32));
  ExpectTargetsMatch(p, {.seed = seed});
}

// More stages than iterations (K = 40 is two tiles of 32).
TEST(ConformancePipelined, MoreStagesThanIterations) {
  const int64_t m = 40, n = 48, k = 40;
  ir::Program p =
      Compile(kSource, "pipelined", {{"M", "40"}, {"N", "48"}, {"K", "40"}, {"stages", "4"}});
  const uint64_t seed = Seed(413);
  Tensors args = {Random(DType::kFloat16, {m, k}, seed), Random(DType::kFloat16, {k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2],
              Table(m * n,
                    [&](int64_t e) {
                      double s = 0;
                      for (int64_t l = 0; l < k; ++l) {
                        s += args[0].GetDouble(e / n * k + l) * args[1].GetDouble(l * n + e % n);
                      }
                      return s;
                    }),
              {.atol = 1e-4, .rtol = 1e-4});
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceParallel, ReductionWrittenAsARaceRefused) {
  const std::string message = "every iteration reads and writes r[j], whose index does not use i";
  absl::Status s = CompileStatus(kSource, "parallel_race", {{"M", "8"}, {"N", "16"}});
  if (s.ok()) {
    ir::Program p = Compile(kSource, "parallel_race", {{"M", "8"}, {"N", "16"}});
    absl::StatusOr<cuda::CudaSource> src = ::tilec::testing::EmitFor(p, cuda::CudaArch::kSm80);
    ASSERT_FALSE(src.ok()) << "a T.Parallel reduction race compiled";
    s = src.status();
  }
  EXPECT_NE(s.message().find(message), std::string::npos) << s;
}

}  // namespace
}  // namespace tilec::conformance
