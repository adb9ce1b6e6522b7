// Conformance: `break` and `continue` (and T.loop_break()) in kernel loops.
// - T.serial / range loops and runtime `while` loops, the condition a
//   runtime value (a tensor element, a T.alloc_var); nested loops (a break
//   ends the innermost); a Python loop inside a kernel loop keeps its own
//   staging-time break;
// - block-level code whose loop body holds tile operators (T.copy into
//   shared memory) after the break, and per-thread code where each thread
//   leaves its own loop;
// - refusals: a T.Parallel / T.Pipelined loop, a runtime condition that
//   would end a Python loop, T.loop_break() of a Python loop.
// References are computed here; the emitted code runs on the emulator
// against the interpreter (sm_80, sm_90a, gfx942).
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

# B[r] = the first i with A[r, i] < lo (-1 when none), C[r] = the sum of the
# elements >= 0 before it (the negative ones skipped with continue).
def first_below(M, N, lo, loop="serial"):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "int32"),
             C: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=32) as bx:
            pos = T.alloc_var("int32", init=-1)
            total = T.alloc_var("float32", init=0.0)
            if loop == "serial":
                for i in T.serial(N):
                    if A[bx, i] < lo:
                        pos = i
                        break
                    if A[bx, i] < 0:
                        continue
                    total += A[bx, i]
            elif loop == "range":
                for i in range(N):
                    if A[bx, i] < lo:
                        pos = i
                        T.loop_break()
                    elif A[bx, i] >= 0:
                        total += A[bx, i]
            else:
                i = T.alloc_var("int32", init=0)
                while i < N:
                    i += 1
                    if A[bx, i - 1] < 0:
                        if A[bx, i - 1] < lo:
                            pos = i - 1
                            break
                        continue
                    total += A[bx, i - 1]
            B[bx] = pos
            C[bx] = total
    return main

# Nested: B[r, k] counts the elements of segment k (L elements) of row r
# before its first one below lo (the inner loop breaks; a Python loop inside
# it breaks at staging time); the outer loop stops after the first segment
# holding none below lo, leaving the later B[r, k] unwritten.
def nested(M, K, L, lo):
    @T.prim_func
    def main(A: T.Tensor((M, K * L), "float32"), B: T.Tensor((M, K), "int32")):
        with T.Kernel(M, threads=32) as bx:
            for k in T.serial(K):
                n = T.alloc_var("int32", init=0)
                for j in T.serial(L):
                    if A[bx, k * L + j] < lo:
                        break
                    for p in range(3):
                        if p == 1:
                            break
                        n += 1
                B[bx, k] = n
                if n == L:
                    break
    return main

# Block-level: tiles of 32 elements are copied to shared memory and summed
# until the running sum passes `cap`; the break is tested before the copy.
def capped_tiles(M, N, cap):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32"),
             C: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=64) as bx:
            S = T.alloc_shared((32,), "float32")
            acc = T.alloc_var("float32", init=0.0)
            tiles = T.alloc_var("int32", init=0)
            for k in T.serial(T.ceildiv(N, 32)):
                if acc > cap:
                    T.loop_break()
                T.copy(A[bx, k * 32], S)
                for j in T.serial(32):
                    acc += S[j]
                tiles += 1
            B[bx] = acc
            C[bx] = tiles
    return main

# Per-thread: thread t scans row t and leaves its own loop.
def per_thread(M, N, lo):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=M):
            tx = T.get_thread_binding()
            pos = T.alloc_var("int32", init=N)
            for i in T.serial(N):
                if A[tx, i] < lo:
                    pos = i
                    break
            B[tx] = pos
    return main

# Per-thread code whose break depends on shared memory only: the exit flag
# is the same in every thread, so the T.copy under it stays collective.
# Tiles of 64 are copied to S until one starts below lo; each thread
# doubles its element of the tiles before it.
def uniform_break(N, lo):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"),
             C: T.Tensor((64,), "int32")):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            S = T.alloc_shared((64,), "float32")
            n = T.alloc_var("int32", init=0)
            for k in T.serial(T.ceildiv(N, 64)):
                T.copy(A[k * 64], S)
                if S[0] < lo:
                    break
                B[k * 64 + tx] = S[tx] * 2.0
                n += 1
            C[tx] = n
    return main

