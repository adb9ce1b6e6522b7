// The warp queries (T.get_lane_idx, T.get_warp_idx, T.get_warp_idx_sync,
// T.get_warp_group_idx, T.shuffle_elect), warp shuffles and reductions
// (T.shfl_*, T.warp_reduce_*), T.transpose, and the simplify
// wrappers (apply_simplify, @simplify_prim_func) that kernels call while
// they are built. The interpreter's answers are checked against values
// computed here; the code emitted for sm_80 and sm_90a compiles with NVRTC
// and runs on the SIMT emulator against the interpreter.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/interp/interp.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::BindingList;
using ::tilec::testing::CompileSource;
using ::tilec::testing::EmitFor;
using ::tilec::testing::TestSeed;

constexpr char kKernels[] = R"(
import tilelang
import tilelang.language as T
from tilelang.transform.simplify import apply_simplify
from tilelang.transform import simplify_prim_func

@simplify_prim_func
def warp_info(threads, warp_size=None, per_group=None, extent=64):
    @T.prim_func
    def main(Lane: T.Tensor((threads,), "int32"), Warp: T.Tensor((threads,), "int32"),
             Sync: T.Tensor((threads,), "int32"), Group: T.Tensor((threads,), "int32"),
             Elect: T.Tensor((threads,), "int32")):
        with T.Kernel(1, threads=threads):
            tx = T.get_thread_binding()
            Lane[tx] = T.get_lane_idx(warp_size)
            Warp[tx] = T.get_warp_idx(warp_size)
            Sync[tx] = T.get_warp_idx_sync(warp_size)
            Group[tx] = T.get_warp_group_idx(warp_size, per_group)
            Elect[tx] = T.shuffle_elect(extent)
    return apply_simplify(main)

def shuffles(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), I: T.Tensor((N,), "int32"),
             Sum: T.Tensor((N,), "float32"), Down: T.Tensor((N,), "float32"),
             Up: T.Tensor((N,), "float32"), Bcast: T.Tensor((N,), "float32"),
             Mx: T.Tensor((N,), "float32"), Bor: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            tx = T.get_thread_binding()
            i = bx * 128 + tx
            v = T.alloc_var("float32")
            v = A[i]
            for off in [16, 8, 4, 2, 1]:
                v = v + T.shfl_xor(v, off)
            Sum[i] = v
            Down[i] = T.shfl_down(A[i], 3)
            Up[i] = T.shfl_up(A[i], 5, width=16)
            Bcast[i] = T.shfl_sync(A[i], 7)
            Mx[i] = T.warp_reduce_max(A[i])
            Bor[i] = T.warp_reduce_bitor(I[i])
    return main

# Producer and consumer warp groups with explicit barriers and hints, as
# Hopper kernels write them; tilec runs them in program order.
def ws_gemm(M, N, K, bm=64, bn=64, bk=32, thread_index=False):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=256) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            ready = T.alloc_barrier(arrive_count=128)
            done = T.alloc_barrier([128, 128])
            T.pdl_sync()
            with T.ws(1):
                T.set_max_nreg(240, 1)
                T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=0):
                with T.ws(0):
                    T.dec_max_nreg(24)
                    T.barrier_wait(done[0], (ko + 1) % 2)
                    T.copy(A[by * bm, ko * bk], A_s)
                    T.copy(B[ko * bk, bx * bn], B_s)
                    T.barrier_arrive(ready)
                with T.ws(1):
                    T.mbarrier_wait_parity(ready, ko % 2)
                    T.gemm(A_s, B_s, C_l)
                    T.mbarrier_arrive(done[0])
                    if thread_index:
                        C[0, 0] = T.get_thread_binding()
            T.sync_threads()
            T.pdl_trigger()
            with T.ws(1):
                T.print(C_l, msg="C")
                T.copy(C_l, C[by * bm, bx * bn])
    return main

