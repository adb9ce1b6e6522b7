// Warp specialisation on sm_90a (emitter_ws.cc): a pipelined GEMM whose
// copies are all TMA loads gets a producer warpgroup after its threads,
// full/empty mbarriers per stage, setmaxnreg and consumer-only barriers; it
// matches the interpreter on ragged shapes with TMA loads landing as late and
// as early as the hardware may, and the races a wrong schedule would have
// give wrong numbers on the emulator.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/emitter_internal.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/host/emulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGemm[] = R"(
import tilelang.language as T

def gemm(M, N, K, stages, threads, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return main
)";

// Each block sums its own band of k-tiles: the loop starts at by and runs
// (bx + 2) // 2 tiles, so the producer's bound is `by + ((bx + 2) >> 1)`.
constexpr char kBandGemm[] = R"(
import tilelang.language as T

def band(M, N, K, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(by, by + (bx + 2) // 2, num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return main
)";

absl::StatusOr<ir::Program> Gemm(const std::string& stages, const std::string& threads,
                                 const std::string& k = "232") {
  return ::tilec::testing::CompileSource("ws.py", kGemm, "gemm",
                                         {{"M", "200"}, {"N", "136"}, {"K", k}, {"stages", stages},
                                          {"threads", threads}});
}

// The emulator matches the interpreter with TMA loads landing as late and as
// early as the hardware may.
void ExpectMatchesAsTmaLandsLateAndEarly(const ir::Program& p, const CudaSource& src,
                                         uint64_t seed) {
  for (bool early : {false, true}) {
    SCOPED_TRACE(early ? "TMA lands early" : "TMA lands late");
    host::LaunchOptions launch;
    launch.tma_land_early = early;
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        p, src, {.seed = ::tilec::testing::TestSeed(seed), .launch = launch});
  }
}

TEST(WarpSpecialized, GemmGetsAProducerWarpgroupAndMatchesTheInterpreter) {
  for (const char* stages : {"2", "3", "4"}) {
    SCOPED_TRACE(absl::StrCat(stages, " stages"));
    absl::StatusOr<ir::Program> p = Gemm(stages, "256");
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    const std::string& code = src->code;
    ASSERT_EQ(src->kernels.size(), 1u);
    EXPECT_EQ(src->kernels[0].threads, 384);
    EXPECT_THAT(code, HasSubstr("__launch_bounds__(384, 1)"));
    EXPECT_THAT(code, HasSubstr("if (tx >= 256) {\n    tl::setmaxnreg_dec<40>();"));
    EXPECT_THAT(code, HasSubstr("tl::setmaxnreg_inc<232>();"));
    EXPECT_THAT(code, HasSubstr("tl::tma_load(&A_shared_fill[0], A_tmap"));
    // The consumers' loop has no block barrier.
    EXPECT_EQ(code.find("tl::syncthreads();"), code.rfind("tl::syncthreads();"))
        << "one block barrier: after the mbarriers' initialisation";
    EXPECT_THAT(code, Not(HasSubstr("cp_async")));
    EXPECT_THAT(code, HasSubstr("wgmma one group behind"));
    ExpectMatchesAsTmaLandsLateAndEarly(*p, *src, 20261127);
  }
}

absl::StatusOr<ir::Program> Gemm(const std::string& stages, const std::string& threads,
                                 const std::string& block_N, const std::string& block_K) {
  return ::tilec::testing::CompileSource(
      "ws.py", kGemm, "gemm",
      {{"M", "200"}, {"N", "136"}, {"K", "232"}, {"stages", stages}, {"threads", threads},
       {"block_N", block_N}, {"block_K", block_K}});
}

// The producer's loop bound is `min + extent` with an extent that is a
// shift: it keeps its parentheses (`by + (bx + 2) >> 1` would be
// (by + bx + 2) >> 1, a trip count the consumers do not share).
TEST(WarpSpecialized, AShiftedExtentKeepsItsParenthesesInTheProducerBound) {
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
      "band.py", kBandGemm, "band", {{"M", "200"}, {"N", "136"}, {"K", "256"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->kernels[0].threads, 384) << "warp-specialised";
  EXPECT_THAT(src->code, HasSubstr("ko_load < by + ((bx + 2) >> 1);"));
  ExpectMatchesAsTmaLandsLateAndEarly(*p, *src, 20261208);
}

// One consumer warpgroup alone on an SM leaves the tensor cores idle between
// its k-steps: where two blocks fit, the kernel asks for them (128 registers
// a thread at launch) and the producer's registers go to the consumers.
TEST(WarpSpecialized, OneConsumerWarpgroupRunsTwoBlocksAnSm) {
  absl::StatusOr<ir::Program> p = Gemm("3", "128");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->kernels[0].threads, 256);
  EXPECT_THAT(src->code, HasSubstr("__launch_bounds__(256, 2)"));
  EXPECT_THAT(src->code, HasSubstr("if (tx >= 128) {\n    tl::setmaxnreg_dec<40>();"));
  EXPECT_THAT(src->code, HasSubstr("tl::setmaxnreg_inc<216>();"));
  ExpectMatchesAsTmaLandsLateAndEarly(*p, *src, 20261128);
}

