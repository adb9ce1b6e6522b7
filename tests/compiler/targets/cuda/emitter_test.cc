#include "compiler/targets/cuda/emitter.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/sass.h"
#include "compiler/targets/cuda/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/testing/example_cases.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::tilec::testing::CompileExample;
using ::tilec::testing::CompileExampleCase;
using ::tilec::testing::EmitFor;
using ::tilec::testing::ExampleCase;
using ::tilec::testing::kScaleKernel;

// A kernel written inline in TileLang, compiled by the frontend.
absl::StatusOr<ir::Program> CompileSource(const std::string& text, const std::string& function,
                                          const ::tilec::testing::BindingList& bindings = {}) {
  return ::tilec::testing::CompileSource("test.py", text, function, bindings);
}

absl::Status LowerCopyForTest(EmitContext&, const ir::Stmt&) { return absl::OkStatus(); }

class ExampleEmission : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(ExampleEmission, EmitsAndCompilesForBothTargets) {
  const ExampleCase& c = GetParam();
  absl::StatusOr<ir::Program> program = CompileExampleCase(c);
  ASSERT_TRUE(program.ok()) << program.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    CudaTarget target = CudaTarget::ForArch(arch);
    SCOPED_TRACE(std::string(target.name()));
    absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, c.name + ".cu", arch);
    ASSERT_TRUE(r.ok()) << r.status();
    // Generated code compiles cleanly: no unused or shadowed names.
    EXPECT_THAT(r->log, Not(HasSubstr("warning"))) << r->log;
    ASSERT_EQ(r->kernels.size(), src->kernels.size());
    for (const PtxasKernelInfo& k : r->kernels) {
      EXPECT_EQ(k.spill_store_bytes, 0) << k.name;
      EXPECT_EQ(k.spill_load_bytes, 0) << k.name;
    }
    for (const CudaKernel& k : src->kernels) {
      EXPECT_LE(k.smem_bytes, target.info.shared_memory_per_block) << k.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleEmission,
                         ::testing::ValuesIn(::tilec::testing::ExampleCasesOrDie()),
                         ::tilec::testing::CaseName);

// The docs' GEMM at its default size: 4096^3, 128 x 128 x 32 tiles, 4 warps,
// 3 stages. Compiled only: zero spills, within the per-block shared memory,
// tensor-core and ldmatrix instructions and no local memory in the SASS.
TEST(DefaultGemm, CompilesWithoutSpillsForBothTargets) {
  absl::StatusOr<ir::Program> program = CompileExample("gemm.py", "matmul",
                                                       {{"M", "4096"},
                                                        {"N", "4096"},
                                                        {"K", "4096"},
                                                        {"block_M", "128"},
                                                        {"block_N", "128"},
                                                        {"block_K", "32"},
                                                        {"threads", "128"},
                                                        {"num_stages", "3"}});
  ASSERT_TRUE(program.ok()) << program.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    CudaTarget target = CudaTarget::ForArch(arch);
    SCOPED_TRACE(std::string(target.name()));
    absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
    ASSERT_TRUE(src.ok()) << src.status();
    ASSERT_EQ(src->kernels.size(), 1u);
    EXPECT_LE(src->kernels[0].smem_bytes, target.info.shared_memory_per_block);
    absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "matmul.cu", arch);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->kernels.size(), 1u);
    EXPECT_EQ(r->kernels[0].spill_store_bytes, 0);
    EXPECT_EQ(r->kernels[0].spill_load_bytes, 0);
    EXPECT_LE(r->kernels[0].registers, 255);
    absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
    if (!sass.ok()) {
      std::printf("no SASS check: %s\n", std::string(sass.status().message()).c_str());
      continue;
    }
    if (arch == CudaArch::kSm90a) {
      // wgmma (two m64n128k16 per k-step of 16) reading shared memory through
      // descriptors: no mma.sync, no ldmatrix.
      EXPECT_EQ(CountOpcode(*sass, "HGMMA.64x128x16.F32"), 4);
      EXPECT_EQ(CountOpcode(*sass, "HMMA"), 0);
      EXPECT_EQ(CountOpcode(*sass, "LDSM"), 0);
      // The pipelined loop's copies are TMA loads (A [128, 32]: one 64-byte
      // swizzled box; B [32, 128]: two 128-byte column blocks), in the
      // prologue and the loop: no cp.async.
      EXPECT_GT(CountOpcode(*sass, "UTMALDG.2D"), 0);
      EXPECT_EQ(CountOpcode(*sass, "LDGSTS"), 0);
      // The C_shared epilogue leaves by TMA store.
      EXPECT_GT(CountOpcode(*sass, "UTMASTG.2D"), 0);
      EXPECT_THAT(src->code, HasSubstr("tl::tma_store(C_tmap, &C_shared[0], bx * 128, by * 128);"));
      EXPECT_THAT(src->code, HasSubstr("const __grid_constant__ tl::TmaMap A_tmap"));
      ASSERT_EQ(src->kernels[0].params.size(), 6u);
      const CudaKernelParam& b_map = src->kernels[0].params[4];
      EXPECT_EQ(b_map.kind, CudaKernelParam::Kind::kTensorMap);
      EXPECT_EQ(b_map.tensor, "B");
      EXPECT_EQ(b_map.box, (std::vector<int64_t>{32, 64}));
      EXPECT_EQ(b_map.swizzle_bytes, 128);
    } else {
      EXPECT_GT(CountOpcode(*sass, "HMMA"), 0);
      EXPECT_GT(CountOpcode(*sass, "LDSM"), 0);
      EXPECT_GT(CountOpcode(*sass, "LDGSTS"), 0);  // cp.async in the pipelined loop
      EXPECT_EQ(CountOpcode(*sass, "UTMALDG"), 0);
    }
    EXPECT_FALSE(CountLocalMemoryTraffic(*sass).any());
  }
}

