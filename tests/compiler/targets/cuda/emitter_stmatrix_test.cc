// The sm_90a accumulator epilogue with stmatrix (emitter_stmatrix.cc,
// tl/acc_store.h): which copies take it, the SASS it compiles to (STSM on
// sm_90a, none on sm_80), and the generated code run on the emulator against
// the reference interpreter on random inputs, for warp partitions with an
// even and an odd number of 8-column tiles per warp, replicated warp groups,
// a swizzled C_shared, bfloat16, and a padded tile that keeps the ordinary
// stores. Set TILEC_TEST_SEED to reproduce a run; TILEC_DUMP_CUDA=1 prints
// the generated source.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/sass.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using ::tilec::testing::EmitFor;
using Bindings = ::tilec::testing::BindingList;

constexpr char kGemm[] = R"(
import tilelang.language as T
from tilelang.layout import make_swizzled_layout

def gemm(M, N, K, block_M, block_N, block_K, dtype="float16", threads=128, swizzle_c=False):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            if swizzle_c:
                T.annotate_layout({C_shared: make_swizzled_layout(C_shared)})
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])
    return main
)";

// Emits `bindings` of kGemm for sm_90a, checks that the source has every
// line of `has` (no stmatrix at all when empty), runs it on the emulator
// (with uninitialised shared reads as errors) and compares every tensor with
// the interpreter's (C must have been written).
void RunGemm(const Bindings& bindings, const std::vector<std::string>& has) {
  absl::StatusOr<ir::Program> program =
      ::tilec::testing::CompileSource("gemm.py", kGemm, "gemm", bindings);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  if (has.empty()) {
    EXPECT_THAT(src->code, Not(HasSubstr("stmatrix")));
  }
  for (const std::string& line : has) EXPECT_THAT(src->code, HasSubstr(line));
  ::tilec::testing::EmulatorCheck check{.seed = ::tilec::testing::TestSeed(20261121),
                                        .written = {"C"}};
  check.launch.check_uninit = true;
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*program, *src, check);
}

// One warpgroup (wgmma m64n64), 16 x 64 per warp: eight 8-column tiles, four
// x4 per 16 rows.
TEST(StmatrixEpilogue, EvenTileCountRaggedFloat16) {
  RunGemm({{"M", "100"},
           {"N", "72"},
           {"K", "56"},
           {"block_M", "64"},
           {"block_N", "64"},
           {"block_K", "32"}},
          {"tl::store_acc_stmatrix<tl::half_t, 64, 64, 4, 1, C_shared_layout, true>(C_shared, "
           "C_local);",
           // The epilogue's C_shared is swizzled without an annotation.
           "using C_shared_layout = tl::Swizzled<64, 64, 2>;"});
}

// A swizzled C_shared and bfloat16.
TEST(StmatrixEpilogue, SwizzledBfloat16) {
  RunGemm({{"M", "128"},
           {"N", "128"},
           {"K", "64"},
           {"block_M", "64"},
           {"block_N", "64"},
           {"block_K", "32"},
           {"dtype", "bfloat16"},
           {"swizzle_c", "True"}},
          {"tl::store_acc_stmatrix<tl::bfloat16_t, 64, 64, 4, 1, C_shared_layout, true>",
           "using C_shared_layout = tl::Swizzled<64, 64, 2>;"});
}

// One warpgroup, two m64n128 instructions per k-step (rows 0-63 and 64-127):
// each warp stores two 16-row tiles 64 rows apart.
TEST(StmatrixEpilogue, WgmmaAccumulatorWithTwoInstructionsPerWarpgroup) {
  RunGemm({{"M", "200"},
           {"N", "136"},
           {"K", "96"},
           {"block_M", "128"},
           {"block_N", "128"},
           {"block_K", "32"}},
          {"tl::store_acc_stmatrix<tl::half_t, 128, 128, 4, 1, C_shared_layout, true>",
           "tl::gemm_ss_wgmma_issue<128, 128, 32, 1, 1, false, false"});
}

// Two warpgroups side by side along N (m64n64 each).
TEST(StmatrixEpilogue, WgmmaAccumulatorOfTwoWarpgroupsAlongN) {
  RunGemm({{"M", "64"},
           {"N", "256"},
           {"K", "64"},
           {"block_M", "64"},
           {"block_N", "128"},
           {"block_K", "64"},
           {"threads", "256"}},
          {"tl::store_acc_stmatrix<tl::half_t, 64, 128, 4, 2, C_shared_layout, true>",
           "tl::gemm_ss_wgmma_issue<64, 128, 64, 1, 2, false, false"});
}

// 4 x 1 warps, 16 x 24 per warp: three 8-column tiles, one x4 and one x2.
TEST(StmatrixEpilogue, OddTileCountUsesX2ForTheLast) {
  RunGemm({{"M", "80"},
           {"N", "40"},
           {"K", "48"},
           {"block_M", "64"},
           {"block_N", "24"},
           {"block_K", "16"}},
          {"tl::store_acc_stmatrix<tl::half_t, 64, 24, 4, 1, C_shared_layout>"});
}

