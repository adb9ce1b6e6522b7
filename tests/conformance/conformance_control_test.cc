// Conformance: loops and scheduling as TileLang documents them (T.Parallel,
// T.Pipelined with num_stages / order / stage / group, T.serial with start,
// stop and step, T.unroll, T.vectorized, T.grid, T.use_swizzle,
// T.alloc_reducer / T.finalize_reducer, and `while` with a runtime condition
// (per thread and around tile operators) or a static one). The interpreter is checked against
// references computed here, the emitted CUDA on the SIMT emulator against the interpreter.
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

def reducer_total(N, K):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((K,), "float32"),
             C: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_fragment((N,), "float32")
            b = T.alloc_fragment((K,), "float32")
            T.copy(A, a)
            T.copy(B, b)
            total = T.alloc_reducer((1,), "float32", replication="all")
            T.clear(total)
            for i in T.Parallel(N):
                total[0] += a[i]
            for j in T.Parallel(K):
                total[0] += b[j] * 2.0
            T.finalize_reducer(total)
            if T.get_thread_binding() == 0:
                C[0] = total[0]
    return main

def while_loop(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32):
            i = T.alloc_var("int32")
            i = 0
            while i < N:
                A[i] = i * 3 + 1
                i += 1
    return main

def while_static(N):
    @T.prim_func
    def main(A: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=32):
            k = 1
            while k < N:
                k *= 2
            A[0] = k
    return main

def while_steps(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            tx = T.get_thread_binding()
            x = T.alloc_var("int32")
            steps = T.alloc_var("int32")
            if bx * 64 + tx < N:
                x = (A[bx * 64 + tx] & 1023) + 1
                steps = 0
                while x != 1:
                    if x % 2 == 0:
                        x = x // 2
                    else:
                        x = 3 * x + 1
                    steps += 1
                B[bx * 64 + tx] = steps
    return main

def while_segments(G, cap, block):
    @T.prim_func
    def main(A: T.Tensor((G * cap,), "float32"), L: T.Tensor((G,), "int32"),
             B: T.Tensor((G,), "float32")):
        with T.Kernel(G, threads=128) as g:
            s = T.alloc_shared((block,), "float32")
            acc = T.alloc_fragment((block,), "float32")
            total = T.alloc_fragment((1,), "float32")
            cur = T.alloc_var("int32")
            end = T.alloc_var("int32")
            cur = g * cap
            end = g * cap + (L[g] & (cap - 1))
            T.clear(acc)
            while cur < end:
                T.copy(A[cur:cur + block], s)
                for i in T.Parallel(block):
                    acc[i] += T.if_then_else(cur + i < end, s[i], 0.0)
                cur = cur + block
            T.reduce_sum(acc, total, dim=0)
            T.copy(total, B[g:g + 1])
    return main

def while_gemm(M, N, K, bm=64, bn=64, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            k0 = T.alloc_var("int32")
            k0 = 0
            T.clear(C_l)
            while k0 < K:
                T.copy(A[by * bm, k0], A_s)
                T.copy(B[k0, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
                k0 += bk
            T.copy(C_l, C[by * bm, bx * bn])
    return main

def while_rebind(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32):
            n = A[0]
            while n > 0:
                A[1] = n
                n = n - 1
    return main

def while_python_counter(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32):
            i = 0
            while A[i] > 0:
                A[i] = 0
                i += 1
    return main

def while_else(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32):
            i = T.alloc_var("int32")
            i = 0
            while i < A[0]:
                i += 1
            else:
                A[1] = i
    return main

def loose_extents(M, K, bm, bk):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), O: T.Tensor((4,), "int32"),
             B: T.Tensor((bm, bk), "float32"), C: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=64):
            off = T.alloc_fragment((1,), "int32")
            n = T.alloc_var("int32")
            s = T.alloc_shared((bm, bk), "float32")
            acc = T.alloc_fragment((bm, bk), "float32")
            off[0] = O[0] & 3
            T.clear(acc)
            for k in T.Pipelined(O[1] & 3, num_stages=2):
                T.copy(A[0, (k + off[0]) * bk], s)
                for i, j in T.Parallel(bm, bk):
                    acc[i, j] += s[i, j]
            T.copy(acc, B)
            n = 0
            for k in T.serial(O[2] & 7):
                n += 1
            C[0] = n
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

// One-loop nests of different extents sum into element 0 of a reducer of
// shape [1].
TEST(ConformanceReducer, NestsOfDifferentExtentsIntoOneTotal) {
  const int64_t n = 24, k = 56;
  ir::Program p = Compile(kSource, "reducer_total", {{"N", "24"}, {"K", "56"}});
  const uint64_t seed = Seed(411);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Random(DType::kFloat32, {k}, seed + 1),
                  Zeros(DType::kFloat32, {1})};
  Interpret(p, args);
  double want = 0;
  for (int64_t i = 0; i < n; ++i) want += args[0].GetDouble(i);
  for (int64_t j = 0; j < k; ++j) want += 2.0 * args[1].GetDouble(j);
  ExpectClose(args[2], {want}, kF32);
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceLoop, WhileRuntimeCondition) {
  ir::Program p = Compile(kSource, "while_loop", {{"N", "45"}});
  Tensors args = {Zeros(DType::kInt32, {45})};
  Interpret(p, args);
  std::vector<int64_t> want(45);
  for (int64_t i = 0; i < 45; ++i) want[i] = i * 3 + 1;
  ExpectEqualInts(args[0], want);
  ExpectTargetsMatch(p, {.seed = Seed(431), .exact = true}, kBothArchs);
}

TEST(ConformanceLoop, WhileStaticConditionRunsAtStagingTime) {
  ir::Program p = Compile(kSource, "while_static", {{"N", "100"}});
  Tensors args = {Zeros(DType::kInt32, {1})};
  Interpret(p, args);
  ExpectEqualInts(args[0], {128});
}

TEST(ConformanceLoop, WhilePerThreadTripCounts) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "while_steps", {{"N", "150"}});
  const uint64_t seed = Seed(432);
  Tensors args = {Random(DType::kInt32, {n}, seed), Zeros(DType::kInt32, {n})};
  Interpret(p, args);
  std::vector<int64_t> want(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t x = (args[0].GetInt(i) & 1023) + 1, steps = 0;
    for (; x != 1; ++steps) x = x % 2 == 0 ? x / 2 : 3 * x + 1;
    want[i] = steps;
  }
  ExpectEqualInts(args[1], want, "steps");
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