// FlashAttention forward at the benchmark's tiles (128 x 128 blocks, head
// dim 128, two warpgroups) on sm_90a: both gemms on wgmma (Q K^T from shared
// memory, P V with P from registers), no mma.sync, no spills.
TEST(FlashAttention, BothGemmsRunAsWgmmaOnSm90a) {
  absl::StatusOr<ir::Program> program = CompileExample("flash_attention.py", "flashattn",
                                                       {{"batch", "2"},
                                                        {"heads", "4"},
                                                        {"seq_q", "1024"},
                                                        {"seq_kv", "1024"},
                                                        {"dim", "128"},
                                                        {"is_causal", "False"},
                                                        {"block_M", "128"},
                                                        {"block_N", "128"},
                                                        {"num_stages", "2"},
                                                        {"threads", "256"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(src->code, HasSubstr("tl::gemm_ss_wgmma<128, 128, 128, 2, 1, false, true"));
  EXPECT_THAT(src->code, HasSubstr("tl::gemm_rs_wgmma<128, 128, 128, 2, 1, false"));
  absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "flashattn.cu", CudaArch::kSm90a);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_EQ(r->kernels[0].spill_store_bytes, 0);
  EXPECT_EQ(r->kernels[0].spill_load_bytes, 0);
  absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
  if (!sass.ok()) {
    std::printf("no SASS check: %s\n", std::string(sass.status().message()).c_str());
    return;
  }
  // Eight k-steps of 16 per gemm (head dim 128, block_N 128).
  EXPECT_EQ(CountOpcode(*sass, "HGMMA.64x128x16.F32"), 16);
  // K and V tiles arrive by TMA (head dim 128 = two 128-byte column blocks).
  EXPECT_GT(CountOpcode(*sass, "UTMALDG.4D"), 0);
  EXPECT_EQ(CountOpcode(*sass, "HMMA"), 0);
  EXPECT_FALSE(CountLocalMemoryTraffic(*sass).any());
}

// Decode attention at the configs TileLang's examples use on Hopper (64
// query heads per block): on sm_90a every gemm is wgmma, GQA's P V with P
// from registers; no mma.sync, no spills, no local memory.
struct DecodeCase {
  const char* file;
  const char* function;
  ::tilec::testing::BindingList bindings;
  std::vector<const char*> calls;                 // in the generated source
  std::vector<std::pair<const char*, int>> hgmma;  // SASS opcode, count
};

void ExpectAllWgmma(const DecodeCase& c) {
  absl::StatusOr<ir::Program> program = CompileExample(c.file, c.function, c.bindings);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  for (const char* call : c.calls) EXPECT_THAT(src->code, HasSubstr(call));
  absl::StatusOr<NvrtcResult> r =
      CompileCuda(src->code, std::string(c.function) + ".cu", CudaArch::kSm90a);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const PtxasKernelInfo& k : r->kernels) {
    EXPECT_EQ(k.spill_store_bytes, 0) << k.name;
    EXPECT_EQ(k.spill_load_bytes, 0) << k.name;
  }
  absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
  if (!sass.ok()) {
    std::printf("no SASS check: %s\n", std::string(sass.status().message()).c_str());
    return;
  }
  for (const auto& [opcode, count] : c.hgmma) EXPECT_EQ(CountOpcode(*sass, opcode), count) << opcode;
  EXPECT_EQ(CountOpcode(*sass, "HMMA"), 0);
  EXPECT_FALSE(CountLocalMemoryTraffic(*sass).any());
}

TEST(DecodeAttention, GqaRunsBothGemmsAsWgmmaOnSm90a) {
  ExpectAllWgmma({"gqa_decode.py",
                  "gqa_decode",
                  {{"batch", "1"}, {"heads", "32"}, {"groups", "8"}, {"seqlen_kv", "8192"},
                   {"dim", "128"}, {"num_split", "8"}, {"block_N", "64"}, {"block_H", "64"},
                   {"num_stages", "2"}, {"threads", "128"}},
                  {"tl::gemm_ss_wgmma<64, 64, 128, 1, 1, false, true",
                   "tl::gemm_rs_wgmma<64, 128, 64, 1, 1, false"},
                  // Q K^T: 128 / 16 k-steps; P V: 64 / 16.
                  {{"HGMMA.64x64x16.F32", 8}, {"HGMMA.64x128x16.F32", 4}}});
}

TEST(DecodeAttention, MlaRunsEveryGemmAsWgmmaOnSm90a) {
  ExpectAllWgmma({"mla_decode.py",
                  "mla_decode",
                  {{"batch", "1"}, {"heads", "128"}, {"seqlen_kv", "8192"}, {"dim", "512"},
                   {"pe_dim", "64"}, {"block_N", "64"}, {"block_H", "64"}, {"num_stages", "2"},
                   {"threads", "256"}},
                  {"tl::gemm_ss_wgmma<64, 64, 512, 1, 2, false, true",
                   "tl::gemm_ss_wgmma<64, 64, 64, 1, 2, false, true",
                   "tl::gemm_ss_wgmma<64, 512, 64, 1, 2, false, false"},
                  // Two warpgroups side by side: the scores' (512 + 64) / 16
                  // k-steps at n32 each, P V's 64 / 16 at n256.
                  {{"HGMMA.64x32x16.F32", 36}, {"HGMMA.64x256x16.F32", 4}}});
}

// The generated GEMM has the shape docs/cuda_backend.md shows.
TEST(DefaultGemm, SourceReadsLikeTheDocs) {
  absl::StatusOr<ir::Program> program = CompileExample("gemm.py", "matmul",
                                                       {{"M", "4096"},
                                                        {"N", "4096"},
                                                        {"K", "4096"},
                                                        {"block_M", "128"},
                                                        {"block_N", "128"},
                                                        {"block_K", "32"},
                                                        {"threads", "128"},
                                                        {"num_stages", "3"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  const std::string& code = src->code;
  EXPECT_THAT(code, HasSubstr("#include \"tl/tl.h\"\n"));
  EXPECT_THAT(code, HasSubstr("extern \"C\" __global__ void __launch_bounds__(128) matmul_k0(\n"
                              "    tl::gptr<tl::half_t> A,\n"
                              "    tl::gptr<tl::half_t> B,\n"
                              "    tl::gptr<tl::half_t> C) {\n"));
  EXPECT_THAT(code, HasSubstr("  uint8_t* smem = tl::dynamic_smem();\n"));
  EXPECT_THAT(code, HasSubstr("  const int tx = threadIdx.x;\n"));
  EXPECT_THAT(code, HasSubstr("  tl::rasterize(10, false, bx, by);  // T.use_swizzle\n"));
  EXPECT_THAT(code, HasSubstr("  using A_shared_layout = tl::Swizzled<128, 32, 2>;\n"));
  // All three stages in one checked buffer (tl/buffer.h).
  EXPECT_THAT(code, HasSubstr("  auto A_shared = tl::smem_buffer<tl::half_t>(smem, 0, 12288, "
                              "\"A_shared\");  // float16[128, 32]"));
  EXPECT_THAT(code, HasSubstr("  float C_local[128];  // mma_accumulator"));
  // Three stages: two prefetched before the loop, one more per iteration,
  // 16-byte cp.async with no border checks at this size.
  EXPECT_THAT(code, HasSubstr("auto A_shared_fill = A_shared + stage * 4096;"));
  EXPECT_THAT(code, HasSubstr("tl::cp_async_16(&A_shared_fill[A_shared_layout::offset(i0_1, "
                              "i1_1)], &A[(by * 128 + i0_1) * 4096 + (stage * 32 + i1_1)], "
                              "true);"));
  EXPECT_THAT(code, HasSubstr("    tl::cp_async_wait<1>();\n    tl::syncthreads();\n"
                              "    if (ko + 2 < 128) {\n"));
  EXPECT_THAT(code, HasSubstr("auto A_shared_stage = A_shared + (ko % 3) * 4096;"));
  EXPECT_THAT(code, HasSubstr("tl::gemm_ss<128, 128, 32, 2, 2, false, false, A_shared_layout, "
                              "B_shared_layout>(A_shared_stage, B_shared_stage, C_local);"));
  // The accumulator leaves in runs of two (its contiguous columns).
  EXPECT_THAT(code, HasSubstr("for (int e = 0; e < 2; ++e) C_local_vec.v[e] = "
                              "tl::half_t(C_local[s_5 + e]);"));
  EXPECT_THAT(code, HasSubstr("tl::store_vec<tl::half_t, 2>(&C_shared[C_shared_layout::offset("
                              "i0_5, i1_5)], C_local_vec);"));
  // Only the CUDA spellings the host twin defines, and no static shared
  // memory.
  EXPECT_THAT(code, Not(HasSubstr("__shared__")));
  EXPECT_THAT(code, Not(HasSubstr("__syncthreads")));
}

TEST(Registry, UnknownTargetNamesTheOperatorAndTarget) {
  absl::StatusOr<TileOpLowering> fn = CudaLowerings().Find(ir::StmtKind::kGemm, "sm_75");
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(fn.status().message(), "T.gemm has no lowering for target sm_75");
  for (absl::string_view t : {"sm_80", "sm_90a"}) {
    for (ir::StmtKind k :
         {ir::StmtKind::kCopy, ir::StmtKind::kFill, ir::StmtKind::kGemm, ir::StmtKind::kReduce,
          ir::StmtKind::kCumsum, ir::StmtKind::kAtomicAdd}) {
      EXPECT_TRUE(CudaLowerings().Find(k, t).ok()) << TileOpName(k) << " on " << t;
    }
  }
  LoweringRegistry r;
  ASSERT_TRUE(r.Register(ir::StmtKind::kCopy, "sm_80", &LowerCopyForTest).ok());
  absl::Status twice = r.Register(ir::StmtKind::kCopy, "sm_80", &LowerCopyForTest);
  EXPECT_EQ(twice.code(), absl::StatusCode::kInternal);
}

TEST(Targets, ParseNames) {
  absl::StatusOr<CudaTarget> t = CudaTarget::FromName("sm_90a");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->arch, CudaArch::kSm90a);
  EXPECT_EQ(t->info.shared_memory_per_block, 227 * 1024);
  EXPECT_EQ(CudaTarget::FromName("sm_70").status().code(), absl::StatusCode::kInvalidArgument);
}

// A bfloat16 accumulator: no mma has one, and summed in float32 it would
// differ from the reference's bfloat16 sums by far more than bfloat16's
// tolerance.
constexpr char kBf16AccGemm[] = R"(
import tilelang.language as T

def bf16_acc_gemm(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
             C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 32), "bfloat16")
            B_s = T.alloc_shared((32, 64), "bfloat16")
            C_l = T.alloc_fragment((64, 64), "bfloat16")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * 64, k * 32], A_s)
                T.copy(B[k * 32, bx * 64], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 64, bx * 64])
    return main
)";

