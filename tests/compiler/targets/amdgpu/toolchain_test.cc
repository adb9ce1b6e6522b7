// The AMD toolchain with the real clang-19 (no ROCm): HIP-flavoured kernels
// become code objects for gfx942 and gfx90a whose metadata tilec reads back
// (registers, LDS, scratch, workgroup size, wave64), byte for byte the same
// on every build; MFMA shows in llvm-objdump's disassembly where installed;
// bad input and unknown targets are refused with messages that say why.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "compiler/targets/amdgpu/code_object.h"
#include "compiler/targets/amdgpu/toolchain.h"
#include "compiler/targets/tools/tool_run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace tilec::amdgpu {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKernels[] = R"(
#include "tl/tl.h"

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float16v __attribute__((ext_vector_type(16)));

extern "C" __global__ TL_LAUNCH_BOUNDS(256) void add(const float* a, const float* b, float* c,
                                                     int n) {
  const int i = tl::block_x() * 256 + tl::thread_x();
  if (i < n) c[i] = a[i] + b[i];
}

// A [32, 8] and B [8, 32] staged through LDS by two wavefronts, then one
// v_mfma_f32_32x32x8f16 per wavefront (lane l holds A row l % 32, k 4 (l /
// 32) .. + 3, and B column l % 32 likewise), D's 16 registers per lane
// written out by wavefront 0.
extern "C" __global__ TL_LAUNCH_BOUNDS(128) void mfma_tile(const _Float16* a, const _Float16* b,
                                                           float* d) {
  __shared__ _Float16 lds[2 * 256];
  const int lane = tl::thread_x() % 64;
  for (int i = tl::thread_x(); i < 256; i += 128) {
    lds[i] = a[i];
    lds[256 + i] = b[i];
  }
  tl::syncthreads();
  half4 av, bv;
  for (int j = 0; j < 4; ++j) {
    const int k = (lane / 32) * 4 + j;
    av[j] = lds[(lane % 32) * 8 + k];
    bv[j] = lds[256 + k * 32 + lane % 32];
  }
  float16v acc = {};
  acc = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, acc, 0, 0, 0);
  if (tl::thread_x() < 64) {
    for (int j = 0; j < 16; ++j) d[lane * 16 + j] = acc[j];
  }
}
)";

