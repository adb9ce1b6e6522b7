// Conformance: what a statement means, where tilec once compiled something
// else without a word (found on kernels TileLang users wrote):
// - a T.alloc_var variable as a condition (`if flag:`, `not flag`, `a if
//   flag else b`) is its runtime value, not a Python object (always true);
// - a tuple assignment reads its whole right side before the first store
//   (`A[0], A[1] = A[1], A[0]` swaps);
// - a block-level store runs once per block: `x[b] = x[b] + 1` adds one,
//   however many threads the block has (every thread stores the same value,
//   all having read it first);
// - a block-level local or `if` condition that reads shared memory other
//   threads wrote (`v = S[100]` after a T.copy into S) waits at a barrier;
// - a tile T.atomic_add / max / min between two shared buffers runs on the
//   emulator (its checked shared reads are values).
// And forms TileLang users write that tilec refused: a kernel-less
// prim_func in a file whose other functions open kernels, a curried
// generator (the autotuning style, its function returned from a branch),
// GemmWarpPolicy imported from tilelang.tileop.base, T.atomic_addx2 / x4, T.alloc_buffer.
// The interpreter is checked against references computed here, the emitted
// code on the emulator against the interpreter (sm_80, sm_90a, gfx942).
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
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

def var_conditions(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N, 3), "int32")):
        with T.Kernel(1, threads=32):
            for i in T.serial(N):
                flag = T.alloc_var(T.bool)
                flag = A[i] % 3 == 0
                if flag:
                    B[i, 0] = 1
                else:
                    B[i, 0] = -1
                B[i, 1] = 7 if flag else 9
                if not flag:
                    B[i, 2] = 5
                else:
                    B[i, 2] = 6
    return main

