// Conformance: threads, warps, atomics and synchronisation as TileLang
// documents them (threads=(x, y, z), T.get_thread_binding, T.thread_binding,
// the warp queries, T.shfl_*, T.warp_reduce_*, T.atomic_add / max / min in
// scalar and tile forms with memory_order, T.alloc_barrier and the barrier
// operations, T.ws, T.print, register and launch hints). The interpreter is
// checked against lane-by-lane references computed here, the emitted CUDA on
// the SIMT emulator against the interpreter.
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

def threads3(X, Y, Z):
    @T.prim_func
    def main(O: T.Tensor((Z, Y, X), "int32")):
        with T.Kernel(1, threads=(X, Y, Z)):
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            tz = T.get_thread_binding(2)
            O[tz, ty, tx] = tx + 10 * ty + 100 * tz
    return main

def thread_binding(N, extent=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            t = T.thread_binding(0, extent, thread="threadIdx.x")
            B[bx * 32 + t] = A[bx * 32 + 31 - t]
    return main

def warp_info(threads):
    @T.prim_func
    def main(Lane: T.Tensor((threads,), "int32"), Warp: T.Tensor((threads,), "int32"),
             Group: T.Tensor((threads,), "int32"), Elect: T.Tensor((threads,), "int32")):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            Lane[tx] = T.get_lane_idx()
            Warp[tx] = T.get_warp_idx()
            Group[tx] = T.get_warp_group_idx()
            Elect[tx] = T.shuffle_elect(64)
    return main

def shuffles(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Xor: T.Tensor((N,), "float32"),
             Down: T.Tensor((N,), "float32"), Up: T.Tensor((N,), "float32"),
             Sync: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            tx = T.get_thread_binding()
            i = bx * 64 + tx
            Xor[i] = T.shfl_xor(A[i], 5)
            Down[i] = T.shfl_down(A[i], 3, width=16)
            Up[i] = T.shfl_up(A[i], 2)
            Sync[i] = T.shfl_sync(A[i], 9, width=8)
    return main

def warp_reduce(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Sum: T.Tensor((N,), "int32"),
             Mx: T.Tensor((N,), "int32"), Mn: T.Tensor((N,), "int32"),
             And: T.Tensor((N,), "int32"), Or: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            tx = T.get_thread_binding()
            i = bx * 64 + tx
            Sum[i] = T.warp_reduce_sum(A[i])
            Mx[i] = T.warp_reduce_max(A[i])
            Mn[i] = T.warp_reduce_min(A[i])
            And[i] = T.warp_reduce_bitand(A[i] + 16)
            Or[i] = T.warp_reduce_bitor(A[i] + 16)
    return main

def warp_reduce_partial(threads):
    @T.prim_func
    def main(A: T.Tensor((threads,), "float32"), B: T.Tensor((threads,), "int32"),
             Mx: T.Tensor((threads,), "float32"), Sum: T.Tensor((threads,), "int32")):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            Mx[tx] = T.warp_reduce_max(A[tx])
            Sum[tx] = T.warp_reduce_sum(B[tx])
    return main

def atomic_scalar(N, H, op="add", order=None):
    @T.prim_func
    def main(Idx: T.Tensor((N,), "int32"), V: T.Tensor((N,), "int32"),
             Hist: T.Tensor((H,), "int32")):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < N:
                    if op == "add":
                        T.atomic_add(Hist[Idx[bx * 64 + i] + 8], V[bx * 64 + i],
                                     memory_order=order)
                    elif op == "max":
                        T.atomic_max(Hist[Idx[bx * 64 + i] + 8], V[bx * 64 + i],
                                     memory_order=order)
                    else:
                        T.atomic_min(Hist[Idx[bx * 64 + i] + 8], V[bx * 64 + i],
                                     memory_order=order)
    return main

def atomic_tile(M, N, op="add", bm=8, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), O: T.Tensor((bm, bn), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=64) as bx:
            S = T.alloc_shared((bm, bn), "float32")
            T.copy(A[bx * bm, 0], S)
            if op == "add":
                T.atomic_add(O[0, 0], S)
            elif op == "max":
                T.atomic_max(O[0:bm, 0:bn], S)
            else:
                T.atomic_min(O, S)
    return main

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

def per_thread_copy(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            S = T.alloc_shared((32,), "float32")
            T.copy(A[tx], S)
            T.copy(S, B)
    return main

def ws_thread(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256):
            with T.ws(1):
                tx = T.get_thread_binding()
                A[tx] = 1.0
    return main

def atomic_local(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            L = T.alloc_local((4,), "float32")
            T.atomic_max(L[0], A[0])
    return main

def import_source(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            T.import_source("__device__ float f(float x) { return x; }")
            A[0] = 1.0
    return main

# Every block writes what the block and thread queries say, at its own
# block index and thread.
def queries(GX, GY, TX, TY):
    @T.prim_func
    def main(Out: T.Tensor((GY, GX, TY, TX, 8), "int32")):
        with T.Kernel(GX, GY, threads=(TX, TY)) as (bx, by):
            bs = T.get_block_bindings()
            ts = T.get_thread_bindings()
            ext = T.get_block_extents()
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            Out[by, bx, ty, tx, 0] = T.get_block_binding(0) + 100 * T.get_block_binding(1)
            Out[by, bx, ty, tx, 1] = bs[0] + 100 * bs[1] + 10000 * T.get_block_binding(2)
            Out[by, bx, ty, tx, 2] = ts[0] + 100 * ts[1]
            Out[by, bx, ty, tx, 3] = ext[0] + 100 * ext[1] + 10000 * T.get_block_extent(2)
            Out[by, bx, ty, tx, 4] = T.get_thread_extent(0) + 100 * T.get_thread_extent(1)
            Out[by, bx, ty, tx, 5] = T.get_thread_extents()[0] * T.get_thread_extent(2)
            Out[by, bx, ty, tx, 6] = len(bs) + 10 * len(ts)
            Out[by, bx, ty, tx, 7] = T.get_block_extent(1)
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

def warp_idx_sync(threads):
    @T.prim_func
    def main(W: T.Tensor((threads,), "int32"), W16: T.Tensor((threads,), "int32")):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            W[tx] = T.get_warp_idx_sync()
            W16[tx] = T.get_warp_idx_sync(16)
    return main

def atomic_add_dtype(N, H, dtype):
    @T.prim_func
    def main(Idx: T.Tensor((N,), "int32"), V: T.Tensor((N,), dtype), Hist: T.Tensor((H,), dtype),
             T2: T.Tensor((8, 32), dtype)):
        with T.Kernel(T.ceildiv(N, 64), threads=64) as bx:
            S = T.alloc_shared((8, 32), dtype)
            for i, j in T.Parallel(8, 32):
                S[i, j] = V[(bx * 256 + i * 32 + j) % N]
            T.atomic_add(T2, S)
            for i in T.Parallel(64):
                if bx * 64 + i < N:
                    T.atomic_add(Hist[Idx[bx * 64 + i] + 8], V[bx * 64 + i])
    return main
)";

TEST(ConformanceThreads, ThreeDimensionalBlock) {
  const int64_t x = 8, y = 4, z = 3;
  ir::Program p = Compile(kSource, "threads3", {{"X", "8"}, {"Y", "4"}, {"Z", "3"}});
  Tensors args = {Zeros(DType::kInt32, {z, y, x})};
  Interpret(p, args);
  std::vector<int64_t> want;
  for (int64_t k = 0; k < z; ++k) {
    for (int64_t j = 0; j < y; ++j) {
      for (int64_t i = 0; i < x; ++i) want.push_back(i + 10 * j + 100 * k);
    }
  }
  ExpectEqualInts(args[0], want);
  ExpectTargetsMatch(p, {.seed = Seed(501), .exact = true});
}

TEST(ConformanceThreads, ThreadBindingValue) {
  const int64_t n = 80;
  ir::Program p = Compile(kSource, "thread_binding", {{"N", "80"}});
  const uint64_t seed = Seed(502);
  Tensors args = {Random(DType::kFloat32, {n}, seed), Zeros(DType::kFloat32, {n})};
  Interpret(p, args);
  ExpectClose(args[1],
              Table(n,
                    [&](int64_t i) {
                      int64_t src = i / 32 * 32 + 31 - i % 32;
                      return src < n ? args[0].GetDouble(src) : 0.0;
                    }),
              {});
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceThreads, BlockAndThreadQueries) {
  const int64_t gx = 3, gy = 2, tx = 8, ty = 4;
  ir::Program p = Compile(kSource, "queries", {{"GX", "3"}, {"GY", "2"}, {"TX", "8"}, {"TY", "4"}});
  Tensors args = {Zeros(DType::kInt32, {gy, gx, ty, tx, 8})};
  Interpret(p, args);
  std::vector<int64_t> want;
  for (int64_t by = 0; by < gy; ++by) {
    for (int64_t bx = 0; bx < gx; ++bx) {
      for (int64_t y = 0; y < ty; ++y) {
        for (int64_t x = 0; x < tx; ++x) {
          for (int64_t v : {bx + 100 * by, bx + 100 * by, x + 100 * y, gx + 100 * gy + 10000,
                            tx + 100 * ty, tx, int64_t{2 + 10 * 2}, gy}) {
            want.push_back(v);
          }
        }
      }
    }
  }
  ExpectEqualInts(args[0], want);
  ExpectTargetsMatch(p, {.seed = Seed(503), .exact = true});
}

TEST(ConformanceThreads, ThreadBindingOfAnotherExtentRefused) {
  ExpectRefused(kSource, "thread_binding", {{"N", "80"}, {"extent", "16"}},
                "T.thread_binding over 16 threads along threadIdx.x, but the block has 32");
}

class ConformanceWarpInfo : public ::testing::Test {
 protected:
  void SetUp() override {
    p_ = Compile(kSource, "warp_info", {{"threads", "320"}});
    for (int i = 0; i < 4; ++i) args_.push_back(Zeros(DType::kInt32, {320}));
    Interpret(p_, args_);
  }
  std::vector<int64_t> Of(int64_t (*f)(int64_t)) {
    std::vector<int64_t> out(320);
    for (int64_t t = 0; t < 320; ++t) out[t] = f(t);
    return out;
  }
  ir::Program p_;
  Tensors args_;
};

TEST_F(ConformanceWarpInfo, GetLaneIdx) {
  ExpectEqualInts(args_[0], Of([](int64_t t) { return t % 32; }));
  ExpectTargetsMatch(p_, {.seed = Seed(503), .exact = true});
}
TEST_F(ConformanceWarpInfo, GetWarpIdx) {
  ExpectEqualInts(args_[1], Of([](int64_t t) { return t / 32; }));
}
TEST_F(ConformanceWarpInfo, GetWarpGroupIdx) {
  ExpectEqualInts(args_[2], Of([](int64_t t) { return t / 128; }));
}
TEST_F(ConformanceWarpInfo, ShuffleElect) {
  ExpectEqualInts(args_[3], Of([](int64_t t) { return int64_t{t % 64 == 0}; }));
}

class ConformanceShuffles : public ::testing::Test {
 protected:
  static constexpr int64_t kN = 150;
  void SetUp() override {
    p_ = Compile(kSource, "shuffles", {{"N", "150"}});
    seed_ = Seed(504);
    args_ = {Random(DType::kFloat32, {kN}, seed_)};
    for (int i = 0; i < 4; ++i) args_.push_back(Zeros(DType::kFloat32, {kN}));
    Interpret(p_, args_);
  }
  // Each thread's value is A[i] (0 past the end); `src(lane)` is the lane
  // whose value thread `lane` gets.
  std::vector<double> Expected(int64_t (*src)(int64_t)) {
    return Table(kN, [&](int64_t i) {
      int64_t j = i / 32 * 32 + src(i % 32);
      return j < kN ? args_[0].GetDouble(j) : 0.0;
    });
  }
  ir::Program p_;
  uint64_t seed_ = 0;
  Tensors args_;
};

TEST_F(ConformanceShuffles, ShflXor) {
  ExpectClose(args_[1], Expected([](int64_t l) { return l ^ 5; }), {});
  ExpectTargetsMatch(p_, {.seed = seed_, .exact = true});
}
TEST_F(ConformanceShuffles, ShflDownWidth) {
  ExpectClose(args_[2], Expected([](int64_t l) { return l % 16 + 3 < 16 ? l + 3 : l; }), {});
}
TEST_F(ConformanceShuffles, ShflUp) {
  ExpectClose(args_[3], Expected([](int64_t l) { return l >= 2 ? l - 2 : l; }), {});
}
TEST_F(ConformanceShuffles, ShflSyncWidth) {
  ExpectClose(args_[4], Expected([](int64_t l) { return l / 8 * 8 + 9 % 8; }), {});
}

TEST(ConformanceWarp, WarpReductions) {
  const int64_t n = 150;
  ir::Program p = Compile(kSource, "warp_reduce", {{"N", "150"}});
  const uint64_t seed = Seed(505);
  Tensors args = {Random(DType::kInt32, {n}, seed)};
  for (int i = 0; i < 5; ++i) args.push_back(Zeros(DType::kInt32, {n}));
  Interpret(p, args);
  std::vector<std::vector<int64_t>> want(5, std::vector<int64_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t sum = 0, mx = INT64_MIN, mn = INT64_MAX, band = -1, bor = 0;
    for (int64_t j = i / 32 * 32; j < i / 32 * 32 + 32; ++j) {
      int64_t a = j < n ? args[0].GetInt(j) : 0;
      sum += a;
      mx = std::max(mx, a);
      mn = std::min(mn, a);
      band &= a + 16;
      bor |= a + 16;
    }
    want[0][i] = sum;
    want[1][i] = mx;
    want[2][i] = mn;
    want[3][i] = band;
    want[4][i] = bor;
  }
  const char* names[] = {"sum", "max", "min", "bitand", "bitor"};
  for (int r = 0; r < 5; ++r) ExpectEqualInts(args[r + 1], want[r], names[r]);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

// A block of 32k + m threads: the last warp reduces over its m lanes.
TEST(ConformanceWarp, WarpReductionsOfAPartialLastWarp) {
  for (int64_t t : {7, 45, 100}) {
    SCOPED_TRACE(t);
    ir::Program p = Compile(kSource, "warp_reduce_partial", {{"threads", std::to_string(t)}});
    const uint64_t seed = Seed(506);
    Tensors args = {Random(DType::kFloat32, {t}, seed), Random(DType::kInt32, {t}, seed + 1),
                    Zeros(DType::kFloat32, {t}), Zeros(DType::kInt32, {t})};
    Interpret(p, args);
    std::vector<double> mx(t);
    std::vector<int64_t> sum(t);
    for (int64_t i = 0; i < t; ++i) {
      double m = -INFINITY;
      int64_t s = 0;
      for (int64_t j = i / 32 * 32; j < std::min(t, i / 32 * 32 + 32); ++j) {
        m = std::max(m, args[0].GetDouble(j));
        s += args[1].GetInt(j);
      }
      mx[i] = m;
      sum[i] = s;
    }
    ExpectClose(args[2], mx, {0, 0}, "max");
    ExpectEqualInts(args[3], sum, "sum");
    ExpectAllTargetsMatch(p, seed);
  }
}

void CheckAtomicScalar(const std::string& op, const std::string& order, uint64_t default_seed) {
  const int64_t n = 300, h = 17;
  BindingList bindings = {{"N", "300"}, {"H", "17"}, {"op", Quoted(op)}};
  if (!order.empty()) bindings.push_back({"order", "'" + order + "'"});
  ir::Program p = Compile(kSource, "atomic_scalar", bindings);
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(DType::kInt32, {n}, seed), Random(DType::kInt32, {n}, seed + 1),
                  Random(DType::kInt32, {h}, seed + 2)};
  std::vector<int64_t> want(h);
  for (int64_t b = 0; b < h; ++b) want[b] = args[2].GetInt(b);
  for (int64_t i = 0; i < n; ++i) {
    int64_t& w = want[args[0].GetInt(i) + 8];
    int64_t v = args[1].GetInt(i);
    w = op == "add" ? w + v : op == "max" ? std::max(w, v) : std::min(w, v);
  }
  Interpret(p, args);
  ExpectEqualInts(args[2], want);
  ExpectTargetsMatch(p, {.seed = seed, .exact = true});
}

TEST(ConformanceAtomic, AddScalar) { CheckAtomicScalar("add", "", 506); }
TEST(ConformanceAtomic, MaxScalar) { CheckAtomicScalar("max", "", 507); }
TEST(ConformanceAtomic, MinScalar) { CheckAtomicScalar("min", "", 508); }
TEST(ConformanceAtomic, MemoryOrderAccepted) {
  CheckAtomicScalar("add", "relaxed", 509);
  CheckAtomicScalar("max", "release", 509);
}

void CheckAtomicTile(const std::string& op, uint64_t default_seed) {
  const int64_t m = 37, n = 32, bm = 8;
  ir::Program p = Compile(kSource, "atomic_tile", {{"M", "37"}, {"N", "32"}, {"op", Quoted(op)}});
  const uint64_t seed = Seed(default_seed);
  Tensors args = {Random(DType::kFloat32, {m, n}, seed),
                  Random(DType::kFloat32, {bm, n}, seed + 1)};
  std::vector<double> want(bm * n);
  for (int64_t e = 0; e < bm * n; ++e) {
    double w = args[1].GetDouble(e);
    for (int64_t blk = 0; blk < (m + bm - 1) / bm; ++blk) {
      int64_t r = blk * bm + e / n;
      double v = r < m ? args[0].GetDouble(r * n + e % n) : 0.0;
      w = op == "add" ? w + v : op == "max" ? std::max(w, v) : std::min(w, v);
    }
    want[e] = w;
  }
  Interpret(p, args);
  ExpectClose(args[1], want, interp::DefaultTolerance(DType::kFloat32));
  ExpectTargetsMatch(p, {.seed = seed});
}

TEST(ConformanceAtomic, AddTile) { CheckAtomicTile("add", 510); }
TEST(ConformanceAtomic, MaxTile) { CheckAtomicTile("max", 511); }
TEST(ConformanceAtomic, MinTile) { CheckAtomicTile("min", 512); }

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

TEST(ConformanceThreads, CollectiveOperatorReadingAPerThreadValueRefused) {
  ExpectRefused(kSource, "per_thread_copy", {{"N", "32"}},
                "in a kernel that reads the thread index (T.get_thread_binding), T.copy reads a "
                "per-thread value");
}

TEST(ConformanceSync, ThreadIndexInsideWsRefused) {
  ExpectRefused(kSource, "ws_thread", {{"N", "256"}},
                "the thread index inside `with T.ws(...)` is not supported");
}

TEST(ConformanceAtomic, LocalDestinationRefused) {
  ExpectRefused(kSource, "atomic_local", {{"N", "4"}},
                "T.atomic_max needs a global or shared destination; `L` is a local buffer");
}

TEST(ConformanceThreads, ImportSourceRefused) {
  ExpectRefused(kSource, "import_source", {{"N", "4"}},
                "T.import_source (hand-written CUDA inside a kernel) is not supported");
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

TEST(ConformanceWarp, GetWarpIdxSync) {
  ir::Program p = Compile(kSource, "warp_idx_sync", {{"threads", "160"}});
  Tensors args = {Zeros(DType::kInt32, {160}), Zeros(DType::kInt32, {160})};
  Interpret(p, args);
  std::vector<int64_t> w32(160), w16(160);
  for (int64_t t = 0; t < 160; ++t) {
    w32[t] = t / 32;
    w16[t] = t / 16;
  }
  ExpectEqualInts(args[0], w32, "warp_size 32");
  ExpectEqualInts(args[1], w16, "warp_size 16");
  ExpectTargetsMatch(p, {.seed = Seed(518), .exact = true});
}

// Scalar and tile adds into float16, float32 and float64; the order of the
// adds varies, so the sums compare within the dtype's rounding of ~20 terms.
TEST(ConformanceAtomic, AddFloatDtypes) {
  const int64_t n = 300, h = 17;
  for (auto [name, dtype, tol] :
       std::vector<std::tuple<std::string, DType, double>>{{"float16", DType::kFloat16, 5e-2},
                                                           {"float32", DType::kFloat32, 1e-5},
                                                           {"float64", DType::kFloat64, 1e-12}}) {
    SCOPED_TRACE(name);
    ir::Program p =
        Compile(kSource, "atomic_add_dtype", {{"N", "300"}, {"H", "17"}, {"dtype", Quoted(name)}});
    const uint64_t seed = Seed(519);
    Tensors args = {Random(DType::kInt32, {n}, seed), Random(dtype, {n}, seed + 1),
                    Zeros(dtype, {h}), Zeros(dtype, {8, 32})};
    Interpret(p, args);
    std::vector<double> hist(h, 0.0), tile(256, 0.0);
    for (int64_t i = 0; i < n; ++i) hist[args[0].GetInt(i) + 8] += args[1].GetDouble(i);
    for (int64_t b = 0; b < (n + 63) / 64; ++b) {
      for (int64_t e = 0; e < 256; ++e) tile[e] += args[1].GetDouble((b * 256 + e) % n);
    }
    ExpectClose(args[2], hist, {.atol = tol, .rtol = tol}, "scalar adds");
    ExpectClose(args[3], tile, {.atol = tol, .rtol = tol}, "tile adds");
    ExpectTargetsMatch(p, {.seed = seed, .zero = {"Hist", "T2"}});
  }
}

}  // namespace
}  // namespace tilec::conformance