TEST(Unsupported, Bfloat16AccumulatorGemmIsUnimplementedNamingTypesAndTarget) {
  absl::StatusOr<ir::Program> program =
      CompileSource(kBf16AccGemm, "bf16_acc_gemm", {{"M", "128"}, {"N", "128"}, {"K", "64"}});
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kUnimplemented) << src.status();
  EXPECT_THAT(std::string(src.status().message()),
              HasSubstr("T.gemm A_s x B_s -> C_l (M=64, N=64, K=32) with bfloat16 x "
                        "bfloat16 -> bfloat16"));
  EXPECT_THAT(std::string(src.status().message()), HasSubstr("is not supported on sm_80"));
}

// float8 A from registers: the float8 templates take A from shared memory.
constexpr char kFp8RegisterA[] = R"(
import tilelang.language as T

def fp8_gemm_rs(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float8_e4m3"), B: T.Tensor((N, K), "float8_e4m3"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 32), "float8_e4m3")
            A_f = T.alloc_fragment((64, 32), "float8_e4m3")
            B_s = T.alloc_shared((64, 32), "float8_e4m3")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.clear(C_l)
            for k in T.serial(T.ceildiv(K, 32)):
                T.copy(A[by * 64, k * 32], A_s)
                T.copy(B[bx * 64, k * 32], B_s)
                T.copy(A_s, A_f)
                T.gemm(A_f, B_s, C_l, transpose_B=True)
            T.copy(C_l, C[by * 64, bx * 64])
    return main
)";