TEST(ConformanceLoop, WhileAroundTileOperators) {
  const int64_t g = 7, cap = 256;
  for (int64_t block : {64, 96}) {
    ir::Program p = Compile(kSource, "while_segments",
                            {{"G", "7"}, {"cap", "256"}, {"block", std::to_string(block)}});
    const uint64_t seed = Seed(433);
    Tensors args = {Random(DType::kFloat32, {g * cap}, seed), Random(DType::kInt32, {g}, seed + 1),
                    Zeros(DType::kFloat32, {g})};
    Interpret(p, args);
    ExpectClose(args[2],
                Table(g,
                      [&](int64_t r) {
                        double sum = 0;
                        for (int64_t j = 0; j < (args[1].GetInt(r) & (cap - 1)); ++j)
                          sum += args[0].GetDouble(r * cap + j);
                        return sum;
                      }),
                {.atol = 1e-4, .rtol = 1e-4}, "segment sums");
    ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
  }
}

TEST(ConformanceLoop, WhileAroundAGemm) {
  const int64_t m = 100, n = 72, k = 150;
  ir::Program p = Compile(kSource, "while_gemm", {{"M", "100"}, {"N", "72"}, {"K", "150"}});
  const uint64_t seed = Seed(434);
  Tensors args = {Random(DType::kFloat16, {m, k}, seed), Random(DType::kFloat16, {k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, m, n, k), {.atol = 1e-3, .rtol = 1e-4}, "C");
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

// Loop extents and copy offsets that C++ would group differently without
// parentheses (`k < O[1] & 3` is `(k < O[1]) & 3`), and a copy offset read
// from a fragment element inside a pipelined loop (it crashed the emitter).
TEST(ConformanceLoop, RunTimeExtentsWithBitwiseOperators) {
  const int64_t m = 16, k = 256, bk = 32;
  ir::Program p =
      Compile(kSource, "loose_extents", {{"M", "16"}, {"K", "256"}, {"bm", "16"}, {"bk", "32"}});
  const uint64_t seed = Seed(435);
  Tensors args = {Random(DType::kFloat32, {m, k}, seed), Random(DType::kInt32, {4}, seed + 1),
                  Zeros(DType::kFloat32, {m, bk}), Zeros(DType::kInt32, {1})};
  Interpret(p, args);
  const int64_t off = args[1].GetInt(0) & 3, iters = args[1].GetInt(1) & 3;
  ExpectClose(args[2],
              Table(m * bk,
                    [&](int64_t e) {
                      double sum = 0;
                      for (int64_t it = 0; it < iters; ++it)
                        sum += args[0].GetDouble(e / bk * k + (it + off) * bk + e % bk);
                      return sum;
                    }),
              kF32, "B");
  ExpectEqualInts(args[3], {args[1].GetInt(2) & 7}, "C");
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

TEST(ConformanceLoop, WhileRefusals) {
  ExpectRefused(kSource, "while_rebind", {{"N", "8"}},
                "`n` was bound inside a loop, branch or kernel body and is used outside it; use "
                "T.alloc_var to carry a value out");
  ExpectRefused(kSource, "while_python_counter", {{"N", "8"}},
                "the condition of this runtime `while` reads a name that its body rebinds");
  ExpectRefused(kSource, "while_else", {{"N", "8"}},
                "`while ... else` is not supported when the condition is a runtime value");
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