def swaps(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            A[0], A[1] = A[1], A[0]
            A[2], A[3], A[4] = A[3], A[4], A[2]
            S[0], S[N - 1] = S[N - 1], S[0]
            T.copy(S, B)
    return main

def block_rmw(N, threads):
    @T.prim_func
    def main(x: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
        with T.Kernel(N, threads=threads) as b:
            S = T.alloc_shared((4,), "float32")
            T.fill(S, 1.0)
            x[b] = x[b] + 1.0
            x[b] = x[b] * 2.0
            S[0] = S[0] + x[b]
            S[0] = S[0] * 3.0
            y[b] = S[0]
    return main

def shared_reads(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((4, 2), "float32")):
        with T.Kernel(4, threads=N) as bx:
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            v = S[N - 1 - bx] * 2.0
            B[bx, 0] = v
            if S[N - 2] > S[N - 3]:
                B[bx, 1] = 1.0
            else:
                B[bx, 1] = -1.0
    return main

def shared_atomics(op):
    @T.prim_func
    def main(A: T.Tensor((8, 16), "float32"), B: T.Tensor((8, 16), "float32"),
             C: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((8, 16), "float32")
            B_s = T.alloc_shared((8, 16), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            if op == "add":
                T.atomic_add(B_s, A_s)
            elif op == "max":
                T.atomic_max(B_s, A_s)
            else:
                T.atomic_min(B_s, A_s)
            T.copy(B_s, C)
    return main
)";

// On the emulator with reads of never-written shared memory as faults: every
// thread stores a block-level result, so a thread that read too early would
// otherwise be hidden by a later thread's store of the right value.
constexpr char kForms[] = R"(
import tilelang
import tilelang.language as T

def sequential():
    @T.prim_func
    def main(B: T.Tensor((4,), "int32")):
        table = [j * j for j in range(8)]
        B[0] = table[5]
        B[1] = len(table)
        for i in range(2):
            B[i + 2] = B[i] + i
    return main

def with_kernel(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0
    return main

def curried(M, N):
    @tilelang.jit(out_idx=[1])
    def kernel_func(block_M, scale=2.0):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=64) as bx:
                for i, j in T.Parallel(block_M, N):
                    if bx * block_M + i < M:
                        B[bx * block_M + i, j] = A[bx * block_M + i, j] * scale
        return main
    return kernel_func

# Upstream's decode kernels: the returned function is chosen in a branch and
# calls the function that defines the prim_func; the policy comes from
# TileLang's tileop module.
def curried_branch(M, N, tune=False):
    from tilelang.tileop.base import GemmWarpPolicy
    def kernel_func(block_M, threads):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((N, N), "float16"),
                 C: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
                A_s = T.alloc_shared((block_M, N), "float16")
                B_s = T.alloc_shared((N, N), "float16")
                C_l = T.alloc_fragment((block_M, N), "float32")
                T.copy(A[bx * block_M, 0], A_s)
                T.copy(B, B_s)
                T.gemm(A_s, B_s, C_l, clear_accum=True, policy=GemmWarpPolicy.FullRow)
                T.copy(C_l, C[bx * block_M, 0])
        return main
    if tune:
        @tilelang.autotune(configs=[])
        def kernel(block_M=None, threads=None):
            return kernel_func(block_M, threads)
        return kernel()
    else:
        def kernel(block_M, threads):
            return kernel_func(block_M, threads)
        return kernel

# An autotuned kernel as upstream writes it: the generator calls the
# @autotune function with nothing, leaving its parameters to the tuner.
def autotuned(M, N):
    def get_configs():
        return [{"block_M": b, "threads": t} for b in [32, 64] for t in [64, 128]]

    @tilelang.autotune(configs=get_configs(), warmup=3, rep=20)
    @tilelang.jit(out_idx=[-1])
    def kernel(block_M=None, threads=None):
        rows = block_M * 2 // 2
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, rows), threads=threads) as bx:
                for i, j in T.Parallel(rows, N):
                    B[bx * rows + i, j] = A[bx * rows + i, j] + 1.0
        return main
    return kernel()

def atomic_lanes(M, N, dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=32):
            for i, j in T.Parallel(M, N // 2):
                T.atomic_addx2(B[i, j * 2], A[i, j * 2])
            for i, j in T.Parallel(M, N // 4):
                T.atomic_addx4(C[i, j * 4:j * 4 + 4], A[i, j * 4:j * 4 + 4])
    return main

def layout_hints(N):
    from tilelang.intrinsics import make_mma_swizzle_layout
    @T.prim_func
    def main(A: T.Tensor((N, 64), "float16"), B: T.Tensor((N, 64), "float16")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((N, 64), "float16")
            R = T.alloc_shared((N, 64), "float16")
            T.annotate_layout({S: make_mma_swizzle_layout(S),
                               R: tilelang.layout.make_wgmma_swizzled_layout(R, k_major=False)})
            T.copy(A, S)
            for i, j in T.Parallel(N, 64):
                R[i, j] = S[i, 63 - j]
            T.copy(R, B)
    return main

def warp_shuffle():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            v = A[tx]
            B[tx] = T.tvm_warp_shuffle(0xffffffff, v, (tx + 3) % 32, 32, 32)
    return main

def if_frames(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(N):
                with T.If(A[i] > 0), T.Then():
                    B[i] = A[i] * 2.0
                with T.If(A[i] <= 0):
                    with T.Then():
                        B[i] = 1.0
                    with T.Else():
                        B[i] = B[i] + 3.0
    return main

def builtins_range(N):
    import builtins
    loop = builtins.range
    @T.prim_func
    def main(B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32):
            for i in loop(N):
                B[i] = i * 3
    return main

def batched_reduce(batch):
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128):
            src = T.alloc_shared((64, 32), "float32")
            dst = T.alloc_fragment((64,), "float32")
            T.copy(A, src)
            T.reduce_sum(src, dst, dim=1, batch=batch)
            T.copy(dst, B)
    return main

def alloc_buffer(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        W = T.alloc_buffer((N,), "float32")
        with T.Kernel(1, threads=64):
            S = T.alloc_buffer((N,), "float32", scope="shared")
            T.copy(A, S)
            for i in T.Parallel(N):
                W[i] = S[i] + 1.0
        with T.Kernel(1, threads=64):
            for i in T.Parallel(N):
                B[i] = W[i] * 2.0
    return main
)";

TEST(ConformanceSemantics, AllocVarConditionsAreRuntimeValues) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kSource, "var_conditions", {{"N", "40"}});
  Tensors args = {Random(DType::kInt32, {40}, seed), Zeros(DType::kInt32, {40, 3})};
  Interpret(p, args);
  std::vector<int64_t> expected;
  int taken = 0;
  for (int64_t i = 0; i < 40; ++i) {
    const bool flag = args[0].GetInt(i) % 3 == 0;
    taken += flag;
    expected.insert(expected.end(), {flag ? 1 : -1, flag ? 7 : 9, flag ? 6 : 5});
  }
  ASSERT_GT(taken, 0);
  ASSERT_LT(taken, 40);  // both branches run: the seed must give both kinds
  ExpectEqualInts(args[1], expected);
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSemantics, TupleAssignmentReadsTheRightSideFirst) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kSource, "swaps", {{"N", "64"}});
  Tensors args = {Random(DType::kFloat32, {64}, seed), Zeros(DType::kFloat32, {64})};
  std::vector<double> a(64), b(64);
  for (int64_t i = 0; i < 64; ++i) a[i] = b[i] = args[0].GetDouble(i);
  Interpret(p, args);
  std::swap(b[0], b[63]);
  std::vector<double> want_a = a;
  want_a[0] = a[1];
  want_a[1] = a[0];
  want_a[2] = a[3];
  want_a[3] = a[4];
  want_a[4] = a[2];
  ExpectClose(args[0], want_a, interp::Tolerance{}, "A");
  ExpectClose(args[1], b, interp::Tolerance{}, "B");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSemantics, BlockLevelReadModifyWriteRunsOncePerBlock) {
  const uint64_t seed = Seed(20261127);
  for (int threads : {32, 128, 256}) {
    SCOPED_TRACE(threads);
    ir::Program p =
        Compile(kSource, "block_rmw", {{"N", "6"}, {"threads", std::to_string(threads)}});
    Tensors args = {Random(DType::kFloat32, {6}, seed), Zeros(DType::kFloat32, {6})};
    std::vector<double> x(6), y(6);
    for (int64_t i = 0; i < 6; ++i) {
      x[i] = (static_cast<float>(args[0].GetDouble(i)) + 1.0f) * 2.0f;
      y[i] = (1.0f + static_cast<float>(x[i])) * 3.0f;
    }
    Interpret(p, args);
    ExpectClose(args[0], x, interp::DefaultTolerance(DType::kFloat32), "x");
    ExpectClose(args[1], y, interp::DefaultTolerance(DType::kFloat32), "y");
    ExpectAllTargetsMatch(p, seed);
  }
}

