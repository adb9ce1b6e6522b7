// The warp queries (T.get_lane_idx, T.get_warp_idx, T.get_warp_idx_sync,
// T.get_warp_group_idx, T.shuffle_elect), T.transpose, and the simplify
// wrappers (apply_simplify, @simplify_prim_func) that kernels call while
// they are built. The interpreter's answers are checked against values
// computed here; the code emitted for sm_80 and sm_90a compiles with NVRTC
// and runs on the SIMT emulator against the interpreter.
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
