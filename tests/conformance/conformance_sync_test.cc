// Conformance: synchronisation and program order as TileLang documents them
// (T.alloc_barrier and the mbarrier operations, T.ws, T.print, register and
// launch hints, the explicitly asynchronous Hopper forms, T.sync_grid, and
// kernels written as TVMScript or without T.Kernel). The interpreter is
// checked against references computed here, the emitted code on the SIMT
// emulator against the interpreter.
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

def ws(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=256) as bx:
            S = T.alloc_shared((block,), "float32")
            full = T.alloc_barrier(128)
            T.set_max_nreg(240, 1)
            T.pdl_sync()
            with T.ws(0):
                T.copy(A[bx * block], S)
                T.barrier_arrive(full)
            with T.ws(1):
                T.barrier_wait(full, 0)
                for i in T.Parallel(block):
                    S[i] = S[i] * 2.0 + 1.0
                T.print(S)
                T.copy(S, B[bx * block])
            T.pdl_trigger()
    return main

def ws_thread(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256):
            with T.ws(1):
                tx = T.get_thread_binding()
                A[tx] = 1.0
    return main

def hints(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        with T.Kernel(T.ceildiv(N, 64), threads=128) as bx:
            T.pdl_sync()
            T.set_max_nreg(232, 1)
            T.dec_max_nreg(40)
            T.inc_max_nreg(240)
            T.no_set_max_nreg()
            T.annotate_min_blocks_per_sm(2)
            T.disable_warp_group_reg_alloc()
            for i in T.Parallel(64):
                B[bx * 64 + i] = A[bx * 64 + i] - 0.5
            T.pdl_trigger()
    return main

def print_values(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            F = T.alloc_fragment((64,), "float32")
            T.copy(A[bx * 64], F)
            T.print(F, msg="tile")
            T.print(bx)
            for i in T.Parallel(64):
                B[bx * 64 + i] = F[i] * F[i]
    return main

def mbarriers(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            S = T.alloc_shared((block,), "float32")
            bars = T.alloc_barrier([128, 128])
            T.mbarrier_expect_tx(bars[0], block * 4)
            T.copy(A[bx * block], S)
            T.mbarrier_arrive(bars[0])
            T.mbarrier_wait_parity(bars[0], 0)
            T.sync_threads()
            for i in T.Parallel(block):
                B[bx * block + i] = S[block - 1 - i]
            T.sync_warp()
    return main

def explicit_hopper(M, N, K, bm=64, bn=64, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128,
                      cluster_dims=(2, 1, 1)) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            bars = T.create_list_of_mbarrier(128)
            pipe = T.alloc_barrier([128] * 2)
            T.clear(C_l)
            for k in T.serial(T.ceildiv(K, bk)):
                T.tma_copy(A[by * bm, k * bk], A_s, barrier=T.get_mbarrier(0))
                T.async_copy(B[k * bk, bx * bn], B_s)
                T.ptx_commit_group()
                T.ptx_wait_group(0)
                T.assume(k * bk < K)
                T.cp_async_barrier_noinc(bars[0])
                T.mbarrier_wait_parity(T.get_mbarrier(0), k % 2)
                # The older API's barrier index, by keyword.
                T.mbarrier_arrive(mbarrier=k % 2)
                T.mbarrier_wait_parity(mbarrier=0, parity=k % 2)
                # A list of barriers indexed by a runtime value.
                T.mbarrier_arrive(pipe[k % 2])
                T.mbarrier_wait_parity(pipe[k % 2], k // 2 % 2)
                T.fence_proxy_async()
                T.warpgroup_arrive()
                T.wgmma_gemm(A_s, B_s, C_l, emit_arrive=True)
                T.warpgroup_commit_batch()
                T.warpgroup_wait(0)
                T.wait_wgmma(0)
            T.device_assert(bx >= 0, "block index")
            T.copy(C_l, C[by * bm, bx * bn])
            T.tma_store_arrive()
            T.tma_store_wait()
    return main

# Each part reads what other blocks wrote before the barrier.

def grid_sync(N, threads=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), P: T.Tensor((N,), "float32"),
             Q: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // threads, threads=threads) as bx:
            S = T.alloc_shared((threads,), "float32")
            base = bx * threads
            for i in T.Parallel(threads):
                P[base + i] = A[base + i] * 2.0
            T.sync_grid()
            for i in T.Parallel(threads):
                S[i] = P[(base + i + threads) % N]
            for i in T.Parallel(threads):
                Q[base + i] = S[threads - 1 - i] + 1.0
            T.sync_global()
            for i in T.Parallel(threads):
                B[base + i] = Q[(base + i + 2 * threads) % N] - A[base + i]
    return main

def grid_sync_refused(N, which):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // 32, threads=32) as bx:
            S = T.alloc_shared((32,), "float32")
            for i in T.Parallel(32):
                S[i] = A[bx * 32 + i]
            v = S[bx % 32] * 2.0
            if which == "loop":
                for k in T.serial(2):
                    T.sync_grid()
            else:
                T.sync_grid()
            for i in T.Parallel(32):
                if which == "buffer":
                    B[bx * 32 + i] = S[i]
                elif which == "name":
                    B[bx * 32 + i] = v
                else:
                    B[bx * 32 + i] = 1.0
    return main
    return main
)";

// Barriers, T.ws, T.print and the hints run in program order.
TEST(ConformanceSync, BarriersWarpSpecialisationPrintAndHints) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "ws", {{"N", "150"}});
  const uint64_t seed = Seed(513);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t i) {
                      return static_cast<double>(static_cast<float>(args[0].GetDouble(i) * 2 + 1));
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

TEST(ConformanceSync, ThreadIndexInsideWsRefused) {
  ExpectRefused(kSource, "ws_thread", {{"N", "256"}},
                "the thread index inside `with T.ws(...)` is not supported");
}

TEST(ConformanceSync, RegisterAndLaunchHintsChangeNoValue) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "hints", {{"N", "150"}});
  const uint64_t seed = Seed(514);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t i) {
                      return static_cast<double>(static_cast<float>(args[0].GetDouble(i) - 0.5));
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

// TVMScript's T, as older TileLang kernels import it.
constexpr char kTvmScript[] = R"(
from tvm.script import tir as T

@T.prim_func
def scaled(A: T.Buffer((100,), T.float32), B: T.Buffer((100,), T.float32)):
    T.func_attr({"tir.noalias": True})
    with T.Kernel(T.ceildiv(100, 32), threads=32) as bx:
        for i in T.Parallel(32):
            if bx * 32 + i < 100:
                B[bx * 32 + i] = A[bx * 32 + i] * T.float32(3)
)";