# TIR's explicit thread loops at the top of a prim_func: the grid from the
# blockIdx loops, the block from the threadIdx loops (y given a start).
def tir_loops(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        for by in T.thread_binding(T.ceildiv(M, 8), thread="blockIdx.y"):
            for bx in T.thread_binding(T.ceildiv(N, 32), thread="blockIdx.x"):
                for ty in T.thread_binding(1, 9, thread="threadIdx.y"):
                    for tx in T.thread_binding(32, thread="threadIdx.x"):
                        r = by * 8 + ty - 1
                        c = bx * 32 + tx
                        if r < M and c < N:
                            B[r, c] = A[r, c] * 3.0 + T.cast(ty, "float32")
    return main

# Slice assignment: a region of the same shape is copied, a scalar fills.
def slices(N):
    @T.prim_func
    def main(A: T.Tensor((4, N), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                b = A[0, 0:4]
                A[1, 4:8] = b
                A[2, 0:N] = 7.5
    return main

def transpose(M, N, bm, bn, dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            tile = T.alloc_shared((bm, bn), dtype)
            tile_t = T.alloc_shared((bn, bm), dtype)
            T.copy(A[by * bm, bx * bn], tile)
            T.transpose(tile, tile_t)
            T.copy(tile_t, B[bx * bn, by * bm])
    return main
)";

void CheckWarpInfo(const BindingList& bindings, int64_t threads, int64_t ws, int64_t group,
                   int64_t extent) {
  absl::StatusOr<ir::Program> p = CompileSource("lang.py", kKernels, "warp_info", bindings);
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<interp::Tensor> args(5, interp::Tensor(ir::DType::kInt32, {threads}));
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t t = 0; t < threads; ++t) {
    EXPECT_EQ(args[0].GetInt(t), t % ws) << "thread " << t;
    EXPECT_EQ(args[1].GetInt(t), t / ws) << "thread " << t;
    EXPECT_EQ(args[2].GetInt(t), t / ws) << "thread " << t;
    EXPECT_EQ(args[3].GetInt(t), t / (ws * group)) << "thread " << t;
    EXPECT_EQ(args[4].GetInt(t), extent == 0 ? t == 0 : t % extent == 0) << "thread " << t;
  }
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p->name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *p, *src,
        {.seed = TestSeed(31),
         .exact = true,
         .written = {"Lane", "Warp", "Sync", "Group", "Elect"}});
  }
}

TEST(WarpInfo, Defaults) { CheckWarpInfo({{"threads", "256"}}, 256, 32, 4, 64); }

TEST(WarpInfo, GivenSizesAndABlockWideElection) {
  CheckWarpInfo({{"threads", "320"}, {"warp_size", "16"}, {"per_group", "3"}, {"extent", "0"}}, 320,
                16, 3, 0);
}

TEST(WarpInfo, BadSizesAreRefused) {
  absl::StatusOr<ir::Program> p =
      CompileSource("lang.py", kKernels, "warp_info", {{"threads", "128"}, {"warp_size", "0"}});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("T.get_lane_idx: warp_size must be positive"));
}