# The same with the break on the thread's own element: the flag differs
# between threads, and the T.copy under it is refused.
def per_thread_break_before_copy(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            S = T.alloc_shared((64,), "float32")
            for k in T.serial(T.ceildiv(N, 64)):
                if A[k * 64 + tx] < 0:
                    break
                T.copy(A[k * 64], S)
                B[k * 64 + tx] = S[tx]
    return main

# Each thread in turn adds 1 to S[0] and reads it back (on a GPU a race):
# n is taken as the same in every thread, and the interpreter reports that
# it is not where it steers the block (`n > 1` is false in thread 0, true in
# thread 1).
def racy_uniform(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=4):
            tx = T.get_thread_binding()
            S = T.alloc_shared((4,), "int32")
            F = T.alloc_shared((4,), "float32")
            n = T.alloc_var("int32", init=0)
            T.fill(S, 0)
            for i in T.serial(1):
                S[0] = S[0] + 1
                n = S[0]
            if n > 1:
                T.copy(A[0], F)
            B[tx] = n
    return main

def parallel_break(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(N):
                if A[i] < 0:
                    break
                A[i] = 1.0
    return main

def pipelined_continue(N):
    @T.prim_func
    def main(A: T.Tensor((N, 32), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((32,), "float32")
            for k in T.Pipelined(N, num_stages=2):
                if A[k, 0] < 0:
                    continue
                T.copy(A[k, 0], S)
            T.copy(S, B)
    return main

def python_loop_runtime_break(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            for i in [0, 1, 2]:
                if A[i] < 0:
                    break
                A[i] = 1.0
    return main

def python_loop_loop_break(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            for i in [0, 1, 2]:
                T.loop_break()
    return main
)";

const char* const kLoops[] = {"serial", "range", "while"};

TEST(ConformanceLoopExit, BreakAndContinueInEachKindOfKernelLoop) {
  const int64_t m = 20, n = 40;
  const double lo = -0.9;
  for (const char* loop : kLoops) {
    SCOPED_TRACE(loop);
    ir::Program p = Compile(kSource, "first_below",
                            {{"M", "20"}, {"N", "40"}, {"lo", "-0.9"}, {"loop", Quoted(loop)}});
    const uint64_t seed = Seed(20261301);
    Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kInt32, {m}),
                    Zeros(DType::kFloat32, {m})};
    std::vector<int64_t> pos(m, -1);
    std::vector<double> total(m, 0.0);
    int found = 0;
    for (int64_t r = 0; r < m; ++r) {
      float sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const float a = static_cast<float>(args[0].GetDouble(r * n + i));
        if (a < lo) {
          pos[r] = i;
          ++found;
          break;
        }
        if (a >= 0) sum += a;
      }
      total[r] = sum;
    }
    ASSERT_GT(found, 0) << "no row breaks: pick another seed";
    ASSERT_LT(found, m) << "every row breaks: pick another seed";
    Interpret(p, args);
    ExpectEqualInts(args[1], pos, "B (where the loop broke)");
    ExpectClose(args[2], total, {.atol = 1e-5, .rtol = 1e-6}, "C (sum of what continue kept)");
    ExpectAllTargetsMatch(p, seed);
  }
}

TEST(ConformanceLoopExit, NestedLoopsBreakTheInnermost) {
  const int64_t m = 12, k = 5, l = 8;
  const double lo = -0.8;
  ir::Program p = Compile(kSource, "nested", {{"M", "12"}, {"K", "5"}, {"L", "8"}, {"lo", "-0.8"}});
  const uint64_t seed = Seed(20261302);
  Tensors args = {Random(DType::kFloat32, {m, k * l}, seed), Zeros(DType::kInt32, {m, k})};
  for (int64_t e = 0; e < m * k; ++e) args[1].SetInt(e, -7);  // unwritten stays -7
  std::vector<int64_t> want(m * k, -7);
  int stopped_early = 0;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t s = 0; s < k; ++s) {
      int64_t cnt = 0;
      while (cnt < l && args[0].GetDouble(r * k * l + s * l + cnt) >= lo) ++cnt;
      want[r * k + s] = cnt;
      if (cnt == l) {
        stopped_early += s + 1 < k;
        break;
      }
    }
  }
  ASSERT_GT(stopped_early, 0) << "no row stops early: pick another seed";
  Interpret(p, args);
  ExpectEqualInts(args[1], want, "B");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceLoopExit, BlockLevelLoopWithTileOperators) {
  const int64_t m = 8, n = 200;
  ir::Program p = Compile(kSource, "capped_tiles", {{"M", "8"}, {"N", "200"}, {"cap", "1.5"}});
  const uint64_t seed = Seed(20261303);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kFloat32, {m}),
                  Zeros(DType::kInt32, {m})};
  std::vector<double> acc(m);
  std::vector<int64_t> tiles(m);
  for (int64_t r = 0; r < m; ++r) {
    float sum = 0;
    int64_t t = 0;
    for (int64_t k = 0; k * 32 < n; ++k) {
      if (sum > 1.5f) break;
      // A T.copy reads zeros past N.
      for (int64_t j = 0; j < 32 && k * 32 + j < n; ++j) {
        sum += static_cast<float>(args[0].GetDouble(r * n + k * 32 + j));
      }
      ++t;
    }
    acc[r] = sum;
    tiles[r] = t;
  }
  Interpret(p, args);
  ExpectClose(args[1], acc, {.atol = 1e-4, .rtol = 1e-5}, "B (the sum)");
  ExpectEqualInts(args[2], tiles, "C (tiles summed)");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceLoopExit, PerThreadLoopsEndApart) {
  const int64_t m = 64, n = 30;
  ir::Program p = Compile(kSource, "per_thread", {{"M", "64"}, {"N", "30"}, {"lo", "-0.85"}});
  const uint64_t seed = Seed(20261304);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed), Zeros(DType::kInt32, {m})};
  std::vector<int64_t> want(m, n);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      if (args[0].GetDouble(r * n + i) < -0.85) {
        want[r] = i;
        break;
      }
    }
  }
  Interpret(p, args);
  ExpectEqualInts(args[1], want, "B");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceLoopExit, PerThreadCodeWithAUniformBreak) {
  const int64_t n = 600;
  const double lo = -0.9;
  ir::Program p = Compile(kSource, "uniform_break", {{"N", "600"}, {"lo", "-0.9"}});
  const uint64_t seed = Seed(20261305);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Random(DType::kFloat32, {n}, seed + 1),
                  Zeros(DType::kInt32, {64})};
  std::vector<double> b(n);
  for (int64_t i = 0; i < n; ++i) b[i] = args[1].GetDouble(i);
  int64_t tiles = 0;
  for (int64_t k = 0; k * 64 < n; ++k) {
    if (args[0].GetDouble(k * 64) < lo) break;
    for (int64_t j = 0; j < 64 && k * 64 + j < n; ++j)
      b[k * 64 + j] = 2 * args[0].GetDouble(k * 64 + j);
    ++tiles;
  }
  if (tiles == (n + 63) / 64) {
    // Make a tile past the first start below lo so the break is taken.
    args[0].SetDouble(5 * 64, -0.95);
    for (int64_t j = 5 * 64; j < n; ++j) b[j] = args[1].GetDouble(j);
    tiles = 5;
  }
  Interpret(p, args);
  ExpectClose(args[1], b, {}, "B");
  ExpectEqualInts(args[2], std::vector<int64_t>(64, tiles), "C (tiles before the break)");
  ExpectAllTargetsMatch(p, seed);
  // Refused where the kernel is run or emitted (the frontend sees no
  // thread dependence in the loop itself).
  ir::Program q = Compile(kSource, "per_thread_break_before_copy", {{"N", "600"}});
  Tensors q_args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  absl::Status run = interp::RunProgram(q, q_args);
  EXPECT_NE(run.message().find("T.copy runs under a condition that depends on the thread"),
            std::string::npos)
      << run;
}

