// T.Pipelined with order= and stage= over a body holding a let (a Python
// local bound inside the loop): the frontend builds it, the verifier accepts
// it (order and stage index the statements other than lets), the copies
// that use the local still become staged producers, and the generated code
// matches the reference interpreter on the emulator for sm_80 and sm_90a at
// sizes that do not divide the tiles; an order= list that counts the let is
// a located user error. Set TILEC_TEST_SEED to reproduce a run;
// TILEC_DUMP_CUDA=1 prints the generated source.
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/host/emulate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;

constexpr char kGemm[] = R"(
import tilelang.language as T

def gemm(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2, order=[0, 1, 2],
                                  stage=[0, 0, 1]):
                k0 = ko * block_K
                T.copy(A[by * block_M, k0], A_shared)
                T.copy(B[k0, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return main
)";

// The order list names three statements; the body has four with the let.
constexpr char kTooLong[] = R"(
import tilelang.language as T

def f(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((32,), "float32")
            for ko in T.Pipelined(4, num_stages=2, order=[0, 1, 2, 3], stage=[0, 0, 1, 1]):
                k0 = ko * 32
                T.copy(A[k0], S)
                T.copy(S, A[k0])
    return main
)";

absl::StatusOr<ir::Program> Compile(const char* text, const std::string& fn,
                                    const ::tilec::testing::BindingList& bindings) {
  return ::tilec::testing::CompileSource("pipelined.py", text, fn, bindings);
}

// A plain pipelined GEMM: with 4 or more stages on sm_90a its wgmma run one
// group behind the loop. Its pass_configs keep it on one role (no producer
// warpgroup), the schedule these tests are about.
constexpr char kStagedGemm[] = R"(
import tilelang
import tilelang.language as T

@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def gemm(M, N, K, stages, block_M=128, block_N=64, block_K=32, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
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

// Without warp specialisation (the pass_configs; A's rows of 196 halves are
// 392 bytes, which TMA cannot stride, so A stays on cp.async).
TEST(PipelinedWgmma, RunsOneGroupBehindWithFourOrMoreStages) {
  for (const char* stages : {"3", "4", "5"}) {
    SCOPED_TRACE(stages);
    // Ragged M, N and K: 7 iterations, the last one partial.
    absl::StatusOr<ir::Program> p =
        Compile(kStagedGemm, "gemm", {{"M", "136"}, {"N", "72"}, {"K", "196"}, {"stages", stages}});
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(p->disable_warp_specialized);
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_EQ(src->kernels[0].schedule,
              "not warp-specialised: the kernel's pass_configs turn it off "
              "(TL_DISABLE_WARP_SPECIALIZED)");
    const int s = std::stoi(stages);
    if (s < 4) {
      EXPECT_THAT(src->code, HasSubstr("tl::gemm_ss_wgmma<128, 64, 32"));
      EXPECT_THAT(src->code, ::testing::Not(HasSubstr("wgmma_wait")));
    } else {
      EXPECT_THAT(src->code, HasSubstr("tl::gemm_ss_wgmma_issue<128, 64, 32"));
      EXPECT_THAT(src->code, HasSubstr("tl::wgmma_wait<1>(wgmma_group);"));
      EXPECT_THAT(src->code, HasSubstr("tl::wgmma_wait<0>(wgmma_group);\n"
                                       "  tl::wgmma_fence_operand<64>(C_local);"));
      EXPECT_THAT(src->code, HasSubstr(absl::StrCat("copies run ", s - 2,
                                                    " iterations ahead, wgmma one group behind")));
      EXPECT_THAT(src->code, HasSubstr(absl::StrCat("tl::cp_async_wait<", s - 3, ">();")));
    }
    // B's copies are TMA loads: each iteration also waits for its stage's barrier.
    EXPECT_THAT(src->code, HasSubstr(absl::StrCat("tl::mbarrier_wait_parity(&mbar[ko % ", s,
                                                  "], (ko / ", s, ") & 1);")));
    EXPECT_THAT(src->code, HasSubstr("// A_shared: cp.async, not TMA"));
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *p, *src, {.seed = ::tilec::testing::TestSeed(20261126)});
  }
}

// cp.async writes through the generic proxy: the emitted fence before the
// barrier is what lets wgmma read them. Without it the emulator (tracking
// shared memory, check_uninit) reports the read.
TEST(PipelinedWgmma, CpAsyncStagesNeedTheProxyFence) {
  absl::StatusOr<ir::Program> p =
      Compile(kStagedGemm, "gemm", {{"M", "136"}, {"N", "72"}, {"K", "196"}, {"stages", "4"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  ::tilec::testing::EmulatorCheck check{.seed = ::tilec::testing::TestSeed(20261131)};
  check.launch.check_uninit = true;
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*p, *src, check);
  CudaSource unfenced = *src;
  const std::string fence = "tl::fence_proxy_async();";
  for (size_t at; (at = unfenced.code.find(fence)) != std::string::npos;) {
    unfenced.code.erase(at, fence.size());
  }
  absl::StatusOr<std::vector<interp::Tensor>> inputs =
      interp::MakeInputs(*p, {}, ::tilec::testing::TestSeed(3));
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::Status ran = host::EmulateProgram(*p, unfenced, *inputs, {}, check.launch);
  EXPECT_EQ(ran.code(), absl::StatusCode::kAborted) << ran;
  EXPECT_THAT(std::string(ran.message()), HasSubstr("with no fence.proxy.async since")) << ran;
}

TEST(PipelinedWithLet, OrderAndStageIndexTheStatementsOtherThanLets) {
  absl::StatusOr<ir::Program> program =
      Compile(kGemm, "gemm", {{"M", "100"}, {"N", "72"}, {"K", "88"}});
  ASSERT_TRUE(program.ok()) << program.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    SCOPED_TRACE(std::string(CudaTarget::ForArch(arch).name()));
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    // Both copies read through the let and are still staged two deep.
    EXPECT_THAT(src->code, HasSubstr("auto A_shared_stage = A_shared + (ko % 2) * "));
    EXPECT_THAT(src->code, HasSubstr("auto B_shared_stage = B_shared + (ko % 2) * "));
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *program, *src, {.seed = ::tilec::testing::TestSeed(20261121), .written = {"C"}});
  }
}

// A user error with its location, not an ill-formed program.
TEST(PipelinedWithLet, AnOrderEntryForTheLetIsRejected) {
  absl::StatusOr<ir::Program> program = Compile(kTooLong, "f", {{"N", "128"}});
  ASSERT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument) << program.status();
  EXPECT_THAT(std::string(program.status().message()),
              HasSubstr("pipelined.py:9:13: error: T.Pipelined order= has 4 entries but the loop "
                        "body has 2 statements (one entry per statement; a local bound in the "
                        "body is not one)"));
}