TEST(ConformanceSemantics, BlockLevelReadsOfSharedMemoryWaitForItsWriters) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kSource, "shared_reads", {{"N", "128"}});
  Tensors args = {Random(DType::kFloat32, {128}, seed), Zeros(DType::kFloat32, {4, 2})};
  std::vector<double> want;
  for (int64_t b = 0; b < 4; ++b) {
    want.push_back(2.0 * static_cast<float>(args[0].GetDouble(127 - b)));
    want.push_back(args[0].GetDouble(126) > args[0].GetDouble(125) ? 1.0 : -1.0);
  }
  Interpret(p, args);
  ExpectClose(args[1], want, interp::DefaultTolerance(DType::kFloat32), "B");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSemantics, TileAtomicsBetweenSharedBuffers) {
  const uint64_t seed = Seed(20261127);
  for (const char* op : {"add", "max", "min"}) {
    SCOPED_TRACE(op);
    // A bare word naming a Python builtin (-D op=max) binds the string.
    ir::Program p = Compile(kSource, "shared_atomics", {{"op", op}});
    Tensors args = {Random(DType::kFloat32, {8, 16}, seed),
                    Random(DType::kFloat32, {8, 16}, seed + 1), Zeros(DType::kFloat32, {8, 16})};
    std::vector<double> want(128);
    for (int64_t i = 0; i < 128; ++i) {
      const float a = static_cast<float>(args[0].GetDouble(i));
      const float b = static_cast<float>(args[1].GetDouble(i));
      want[i] = std::string(op) == "add"   ? a + b
                : std::string(op) == "max" ? std::fmax(a, b)
                                           : std::fmin(a, b);
    }
    Interpret(p, args);
    ExpectClose(args[2], want, interp::DefaultTolerance(DType::kFloat32), "C");
    ExpectAllTargetsMatch(p, seed);
  }
}