// A TIR function without T.Kernel is sequential code: one thread runs it.
constexpr char kKernelLess[] = R"(
from tvm.script import tir as T

@T.prim_func
def reversed_tail(A: T.Buffer((16,), T.float32), B: T.Buffer((4,), T.float32)):
    T.func_attr({"tir.noalias": True})
    for i in T.serial(4):
        B[i] = A[-i - 1] + B[(i + 3) % 4]
)";

// A prim_func whose kernel is opened by the macro it calls is not
// kernel-less: it must not be wrapped in a kernel of its own.
constexpr char kKernelInMacro[] = R"(
import tilelang.language as T

def twice(N):
    @T.macro
    def launch(A, B):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            for i in T.Parallel(32):
                B[bx * 32 + i] = A[bx * 32 + i] * 2.0

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        launch(A, B)
    return main
)";

TEST(ConformanceSync, AKernelOpenedByAMacroIsNotWrapped) {
  ir::Program p = Compile(kKernelInMacro, "twice", {{"N", "100"}});
  const uint64_t seed = Seed(519);
  Tensors args = {Random(DType::kFloat32, {100}, seed), Zeros(DType::kFloat32, {100})};
  Interpret(p, args);
  ExpectClose(args[1], Table(100, [&](int64_t i) { return args[0].GetDouble(i) * 2; }), {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceSync, AFunctionWithoutTKernelRunsAsOneThread) {
  ir::Program p = Compile(kKernelLess, "reversed_tail", {});
  const uint64_t seed = Seed(518);
  Tensors args = {Random(DType::kFloat32, {16}, seed), Random(DType::kFloat32, {4}, seed + 1)};
  // In program order: B[0] reads the old B[3]; B[1..3] read the new B[0..2].
  std::vector<double> b(4);
  for (int i = 0; i < 4; ++i) b[i] = args[1].GetDouble(i);
  for (int i = 0; i < 4; ++i) b[i] = static_cast<float>(args[0].GetDouble(15 - i) + b[(i + 3) % 4]);
  Interpret(p, args);
  ExpectClose(args[1], b, {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceSync, TvmScriptTAndFuncAttr) {
  ir::Program p = Compile(kTvmScript, "scaled", {});
  const uint64_t seed = Seed(516);
  Tensors args = {Random(DType::kFloat32, {100}, seed), Zeros(DType::kFloat32, {100})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(100,
                    [&](int64_t i) {
                      return static_cast<double>(static_cast<float>(args[0].GetDouble(i)) * 3.0f);
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceSync, PrintChangesNoValue) {
  const int64_t n = 100;
  ir::Program p = Compile(kSource, "print_values", {{"N", "100"}});
  const uint64_t seed = Seed(515);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t i) {
                      double a = args[0].GetDouble(i);
                      return static_cast<double>(static_cast<float>(a * a));
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceSync, MbarriersAndSyncThreadsRunInProgramOrder) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "mbarriers", {{"N", "150"}});
  const uint64_t seed = Seed(517);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t i) {
                      int64_t src = i / 64 * 64 + 63 - i % 64;
                      return src < n ? args[0].GetDouble(src) : 0.0;
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true}, kBothArchs);
}

// The explicitly asynchronous Hopper forms (T.tma_copy, T.async_copy,
// T.wgmma_gemm) and the waits spelled out for them run in program order; a
// cluster launch runs its blocks independently.
TEST(ConformanceSync, ExplicitTmaAndWgmmaFormsRunInProgramOrder) {
  const int64_t m = 100, n = 72, k = 90;
  ir::Program p = Compile(kSource, "explicit_hopper", {{"M", "100"}, {"N", "72"}, {"K", "90"}});
  const uint64_t seed = Seed(519);
  Tensors args = {Random(DType::kFloat16, {m, k}, seed), Random(DType::kFloat16, {k, n}, seed + 1),
                  Zeros(DType::kFloat32, {m, n})};
  Interpret(p, args);
  ExpectClose(args[2], GemmReference(args, m, n, k), {.atol = 1e-3, .rtol = 1e-4}, "C");
  ExpectTargetsMatch(p, {.seed = seed}, kBothArchs);
}

// T.sync_grid() / T.sync_global() at the kernel's top level: the kernel is
// cut into kernels that run in order, so each part sees everything the whole
// grid wrote before the barrier.
TEST(ConformanceSync, GridSyncCutsTheKernel) {
  const int64_t n = 256, t = 64;
  ir::Program p = Compile(kSource, "grid_sync", {{"N", "256"}});
  const uint64_t seed = Seed(520);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n}),
                  Zeros(DType::kFloat32, {n}), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  auto a = [&](int64_t k) { return args[0].GetDouble(((k % n) + n) % n); };
  auto q = [&](int64_t k) {
    const int64_t base = k / t * t, i = k % t;
    return 2.0 * a(base + (t - 1 - i) + t) + 1.0;
  };
  ExpectClose(args[1], Table(n, [&](int64_t k) { return 2.0 * a(k); }), {0, 0}, "P");
  ExpectClose(args[2], Table(n, q), interp::DefaultTolerance(DType::kFloat32), "Q");
  ExpectClose(args[3], Table(n, [&](int64_t k) { return q((k + 2 * t) % n) - a(k); }),
              interp::DefaultTolerance(DType::kFloat32), "B");
  ExpectAllTargetsMatch(p, seed);
}

TEST(ConformanceSync, GridSyncAcrossABlocksOwnStorageRefused) {
  ExpectRefused(kSource, "grid_sync_refused", {{"N", "64"}, {"which", Quoted("buffer")}},
                "`S` is used on both sides of T.sync_grid(); tilec cuts the kernel at the barrier "
                "into kernels that run in order, and a block's shared, fragment and local buffers "
                "do not survive the cut");
  ExpectRefused(kSource, "grid_sync_refused", {{"N", "64"}, {"which", Quoted("name")}},
                "`v` is computed before T.sync_grid() from a block's own buffers and read after "
                "it");
  ExpectRefused(kSource, "grid_sync_refused", {{"N", "64"}, {"which", Quoted("loop")}},
                "T.sync_grid() inside a loop or a branch is not supported");
  // Used on one side only, the buffer goes with that part.
  ir::Program p = Compile(kSource, "grid_sync_refused", {{"N", "64"}, {"which", Quoted("none")}});
  Tensors args = {Random(DType::kFloat32, {64}, Seed(521)), Zeros(DType::kFloat32, {64})};
  Interpret(p, args);
  ExpectClose(args[1], Table(64, [](int64_t) { return 1.0; }), {0, 0});
}

}  // namespace
}  // namespace tilec::conformance
