#include "compiler/targets/cuda/sass.h"

#include <string>

#include "absl/status/status.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::cuda {
namespace {

using ::testing::HasSubstr;

std::string Compile(const std::string& source, int max_registers = 0) {
  NvrtcOptions options;
  options.max_registers = max_registers;
  absl::StatusOr<NvrtcResult> r = CompileCuda(source, "sass.cu", CudaArch::kSm80, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->cubin : "";
}

TEST(SassTest, CountOpcodeMatchesWholeOpcodesAndDottedPrefixes) {
  const std::string sass = R"(
        /*0000*/          IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;  /* 0x00000a00ff017624 */
  /* 0x000fe400078e00ff */
        /*0010*/          LDSM.16.M88.4 R4, [R2] ;  /* 0x0000000002047983 */
        /*0020*/          LDSM.16.MT88.4 R8, [R3] ;  /* 0x000000000308783b */
        /*0030*/          HMMA.16816.F32 R12, R4, R8, R12 ;  /* 0x000000080408723c */
        /*0040*/          @P0 HMMA.16816.F32 R16, R4, R10, R16 ;  /* 0x0000000a0410023c */
        /*0050*/          HMMA2 R0, R1, R2 ;
        /*0060*/          STL [R1], R0 ;
        /*0070*/          @!P1 LDL.64 R2, [R1+0x8] ;
        /*0080*/          EXIT ;
  // HMMA in a comment is not an instruction
)";
  EXPECT_EQ(CountOpcode(sass, "HMMA"), 2);
  EXPECT_EQ(CountOpcode(sass, "HMMA.16816"), 2);
  EXPECT_EQ(CountOpcode(sass, "LDSM"), 2);
  EXPECT_EQ(CountOpcode(sass, "LDSM.16.MT88"), 1);
  EXPECT_EQ(CountOpcode(sass, "LDS"), 0);
  EXPECT_EQ(CountOpcode(sass, "EXIT"), 1);
  const LocalMemoryTraffic local = CountLocalMemoryTraffic(sass);
  EXPECT_EQ(local.loads, 1);
  EXPECT_EQ(local.stores, 1);
  EXPECT_TRUE(local.any());
}

TEST(SassTest, DisassemblesACubinIntoFunctions) {
  ASSERT_TRUE(FindCuobjdump().ok()) << FindCuobjdump().status();
  const std::string cubin = Compile(R"(#include "tl/tl.h"
extern "C" __global__ void copy_k0(float* __restrict__ Y, const float* __restrict__ X) {
  Y[threadIdx.x] = X[threadIdx.x];
}
extern "C" __global__ void warp_sum_k1(float* __restrict__ Y) {
  Y[threadIdx.x] = tl::warp_allreduce<tl::SumOp, 32>(Y[threadIdx.x]);
}
)");
  absl::StatusOr<std::string> sass = DisassembleCubin(cubin);
  ASSERT_TRUE(sass.ok()) << sass.status();
  EXPECT_THAT(*sass, HasSubstr("sm_80"));
  const std::vector<SassFunction> functions = SplitSassFunctions(*sass);
  ASSERT_EQ(functions.size(), 2u) << *sass;
  for (const SassFunction& f : functions) {
    SCOPED_TRACE(f.name);
    EXPECT_GE(CountOpcode(f.text, "EXIT"), 1);
    // A 32-lane butterfly is five shuffles.
    EXPECT_EQ(CountOpcode(f.text, "SHFL.BFLY"), f.name == "warp_sum_k1" ? 5 : 0);
    EXPECT_FALSE(CountLocalMemoryTraffic(f.text).any());
  }
}

TEST(SassTest, SpillsShowAsLocalMemoryTraffic) {
  // 64 live accumulators under a 32-register limit (no __launch_bounds__,
  // which would override it).
  const std::string cubin = Compile(R"(#include "tl/tl.h"
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
)",
                                    /*max_registers=*/32);
  absl::StatusOr<std::string> sass = DisassembleCubin(cubin);
  ASSERT_TRUE(sass.ok()) << sass.status();
  const LocalMemoryTraffic local = CountLocalMemoryTraffic(*sass);
  EXPECT_GT(local.loads, 0);
  EXPECT_GT(local.stores, 0);
}

TEST(SassTest, GarbageIsAnInternalErrorWithCuobjdumpsOutput) {
  absl::StatusOr<std::string> sass = DisassembleCubin("this is not an ELF file");
  ASSERT_FALSE(sass.ok());
  EXPECT_EQ(sass.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(sass.status().message()), HasSubstr("cuobjdump"));
}

}  // namespace
}  // namespace tilec::cuda
