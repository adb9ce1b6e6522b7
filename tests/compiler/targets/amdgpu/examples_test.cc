// Every example case for the AMD targets: the HIP-flavoured code emitted for
// gfx942 run on the emulator with 64-lane wavefronts (MFMA through the
// emulator's wave collective) and compared with the reference interpreter on
// random inputs at small and ragged sizes; and the same code compiled by
// clang-19 into code objects for gfx942 and gfx90a, whose disassembly
// (llvm-objdump-19) shows v_mfma where the kernel has a T.gemm, and whose
// metadata shows no scratch. The float8 cases (the OCP types) are lowered
// for both (software conversions, T.gemm on the half MFMA). Set
// TILEC_TEST_SEED to reproduce a run;
// TILEC_DUMP_CUDA=1 prints the generated source.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/tools/tool_run.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/testing/example_cases.h"
#include "tests/testing/temp_dir.h"

namespace tilec::cuda {
namespace {

using ::tilec::testing::ExampleCase;

CudaTarget Amd(const char* name) {
  absl::StatusOr<CudaTarget> t = CudaTarget::FromName(name);
  if (!t.ok()) std::abort();
  return *t;
}

// The instructions llvm-objdump-19 disassembles from a code object.
std::string Disassemble(const std::string& hsaco, const std::string& arch) {
  const std::string dir = ::tilec::testing::MakeTempDir("amd_objdump");
  const std::string path = dir + "/k.hsaco";
  std::ofstream(path, std::ios::binary) << hsaco;
  const std::string out = dir + "/dis.txt";
  absl::StatusOr<int> rc =
      tools::RunTool({"llvm-objdump-19", "-d", "--mcpu=" + arch, path}, out, "llvm-objdump-19");
  if (!rc.ok() || *rc != 0) return "";
  return tools::ReadAll(out);
}

class EmulatedExampleGfx942 : public ::testing::TestWithParam<std::string> {};

TEST_P(EmulatedExampleGfx942, MatchesTheInterpreter) {
  absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExampleCase(GetParam());
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, Amd("gfx942"));
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->warp_size, 64);
  EXPECT_NE(src->code.find("#define TL_AMDGPU 1\n#include \"tl/tl.h\""), std::string::npos);
  absl::StatusOr<ExampleCase> c = ::tilec::testing::FindExampleCase(GetParam());
  ASSERT_TRUE(c.ok());
  ::tilec::testing::EmulatorCheck check{.seed = ::tilec::testing::TestSeed(20261127)};
  if (c->file == "gemm_splitk.py") check.zero = {"C"};
  ::tilec::testing::ExpectEmulatorMatchesInterpreter(*program, *src, check);
}

// A block that is not whole wavefronts (96 threads) cannot run MFMA: its
// gemm runs on the CUDA cores and still matches the interpreter, on a
// ragged GEMM, for bfloat16 and float16 operands.
TEST(EmulatedGfx942, GemmsOfPartialWavefrontsRunOnTheCudaCores) {
  for (const char* dtype : {"float16", "bfloat16"}) {
    SCOPED_TRACE(dtype);
    absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExample(
        "gemm.py", "matmul",
        {{"M", "100"}, {"N", "72"}, {"K", "56"}, {"block_M", "64"}, {"block_N", "64"},
         {"block_K", "32"}, {"dtype", dtype}, {"num_stages", "2"}, {"threads", "96"}});
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, Amd("gfx942"));
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_NE(src->code.find("on the CUDA cores"), std::string::npos);
    EXPECT_EQ(src->code.find("gemm_ss_mfma"), std::string::npos);
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *program, *src, {.seed = ::tilec::testing::TestSeed(20261127)});
  }
}