// Lane values past N read 0 (safe_access.h); the reference follows the
// same operations lane by lane, in float.
TEST(WarpShuffles, MatchLaneByLaneReference) {
  const int64_t n = 200;
  absl::StatusOr<ir::Program> p = CompileSource("lang.py", kKernels, "shuffles", {{"N", "200"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = TestSeed(33);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {n}, seed),
                                      interp::RandomTensor(ir::DType::kInt32, {n}, seed + 1)};
  for (int k = 0; k < 4; ++k) args.push_back(interp::Tensor(ir::DType::kFloat32, {n}));
  args.push_back(interp::Tensor(ir::DType::kFloat32, {n}));
  args.push_back(interp::Tensor(ir::DType::kInt32, {n}));
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  auto a = [&](int64_t i) { return i < n ? static_cast<float>(args[0].GetDouble(i)) : 0.0f; };
  auto bits = [&](int64_t i) { return i < n ? args[1].GetInt(i) : int64_t{0}; };
  for (int64_t w = 0; w < 256; w += 32) {
    std::vector<float> v(32);
    for (int l = 0; l < 32; ++l) v[l] = a(w + l);
    for (int off : {16, 8, 4, 2, 1}) {
      std::vector<float> next(32);
      for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ off];
      v = next;
    }
    float mx = a(w);
    int64_t bor = 0;
    for (int l = 0; l < 32; ++l) {
      mx = std::max(mx, a(w + l));
      bor |= bits(w + l);
    }
    for (int l = 0; l < 32 && w + l < n; ++l) {
      const int64_t i = w + l;
      EXPECT_EQ(args[2].GetDouble(i), v[l]) << i;
      EXPECT_EQ(args[3].GetDouble(i), l + 3 < 32 ? a(i + 3) : a(i)) << i;
      EXPECT_EQ(args[4].GetDouble(i), l % 16 >= 5 ? a(i - 5) : a(i)) << i;
      EXPECT_EQ(args[5].GetDouble(i), a(w + 7)) << i;
      EXPECT_EQ(args[6].GetDouble(i), mx) << i;
      EXPECT_EQ(args[7].GetInt(i), bor) << i;
    }
  }
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    absl::StatusOr<NvrtcResult> cubin = CompileCuda(src->code, p->name + ".cu", arch);
    EXPECT_TRUE(cubin.ok()) << cubin.status();
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .exact = true});
  }
}

TEST(WarpSpecialized, RegionsRunInProgramOrder) {
  absl::StatusOr<ir::Program> p =
      CompileSource("lang.py", kKernels, "ws_gemm", {{"M", "100"}, {"N", "70"}, {"K", "90"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = TestSeed(34);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat16, {100, 90}, seed),
                                      interp::RandomTensor(ir::DType::kFloat16, {90, 70}, seed + 1),
                                      interp::Tensor(ir::DType::kFloat32, {100, 70})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t i = 0; i < 100; ++i) {
    for (int64_t j = 0; j < 70; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < 90; ++k) {
        ref += args[0].GetDouble(i * 90 + k) * args[1].GetDouble(k * 70 + j);
      }
      EXPECT_NEAR(args[2].GetDouble(i * 70 + j), ref, 1e-3 * (1 + std::fabs(ref)));
    }
  }
  absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .zero = {"C"}});
}

TEST(WarpSpecialized, ThreadIndexInsideARegionIsRefused) {
  absl::StatusOr<ir::Program> p =
      CompileSource("lang.py", kKernels, "ws_gemm",
                    {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"thread_index", "True"}});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("the thread index inside `with T.ws(...)`"));
}

TEST(ThreadBindingLoops, AreAKernelOverTheirGridAndBlock) {
  absl::StatusOr<ir::Program> p =
      CompileSource("lang.py", kKernels, "tir_loops", {{"M", "37"}, {"N", "70"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = TestSeed(35);
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {37, 70}, seed),
                                      interp::Tensor(ir::DType::kFloat32, {37, 70})};
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  // Rows r = 8 * by + ty - 1 for ty in 1..8 cover every row once.
  for (int64_t r = 0; r < 37; ++r) {
    const int64_t ty = r % 8 + 1;
    for (int64_t c = 0; c < 70; ++c) {
      const float want =
          static_cast<float>(args[0].GetDouble(r * 70 + c)) * 3.0f + static_cast<float>(ty);
      EXPECT_EQ(args[1].GetDouble(r * 70 + c), want) << r << ", " << c;
    }
  }
  absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .exact = true});
}

