// The structure of tilec's example kernels at the GPU benchmarks' sizes on
// sm_90a (benchmarks/gpu/cases.py), read from the emitted code and the SASS:
// what a fast kernel needs and a regression would silently lose. Warp
// specialisation (a producer warpgroup: USETMAXREG, UTMALDG), HGMMA, no
// local memory (spills), no per-element bounds masks where the shapes
// divide the tiles, and the kernel's fast math (pass_configs).
// benchmarks/parity/ compares the same kernels with TileLang's own code.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/ir/hash.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/sass.h"
#include "compiler/targets/cuda/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct Kernel {
  std::string name, file, function;
  ::tilec::testing::BindingList bindings;
};

// "name=value name=value ..." as a binding list.
::tilec::testing::BindingList Bind(const std::string& text) {
  ::tilec::testing::BindingList out;
  for (absl::string_view item : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t eq = item.find('=');
    out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return out;
}

// benchmarks/gpu/cases.py's bindings.
::tilec::testing::BindingList FlashAttention(bool causal) {
  return Bind(absl::StrCat(
      "batch=8 heads=32 seq_q=4096 seq_kv=4096 dim=128 block_M=128 block_N=128 num_stages=2 "
      "threads=256 dtype=float16 accum_dtype=float32 is_causal=",
      causal ? "True" : "False"));
}

std::vector<Kernel> Kernels() {
  return {
      {"flash_attention", "flash_attention.py", "flashattn", FlashAttention(false)},
      {"flash_attention_causal", "flash_attention.py", "flashattn", FlashAttention(true)},
      {"gqa_decode", "gqa_decode.py", "gqa_decode",
       Bind("batch=8 heads=32 groups=8 seqlen_kv=8192 dim=128 num_split=8 block_N=64 block_H=64 "
            "num_stages=2 threads=128 dtype=float16 accum_dtype=float32")},
      {"dequant_gemm_int4", "dequant_gemm.py", "dequant_matmul",
       Bind("M=256 N=4096 K=4096 group_size=128 block_M=64 block_N=128 block_K=128 num_stages=2 "
            "threads=128 in_dtype=float16 out_dtype=float16 accum_dtype=float32")},
      {"gemm_f16", "gemm.py", "matmul",
       Bind("M=4096 N=4096 K=4096 block_M=128 block_N=128 block_K=32 dtype=float16 "
            "accum_dtype=float32 transpose_A=False transpose_B=False num_stages=3 threads=128 "
            "enable_rasterization=True")},
  };
}

struct Built {
  ir::Program program;
  CudaArtifact artifact;
  std::string sass;
};

Built Build(const Kernel& k) {
  Built b;
  absl::StatusOr<ir::Program> p = ::tilec::testing::CompileExample(k.file, k.function, k.bindings);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return b;
  b.program = *p;
  absl::StatusOr<CudaTarget> target = CudaTarget::FromName("sm_90a");
  EXPECT_TRUE(target.ok()) << target.status();
  absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(b.program, *target);
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return b;
  b.artifact = *std::move(a);
  absl::StatusOr<std::string> sass = DisassembleCubin(b.artifact.cubin);
  EXPECT_TRUE(sass.ok()) << sass.status();
  if (sass.ok()) b.sass = *std::move(sass);
  return b;
}

class ExampleKernel : public ::testing::TestWithParam<Kernel> {};

TEST_P(ExampleKernel, IsWarpSpecialisedWithTmaAndWgmmaAndDoesNotSpill) {
  ASSERT_TRUE(FindCuobjdump().ok()) << FindCuobjdump().status();
  const Built b = Build(GetParam());
  // The first kernel is the main one (GQA decode's second combines splits).
  ASSERT_GE(b.artifact.source.kernels.size(), 1u);
  const CudaKernel& k = b.artifact.source.kernels[0];
  EXPECT_THAT(k.schedule, StartsWith("warp-specialised: ")) << k.schedule;
  ASSERT_GE(b.artifact.ptxas.size(), 1u);
  EXPECT_EQ(b.artifact.ptxas[0].spill_store_bytes, 0);
  EXPECT_EQ(b.artifact.ptxas[0].spill_load_bytes, 0);
  EXPECT_FALSE(CountLocalMemoryTraffic(b.sass).any());
  const std::vector<SassFunction> functions = SplitSassFunctions(b.sass);
  const SassFunction* main = nullptr;
  for (const SassFunction& f : functions) {
    if (f.name == k.name) main = &f;
  }
  ASSERT_NE(main, nullptr) << k.name;
  // setmaxnreg moves registers from the producer to the consumers.
  EXPECT_EQ(CountOpcode(main->text, "USETMAXREG"), 2) << k.name;
  EXPECT_GE(CountOpcode(main->text, "UTMALDG"), 1);
  EXPECT_GE(CountOpcode(main->text, "HGMMA"), 1);
}

// MLA decode (benchmarks/gpu/cases.py's bindings: 512-deep scores on
// mma.sync, two consumer warpgroups): warp-specialised and no spills. Its
// score gemm unrolled whole kept every k-step's fragments in flight and
// spilled (12 B at 232 registers); tl::gemm_ss now goes one swizzle block
// of k at a time.
TEST(KernelStructure, MlaDecodeIsWarpSpecialisedAndDoesNotSpill) {
  ASSERT_TRUE(FindCuobjdump().ok()) << FindCuobjdump().status();
  const Built b = Build({"mla_decode", "mla_decode.py", "mla_decode",
                         Bind("batch=64 heads=128 seqlen_kv=8192 dim=512 pe_dim=64 block_N=64 "
                              "block_H=32 num_stages=2 threads=256 dtype=float16 "
                              "accum_dtype=float32")});
  ASSERT_GE(b.artifact.source.kernels.size(), 1u);
  EXPECT_THAT(b.artifact.source.kernels[0].schedule, StartsWith("warp-specialised: "));
  ASSERT_GE(b.artifact.ptxas.size(), 1u);
  EXPECT_EQ(b.artifact.ptxas[0].spill_store_bytes, 0);
  EXPECT_EQ(b.artifact.ptxas[0].spill_load_bytes, 0);
  EXPECT_FALSE(CountLocalMemoryTraffic(b.sass).any());
  EXPECT_GE(CountOpcode(b.sass, "HMMA"), 1);
  EXPECT_GE(CountOpcode(b.sass, "UTMALDG"), 1);
}

// Each gemm of attention's loop is one wgmma group: one WARPGROUP.ARRIVE
// before its instructions, which ptxas issues back to back. (Packing P's
// registers between the P.V wgmmas made ptxas wait for each one.)
TEST(KernelStructure, AttentionWgmmaIsNotSerialised) {
  ASSERT_TRUE(FindCuobjdump().ok()) << FindCuobjdump().status();
  for (const Kernel& kernel : Kernels()) {
    if (kernel.file != "flash_attention.py") continue;
    SCOPED_TRACE(kernel.name);
    const Built b = Build(kernel);
    EXPECT_EQ(CountOpcode(b.sass, "HGMMA"), 16);
    EXPECT_EQ(CountOpcode(b.sass, "WARPGROUP.ARRIVE"), 2) << "a wgmma waits for the one before";
  }
}

// The int4 GEMM dequantises in float16 instructions, as its source says
// ((q - 8) * scale in float16): a subtract and a multiply rounded once each,
// not float arithmetic with conversions around every operation.
TEST(KernelStructure, DequantisesWithHalfPrecisionInstructions) {
  ASSERT_TRUE(FindCuobjdump().ok()) << FindCuobjdump().status();
  for (const Kernel& kernel : Kernels()) {
    if (kernel.name != "dequant_gemm_int4") continue;
    const Built b = Build(kernel);
    EXPECT_THAT(b.artifact.source.code, HasSubstr("tl::hmul(tl::hsub("));
    EXPECT_GE(CountOpcode(b.sass, "HMUL2"), 1);
    EXPECT_EQ(CountOpcode(b.sass, "FMUL"), 0) << "a float multiply per element";
  }
}

// Attention's Q is loaded by the producer with TMA too, before the loop, and
// QK^T waits for K alone: V has a barrier of its own.
TEST(KernelStructure, AttentionLoadsQWithTmaAndWaitsForKAndVApart) {
  const std::vector<Kernel> kernels = Kernels();
  for (const Kernel& kernel : kernels) {
    if (kernel.file != "flash_attention.py" && kernel.file != "gqa_decode.py") continue;
    SCOPED_TRACE(kernel.name);
    absl::StatusOr<ir::Program> p =
        ::tilec::testing::CompileExample(kernel.file, kernel.function, kernel.bindings);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    const std::string& code = src->code;
    EXPECT_THAT(code, HasSubstr("tl::tma_load(&Q_shared[0], Q_tmap, prologue_full"));
    EXPECT_THAT(code, HasSubstr("tl::mbarrier_wait_parity(prologue_full, 0);"));
    EXPECT_THAT(code, Not(HasSubstr("tl::copy_vec<16>(&Q_shared")));
    const size_t k_wait = code.find("// K_shared landed");
    const size_t qk = code.find("tl::gemm_ss_wgmma<", k_wait);
    const size_t v_wait = code.find("// V_shared landed");
    ASSERT_NE(k_wait, std::string::npos) << code;
    ASSERT_NE(v_wait, std::string::npos) << code;
    EXPECT_LT(k_wait, qk);
    EXPECT_LT(qk, v_wait) << "QK^T waits for V";
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90a, ExampleKernel, ::testing::ValuesIn(Kernels()),
                         [](const ::testing::TestParamInfo<Kernel>& info) {
                           return info.param.name;
                         });

// The part of the emitted code inside the T.Pipelined loop of the consumers.
std::string ConsumerLoop(const std::string& code) {
  const size_t begin = code.find("// T.Pipelined over k");
  const size_t end = code.find("tl::mbarrier_arrive(&empty", begin);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return code.substr(begin, end - begin);
}

// 4096 keys in tiles of 128: `k * 128 + j < 4096` always holds (k <= 31, j <=
// 127), so the mask the source writes is no per-element select in the loop;
// causal attention keeps its diagonal test and drops the length test (the
// loop's bound min(32, ceildiv((bx + 1) * 128, 128)) keeps k <= 31 too).
TEST(KernelStructure, DivisibleFlashAttentionHasNoLengthMaskInItsLoop) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    absl::StatusOr<ir::Program> p =
        ::tilec::testing::CompileExample("flash_attention.py", "flashattn", FlashAttention(causal));
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
    ASSERT_TRUE(src.ok()) << src.status();
    const std::string loop = ConsumerLoop(src->code);
    ASSERT_FALSE(loop.empty()) << src->code;
    EXPECT_THAT(loop, Not(HasSubstr("< 4096"))) << loop;
    const std::string mask = "? 0.0f : -tl::infinity<float>()";
    if (causal) {
      EXPECT_THAT(loop, HasSubstr(mask)) << loop;
    } else {
      EXPECT_THAT(loop, Not(HasSubstr(mask))) << loop;
    }
  }
  // Ragged: 4000 keys, the last tile's mask stays.
  ::tilec::testing::BindingList ragged = FlashAttention(false);
  for (auto& [name, value] : ragged) {
    if (name == "seq_kv") value = "4000";
  }
  absl::StatusOr<ir::Program> p =
      ::tilec::testing::CompileExample("flash_attention.py", "flashattn", ragged);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*p, CudaArch::kSm90a);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(ConsumerLoop(src->code), HasSubstr("< 4000"));
}

