#include "worker/flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::worker {
namespace {

using ::testing::HasSubstr;

std::string Error(const std::vector<std::string>& args) {
  absl::StatusOr<WorkerFlags> f = ParseWorkerFlags(args);
  if (f.ok()) return "<ok>";
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(f.status().message());
}

TEST(WorkerFlags, ParsesEveryFlag) {
  absl::StatusOr<WorkerFlags> f =
      ParseWorkerFlags({"--server", "localhost:5000", "--device=cuda:1", "--profile", "h100",
                        "--token_file", "/t", "--tls_ca=/ca.pem", "--cache_dir", "/c", "--id", "w1",
                        "--verify_key", "/fleet.pub.pem",
                        "--test_corrupt_output", "block_M=128", "--test_job_delay_s", "2.5"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->servers, std::vector<std::string>{"localhost:5000"});
  EXPECT_EQ(f->device.backend, runtime::DeviceSpec::Backend::kCuda);
  EXPECT_EQ(f->device.ordinal, 1);
  EXPECT_EQ(f->profile, "h100");
  EXPECT_EQ(f->token_file, "/t");
  EXPECT_EQ(f->tls_ca, "/ca.pem");
  EXPECT_EQ(f->cache_dir, "/c");
  EXPECT_EQ(f->verify_key, "/fleet.pub.pem");
  EXPECT_EQ(f->id, "w1");
  ASSERT_TRUE(f->test_corrupt_output.has_value());
  EXPECT_EQ(f->test_corrupt_output->first, "block_M");
  EXPECT_EQ(f->test_corrupt_output->second, 128);
  EXPECT_DOUBLE_EQ(f->test_job_delay_s, 2.5);
  EXPECT_FALSE(f->help);
}

TEST(WorkerFlags, ServesEveryServerNamed) {
  absl::StatusOr<WorkerFlags> f = ParseWorkerFlags(
      {"--server", "a:1", "--device=emulator", "--server=b:2, c:3", "--server", "d:4,"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->servers, (std::vector<std::string>{"a:1", "b:2", "c:3", "d:4"}));
}

TEST(WorkerFlags, DefaultsAreEmpty) {
  absl::StatusOr<WorkerFlags> f = ParseWorkerFlags({"--server=h:1", "--device=emulator"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->device.backend, runtime::DeviceSpec::Backend::kEmulator);
  EXPECT_TRUE(f->profile.empty());
  EXPECT_TRUE(f->cache_dir.empty());
  EXPECT_FALSE(f->test_corrupt_output.has_value());
  EXPECT_EQ(f->test_job_delay_s, 0);
}

TEST(WorkerFlags, HelpNeedsNothingElse) {
  absl::StatusOr<WorkerFlags> f = ParseWorkerFlags({"--help"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->help);
  EXPECT_THAT(Usage(), HasSubstr("Test-only fault injection"));
  EXPECT_THAT(Usage(), HasSubstr("--test_corrupt_output"));
  EXPECT_THAT(Usage(), HasSubstr("--test_job_delay_s"));
}

TEST(WorkerFlags, RequiresServerAndDevice) {
  EXPECT_EQ(Error({"--device", "emulator"}), "--server HOST:PORT is required");
  EXPECT_EQ(Error({"--server", "h:1"}), "--device is required (cuda:N, hip:N or emulator)");
}

TEST(WorkerFlags, NamesTheBadFlag) {
  EXPECT_EQ(Error({"--server", "h:1", "--device", "emulator", "--gpu", "0"}), "unknown flag --gpu");
  EXPECT_EQ(Error({"--server", "h:1", "--device"}), "--device needs a value");
  EXPECT_EQ(Error({"--server=", "--device", "emulator"}), "--server needs a value");
  EXPECT_EQ(Error({"--server", "h:1", "--device", "emulator", "extra"}),
            "unexpected argument 'extra'");
  EXPECT_THAT(Error({"--server", "h:1", "--device", "tpu:0"}), HasSubstr("--device: "));
  EXPECT_THAT(Error({"--server", "h:1", "--device", "cuda:x"}), HasSubstr("bad ordinal"));
}

TEST(WorkerFlags, RefusesMalformedTestFlags) {
  for (std::string bad : {"block_M", "=1", "block_M=", "block_M=1.5", "block_M=x"}) {
    EXPECT_EQ(Error({"--server", "h:1", "--device", "emulator", "--test_corrupt_output", bad}),
              "--test_corrupt_output: '" + bad + "' is not NAME=INTEGER");
  }
  for (std::string bad : {"-1", "soon", "inf", "nan"}) {
    EXPECT_EQ(Error({"--server", "h:1", "--device", "emulator", "--test_job_delay_s", bad}),
              "--test_job_delay_s: '" + bad + "' is not a number of seconds >= 0");
  }
}

}  // namespace
}  // namespace tilec::worker