// K = 100: A's rows are 200 bytes, which TMA cannot stride. The producer
// warpgroup copies A with cp.async (each thread its part, then it arrives:
// 128 arrivals) and B with TMA; with N = 100 too, no copy is a TMA load and
// the kernel is not specialised, saying why.
TEST(WarpSpecialized, TheProducerCopiesWhatTmaCannotWhileTmaLoadsTheRest) {
  absl::StatusOr<ir::Program> p = Gemm("3", "256", "100");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->kernels[0].threads, 384);
  EXPECT_THAT(src->code, HasSubstr("tl::mbarrier_init(&A_shared_full[s], 128);"));
  EXPECT_THAT(src->code, HasSubstr("tl::mbarrier_init(&B_shared_full[s], 1);"));
  EXPECT_THAT(src->code, HasSubstr("const int tx_part = tx - 256 + part * 128;"));
  EXPECT_THAT(src->code, HasSubstr("tl::cp_async_8(&A_shared_fill["));
  EXPECT_THAT(src->code, HasSubstr("tl::tma_load(&B_shared_fill[0], B_tmap"));
  ExpectMatchesAsTmaLandsLateAndEarly(*p, *src, 20261207);
  p = ::tilec::testing::CompileSource(
      "ws.py", kGemm, "gemm",
      {{"M", "200"}, {"N", "100"}, {"K", "100"}, {"stages", "3"}, {"threads", "256"}});
  ASSERT_TRUE(p.ok()) << p.status();
  src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->kernels[0].threads, 256);
  EXPECT_EQ(src->kernels[0].schedule,
            "not warp-specialised: no copy in the T.Pipelined loop can be a TMA load");
  EXPECT_THAT(src->code, HasSubstr("// not warp-specialised: no copy in the T.Pipelined loop"));
  EXPECT_THAT(src->code, HasSubstr("cp.async, not TMA"));
}

