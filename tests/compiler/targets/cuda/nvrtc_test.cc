#include "compiler/targets/cuda/nvrtc.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::cuda {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTwoKernels[] = R"(#include "tl/tl.h"

extern "C" __global__ void __launch_bounds__(128) scale_k0(float* __restrict__ X, float s, int n) {
  const int i = blockIdx.x * 128 + threadIdx.x;
  if (i < n) X[i] = X[i] * s;
}

extern "C" __global__ void __launch_bounds__(256) stage_k1(tl::half_t* __restrict__ Y, int n) {
  uint8_t* smem = tl::dynamic_smem();
  tl::half_t* Y_shared = reinterpret_cast<tl::half_t*>(smem + 0);
  const int tx = threadIdx.x;
  if (tx < n) Y_shared[tx] = Y[tx];
  tl::syncthreads();
  if (tx < n) Y[tx] = tl::half_t(float(Y_shared[(tx + 1) % n]) * 2.0f);
}
)";

TEST(NvrtcTest, VersionIsMajorDotMinor) {
  const std::string v = NvrtcVersion();
  ASSERT_FALSE(v.empty()) << "NVRTC did not load";
  EXPECT_THAT(v, ::testing::MatchesRegex("[0-9]+\\.[0-9]+"));
}

TEST(NvrtcTest, ArchNamesRoundTrip) {
  for (CudaArch a : {CudaArch::kSm80, CudaArch::kSm90a}) {
    absl::StatusOr<CudaArch> parsed = ParseCudaArch(CudaArchName(a));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, a);
  }
  EXPECT_EQ(CudaArchName(CudaArch::kSm90a), "sm_90a");
  absl::StatusOr<CudaArch> bad = ParseCudaArch("sm_90");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("sm_80 and sm_90a"));
}

TEST(NvrtcTest, CompilesForBothArchitecturesWithAReportPerKernel) {
  for (CudaArch arch : {CudaArch::kSm80, CudaArch::kSm90a}) {
    SCOPED_TRACE(CudaArchName(arch));
    absl::StatusOr<NvrtcResult> r = CompileCuda(kTwoKernels, "two.cu", arch);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_GE(r->cubin.size(), 4u);
    EXPECT_EQ(r->cubin.substr(0, 4),
              "\x7f"
              "ELF");
    EXPECT_EQ(r->nvrtc_version, NvrtcVersion());
    EXPECT_GT(r->compile_seconds, 0);
    ASSERT_EQ(r->kernels.size(), 2u) << r->log;
    std::vector<std::string> names = {r->kernels[0].name, r->kernels[1].name};
    std::sort(names.begin(), names.end());
    EXPECT_THAT(names, ElementsAre("scale_k0", "stage_k1"));
    for (const PtxasKernelInfo& k : r->kernels) {
      EXPECT_GT(k.registers, 0) << k.name;
      EXPECT_EQ(k.spill_store_bytes, 0) << k.name;
      EXPECT_EQ(k.spill_load_bytes, 0) << k.name;
      EXPECT_EQ(k.shared_bytes, 0) << k.name << ": generated code has no static shared memory";
      EXPECT_EQ(k.barriers, k.name == "stage_k1" ? 1 : 0) << k.name;
    }
    EXPECT_THAT(r->log, HasSubstr(std::string(CudaArchName(arch))));
  }
}

// NVRTC 12.9 and newer keep compiled PTX in the CUDA compute cache where a
// driver is installed: the second compile of the same source then returns
// the cubin without running ptxas and its log has no report (an H200 run saw
// a GEMM compiled earlier in the process come back with 0 registers). Every
// compile must run ptxas. (Where no driver is installed, as in CI, NVRTC
// caches nothing and this holds either way.)
TEST(NvrtcTest, ARepeatedCompileStillReportsItsKernels) {
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i == 0 ? "first compile" : "second compile of the same source");
    absl::StatusOr<NvrtcResult> r = CompileCuda(kTwoKernels, "two.cu", CudaArch::kSm90a);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->kernels.size(), 2u) << r->log;
    for (const PtxasKernelInfo& k : r->kernels) EXPECT_GT(k.registers, 0) << k.name;
  }
}

