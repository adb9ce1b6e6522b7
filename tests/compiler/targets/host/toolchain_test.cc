// The host toolchain: finding the kernels of a source, compiling with the real
// clang-19, loading, and its errors.
#include "compiler/targets/host/toolchain.h"

#include <filesystem>
#include <string>
#include <vector>

#include "compiler/targets/host/launch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::host {
namespace {

using ::testing::ElementsAre;

TEST(FindKernelsTest, FindsGlobalFunctionsInOrder) {
  const std::string source = R"(
#include "tl/tl.h"
#define NOT_A_KERNEL __global__ void fake(
// __global__ void commented_out(
/* __global__ void also_commented(int) */
__device__ __forceinline__ float helper(float x) { return x; }
extern "C" __global__ void __launch_bounds__(128, 2) first_k0(float* __restrict__ a) {
  const char* s = "__global__ void in_string(";
}
extern "C" __global__ void second_k1(int n);
extern "C" __global__ void second_k1(int n) {}
extern "C" __launch_bounds__(64) __global__ void third(
    int n) {}
)";
  EXPECT_EQ(FindKernels(source), (std::vector<std::string>{"first_k0", "second_k1", "third"}));
}

TEST(FindKernelsTest, NoKernels) {
  EXPECT_TRUE(FindKernels("int main() { return 0; }").empty());
  EXPECT_TRUE(FindKernels("").empty());
}

constexpr char kScalarKernel[] = R"(
#include "tl/tl.h"
// Parameters of every kind the ABI passes: pointers, 32/64-bit ints, floats.
extern "C" __global__ void axpb(float* __restrict__ y, const float* __restrict__ x, float a,
                                int64_t b, int n, double c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + static_cast<float>(b) + static_cast<float>(c);
}
)";

TEST(ToolchainTest, CompilesAndPassesEveryParameterKind) {
  absl::StatusOr<HostModule> m = CompileHost(kScalarKernel, HostOptions());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(m->kernels(), ElementsAre("axpb"));
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(m->dir()) / "kernel.so"))
      << "the shared object stays while the module is loaded (for source lines in messages)";
  absl::StatusOr<int> arity = m->Arity("axpb");
  ASSERT_TRUE(arity.ok());
  EXPECT_EQ(*arity, 6);
  std::vector<float> x(100), y(100, -1.0f);
  for (int i = 0; i < 100; ++i) x[i] = static_cast<float>(i) - 37.0f;
  float* py = y.data();
  const float* px = x.data();
  float a = 1.5f;
  int64_t b = (int64_t{1} << 40) + 3;  // a value only 64 bits hold
  int n = 99;
  double c = -0.25;
  absl::Status s = Launch(*m, "axpb", {4, 1, 1}, {32, 1, 1}, 0, {&py, &px, &a, &b, &n, &c});
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < 99; ++i) {
    EXPECT_EQ(y[i], 1.5f * x[i] + static_cast<float>(b) + static_cast<float>(-0.25)) << i;
  }
  EXPECT_EQ(y[99], -1.0f);
}

TEST(ToolchainTest, TheBuildDirectoryGoesWithTheLastCopyOfTheModule) {
  std::string dir;
  {
    absl::StatusOr<HostModule> m = CompileHost(kScalarKernel, HostOptions());
    ASSERT_TRUE(m.ok()) << m.status();
    dir = m->dir();
    HostModule copy = *m;
    m = absl::UnknownError("dropped");
    EXPECT_TRUE(std::filesystem::exists(dir)) << "a copy still holds the module";
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ToolchainTest, KeepFilesLeavesTheBuildDirectory) {
  HostOptions options;
  options.keep_files = true;
  absl::StatusOr<HostModule> m = CompileHost(kScalarKernel, options);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::filesystem::path dir(m->dir());
  EXPECT_TRUE(std::filesystem::exists(dir / "kernel.cc"));
  EXPECT_TRUE(std::filesystem::exists(dir / "kernel.so"));
  std::filesystem::remove_all(dir);
}

// The entries of a header cache directory.
std::vector<std::filesystem::path> Entries(const std::filesystem::path& cache) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(cache)) {
    if (e.is_directory()) out.push_back(e.path());
  }
  return out;
}

TEST(ToolchainTest, HeaderCacheIsBuiltOncePerFlagSet) {
  char templ[] = "/tmp/tilec-host-cache-test-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  const std::filesystem::path cache(templ);
  HostOptions options;
  options.cache_dir = cache.string();
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<HostModule> m = CompileHost(kScalarKernel, options);
    ASSERT_TRUE(m.ok()) << m.status();
    std::vector<std::filesystem::path> entries = Entries(cache);
    ASSERT_EQ(entries.size(), 1u) << "compile " << i;
    EXPECT_TRUE(std::filesystem::exists(entries[0] / "ready"));
    EXPECT_TRUE(std::filesystem::exists(entries[0] / "tl.h.pch"));
    EXPECT_TRUE(std::filesystem::exists(entries[0] / "include" / "tl" / "gemm.h"));
  }
  // Other flags (or no PCH) make another entry; each works.
  options.opt_level = "-O0";
  ASSERT_TRUE(CompileHost(kScalarKernel, options).ok());
  options.use_pch = false;
  absl::StatusOr<HostModule> m = CompileHost(kScalarKernel, options);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(Entries(cache).size(), 3u);
  std::vector<float> x = {1, 2, 3, 4}, y(4, 0.0f);
  float* py = y.data();
  const float* px = x.data();
  float a = 2.0f;
  int64_t b = 1;
  int n = 4;
  double c = 0.5;
  ASSERT_TRUE(Launch(*m, "axpb", {1, 1, 1}, {4, 1, 1}, 0, {&py, &px, &a, &b, &n, &c}).ok());
  EXPECT_EQ(y, (std::vector<float>{3.5f, 5.5f, 7.5f, 9.5f}));
  std::filesystem::remove_all(cache);
}

TEST(ToolchainTest, ClangErrorsAreReportedWithTheLog) {
  absl::StatusOr<HostModule> m = CompileHost(R"(
#include "tl/tl.h"
extern "C" __global__ void broken(float* y) { y[0] = undeclared_name; }
)",
                                             HostOptions());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(m.status().message().find("undeclared_name"), std::string::npos) << m.status();
  // Lines keep their numbers under HostOptions::source_name.
  EXPECT_NE(m.status().message().find("kernel.cu:3:"), std::string::npos) << m.status();
}

TEST(ToolchainTest, DeviceLibraryMisuseFailsWithItsMessage) {
  absl::StatusOr<HostModule> m = CompileHost(R"(
#include "tl/tl.h"
extern "C" __global__ void misuse(tl::half_t* y) { y[0] = tl::shfl_xor(y[0], 1); }
)",
                                             HostOptions());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("tl::shfl_xor takes float, int, double or a 64-bit integer"),
            std::string::npos)
      << m.status();
}

TEST(ToolchainTest, SourceWithoutKernels) {
  absl::StatusOr<HostModule> m = CompileHost("int f() { return 1; }", HostOptions());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ToolchainTest, MissingCompiler) {
  HostOptions options;
  options.clang = "/nonexistent/clang++-19";
  absl::StatusOr<HostModule> m = CompileHost(kScalarKernel, options);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(m.status().message().find("/nonexistent/clang++-19"), std::string::npos);
}

}  // namespace
}  // namespace tilec::host