// The producer issues its loads from the kernel's start: a kernel that
// writes global memory before its loop (which the loads might read) keeps one
// role, and says so.
TEST(WarpSpecialized, AGlobalWriteBeforeTheLoopKeepsOneRole) {
  std::string text = kGemm;
  const std::string clear = "T.clear(C_local)";
  text.replace(text.find(clear), clear.size(),
               "T.clear(C_local)\n            T.copy(C_local, C[by * block_M, bx * block_N])");
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
      "ws.py", text, "gemm",
      {{"M", "200"}, {"N", "136"}, {"K", "232"}, {"stages", "3"}, {"threads", "256"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->kernels[0].threads, 256);
  EXPECT_EQ(src->kernels[0].schedule,
            "not warp-specialised: a statement before the T.Pipelined loop writes global memory, "
            "which the producer's loads (issued from the kernel's start) could read before it is "
            "written");
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(
      *p, *src, {.seed = ::tilec::testing::TestSeed(20261208)});
}

// One block an SM, the registers left to ptxas, where two would not fit: by
// shared memory (3 stages of 128x128 A and B tiles, 192 KiB) or by the
// consumers' fragments (a 128x256 float32 accumulator, 256 registers a thread).
TEST(WarpSpecialized, OneConsumerWarpgroupStaysAloneWhenTwoBlocksDoNotFit) {
  struct Case {
    const char* what;
    const char* block_N;
    const char* block_K;
  };
  for (const Case& c : {Case{"shared memory", "128", "128"}, Case{"fragments", "256", "32"}}) {
    SCOPED_TRACE(c.what);
    absl::StatusOr<ir::Program> p = Gemm("3", "128", c.block_N, c.block_K);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_THAT(src->code, HasSubstr("if (tx >= 128)"));
    EXPECT_THAT(src->code, HasSubstr("__launch_bounds__(256, 1)"));
    EXPECT_THAT(src->code, Not(HasSubstr("setmaxnreg")));
  }
}

// ptxas keeps the two-block kernel to 128 registers at launch and gives the
// consumers their 216 after setmaxnreg: no spills.
TEST(WarpSpecialized, TwoBlockKernelFitsItsLaunchRegistersWithoutSpilling) {
  if (NvrtcVersion().empty()) GTEST_SKIP() << "NVRTC cannot be loaded";
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileExample(
      "gemm.py", "matmul",
      {{"M", "4096"}, {"N", "4096"}, {"K", "4096"}, {"block_M", "128"}, {"block_N", "128"},
       {"block_K", "32"}, {"threads", "128"}, {"num_stages", "3"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_THAT(src->code, HasSubstr("__launch_bounds__(256, 2)"));
  absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "matmul.cu", CudaArch::kSm90a);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->kernels.size(), 1u) << r->log;
  EXPECT_LE(r->kernels[0].registers, 128) << r->log;
  EXPECT_EQ(r->kernels[0].spill_store_bytes, 0) << r->log;
  EXPECT_EQ(r->kernels[0].spill_load_bytes, 0) << r->log;
}

// What setmaxnreg asks for always fits the block's register pool: a
// consumer warpgroup's setmaxnreg.inc beyond it waits forever. Four consumer
// warpgroups (640 threads, 96 registers at launch) once asked for 112 each
// and hung an H200 (generated program seed 16000323; the emulator ran it).
TEST(WarpSpecialized, SetmaxnregNeverAsksForMoreThanTheBlockHas) {
  for (int64_t groups = 1; groups <= 7; ++groups) {
    for (int64_t blocks : {1, 2}) {
      SCOPED_TRACE(absl::StrCat(groups, " consumer warpgroups, ", blocks, " blocks an SM"));
      const WsRegisters r = WarpSpecializedRegisters(groups, blocks);
      EXPECT_EQ(r.launch % 8, 0);
      EXPECT_LE(blocks * (groups + 1) * 128 * r.launch, 65536);
      EXPECT_EQ(r.consumer % 8, 0);
      EXPECT_LE(r.consumer, 256);
      EXPECT_LE(40 + groups * r.consumer, (groups + 1) * r.launch);
    }
  }
  EXPECT_EQ(WarpSpecializedRegisters(2, 1).consumer, 232);
  EXPECT_EQ(WarpSpecializedRegisters(1, 2).consumer, 216);
}

// The same, through ptxas: every warp-specialised block size of a
// pipelined elementwise kernel, compiled, asks for no more than its pool.
constexpr char kPipelinedRows[] = R"(
import tilelang.language as T

def rows(M, N, threads, bm=4, bn=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            S = T.alloc_shared((bm, bn), "float32")
            for ko in T.Pipelined(T.ceildiv(N, bn), num_stages=3):
                T.copy(A[bx * bm, ko * bn], S)
                for i, j in T.Parallel(bm, bn):
                    if bx * bm + i < M and ko * bn + j < N:
                        Y[bx * bm + i, ko * bn + j] = S[i, j] * 2.0
    return main
)";

TEST(WarpSpecialized, CompiledKernelsFitTheirSetmaxnreg) {
  if (NvrtcVersion().empty()) GTEST_SKIP() << "NVRTC cannot be loaded";
  for (int threads : {256, 384, 512, 640, 768, 896}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
        "rows.py", kPipelinedRows, "rows",
        {{"M", "60"}, {"N", "80"}, {"threads", std::to_string(threads)}});
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    ASSERT_EQ(src->kernels[0].threads, threads + 128) << "warp-specialised";
    absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "rows.cu", CudaArch::kSm90a);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->kernels.size(), 1u);
    const int64_t groups = threads / 128;
    const int64_t pool = (groups + 1) * 128 * int64_t{r->kernels[0].registers};
    const size_t at = src->code.find("tl::setmaxnreg_inc<");
    if (at == std::string::npos) {
      EXPECT_EQ(src->kernels[0].setmaxnreg_registers, 0);
      continue;
    }
    const int64_t inc = std::stoll(src->code.substr(at + 19));
    // What the artifact step checks against ptxas's count.
    EXPECT_EQ(src->kernels[0].setmaxnreg_registers, 128 * 40 + groups * 128 * inc);
    EXPECT_LE(128 * 40 + groups * 128 * inc, pool)
        << "setmaxnreg_inc<" << inc << "> with " << r->kernels[0].registers
        << " registers at launch";
    if (threads == 256) {
      ::tilec::testing::ExpectEmulatorMatchesInterpreter(
          *p, *src, {.seed = ::tilec::testing::TestSeed(20261130), .written = {"Y"}});
    }
  }
}