TEST(NvrtcTest, OptionsReachTheCompiler) {
  constexpr char kSource[] = R"(#include "tl/tl.h"
extern "C" __global__ void defined_k0(float* X) {
#if !defined(TILE) || TILE != 64
#error TILE must be 64
#endif
  X[threadIdx.x] = TILE;
}
)";
  NvrtcOptions options;
  absl::StatusOr<NvrtcResult> without = CompileCuda(kSource, "opt.cu", CudaArch::kSm80, options);
  ASSERT_FALSE(without.ok());
  EXPECT_THAT(std::string(without.status().message()), HasSubstr("TILE must be 64"));
  options.defines = {"TILE=64"};
  options.line_info = true;
  absl::StatusOr<NvrtcResult> with = CompileCuda(kSource, "opt.cu", CudaArch::kSm80, options);
  ASSERT_TRUE(with.ok()) << with.status();

  options.max_registers = -1;
  EXPECT_EQ(CompileCuda(kSource, "opt.cu", CudaArch::kSm80, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Keeps 64 accumulators live across a loop: more than a 32-register limit
// holds. (No __launch_bounds__: it would override --maxrregcount.)
constexpr char kRegisterHungry[] = R"(#include "tl/tl.h"
extern "C" __global__ void hungry_k0(const float* __restrict__ X, float* __restrict__ Y, int n) {
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = X[i * 128 + threadIdx.x];
  for (int k = 0; k < n; ++k) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = acc[i] * acc[(i + 1) % 64] + X[k];
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) Y[i * 128 + threadIdx.x] = acc[i];
}
)";

TEST(NvrtcTest, ReportsSpillsUnderARegisterLimit) {
  NvrtcOptions options;
  options.max_registers = 32;
  absl::StatusOr<NvrtcResult> r =
      CompileCuda(kRegisterHungry, "hungry.cu", CudaArch::kSm80, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_LE(r->kernels[0].registers, 32);
  EXPECT_GT(r->kernels[0].spill_store_bytes, 0) << r->log;
  EXPECT_GT(r->kernels[0].spill_load_bytes, 0) << r->log;
  EXPECT_GT(r->kernels[0].stack_frame_bytes, 0) << r->log;
}

TEST(NvrtcTest, CompileErrorNamesTheKernelAndTrimsTheLog) {
  // 100 errors in the second kernel only.
  std::string source = R"(#include "tl/tl.h"
extern "C" __global__ void fine_k0(float* X) { X[threadIdx.x] = 1.0f; }
extern "C" __global__ void broken_k1(float* X) {
)";
  for (int i = 0; i < 100; ++i) {
    source += "  X[" + std::to_string(i) + "] = undeclared_" + std::to_string(i) + ";\n";
  }
  source += "}\n";
  absl::StatusOr<NvrtcResult> r = CompileCuda(source, "broken.cu", CudaArch::kSm80);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  const std::string message(r.status().message());
  EXPECT_THAT(message, HasSubstr("broken.cu"));
  EXPECT_THAT(message, HasSubstr("sm_80"));
  EXPECT_THAT(message, HasSubstr("(errors in broken_k1)"));
  EXPECT_THAT(message, Not(HasSubstr("fine_k0")));
  EXPECT_THAT(message, HasSubstr("lines omitted"));
  EXPECT_THAT(message, HasSubstr("undeclared_0"));   // head
  EXPECT_THAT(message, HasSubstr("undeclared_99"));  // tail
  EXPECT_THAT(message, Not(HasSubstr("undeclared_50\"")));
  // The full log rides along as a payload.
  const auto full = r.status().GetPayload(kNvrtcLogPayload);
  ASSERT_TRUE(full.has_value());
  EXPECT_THAT(std::string(*full), HasSubstr("undeclared_50\""));
  EXPECT_LT(message.size(), std::string(*full).size());
}

TEST(NvrtcTest, DiagnosticsQuoteNoOtherFile) {
  // A file the generated source should never reach; if it does, its text
  // must not come back in the message.
  const std::string path = ::testing::TempDir() + "/tilec_nvrtc_other_file.txt";
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{path};
  {
    std::ofstream out(path);
    out << "SECRET_LINE_42 is not C++\n";
  }
  const std::string source = "#include \"" + path + "\"\nextern \"C\" __global__ void k0() {}\n";
  absl::StatusOr<NvrtcResult> r = CompileCuda(source, "probe.cu", CudaArch::kSm80);
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_THAT(message, Not(HasSubstr("SECRET_LINE_42")));
  EXPECT_THAT(message, HasSubstr("left out"));
  const auto full = r.status().GetPayload(kNvrtcLogPayload);
  ASSERT_TRUE(full.has_value());
  EXPECT_THAT(std::string(*full), HasSubstr("SECRET_LINE_42"));  // the test reached the file
}

TEST(NvrtcTest, OwnDiagnosticsOnlyKeepsTheGeneratedSourceAndTilecHeaders) {
  const std::string log =
      "k.cu(3): error: identifier \"x\" is undefined\n"
      "    y = x;\n"
      "        ^\n"
      "\n"
      "/etc/passwd(1): error: expected a declaration\n"
      "  root:x:0:0:root:/root:/bin/bash\n"
      "  ^\n"
      "\n"
      "2 errors detected in the compilation of \"k.cu\".\n";
  const std::string kept = OwnDiagnosticsOnly(log, "k.cu");
  EXPECT_THAT(kept, HasSubstr("identifier \"x\" is undefined"));
  EXPECT_THAT(kept, HasSubstr("    y = x;"));
  EXPECT_THAT(kept, Not(HasSubstr("root:")));
  EXPECT_THAT(kept, Not(HasSubstr("/etc/passwd")));
  EXPECT_THAT(kept, HasSubstr("2 errors detected"));
  EXPECT_THAT(ErrorLines(log, "k.cu"), ElementsAre(3));
}

// Running out of memory in a toolkit header is still named, so that the
// compile child classifies it as the memory limit; the path is not.
TEST(NvrtcTest, OwnDiagnosticsOnlyKeepsAnOutOfMemoryElsewhere) {
  const std::string log =
      "/usr/local/cuda/include/cuda_fp16.hpp(120): catastrophic error: out of memory\n"
      "\n"
      "1 catastrophic error detected in the compilation of \"k.cu\".\n";
  const std::string kept = OwnDiagnosticsOnly(log, "k.cu");
  EXPECT_THAT(kept, HasSubstr("catastrophic error: out of memory"));
  EXPECT_THAT(kept, Not(HasSubstr("cuda_fp16")));
}

TEST(NvrtcTest, ErrorsInHeaderTemplatesAreTracedToTheKernel) {
  constexpr char kSource[] = R"(#include "tl/tl.h"
extern "C" __global__ void ok_k0(float* X) { X[0] = 0.0f; }

extern "C" __global__ void warp_k1(tl::half_t* X) {
  X[threadIdx.x] = tl::shfl_xor(X[threadIdx.x], 1);
}
)";
  absl::StatusOr<NvrtcResult> r = CompileCuda(kSource, "hdr.cu", CudaArch::kSm80);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("(errors in warp_k1)"));
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("tl::shfl_xor takes float, int, double or a 64-bit integer"));
}