TEST(Unsupported, Float8GemmWithRegisterAIsUnimplemented) {
  absl::StatusOr<ir::Program> program =
      CompileSource(kFp8RegisterA, "fp8_gemm_rs", {{"M", "128"}, {"N", "128"}, {"K", "64"}});
  ASSERT_TRUE(program.ok()) << program.status();
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
    ASSERT_FALSE(src.ok());
    EXPECT_EQ(src.status().code(), absl::StatusCode::kUnimplemented) << src.status();
    EXPECT_THAT(std::string(src.status().message()), HasSubstr("with float8 A in fragment memory"));
  }
}

// The float8 GEMM example: on sm_90a the float8 wgmma (QGMMA in the SASS,
// operands read through descriptors); on sm_80 f16 mmas of operands converted
// in software, K-major operands through ldmatrix. The kernel reports its
// instruction.
TEST(Float8Gemm, UsesFloat8WgmmaOnSm90aAndF16OnSm80) {
  // Mixed operands (two NVRTC compiles keep this test short).
  for (const char* b_dtype : {"float8_e5m2"}) {
    SCOPED_TRACE(b_dtype);
    absl::StatusOr<ir::Program> program = CompileExample("gemm_fp8.py", "matmul_fp8",
                                                         {{"M", "512"},
                                                          {"N", "512"},
                                                          {"K", "512"},
                                                          {"block_M", "64"},
                                                          {"block_N", "64"},
                                                          {"block_K", "64"},
                                                          {"a_dtype", "float8_e4m3"},
                                                          {"b_dtype", b_dtype},
                                                          {"transpose_B", "True"},
                                                          {"threads", "128"},
                                                          {"num_stages", "3"}});
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string b_ptx = std::string(b_dtype).substr(7);  // e4m3 / e5m2
    for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
      CudaTarget target = CudaTarget::ForArch(arch);
      SCOPED_TRACE(std::string(target.name()));
      absl::StatusOr<CudaSource> src = EmitFor(*program, arch);
      ASSERT_TRUE(src.ok()) << src.status();
      ASSERT_EQ(src->kernels.size(), 1u);
      const std::string mma =
          arch == CudaArch::kSm80
              ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
              : absl::StrCat("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.", b_ptx);
      EXPECT_THAT(src->kernels[0].mma, ::testing::ElementsAre(mma));
      EXPECT_THAT(src->code,
                  HasSubstr(arch == CudaArch::kSm80 ? "tl::gemm_ss_fp8<" : "tl::gemm_ss_wgmma"));
      absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "matmul_fp8.cu", arch);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->kernels.size(), 1u);
      EXPECT_EQ(r->kernels[0].spill_store_bytes, 0);
      EXPECT_EQ(r->kernels[0].spill_load_bytes, 0);
      absl::StatusOr<std::string> sass = DisassembleCubin(r->cubin);
      if (!sass.ok()) {
        std::printf("no SASS check: %s\n", std::string(sass.status().message()).c_str());
        continue;
      }
      EXPECT_FALSE(CountLocalMemoryTraffic(*sass).any());
      if (arch == CudaArch::kSm90a) {
        // Two float8 wgmma (k32) per 64-deep stage, operands through descriptors.
        EXPECT_EQ(CountOpcode(*sass, "QGMMA.64x64x32.F32.E4M3.E5M2"), 2);
        EXPECT_EQ(CountOpcode(*sass, "HMMA"), 0);
      } else {
        EXPECT_GT(CountOpcode(*sass, "LDSM"), 0);  // K-major float8 operands via ldmatrix
        EXPECT_GT(CountOpcode(*sass, "HMMA.16816.F32"), 0);
        EXPECT_EQ(CountOpcode(*sass, "F2FP.F16.E4M3.UNPACK_B"), 0);
      }
    }
  }
}