// Element-wise conversions into and out of the fnuz types (the example's
// sum, cast) on gfx942: the emulator matches the interpreter at ragged
// sizes, and the code object compiles with the float8 converts.
TEST(Gfx942Float8, ConversionsMatchTheInterpreter) {
  const std::pair<const char*, const char*> types[] = {{"float32", "float8_e4m3fnuz"},
                                                       {"float16", "float8_e5m2fnuz"},
                                                       {"float8_e4m3fnuz", "float32"},
                                                       {"float8_e5m2fnuz", "float8_e4m3fnuz"}};
  for (const auto& [in, out] : types) {
    SCOPED_TRACE(::testing::Message() << in << " -> " << out);
    absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExample(
        "elementwise_add.py", "elementwise_add",
        {{"M", "70"}, {"N", "200"}, {"block_M", "32"}, {"block_N", "128"}, {"in_dtype", in},
         {"out_dtype", out}, {"threads", "128"}});
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, Amd("gfx942"));
    ASSERT_TRUE(src.ok()) << src.status();
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *program, *src, {.seed = ::tilec::testing::TestSeed(20261127)});
    absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*program, Amd("gfx942"));
    ASSERT_TRUE(a.ok()) << a.status();
    const std::string dis = Disassemble(a->cubin, "gfx942");
    EXPECT_TRUE(dis.find("v_cvt_pk_fp8_f32") != std::string::npos ||
                dis.find("v_cvt_pk_bf8_f32") != std::string::npos ||
                dis.find("v_cvt_f32_fp8") != std::string::npos ||
                dis.find("v_cvt_f32_bf8") != std::string::npos)
        << "no float8 conversion in the code object";
  }
}

// gemm_ss_mfma reads 16 bytes of each operand a lane at once (two k-steps,
// or four for OCP float8 multiplied as half); a K that is not a whole number
// of such groups ends with steps read alone. block_K = 48: three steps of
// the 16 x 16 x 16 MFMA (f16, a 64 x 32 tile over four waves) and of the
// 32 x 32 x 16 float8 one, six of the 32 x 32 x 8 half one for OCP float8
// (one group of four, two alone). Ragged shapes, against the interpreter.
TEST(EmulatedGfx942, OddNumbersOfKStepsEndWithASingleStep) {
  struct Case {
    const char* file;
    const char* fn;
    std::vector<std::pair<std::string, std::string>> bindings;
    const char* mfma;
  };
  const Case cases[] = {
      {"gemm.py",
       "matmul",
       {{"M", "100"}, {"N", "72"}, {"K", "120"}, {"block_M", "64"}, {"block_N", "32"},
        {"block_K", "48"}, {"dtype", "float16"}, {"num_stages", "2"}, {"threads", "256"}},
       "v_mfma_f32_16x16x16_f16"},
      {"gemm_fp8.py",
       "matmul_fp8",
       {{"M", "100"}, {"N", "72"}, {"K", "120"}, {"block_M", "64"}, {"block_N", "64"},
        {"block_K", "48"}, {"a_dtype", "float8_e4m3fnuz"}, {"b_dtype", "float8_e4m3fnuz"},
        {"transpose_B", "True"}, {"num_stages", "2"}, {"threads", "256"}},
       "v_mfma_f32_32x32x16_fp8_fp8"},
      {"gemm_fp8.py",
       "matmul_fp8",
       {{"M", "100"}, {"N", "72"}, {"K", "120"}, {"block_M", "64"}, {"block_N", "64"},
        {"block_K", "48"}, {"a_dtype", "float8_e4m3"}, {"b_dtype", "float8_e5m2"},
        {"transpose_B", "False"}, {"num_stages", "2"}, {"threads", "256"}},
       "v_mfma_f32_32x32x8_f16"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExample(c.file, c.fn, c.bindings);
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, Amd("gfx942"));
    ASSERT_TRUE(src.ok()) << src.status();
    bool noted = false;
    for (const CudaKernel& k : src->kernels) {
      for (const std::string& m : k.mma) noted |= m == c.mfma;
    }
    EXPECT_TRUE(noted) << "expected " << c.mfma;
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *program, *src, {.seed = ::tilec::testing::TestSeed(20261127)});
  }
}

class HsacoExample : public ::testing::TestWithParam<std::string> {};

TEST_P(HsacoExample, CompilesWithMfmaAndNoScratch) {
  absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExampleCase(GetParam());
  ASSERT_TRUE(program.ok()) << program.status();
  for (const char* arch : {"gfx942", "gfx90a"}) {
    SCOPED_TRACE(arch);
    absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*program, Amd(arch));
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_TRUE(a->amd);
    ASSERT_EQ(a->cubin.substr(0, 4), std::string("\x7f") + "ELF");
    EXPECT_EQ(BinarySuffix(*a), ".hsaco");
    std::printf("%s %s: %.2f s\n", GetParam().c_str(), arch, a->compile_seconds);
    bool gemm = false;
    for (size_t i = 0; i < a->source.kernels.size(); ++i) {
      const CudaKernel& k = a->source.kernels[i];
      EXPECT_GT(a->ptxas[i].registers, 0) << k.name << ": not in the code object's metadata";
      EXPECT_EQ(a->ptxas[i].stack_frame_bytes, 0) << k.name << " uses scratch";
      for (const std::string& m : k.mma) gemm |= m.rfind("v_mfma_", 0) == 0;
    }
    if (gemm) {
      const std::string dis = Disassemble(a->cubin, arch);
      EXPECT_NE(dis.find("v_mfma_f32_"), std::string::npos) << "no MFMA in the code object";
    }
  }
}