TEST(NvrtcTest, KernelsWithErrorsMapsLinesToKernelBodies) {
  constexpr char kSource[] = R"(extern "C" __global__ void __launch_bounds__(128, 1) a_k0(int* x) {
  x[0] = 1;  // a } in a comment
}
extern "C" __global__ void
    b_k1(int* x) {
  const char* s = "}";
  x[0] = 2;
}
)";
  const std::string log = R"(k.cu(2): error: something
k.cu(7): warning: unused
k.cu(9): error: outside every kernel
tl/gemm.h(10): error: static assertion failed
          detected during instantiation of "f" at line 6 of k.cu

ptxas error   : Entry function 'a_k0' uses too much shared data
)";
  EXPECT_THAT(KernelsWithErrors(kSource, "k.cu", log), ElementsAre("a_k0", "b_k1"));
  EXPECT_THAT(KernelsWithErrors(kSource, "k.cu", "k.cu(7): warning: w\n"), ElementsAre());
  EXPECT_THAT(KernelsWithErrors(kSource, "k.cu", "k.cu(5): error: e\n"), ElementsAre("b_k1"));
}

TEST(NvrtcTest, ParsesThePtxasReport) {
  const std::string log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Function properties for helper
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'first_k0' for 'sm_80'
ptxas info    : Function properties for first_k0
ptxas         .     8 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 376 bytes cmem[0]
ptxas info    : Compiling entry function 'second_k1' for 'sm_90a'
ptxas info    : Function properties for second_k1
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers
)";
  const std::vector<PtxasKernelInfo> k = ParsePtxasReport(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "first_k0");
  EXPECT_EQ(k[0].registers, 255);
  EXPECT_EQ(k[0].barriers, 1);
  EXPECT_EQ(k[0].stack_frame_bytes, 8);
  EXPECT_EQ(k[0].spill_store_bytes, 12);
  EXPECT_EQ(k[0].spill_load_bytes, 20);
  EXPECT_EQ(k[0].shared_bytes, 4096);
  EXPECT_EQ(k[1].name, "second_k1");
  EXPECT_EQ(k[1].registers, 40);
  EXPECT_EQ(k[1].barriers, 0);
  EXPECT_EQ(k[1].shared_bytes, 0);
  EXPECT_EQ(k[1].spill_store_bytes, 0);
}

TEST(NvrtcTest, TrimToolLogKeepsHeadAndTail) {
  std::string log;
  for (int i = 1; i <= 10; ++i) log += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(TrimToolLog(log, 3, 2),
            "line 1\nline 2\nline 3\n... (5 lines omitted) ...\nline 9\nline 10");
  EXPECT_EQ(TrimToolLog("a\nb\n\n", 3, 2), "a\nb");
  EXPECT_EQ(TrimToolLog(log, 5, 5), log.substr(0, log.size() - 1));
}

}  // namespace
}  // namespace tilec::cuda