// The documented GEMM (a C_shared epilogue through stmatrix): the consumers'
// barriers are `bar.sync 1, 256`, leaving the producer warpgroup out.
TEST(WarpSpecialized, ConsumerBarriersLeaveTheProducerOut) {
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileExample(
      "gemm.py", "matmul",
      {{"M", "200"}, {"N", "136"}, {"K", "232"}, {"block_M", "128"}, {"block_N", "128"},
       {"block_K", "32"}, {"threads", "256"}, {"num_stages", "3"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("tl::named_barrier_sync(1, 256);  // the consumers"));
  // The epilogue leaves C_shared by TMA store (dropping what lies past M, N).
  EXPECT_THAT(src->code, HasSubstr("tl::tma_store(C_tmap, &C_shared[0], bx * 128, by * 128);"));
  EXPECT_EQ(src->code.find("tl::syncthreads();"), src->code.rfind("tl::syncthreads();"));
  ExpectMatchesAsTmaLandsLateAndEarly(*p, *src, 20261129);
}

// Emulates `code` instead of the emitted source; true when it runs and C
// matches (a race shows as wrong numbers or as a fault the emulator reports).
bool Matches(const ir::Program& p, const CudaSource& src, const std::string& code, bool early) {
  CudaSource broken = src;
  broken.code = code;
  absl::StatusOr<std::vector<interp::Tensor>> inputs =
      interp::MakeInputs(p, {}, ::tilec::testing::TestSeed(11));
  EXPECT_TRUE(inputs.ok()) << inputs.status();
  if (!inputs.ok()) return false;
  std::vector<interp::Tensor> expected = *inputs, actual = *inputs;
  EXPECT_TRUE(interp::RunProgram(p, expected).ok());
  host::LaunchOptions options;
  options.tma_land_early = early;
  absl::Status ran = host::EmulateProgram(p, broken, actual, {}, options);
  if (!ran.ok()) {
    std::printf("emulator: %s\n", std::string(ran.message()).c_str());
    return false;
  }
  absl::StatusOr<interp::CompareResult> cmp =
      interp::CompareTensors(actual[2], expected[2], interp::DefaultTolerance(actual[2].dtype()));
  EXPECT_TRUE(cmp.ok()) << cmp.status();
  return cmp.ok() && cmp->ok;
}

TEST(WarpSpecialized, StagesReleasedTooEarlyOrReadBeforeTheirLoadGiveWrongNumbers) {
  absl::StatusOr<ir::Program> p = Gemm("2", "256", "256");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  const std::string& code = src->code;
  ASSERT_TRUE(Matches(*p, *src, code, true));
  ASSERT_TRUE(Matches(*p, *src, code, false));
  // The consumers release the stage whose wgmma group may still run.
  const std::string release = "if (ko > 0) tl::mbarrier_arrive(&empty[((ko - 1) % 2)]);";
  size_t at = code.find(release);
  ASSERT_NE(at, std::string::npos) << code;
  std::string early_release = code;
  early_release.replace(at, release.size(), "tl::mbarrier_arrive(&empty[(ko % 2)]);");
  EXPECT_FALSE(Matches(*p, *src, early_release, true))
      << "a stage refilled while its wgmma group reads it";
  // The consumers do not wait for a stage's loads: for A's, for B's, or for
  // either.
  const std::string wait_a = "tl::mbarrier_wait_parity(&A_shared_full[(ko % 2)], ((ko / 2) & 1));";
  const std::string wait_b = "tl::mbarrier_wait_parity(&B_shared_full[(ko % 2)], ((ko / 2) & 1));";
  ASSERT_NE(code.find(wait_a), std::string::npos) << code;
  ASSERT_NE(code.find(wait_b), std::string::npos) << code;
  for (const std::vector<std::string>& dropped :
       std::vector<std::vector<std::string>>{{wait_a}, {wait_b}, {wait_a, wait_b}}) {
    std::string no_wait = code;
    for (const std::string& wait : dropped) no_wait.erase(no_wait.find(wait), wait.size());
    EXPECT_FALSE(Matches(*p, *src, no_wait, false))
        << "stages read before their loads land: " << dropped[0];
  }
}

}  // namespace
}  // namespace tilec::cuda
