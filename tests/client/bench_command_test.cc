// `tilec bench` run as a user runs it, on the emulator device: compile, load
// through the runtime, check against the interpreter, time, report.
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/json.h"
#include "tests/testing/command.h"
#include "tests/testing/example_cases.h"
#include "tests/testing/temp_dir.h"

namespace tilec::cli {
namespace {

using ::testing::HasSubstr;
using ::tilec::testing::RunShellCommand;

std::string Bench(const std::string& args) {
  return absl::StrCat(TILEC_BINARY, " bench ", args);
}

std::string Example(const std::string& file) { return ::tilec::testing::ExamplesDir() + "/" + file; }

constexpr char kGemmRagged[] =
    " --fn matmul -D M=100 -D N=72 -D K=56 -D block_M=64 -D block_N=64 -D block_K=32 "
    "-D dtype=float16 -D accum_dtype=float32 -D transpose_A=False -D transpose_B=False "
    "-D num_stages=2 -D threads=128 -D enable_rasterization=True";

TEST(BenchCommand, ChecksAndTimesAGemmOnTheEmulator) {
  auto r = RunShellCommand(
      Bench(absl::StrCat(Example("gemm.py"), kGemmRagged, " --seed 11 --iters 3 --warmup 1 --json")));
  ASSERT_EQ(r.code, 0) << r.out;
  absl::StatusOr<runtime::json::Value> v = runtime::json::Parse(r.out);
  ASSERT_TRUE(v.ok()) << v.status() << "\n" << r.out;
  EXPECT_EQ(v->Find("check")->string(), "ok");
  EXPECT_EQ(v->Find("device")->string(), "emulator");
  EXPECT_THAT(v->Find("timing")->string(), HasSubstr("not GPU time"));
  EXPECT_EQ(v->Find("target")->string(), "sm_80");
  EXPECT_EQ(v->Find("seed")->int_value(), 11);
  ASSERT_EQ(v->Find("ms")->array().size(), 3u);
  for (const auto& t : v->Find("ms")->array()) EXPECT_GT(t.number(), 0);
  EXPECT_GT(v->Find("median_ms")->number(), 0);
  // 2 x 128 x 128 x 64 (whole 64x64x32 tiles over a 2x2 grid, 2 k-steps).
  EXPECT_DOUBLE_EQ(v->Find("flops")->number(), 2.0 * 128 * 128 * 64);
  EXPECT_GT(v->Find("tflops")->number(), 0);
  EXPECT_EQ(v->Find("config")->Find("block_M")->int_value(), 64);
}

TEST(BenchCommand, ReportsBandwidthForKernelsWithoutGemm) {
  auto r = RunShellCommand(Bench(absl::StrCat(
      Example("softmax.py"), " --fn softmax -D M=40 -D N=100 -D block_M=8 -D block_N=128 --iters 2")));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("check "));
  EXPECT_THAT(r.out, HasSubstr(": ok"));
  EXPECT_THAT(r.out, HasSubstr("emulator wall time, not GPU time: median "));
  EXPECT_THAT(r.out, HasSubstr("GB/s"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("TFLOP/s")));
}

TEST(BenchCommand, DynamicDimsComeFromDimFlags) {
  const std::string dir = ::tilec::testing::MakeTempDir("bench_command");
  ASSERT_FALSE(dir.empty());
  const std::string file = dir + "/scale.py";
  std::ofstream(file) << R"(
import tilelang.language as T

def scale(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Y[bx * block + i] = X[bx * block + i] * 2.0
    return main
)";
  auto r = RunShellCommand(Bench(file + " --fn scale --dim N=1000 --iters 2 --json"));
  ASSERT_EQ(r.code, 0) << r.out;
  absl::StatusOr<runtime::json::Value> v = runtime::json::Parse(r.out);
  ASSERT_TRUE(v.ok()) << r.out;
  EXPECT_EQ(v->Find("dims")->Find("N")->int_value(), 1000);
  EXPECT_EQ(v->Find("check")->string(), "ok");
  auto missing = RunShellCommand(Bench(file + " --fn scale"));
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("dynamic dim N has no size: give --dim N=N"));
}

TEST(BenchCommand, BadFlagsAndDevicesSaySo) {
  auto r = RunShellCommand(Bench(absl::StrCat(Example("gemm.py"), kGemmRagged, " --device tpu:0")));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--device: device \"tpu:0\": expected cuda:N, hip:N or emulator"));
  r = RunShellCommand(Bench(absl::StrCat(Example("gemm.py"), kGemmRagged, " --iters 0")));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--iters expects an integer >= 1"));
  r = RunShellCommand(Bench(absl::StrCat(Example("gemm.py"), kGemmRagged, " --device hip:0")));
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.out, ::testing::AnyOf(HasSubstr("libamdhip64.so"), HasSubstr("no AMD target")));
}

}  // namespace
}  // namespace tilec::cli