// A 16 x 16 tile over 4 warps: 1 x 2 warps, replicated twice; only the first
// group stores.
TEST(StmatrixEpilogue, ReplicatedWarpGroupsStoreOnce) {
  RunGemm({{"M", "40"},
           {"N", "40"},
           {"K", "32"},
           {"block_M", "16"},
           {"block_N", "16"},
           {"block_K", "16"}},
          {"tl::store_acc_stmatrix<tl::half_t, 16, 16, 1, 2, C_shared_layout>"});
}

// block_M = 8 pads the mma tiles: the accumulator layout has padding slots,
// so the ordinary stores remain.
TEST(StmatrixEpilogue, PaddedTileKeepsTheOrdinaryStores) {
  RunGemm({{"M", "20"},
           {"N", "40"},
           {"K", "32"},
           {"block_M", "8"},
           {"block_N", "32"},
           {"block_K", "16"}},
          {});
}

absl::StatusOr<ir::Program> DefaultGemm(const std::string& dtype) {
  return ::tilec::testing::CompileExample("gemm.py", "matmul",
                                          {{"M", "4096"},
                                           {"N", "4096"},
                                           {"K", "4096"},
                                           {"block_M", "128"},
                                           {"block_N", "128"},
                                           {"block_K", "32"},
                                           {"threads", "128"},
                                           {"num_stages", "3"},
                                           {"dtype", dtype}});
}

// The GEMM example at its default size: STSM in the sm_90a SASS, none on
// sm_80 (which keeps its 4-byte shared stores), no spills, no local memory.
TEST(StmatrixEpilogue, DefaultGemmSassHasStsmOnSm90aOnly) {
  for (const char* dtype : {"float16", "bfloat16"}) {
    absl::StatusOr<ir::Program> program = DefaultGemm(dtype);
    ASSERT_TRUE(program.ok()) << program.status();
    for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
      SCOPED_TRACE(::testing::Message() << dtype << " " << CudaArchName(arch));
      absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
      ASSERT_TRUE(src.ok()) << src.status();
      EXPECT_EQ(absl::StrContains(src->code, "tl::store_acc_stmatrix"), arch == CudaArch::kSm90a);
      absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "matmul.cu", arch);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->kernels.size(), 1u);
      EXPECT_EQ(r->kernels[0].spill_store_bytes, 0);
      EXPECT_EQ(r->kernels[0].spill_load_bytes, 0);
      absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
      if (!sass.ok()) {
        std::printf("no SASS check: %s\n", std::string(sass.status().message()).c_str());
        continue;
      }
      if (arch == CudaArch::kSm90a) {
        // 128 x 128 over 2 x 2 warps: 4 x 8 tiles of 16 x 8 per warp, two
        // per x4: 16 STSM.16.M88.4.
        EXPECT_EQ(CountOpcode(*sass, "STSM.16.M88.4"), 16);
      } else {
        EXPECT_EQ(CountOpcode(*sass, "STSM"), 0);
      }
      EXPECT_FALSE(CountLocalMemoryTraffic(*sass).any());
    }
  }
}

constexpr char kStmatrixProbe[] = R"cu(
#include "tl/tl.h"

extern "C" __global__ void __launch_bounds__(32) probe(int v) {
  tl::half_t* s = reinterpret_cast<tl::half_t*>(tl::dynamic_smem());
  const uint32_t x[4] = {uint32_t(v), uint32_t(v + 1), uint32_t(v + 2), uint32_t(v + 3)};
  tl::stmatrix_x4(x, s + (threadIdx.x % 32) * 8);
  const uint32_t y[2] = {x[1], x[0]};
  tl::stmatrix_x2(y, s + 256 + (threadIdx.x % 16) * 8);
}
)cu";

// The wrappers are one STSM each on sm_90a and a compile error naming the
// operation on sm_80.
TEST(StmatrixPrimitive, OneStsmOnSm90aAndAnErrorOnSm80) {
  absl::StatusOr<NvrtcResult> r = CompileCuda(kStmatrixProbe, "probe.cu", CudaArch::kSm90a);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
  if (sass.ok()) {
    EXPECT_EQ(CountOpcode(*sass, "STSM.16.M88.4"), 1) << *sass;
    EXPECT_EQ(CountOpcode(*sass, "STSM.16.M88.2"), 1) << *sass;
  } else {
    std::printf("no SASS check: %s\n", std::string(sass.status().message()).c_str());
  }
  r = CompileCuda(kStmatrixProbe, "probe.cu", CudaArch::kSm80);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("tl::stmatrix_x4 needs sm_90 or later"));
}

}  // namespace
}  // namespace tilec::cuda