// TMA on sm_90a (inference/tma_plan.h): the copies of a pipelined loop
// become TMA loads when the tensor's strides allow them; a copy they do not
// allow stays on cp.async, and the generated code says why. Both match the
// interpreter on ragged shapes; a loop that does not wait for its stage's
// barrier gives wrong numbers on the emulator, as on the GPU.
TEST(PipelinedTma, LoadsWhereTheStridesAllowAndSaysWhyNot) {
  struct Case {
    const char* k;
    bool tma_a;  // A [M, K]: rows of K * 2 bytes must be a multiple of 16
  };
  for (const Case& c : {Case{"200", true}, Case{"100", false}}) {
    SCOPED_TRACE(c.k);
    absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
        "pipelined.py", kStagedGemm, "gemm", {{"M", "136"}, {"N", "72"}, {"K", c.k}, {"stages", "3"}});
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    // B [K, 72]: 144-byte rows, always TMA (box [32, 64], 128-byte swizzle).
    EXPECT_THAT(src->code, HasSubstr("tl::tma_load(&B_shared_fill[0], B_tmap,"));
    if (c.tma_a) {
      EXPECT_THAT(src->code, HasSubstr("tl::tma_load(&A_shared_fill[0], A_tmap,"));
      EXPECT_THAT(src->code, ::testing::Not(HasSubstr("cp_async")));
    } else {
      EXPECT_THAT(src->code, HasSubstr("// A_shared: cp.async, not TMA: dimension 0 of A has a "
                                       "stride of 200 bytes, not a multiple of 16"));
      EXPECT_THAT(src->code, HasSubstr("tl::cp_async_wait<1>();"));
      EXPECT_THAT(src->code, ::testing::Not(HasSubstr("A_tmap")));
    }
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *p, *src, {.seed = ::tilec::testing::TestSeed(20261127)});
  }
}

// The pipelined loop inside a loop over batches: no warp specialisation;
// the stages' barriers are initialised again for each run of the loop, and
// the box of each copy is 3-d with a unit batch dimension.
constexpr char kBatchedGemm[] = R"(
import tilelang.language as T