// Y[i] = X[i] % 0.75 with C's truncating remainder on float32: the IR has
// it, the CUDA backend does not.
ir::Program FloatTruncMod() {
  ir::Buffer x = ir::MakeBuffer("X", ir::DType::kFloat32, {ir::IntImm(128)}, ir::Scope::kGlobal);
  ir::Buffer y = ir::MakeBuffer("Y", ir::DType::kFloat32, {ir::IntImm(128)}, ir::Scope::kGlobal);
  ir::Var i = ir::MakeVar("i");
  ir::Stmt store =
      ir::Store(y, {i}, ir::Binary(ir::BinaryOp::kMod, ir::Load(x, {i}), ir::FloatImm(0.75)));
  auto k = std::make_shared<ir::KernelNode>();
  k->grid = {ir::IntImm(1)};
  k->block_vars = {ir::MakeVar("bx")};
  k->threads = ir::IntImm(128);
  k->body = ir::For(i, ir::IntImm(0), ir::IntImm(128), ir::ForKind::kParallel, store);
  ir::Program p;
  p.name = "fmod";
  p.params = {{x, nullptr}, {y, nullptr}};
  p.body = ir::Seq({k});
  return p;
}

TEST(Unsupported, FloatTruncModIsUnimplemented) {
  ir::Program program = FloatTruncMod();
  ASSERT_TRUE(ir::Verify(program).ok()) << ir::Verify(program);
  absl::StatusOr<CudaSource> src = EmitFor(program, CudaArch::kSm90a);
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kUnimplemented) << src.status();
  EXPECT_THAT(std::string(src.status().message()),
              HasSubstr("fmod_k0: the truncating remainder T.truncmod of floating-point values "
                        "is not supported on sm_90a"));
}