// gfx942's float8 is the fnuz pair: each float8 example case with its
// operand types turned into float8_e4m3fnuz / float8_e5m2fnuz runs its
// T.gemm on the float8 MFMA (v_mfma_f32_*_{fp8,bf8}_{fp8,bf8}), matches the
// interpreter on the emulator (random inputs, ragged shapes), and compiles
// for gfx942 with that instruction and no scratch; gfx90a, which has no
// float8, and the NVIDIA targets, whose float8 is the OCP pair, refuse it
// naming the type.
TEST(Gfx942Float8, FnuzGemmsRunOnTheFloat8Mfma) {
  int cases = 0;
  for (const ExampleCase& c : ::tilec::testing::ExampleCasesOrDie()) {
    if (c.file != "gemm_fp8.py") continue;
    SCOPED_TRACE(c.name);
    ++cases;
    std::vector<std::pair<std::string, std::string>> bindings;
    std::vector<std::string> kinds;
    for (const auto& [name, value] : c.bindings) {
      std::string v = value;
      if (name == "a_dtype" || name == "b_dtype") {
        v += "fnuz";
        kinds.push_back(value == "float8_e5m2" ? "bf8" : "fp8");
      }
      bindings.emplace_back(name, v);
    }
    absl::StatusOr<ir::Program> program =
        ::tilec::testing::CompileExample(c.file, c.function, bindings);
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, Amd("gfx942"));
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_NE(src->code.find("tl::gemm_ss_mfma"), std::string::npos);
    ::tilec::testing::ExpectEmulatorMatchesInterpreter(
        *program, *src, {.seed = ::tilec::testing::TestSeed(20261127)});

    absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*program, Amd("gfx942"));
    ASSERT_TRUE(a.ok()) << a.status();
    // The instruction's A operand is B's fragment (C^T = B^T A^T).
    const std::string want = absl::StrCat("_", kinds[1], "_", kinds[0]);
    bool found = false;
    for (size_t i = 0; i < a->source.kernels.size(); ++i) {
      EXPECT_EQ(a->ptxas[i].stack_frame_bytes, 0) << a->source.kernels[i].name << " uses scratch";
      for (const std::string& m : a->source.kernels[i].mma) found |= m.find(want) != std::string::npos;
    }
    EXPECT_TRUE(found) << "no float8 MFMA " << want << " noted";
    const std::string dis = Disassemble(a->cubin, "gfx942");
    EXPECT_NE(dis.find("v_mfma_f32_"), std::string::npos);
    EXPECT_NE(dis.find(want), std::string::npos) << "no " << want << " MFMA in the code object";

    for (const char* refusing : {"gfx90a", "sm_90a", "sm_80"}) {
      absl::StatusOr<CudaTarget> t = CudaTarget::FromName(refusing);
      ASSERT_TRUE(t.ok());
      absl::StatusOr<CudaSource> r = ::tilec::testing::EmitFor(*program, *t);
      ASSERT_FALSE(r.ok()) << refusing;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
      EXPECT_NE(r.status().message().find("fnuz"), std::string::npos) << r.status();
    }
  }
  EXPECT_EQ(cases, 3);
}