const AmdKernelInfo* Find(const CodeObjectInfo& info, const std::string& name) {
  for (const AmdKernelInfo& k : info.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

TEST(AmdToolchain, CompilesForBothTargetsAndReadsTheMetadataBack) {
  for (const char* arch : {"gfx942", "gfx90a"}) {
    SCOPED_TRACE(arch);
    absl::StatusOr<Hsaco> h = CompileHsaco(kKernels, arch);
    ASSERT_TRUE(h.ok()) << h.status();
    std::printf("%s: %zu bytes in %.3f s\n", arch, h->code_object.size(), h->seconds);
    EXPECT_EQ(h->info.target.rfind("amdgcn-amd-amdhsa--", 0), 0u) << h->info.target;
    EXPECT_THAT(h->info.target, HasSubstr(arch));
    EXPECT_THAT(h->info.compiler, HasSubstr("clang version 19"));  // from .comment
    ASSERT_EQ(h->info.kernels.size(), 2u);
    const AmdKernelInfo* add = Find(h->info, "add");
    const AmdKernelInfo* mfma = Find(h->info, "mfma_tile");
    ASSERT_NE(add, nullptr);
    ASSERT_NE(mfma, nullptr);
    EXPECT_EQ(add->max_flat_workgroup_size, 256);
    EXPECT_EQ(mfma->max_flat_workgroup_size, 128);
    EXPECT_EQ(add->wavefront_size, 64);
    EXPECT_EQ(add->lds_bytes, 0);
    EXPECT_EQ(mfma->lds_bytes, 2 * 256 * 2);
    EXPECT_GE(add->kernarg_bytes, 3 * 8 + 4);  // three pointers and an int
    EXPECT_GT(add->vgprs, 0);
    EXPECT_GT(add->sgprs, 0);
    EXPECT_EQ(add->scratch_bytes, 0);
    EXPECT_EQ(mfma->scratch_bytes, 0);
    EXPECT_EQ(mfma->vgpr_spills, 0);
    // The 32x32 accumulator: 16 registers per lane, VGPRs or AGPRs.
    EXPECT_GE(mfma->vgprs + mfma->agprs, 16);
    // Built again: the same bytes.
    absl::StatusOr<Hsaco> again = CompileHsaco(kKernels, arch);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(again->code_object == h->code_object) << "the code object differs between builds";
    // The instructions, where LLVM's disassembler is installed.
    const std::string objdump = tools::ResolveProgram("llvm-objdump-19");
    if (objdump.empty()) continue;
    const std::string tmp = tilec::testing::MakeTempDir("amdgpu_objdump");
    ASSERT_FALSE(tmp.empty());
    const std::string path = tmp + "/k.hsaco";
    ASSERT_TRUE(tools::WriteFile(path, h->code_object).ok());
    const std::string log = tmp + "/dis.txt";
    absl::StatusOr<int> rc = tools::RunTool(
        {objdump, "-d", std::string("--mcpu=") + arch, path}, log, "llvm-objdump");
    ASSERT_TRUE(rc.ok()) << rc.status();
    const std::string dis = tools::ReadAll(log);
    EXPECT_THAT(dis, HasSubstr("v_mfma_f32_32x32x8"));
    EXPECT_THAT(dis, HasSubstr("s_barrier"));
    EXPECT_THAT(dis, Not(HasSubstr("scratch_")));
  }
}

TEST(AmdToolchain, RefusesUnknownTargetsAndSourceThatDoesNotCompile) {
  absl::StatusOr<Hsaco> h = CompileHsaco(kKernels, "gfx1100");
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(h.status().message(), HasSubstr("gfx942 and gfx90a"));
  HsacoOptions named;
  named.source_name = "broken.hip";
  h = CompileHsaco("#include \"tl/tl.h\"\nextern \"C\" __global__ void k() { undeclared(); }\n",
                   "gfx942", named);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(h.status().message(), HasSubstr("broken.hip:2:"));
  EXPECT_THAT(h.status().message(), HasSubstr("undeclared"));
  // float8 MFMA needs gfx942: the message names the missing feature.
  h = CompileHsaco(
      "#include \"tl/tl.h\"\n"
      "typedef float float4v __attribute__((ext_vector_type(4)));\n"
      "extern \"C\" __global__ void k(long a, long b, float* d) {\n"
      "  float4v acc = {};\n"
      "  acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a, b, acc, 0, 0, 0);\n"
      "  d[0] = acc[0];\n"
      "}\n",
      "gfx90a");
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(h.status().message(), HasSubstr("fp8"));
}

// The xor shuffles of wavefront reductions: a butterfly over 64 lanes with
// constant masks lowers to DPP quad permutations (1, 2), ds_swizzle in its
// bit-mask mode (4, 8, 16: LLVM's disassembler spells the pattern
// "swizzle(SWAP,n)", i.e. lane ^ n) and ds_bpermute only for 32; a mask the
// compiler cannot see stays on ds_bpermute.
TEST(AmdToolchain, XorShufflesLowerToDppAndSwizzles) {
  const std::string objdump = tools::ResolveProgram("llvm-objdump-19");
  if (objdump.empty()) GTEST_SKIP() << "llvm-objdump-19 is not installed";
  constexpr char kShuffles[] = R"(
#include "tl/tl.h"
extern "C" __global__ TL_LAUNCH_BOUNDS(64) void butterfly(float* out) {
  float v = static_cast<float>(tl::thread_x());
#pragma unroll
  for (int mask = 32; mask >= 1; mask /= 2) v += tl::shfl_xor(v, mask);
  out[tl::thread_x()] = v;
}
extern "C" __global__ TL_LAUNCH_BOUNDS(64) void by_runtime_mask(float* out, int mask) {
  out[tl::thread_x()] = tl::shfl_xor(static_cast<float>(tl::thread_x()), mask);
}
)";
  for (const char* arch : {"gfx942", "gfx90a"}) {
    SCOPED_TRACE(arch);
    absl::StatusOr<Hsaco> h = CompileHsaco(kShuffles, arch);
    ASSERT_TRUE(h.ok()) << h.status();
    const std::string tmp = tilec::testing::MakeTempDir("amdgpu_shfl");
    ASSERT_FALSE(tmp.empty());
    const std::string path = tmp + "/k.hsaco", log = tmp + "/dis.txt";
    ASSERT_TRUE(tools::WriteFile(path, h->code_object).ok());
    absl::StatusOr<int> rc = tools::RunTool(
        {objdump, "-d", std::string("--mcpu=") + arch, path}, log, "llvm-objdump");
    ASSERT_TRUE(rc.ok()) << rc.status();
    const std::string dis = tools::ReadAll(log);
    const size_t split = dis.find("<by_runtime_mask>");
    ASSERT_NE(split, std::string::npos) << dis;
    const size_t first = dis.find("<butterfly>");
    ASSERT_NE(first, std::string::npos) << dis;
    const std::string butterfly = first < split ? dis.substr(first, split - first) : dis.substr(first);
    const std::string runtime = first < split ? dis.substr(split) : dis.substr(split, first - split);
    EXPECT_THAT(butterfly, HasSubstr("quad_perm:[1,0,3,2]"));
    EXPECT_THAT(butterfly, HasSubstr("quad_perm:[2,3,0,1]"));
    for (const char* swap : {"swizzle(SWAP,4)", "swizzle(SWAP,8)", "swizzle(SWAP,16)"}) {
      EXPECT_THAT(butterfly, HasSubstr(swap));
    }
    size_t bpermutes = 0;
    for (size_t at = butterfly.find("ds_bpermute_b32"); at != std::string::npos;
         at = butterfly.find("ds_bpermute_b32", at + 1)) {
      ++bpermutes;
    }
    EXPECT_EQ(bpermutes, 1u) << "only the xor by 32 crosses the two halves of the wavefront";
    EXPECT_THAT(runtime, HasSubstr("ds_bpermute_b32"));
  }
}

// gfx942's float8 conversions: float -> e4m3fnuz / e5m2fnuz through the
// packed converts (after the saturating clamp), and back through the exact
// ones; the float8 types do not exist for gfx90a.
TEST(AmdToolchain, FnuzConversionsUseTheFloat8Instructions) {
  const std::string objdump = tools::ResolveProgram("llvm-objdump-19");
  if (objdump.empty()) GTEST_SKIP() << "llvm-objdump-19 is not installed";
  constexpr char kConvert[] = R"(
#include "tl/tl.h"
extern "C" __global__ TL_LAUNCH_BOUNDS(64) void round_trip(const float* in, float* out,
                                                           uint8_t* bits) {
  const int i = tl::thread_x();
  const tl::fp8_e4m3fnuz_t a(in[i]);
  const tl::fp8_e5m2fnuz_t b(in[i]);
  bits[2 * i] = a.bits();
  bits[2 * i + 1] = b.bits();
  out[i] = float(a) + float(b);
}
)";
  absl::StatusOr<Hsaco> h = CompileHsaco(kConvert, "gfx942");
  ASSERT_TRUE(h.ok()) << h.status();
  const std::string tmp = tilec::testing::MakeTempDir("amdgpu_fnuz");
  ASSERT_FALSE(tmp.empty());
  const std::string path = tmp + "/k.hsaco", log = tmp + "/dis.txt";
  ASSERT_TRUE(tools::WriteFile(path, h->code_object).ok());
  absl::StatusOr<int> rc =
      tools::RunTool({objdump, "-d", "--mcpu=gfx942", path}, log, "llvm-objdump");
  ASSERT_TRUE(rc.ok()) << rc.status();
  const std::string dis = tools::ReadAll(log);
  for (const char* insn :
       {"v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32", "v_cvt_f32_fp8", "v_cvt_f32_bf8"}) {
    EXPECT_THAT(dis, HasSubstr(insn));
  }
  absl::StatusOr<Hsaco> old = CompileHsaco(kConvert, "gfx90a");
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(old.status().message(), HasSubstr("fp8_e4m3fnuz_t"));
}

TEST(AmdToolchain, TheCodeObjectReaderRefusesWhatIsNotOne) {
  EXPECT_THAT(ReadCodeObject("hello").status().message(), HasSubstr("not an ELF file"));
  absl::StatusOr<Hsaco> h = CompileHsaco(kKernels, "gfx942");
  ASSERT_TRUE(h.ok()) << h.status();
  // Every truncation is refused or read; none crashes (the reader checks
  // every offset against the bytes it has).
  for (size_t n = 0; n < h->code_object.size(); n += 97) {
    absl::StatusOr<CodeObjectInfo> info = ReadCodeObject(std::string_view(h->code_object).substr(0, n));
    if (!info.ok()) {
      EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
  absl::StatusOr<std::string> v = ClangVersion();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, HasSubstr("clang version 19"));
}

}  // namespace
}  // namespace tilec::amdgpu