TEST(Kernels, DynamicDimsAreTrailingIntParametersAndGridExpressions) {
  absl::StatusOr<ir::Program> program = CompileSource(kScaleKernel, "scale");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->dyn_dims.size(), 1u);
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_EQ(src->kernels.size(), 1u);
  const CudaKernel& k = src->kernels[0];
  EXPECT_EQ(k.name, "scale_k0");
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[2].kind, CudaKernelParam::Kind::kDynDim);
  EXPECT_EQ(k.params[2].name, "N");
  EXPECT_THAT(src->code, HasSubstr("    tl::gptr<float> Y,\n    int N) {"));
  ASSERT_EQ(k.grid.size(), 1u);
  EXPECT_EQ(ir::PrintExpr(k.grid[0]), "T.ceildiv(N, 128)");
  EXPECT_EQ(k.smem_bytes, 0);
  absl::StatusOr<NvrtcResult> r = CompileCuda(src->code, "scale.cu", CudaArch::kSm80);
  ASSERT_TRUE(r.ok()) << r.status();
}

TEST(Kernels, WorkspacesFollowTheParametersInEveryKernelThatUsesThem) {
  absl::StatusOr<ir::Program> program = CompileExampleCase("gqa_decode_small");
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = EmitFor(*program, CudaArch::kSm80);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_EQ(src->workspaces.size(), 2u);
  EXPECT_EQ(src->workspaces[0].name, "glse");
  // [batch, heads, num_split] float32 = 1 * 8 * 2 * 4 bytes.
  EXPECT_EQ(ir::PrintExpr(src->workspaces[0].bytes), "T.int64(64)");
  ASSERT_EQ(src->kernels.size(), 2u);
  for (const CudaKernel& k : src->kernels) {
    std::vector<std::string> names;
    for (const CudaKernelParam& p : k.params) names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"Q", "K", "V", "Output", "glse", "Output_partial"}))
        << k.name;
  }
  EXPECT_EQ(src->kernels[0].name, "gqa_decode_k0");
  EXPECT_EQ(src->kernels[1].name, "gqa_decode_k1");
}

TEST(Kernels, UnboundTileParameterIsAPreconditionFailure) {
  absl::StatusOr<ir::Program> program = CompileSource(kScaleKernel, "scale", {{"N", "1000"}});
  ASSERT_TRUE(program.ok()) << program.status();
  ir::Program p = *program;
  p.tile_params.push_back({ir::MakeVar("block_K"), std::nullopt, {}});
  absl::StatusOr<CudaSource> src =
      EmitCuda(p, inference::LayoutPlan(), CudaTarget::ForArch(CudaArch::kSm80));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(src.status().message()), HasSubstr("tile parameter block_K is unbound"));
}

}  // namespace
}  // namespace tilec::cuda