constexpr char kDivide[] = R"(
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1], pass_configs=CONFIGS)
def divide(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"),
             Z: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                Z[bx * block + i] = X[bx * block + i] / Y[bx * block + i] + T.exp2(X[bx * block + i])
    return main
)";

absl::StatusOr<ir::Program> Divide(const std::string& configs) {
  std::string text = kDivide;
  text.replace(text.find("CONFIGS"), 7, configs);
  return ::tilec::testing::CompileSource("divide.py", text, "divide", {{"N", "1000"}});
}

// TileLang's pass_configs={TL_ENABLE_FAST_MATH: True} (by key or by its
// string) gives NVRTC --use_fast_math: the division is a reciprocal and a
// multiply, with no call to the IEEE division's slow path, and exp2 no
// denormal range fix-up. The program's hash tells the two apart.
TEST(KernelStructure, FastMathFromPassConfigs) {
  ASSERT_TRUE(FindCuobjdump().ok()) << FindCuobjdump().status();
  absl::StatusOr<CudaTarget> target = CudaTarget::FromName("sm_90a");
  ASSERT_TRUE(target.ok());
  struct Case {
    std::string configs;
    bool fast;
  };
  std::vector<std::string> hashes;
  for (const Case& c : std::vector<Case>{
           {"{tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}", true},
           {"{\"tl.enable_fast_math\": True}", true},
           {"{tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: False}", false},
           {"None", false},
       }) {
    SCOPED_TRACE(c.configs);
    absl::StatusOr<ir::Program> p = Divide(c.configs);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->fast_math, c.fast);
    hashes.push_back(ir::ProgramHash(*p));
    absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*p, *target);
    ASSERT_TRUE(a.ok()) << a.status();
    absl::StatusOr<std::string> sass = DisassembleCubin(a->cubin);
    ASSERT_TRUE(sass.ok()) << sass.status();
    EXPECT_EQ(CountOpcode(*sass, "CALL") > 0, !c.fast) << *sass;
    EXPECT_GE(CountOpcode(*sass, "MUFU.RCP"), 1);
  }
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_NE(hashes[0], hashes[2]);
  EXPECT_EQ(hashes[2], hashes[3]);
  // TL_DISABLE_WARP_SPECIALIZED is read from the same dict, and hashed.
  absl::StatusOr<ir::Program> no_ws =
      Divide("{tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}");
  ASSERT_TRUE(no_ws.ok()) << no_ws.status();
  EXPECT_TRUE(no_ws->disable_warp_specialized);
  EXPECT_FALSE(no_ws->fast_math);
  EXPECT_NE(ir::ProgramHash(*no_ws), hashes[3]);
  // Not a dict: an error at the pass_configs.
  absl::StatusOr<ir::Program> bad = Divide("[1, 2]");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("pass_configs must be a dict, got list"));
  EXPECT_THAT(bad.status().message(), HasSubstr("divide.py:5:"));
}

}  // namespace
}  // namespace tilec::cuda