TEST(ThreadBindingLoops, SliceAssignmentCopiesOrFills) {
  absl::StatusOr<ir::Program> p = CompileSource("lang.py", kKernels, "slices", {{"N", "10"}});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t seed = TestSeed(36);
  std::vector<interp::Tensor> args = {interp::RandomTensor(ir::DType::kFloat32, {4, 10}, seed)};
  const interp::Tensor before = args[0];
  ASSERT_TRUE(interp::RunProgram(*p, args).ok());
  for (int64_t c = 0; c < 10; ++c) {
    EXPECT_EQ(args[0].GetDouble(10 + c),
              c >= 4 && c < 8 ? before.GetDouble(c - 4) : before.GetDouble(10 + c));
    EXPECT_EQ(args[0].GetDouble(20 + c), 7.5);
    EXPECT_EQ(args[0].GetDouble(30 + c), before.GetDouble(30 + c));
  }
  absl::StatusOr<CudaSource> src = EmitFor(*p, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .exact = true});
}

TEST(ThreadBindingLoops, MalformedNestsAreRefused) {
  const std::pair<std::string, std::string> cases[] = {
      {"for a in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
       "            for b in T.thread_binding(4, thread=\"blockIdx.x\"):\n"
       "                A[a] = 1.0",
       "`blockIdx.x` is bound twice"},
      {"for a in T.thread_binding(1, 4, thread=\"blockIdx.x\"):\n"
       "            A[a] = 1.0",
       "a blockIdx loop must start at 0"},
      {"for a in T.thread_binding(4, thread=\"vthread\"):\n"
       "            A[a] = 1.0",
       "T.thread_binding(thread=\"vthread\") is not supported"},
  };
  for (const auto& [body, message] : cases) {
    const std::string src =
        "import tilelang.language as T\n\ndef f():\n    @T.prim_func\n"
        "    def main(A: T.Tensor((8,), \"float32\")):\n        " +
        body + "\n    return main\n";
    absl::StatusOr<ir::Program> p = CompileSource("bad.py", src, "f", {});
    ASSERT_FALSE(p.ok()) << body;
    EXPECT_THAT(p.status().message(), HasSubstr(message));
  }
}

TEST(Transpose, SharedTilesWithRaggedEdges) {
  for (const char* dtype : {"float16", "float32"}) {
    absl::StatusOr<ir::Program> p =
        CompileSource("lang.py", kKernels, "transpose",
                      {{"M", "100"}, {"N", "70"}, {"bm", "64"}, {"bn", "32"}, {"dtype", dtype}});
    ASSERT_TRUE(p.ok()) << p.status();
    uint64_t seed = TestSeed(32);
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    std::vector<interp::Tensor> args = {
        interp::RandomTensor(p->params[0].tensor->dtype, {100, 70}, seed),
        interp::Tensor(p->params[0].tensor->dtype, {70, 100})};
    ASSERT_TRUE(interp::RunProgram(*p, args).ok());
    for (int64_t i = 0; i < 100; ++i) {
      for (int64_t j = 0; j < 70; ++j) {
        EXPECT_EQ(args[1].GetDouble(j * 100 + i), args[0].GetDouble(i * 70 + j));
      }
    }
    for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
      absl::StatusOr<CudaSource> src = EmitFor(*p, arch);
      ASSERT_TRUE(src.ok()) << src.status();
      ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, {.seed = seed, .exact = true});
    }
  }
}

TEST(Transpose, ShapesThatAreNotTransposedAreRefused) {
  absl::StatusOr<ir::Program> p =
      CompileSource("lang.py", kKernels, "transpose",
                    {{"M", "64"}, {"N", "64"}, {"bm", "64"}, {"bn", "64"}, {"dtype", "float32"}});
  ASSERT_TRUE(p.ok()) << p.status();
  constexpr char kBad[] = R"(
import tilelang.language as T

def bad():
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((64, 32), "float32")
            d = T.alloc_shared((64, 32), "float32")
            T.copy(A, s)
            T.transpose(s, d)
    return main
)";
  p = CompileSource("bad.py", kBad, "bad", {});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("T.transpose takes two-dimensional tiles"));
}

}  // namespace
}  // namespace tilec::cuda
