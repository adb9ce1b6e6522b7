// The C API through the shared library, as a foreign-language binding uses it.
#include "runtime/c_api.h"

#include <string>
#include <vector>

#include "compiler/targets/cuda/artifact.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/json.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/runtime/runtime_testing.h"
#include "tests/testing/temp_dir.h"

extern "C" int tilec_c_api_check_from_c(void);

namespace tilec::runtime {
namespace {

using ::testing::HasSubstr;

TEST(CApi, CallableFromC) { EXPECT_EQ(tilec_c_api_check_from_c(), 0) << tilec_last_error(); }

TEST(CApi, OpensLaunchesAndReportsErrors) {
  absl::StatusOr<ir::Program> program =
      testing::CompileSource("scale.py", testing::kScaleKernel, "scale", {});
  ASSERT_TRUE(program.ok());
  absl::StatusOr<testing::BuiltArtifact> built = testing::BuildForRuntime(*program);
  ASSERT_TRUE(built.ok()) << built.status();
  const std::string dir = testing::MakeTempDir("c_api");
  ASSERT_TRUE(cuda::WriteCudaArtifact(built->cuda, dir, "scale").ok());

  tilec_device* device = nullptr;
  EXPECT_EQ(tilec_device_open("gpu:0", &device), 3);
  EXPECT_THAT(tilec_last_error(), HasSubstr("expected cuda:N, hip:N or emulator"));
  ASSERT_EQ(tilec_device_open("emulator", &device), 0) << tilec_last_error();
  absl::StatusOr<json::Value> info = json::Parse(tilec_device_info(device));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->Find("device")->string(), "emulator");

  tilec_kernel* kernel = nullptr;
  EXPECT_EQ(tilec_kernel_open(device, (dir + "/missing.json").c_str(), &kernel), 5);
  EXPECT_THAT(tilec_last_error(), HasSubstr("missing.json"));
  ASSERT_EQ(tilec_kernel_open(device, (dir + "/scale.json").c_str(), &kernel), 0)
      << tilec_last_error();
  absl::StatusOr<json::Value> meta = json::Parse(tilec_kernel_metadata(kernel));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->Find("program")->string(), "scale");

  // Memory from the device's allocator, as a binding without its own would.
  const int64_t n = 300;
  void *x = nullptr, *y = nullptr;
  ASSERT_EQ(tilec_device_alloc(device, n * 4, &x), 0);
  ASSERT_EQ(tilec_device_alloc(device, n * 4, &y), 0);
  std::vector<float> host(n), out(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i) * 0.25f - 7;
  ASSERT_EQ(tilec_device_copy_to_device(device, x, host.data(), n * 4), 0);
  const int64_t shape[1] = {n};
  tilec_arg args[2] = {};
  for (int i = 0; i < 2; ++i) {
    args[i].kind = TILEC_ARG_TENSOR;
    args[i].dtype = "float32";
    args[i].ndim = 1;
    args[i].shape = shape;
    args[i].device_type = TILEC_DEVICE_CPU;
  }
  args[0].data = x;
  args[1].data = y;
  ASSERT_EQ(tilec_kernel_launch(kernel, args, 2, nullptr), 0) << tilec_last_error();
  ASSERT_EQ(tilec_device_copy_to_host(device, out.data(), y, n * 4), 0);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2 * host[i]);

  double ms[3] = {};
  ASSERT_EQ(tilec_kernel_time(kernel, args, 2, nullptr, 1, 3, 1, ms), 0) << tilec_last_error();
  for (double t : ms) EXPECT_GT(t, 0);

  args[1].dtype = "float16";
  EXPECT_EQ(tilec_kernel_launch(kernel, args, 2, nullptr), 3);
  EXPECT_THAT(tilec_last_error(), HasSubstr("parameter Y (argument 2) must be float32; got float16"));
  EXPECT_EQ(tilec_kernel_launch(kernel, args, 1, nullptr), 3);
  EXPECT_THAT(tilec_last_error(), HasSubstr("takes 2 arguments"));
  args[0].kind = 9;
  EXPECT_EQ(tilec_kernel_launch(kernel, args, 2, nullptr), 3);
  EXPECT_THAT(tilec_last_error(), HasSubstr("argument 1 has an unknown kind 9"));

  tilec_device_free(device, x);
  tilec_device_free(device, y);
  tilec_kernel_close(kernel);
  tilec_device_close(device);
}

}  // namespace
}  // namespace tilec::runtime