TEST(ConformanceSemantics, AKernelLessFunctionBesideKernelsRunsAsOneThread) {
  ir::Program p = Compile(kForms, "sequential");
  Tensors args = {Zeros(DType::kInt32, {4})};
  Interpret(p, args);
  ExpectEqualInts(args[0], {25, 8, 25, 9});
  ExpectAllTargetsMatch(p, Seed(20261127));
}

TEST(ConformanceSemantics, CurriedGeneratorsBindTheReturnedFunctionsParameters) {
  const uint64_t seed = Seed(20261127);
  for (const char* scale : {"", "0.5"}) {
    BindingList bindings = {{"M", "100"}, {"N", "24"}, {"block_M", "32"}};
    if (*scale) bindings.push_back({"scale", scale});
    ir::Program p = Compile(kForms, "curried", bindings);
    Tensors args = {Random(DType::kFloat32, {100, 24}, seed), Zeros(DType::kFloat32, {100, 24})};
    Interpret(p, args);
    const double k = *scale ? 0.5 : 2.0;
    ExpectClose(args[1], Table(2400, [&](int64_t i) { return args[0].GetDouble(i) * k; }),
                interp::DefaultTolerance(DType::kFloat32));
    ExpectAllTargetsMatch(p, seed);
  }
  ExpectRefused(kForms, "curried", {{"M", "100"}, {"N", "24"}, {"block_N", "32"}},
                "names no parameter of `curried`; its parameters are: M, N, block_M, scale", false);
}

TEST(ConformanceSemantics, CurriedGeneratorReturningFromABranch) {
  const uint64_t seed = Seed(20261128);
  ir::Program p = Compile(kForms, "curried_branch",
                          {{"M", "100"}, {"N", "32"}, {"block_M", "64"}, {"threads", "128"}});
  Tensors args = {Random(DType::kFloat16, {100, 32}, seed),
                  Random(DType::kFloat16, {32, 32}, seed + 1), Zeros(DType::kFloat32, {100, 32})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, 100, 32, 32), interp::DefaultTolerance(DType::kFloat16));
  ExpectAllTargetsMatch(p, seed);
}

// What the generator's call leaves open in an @autotune function is bound
// with -D, as the generator's own parameters are.
TEST(ConformanceSemantics, AutotunedFunctionsTakeTheirParametersFromTheBindings) {
  const uint64_t seed = Seed(20261129);
  for (const char* block : {"32", "64"}) {
    SCOPED_TRACE(block);
    ir::Program p = Compile(kForms, "autotuned",
                            {{"M", "100"}, {"N", "24"}, {"block_M", block}, {"threads", "64"}});
    Tensors args = {Random(DType::kFloat32, {100, 24}, seed), Zeros(DType::kFloat32, {100, 24})};
    Interpret(p, args);
    ExpectClose(args[1], Table(2400, [&](int64_t i) { return args[0].GetDouble(i) + 1.0; }),
                interp::DefaultTolerance(DType::kFloat32));
    ExpectAllTargetsMatch(p, seed);
  }
  // Left open, the tuner's parameter is an unbound tile parameter (for
  // `tilec recommend`), not None.
  ir::Program open = Compile(kForms, "autotuned", {{"M", "100"}, {"N", "24"}, {"block_M", "32"}});
  std::map<std::string, std::optional<int64_t>> tile;
  for (const ir::TileParam& t : open.tile_params) tile[t.var->name] = t.value;
  EXPECT_EQ(tile, (std::map<std::string, std::optional<int64_t>>{{"block_M", 32},
                                                                 {"threads", std::nullopt}}));
  ir::Program tuned =
      Compile(kForms, "curried_branch",
              {{"M", "100"}, {"N", "32"}, {"tune", "True"}, {"block_M", "64"}, {"threads", "128"}});
  Tensors args = {Random(DType::kFloat16, {100, 32}, seed),
                  Random(DType::kFloat16, {32, 32}, seed + 1), Zeros(DType::kFloat32, {100, 32})};
  Interpret(tuned, args);
  ExpectClose(args[2], GemmReference(args, 100, 32, 32), interp::DefaultTolerance(DType::kFloat16));
}

