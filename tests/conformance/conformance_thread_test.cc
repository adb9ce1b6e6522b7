// Conformance: threads, warps and atomics as TileLang documents them
// (threads=(x, y, z), T.get_thread_binding, T.thread_binding, the warp
// queries, T.shfl_*, T.warp_reduce_*, T.atomic_add / max / min in scalar and
// tile forms with memory_order); synchronisation is in conformance_sync_test.
// The interpreter is checked against lane-by-lane references computed here,
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

def per_thread_copy(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            S = T.alloc_shared((32,), "float32")
            T.copy(A[tx], S)
            T.copy(S, B)
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

TEST(ConformanceThreads, CollectiveOperatorReadingAPerThreadValueRefused) {
  ExpectRefused(kSource, "per_thread_copy", {{"N", "32"}},
                "in a kernel that reads the thread index (T.get_thread_binding), T.copy reads a "
                "per-thread value");
}

TEST(ConformanceAtomic, LocalDestinationRefused) {
  ExpectRefused(kSource, "atomic_local", {{"N", "4"}},
                "T.atomic_max needs a global or shared destination; `L` is a local buffer");
}

TEST(ConformanceThreads, ImportSourceRefused) {
  ExpectRefused(kSource, "import_source", {{"N", "4"}},
                "T.import_source (hand-written CUDA inside a kernel) is not supported");
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