// The OCP float8 types on both AMD targets, neither of which converts them
// natively: element-wise conversions into and out of them (software
// conversions, tl/ocp_fp8.h) match the interpreter on the emulator and
// compile without scratch; their T.gemm runs on the half MFMA; and a gemm
// mixing an OCP operand with a fnuz one is refused naming both types.
TEST(AmdOcpFloat8, ConversionsAndGemmsOnBothTargets) {
  const std::pair<const char*, const char*> types[] = {{"float32", "float8_e4m3"},
                                                       {"float16", "float8_e5m2"},
                                                       {"float8_e4m3", "float32"},
                                                       {"float8_e5m2", "float8_e4m3"}};
  for (const char* arch : {"gfx942", "gfx90a"}) {
    for (const auto& [in, out] : types) {
      SCOPED_TRACE(::testing::Message() << arch << " " << in << " -> " << out);
      absl::StatusOr<ir::Program> program = ::tilec::testing::CompileExample(
          "elementwise_add.py", "elementwise_add",
          {{"M", "70"}, {"N", "200"}, {"block_M", "32"}, {"block_N", "128"}, {"in_dtype", in},
           {"out_dtype", out}, {"threads", "128"}});
      ASSERT_TRUE(program.ok()) << program.status();
      absl::StatusOr<CudaSource> src = ::tilec::testing::EmitFor(*program, Amd(arch));
      ASSERT_TRUE(src.ok()) << src.status();
      ::tilec::testing::ExpectEmulatorMatchesInterpreter(
          *program, *src, {.seed = ::tilec::testing::TestSeed(20261127)});
      absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*program, Amd(arch));
      ASSERT_TRUE(a.ok()) << a.status();
      for (size_t i = 0; i < a->source.kernels.size(); ++i) {
        EXPECT_EQ(a->ptxas[i].stack_frame_bytes, 0) << a->source.kernels[i].name;
      }
    }
  }
  absl::StatusOr<ir::Program> mixed = ::tilec::testing::CompileExample(
      "gemm_fp8.py", "matmul_fp8",
      {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"block_M", "64"}, {"block_N", "64"},
       {"block_K", "32"}, {"a_dtype", "float8_e4m3"}, {"b_dtype", "float8_e4m3fnuz"},
       {"transpose_B", "True"}, {"num_stages", "1"}, {"threads", "256"}});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  absl::StatusOr<CudaSource> r = ::tilec::testing::EmitFor(*mixed, Amd("gfx942"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
  EXPECT_NE(r.status().message().find("float8_e4m3 x float8_e4m3fnuz"), std::string::npos)
      << r.status();
}

// Every case of examples/cases.txt.
std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const ExampleCase& c : ::tilec::testing::ExampleCasesOrDie()) names.push_back(c.name);
  return names;
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Examples, EmulatedExampleGfx942, ::testing::ValuesIn(CaseNames()),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(Examples, HsacoExample, ::testing::ValuesIn(CaseNames()), ParamName);

// float64 math the AMD device library has no lowering for (exp, log, sin...)
// is refused at emission naming the function, on both AMD targets and
// before clang sees it; float64 sqrt, which it lowers, compiles; the NVIDIA
// targets take both.
TEST(AmdFloat64Math, FunctionsWithoutALoweringAreRefusedByName) {
  constexpr char kSource[] = R"(
import tilelang.language as T

def unary(N, fn):
    @T.prim_func
    def main(A: T.Tensor((N,), "float64"), B: T.Tensor((N,), "float64")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                if bx * 128 + i < N:
                    B[bx * 128 + i] = getattr(T, fn)(A[bx * 128 + i])
    return main
)";
  for (const char* fn : {"exp", "log", "sin", "sqrt"}) {
    SCOPED_TRACE(fn);
    absl::StatusOr<ir::Program> program = ::tilec::testing::CompileSource(
        "f64.py", kSource, "unary", {{"N", "300"}, {"fn", absl::StrCat("\"", fn, "\"")}});
    ASSERT_TRUE(program.ok()) << program.status();
    for (const char* arch : {"gfx942", "gfx90a"}) {
      absl::StatusOr<CudaArtifact> a = BuildCudaArtifact(*program, Amd(arch));
      if (std::string_view(fn) == "sqrt") {
        EXPECT_TRUE(a.ok()) << arch << ": " << a.status();
        continue;
      }
      ASSERT_FALSE(a.ok()) << arch;
      EXPECT_EQ(a.status().code(), absl::StatusCode::kUnimplemented) << a.status();
      EXPECT_NE(a.status().message().find(absl::StrCat("float64 ", fn, " not lowered for ", arch)),
                std::string::npos)
          << a.status();
      EXPECT_NE(a.status().message().find("cast the operand to float32"), std::string::npos)
          << a.status();
    }
    for (const char* arch : {"sm_80", "sm_90a"}) {
      absl::StatusOr<CudaTarget> t = CudaTarget::FromName(arch);
      ASSERT_TRUE(t.ok());
      EXPECT_TRUE(::tilec::testing::EmitFor(*program, *t).ok()) << arch;
    }
  }
}

}  // namespace
}  // namespace tilec::cuda