def gemm(batch, M, N, K, stages, block_M=128, block_N=64, block_K=32, threads=128):
    @T.prim_func
    def main(A: T.Tensor((batch, M, K), "float16"), B: T.Tensor((batch, K, N), "float16"),
             C: T.Tensor((batch, M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            for b in T.serial(batch):
                T.clear(C_local)
                for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                    T.copy(A[b, by * block_M, ko * block_K], A_shared)
                    T.copy(B[b, ko * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[b, by * block_M, bx * block_N])
    return main
)";

TEST(PipelinedTma, LoopsRunAgainReinitialiseTheirBarriers) {
  for (const char* stages : {"2", "4"}) {
    SCOPED_TRACE(stages);
    absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
        "batched.py", kBatchedGemm, "gemm",
        {{"batch", "3"}, {"M", "136"}, {"N", "72"}, {"K", "200"}, {"stages", stages}});
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_EQ(src->kernels[0].threads, 128) << "no producer warpgroup";
    EXPECT_THAT(src->code, HasSubstr("tl::tma_load(&A_shared_fill[0], A_tmap, &mbar[stage], "
                                     "stage * 32, by * 128, b);"));
    EXPECT_THAT(src->code, ::testing::Not(HasSubstr("cp_async")));
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *p, *src, {.seed = ::tilec::testing::TestSeed(20261130)});
  }
}

// T.copy(..., disable_tma=True) keeps that copy on cp.async; the flag is part of the program:
// printed, kept by the wire form, and in the hash.
TEST(PipelinedTma, DisableTmaKeepsACopyOnCpAsync) {
  std::string text = kStagedGemm;
  const std::string copy_a = "T.copy(A[by * block_M, ko * block_K], A_shared)";
  const size_t at = text.find(copy_a);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, copy_a.size(), "T.copy(A[by * block_M, ko * block_K], A_shared, disable_tma=True)");
  const ::tilec::testing::BindingList bindings = {
      {"M", "136"}, {"N", "72"}, {"K", "200"}, {"stages", "3"}};
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource("pipelined.py", text, "gemm", bindings);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<ir::Program> plain = Compile(kStagedGemm, "gemm", bindings);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NE(ir::ProgramHash(*p), ir::ProgramHash(*plain));
  EXPECT_THAT(ir::Print(*p), HasSubstr("A_shared, disable_tma=True)"));
  absl::StatusOr<ir::Program> back = ir::FromProto(ir::ToProto(*p));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ir::ProgramHash(*back), ir::ProgramHash(*p));
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("// A_shared: cp.async, not TMA: T.copy(..., disable_tma=True)"));
  EXPECT_THAT(src->code, HasSubstr("tl::tma_load(&B_shared_fill[0], B_tmap"));
  EXPECT_EQ(src->kernels[0].threads, 128) << "no producer warpgroup";
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(
      *p, *src, {.seed = ::tilec::testing::TestSeed(20261132)});
}

TEST(PipelinedTma, ALoopThatDoesNotWaitForItsStageGetsWrongNumbers) {
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileSource(
      "batched.py", kBatchedGemm, "gemm",
      {{"batch", "1"}, {"M", "128"}, {"N", "64"}, {"K", "256"}, {"stages", "3"}});
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  const std::string wait = "tl::mbarrier_wait_parity(&mbar[ko % 3], (ko / 3) & 1);";
  const size_t at = src->code.find(wait);
  ASSERT_NE(at, std::string::npos) << src->code;
  // Reading the stage before its load lands: the wait moved after the gemm.
  CudaSource broken = *src;
  broken.code.erase(at, wait.size());
  const std::string gemm_end = "(A_shared_stage, B_shared_stage, C_local);";
  const size_t g = broken.code.find(gemm_end);
  ASSERT_NE(g, std::string::npos) << broken.code;
  broken.code.insert(g + gemm_end.size(), "\n    " + wait);
  std::vector<interp::Tensor> expected, actual;
  absl::StatusOr<std::vector<interp::Tensor>> inputs =
      interp::MakeInputs(*p, {}, ::tilec::testing::TestSeed(5));
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  expected = actual = *inputs;
  ASSERT_TRUE(interp::RunProgram(*p, expected).ok());
  absl::Status ran = host::EmulateProgram(*p, broken, actual, {});
  ASSERT_TRUE(ran.ok()) << ran;
  absl::StatusOr<interp::CompareResult> cmp =
      interp::CompareTensors(actual[2], expected[2], interp::DefaultTolerance(actual[2].dtype()));
  ASSERT_TRUE(cmp.ok()) << cmp.status();
  EXPECT_FALSE(cmp->ok) << "a read before the wait must see old data: " << cmp->Summary();
}

}  // namespace
}  // namespace tilec::cuda