TEST(ConformanceSemantics, AtomicAddx2AndAddx4AddConsecutiveElements) {
  const uint64_t seed = Seed(20261127);
  for (const char* dtype : {"float32", "float16"}) {
    SCOPED_TRACE(dtype);
    const DType t = std::string(dtype) == "float32" ? DType::kFloat32 : DType::kFloat16;
    ir::Program p =
        Compile(kForms, "atomic_lanes", {{"M", "8"}, {"N", "16"}, {"dtype", Quoted(dtype)}});
    Tensors args = {Random(t, {8, 16}, seed), Random(t, {8, 16}, seed + 1),
                    Random(t, {8, 16}, seed + 2)};
    std::vector<double> b(128), c(128);
    for (int64_t i = 0; i < 128; ++i) {
      b[i] = args[1].GetDouble(i) + args[0].GetDouble(i);
      c[i] = args[2].GetDouble(i) + args[0].GetDouble(i);
    }
    Interpret(p, args);
    ExpectClose(args[1], b, interp::DefaultTolerance(t), "B");
    ExpectClose(args[2], c, interp::DefaultTolerance(t), "C");
    ExpectAllTargetsMatch(p, seed);
  }
}

TEST(ConformanceSemantics, AllocBufferTakesItsScope) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kForms, "alloc_buffer", {{"N", "64"}});
  Tensors args = {Random(DType::kFloat32, {64}, seed), Zeros(DType::kFloat32, {64})};
  Interpret(p, args);
  ExpectClose(
      args[1],
      Table(64,
            [&](int64_t i) {
              return static_cast<double>(static_cast<float>(args[0].GetDouble(i) + 1.0f) * 2.0f);
            }),
      interp::DefaultTolerance(DType::kFloat32));
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSemantics, TirIfThenElseFrames) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kForms, "if_frames", {{"N", "64"}});
  Tensors args = {Random(DType::kFloat32, {64}, seed), Zeros(DType::kFloat32, {64})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(64,
                    [&](int64_t i) {
                      const float a = static_cast<float>(args[0].GetDouble(i));
                      return a > 0 ? a * 2.0f + 3.0f : 1.0f;
                    }),
              {});
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSemantics, BuiltinsModuleNamesPythonsBuiltins) {
  ir::Program p = Compile(kForms, "builtins_range", {{"N", "10"}});
  Tensors args = {Zeros(DType::kInt32, {10})};
  Interpret(p, args);
  ExpectEqualInts(args[0], {0, 3, 6, 9, 12, 15, 18, 21, 24, 27});
  ExpectAllTargetsMatch(p, Seed(20261127));
}

TEST(ConformanceSemantics, ReduceBatchIsALoweringKnob) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kForms, "batched_reduce", {{"batch", "4"}});
  Tensors args = {Random(DType::kFloat32, {64, 32}, seed), Zeros(DType::kFloat32, {64})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(64,
                    [&](int64_t r) {
                      double sum = 0;
                      for (int64_t c = 0; c < 32; ++c) sum += args[0].GetDouble(r * 32 + c);
                      return sum;
                    }),
              {1e-4, 1e-4});
  ExpectAllTargetsMatch(p, seed);
  ExpectRefused(kForms, "batched_reduce", {{"batch", "0"}}, "batch must be at least 1, got 0");
}

TEST(ConformanceSemantics, SwizzledLayoutHintsOfEveryKind) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kForms, "layout_hints", {{"N", "32"}});
  Tensors args = {Random(DType::kFloat16, {32, 64}, seed), Zeros(DType::kFloat16, {32, 64})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(2048, [&](int64_t i) { return args[0].GetDouble(i / 64 * 64 + 63 - i % 64); }),
              {});
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSemantics, TvmWarpShuffleIsShflSync) {
  const uint64_t seed = Seed(20261127);
  ir::Program p = Compile(kForms, "warp_shuffle");
  Tensors args = {Random(DType::kFloat32, {64}, seed), Zeros(DType::kFloat32, {64})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(64, [&](int64_t t) { return args[0].GetDouble(t / 32 * 32 + (t + 3) % 32); }),
              {});
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

}  // namespace
}  // namespace tilec::conformance