TEST(ConformanceLoopExit, AUniformValueReadFromRacingMemoryIsReported) {
  ir::Program p = Compile(kSource, "racy_uniform", {{"N", "8"}});
  Tensors args = {Random(DType::kFloat32, {8}, Seed(20261306)), Zeros(DType::kInt32, {4})};
  absl::Status run = interp::RunProgram(p, args);
  EXPECT_NE(run.message().find("a loop bound or condition that steers the whole block, found "
                               "the same in every thread, is 0 in thread 0 and 1 in thread 1"),
            std::string::npos)
      << run;
}

TEST(ConformanceLoopExit, Refusals) {
  ExpectRefused(kSource, "parallel_break", {{"N", "8"}},
                "`break` inside a T.Parallel loop is not supported");
  ExpectRefused(kSource, "pipelined_continue", {{"N", "8"}},
                "`continue` inside a T.Pipelined loop is not supported");
  ExpectRefused(kSource, "python_loop_runtime_break", {{"N", "8"}},
                "`break` under a runtime condition cannot end a Python loop (it runs at staging "
                "time); loop with T.serial to make it a kernel loop");
  ExpectRefused(kSource, "python_loop_loop_break", {{"N", "8"}},
                "T.loop_break() ends a kernel loop (T.serial, range in kernel code); the innermost "
                "loop here is a Python loop: use `break`");
}

}  // namespace
}  // namespace tilec::conformance
