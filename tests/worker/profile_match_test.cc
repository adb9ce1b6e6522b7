#include "worker/profile_match.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::worker {
namespace {

using Backend = runtime::DeviceSpec::Backend;
using ::testing::HasSubstr;

std::string Match(Backend b, const std::string& name) {
  absl::StatusOr<std::string> p = MatchProfile(b, name);
  return p.ok() ? *p : "<" + std::string(absl::StatusCodeToString(p.status().code())) + ">";
}

TEST(MatchProfile, TellsTheNvidiaParts) {
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA H100 80GB HBM3"), "h100_sxm");
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA H100 PCIe"), "h100_pcie");
  EXPECT_EQ(Match(Backend::kCuda, "nvidia h100 pcie"), "h100_pcie");
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA H200"), "h200");
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA H200 NVL"), "h200");
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA A100 80GB PCIe"), "a100");
}

TEST(MatchProfile, TellsTheAmdParts) {
  EXPECT_EQ(Match(Backend::kHip, "AMD Instinct MI300X"), "mi300x");
  EXPECT_EQ(Match(Backend::kHip, "AMD Instinct MI250X"), "mi250x");
}

TEST(MatchProfile, TheEmulatorIsTheHostProfile) {
  EXPECT_EQ(Match(Backend::kEmulator, "SIMT emulator"), "host_emulator");
}

TEST(MatchProfile, AnUnknownDeviceHasNoProfile) {
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA GeForce RTX 4090"), "<FAILED_PRECONDITION>");
  EXPECT_EQ(Match(Backend::kCuda, "NVIDIA L40S"), "<FAILED_PRECONDITION>");
  // The vendor decides: an AMD name on CUDA, an NVIDIA one on HIP match nothing.
  EXPECT_EQ(Match(Backend::kCuda, "AMD Instinct MI300X"), "<FAILED_PRECONDITION>");
  EXPECT_EQ(Match(Backend::kHip, "NVIDIA H100 PCIe"), "<FAILED_PRECONDITION>");
  absl::StatusOr<std::string> p = MatchProfile(Backend::kCuda, "NVIDIA GeForce RTX 4090");
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("'NVIDIA GeForce RTX 4090'"));
}

TEST(ResolveProfile, EmptyMeansTheMatch) {
  auto p = ResolveProfile("NVIDIA H200", "h200", "", recommend::BuiltinProfiles());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, "h200");
}

TEST(ResolveProfile, AcceptsTheIdOrAnAlias) {
  for (std::string requested : {"h100_sxm", "H100", "h100-sxm", "sm_90a"}) {
    auto p = ResolveProfile("NVIDIA H100 80GB HBM3", "h100_sxm", requested,
                            recommend::BuiltinProfiles());
    ASSERT_TRUE(p.ok()) << requested << ": " << p.status();
    EXPECT_EQ(*p, "h100_sxm");
  }
}

TEST(ResolveProfile, RefusesAnotherProfile) {
  // An H200 is not an H100 (sm_90a is the H100 SXM's alias, although both are sm_90).
  for (std::string requested : {"h100_sxm", "sm_90a", "h100_pcie"}) {
    auto p = ResolveProfile("NVIDIA H200", "h200", requested, recommend::BuiltinProfiles());
    ASSERT_FALSE(p.ok()) << requested;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(p.status().message(), "device NVIDIA H200 matches profile h200, not " + requested);
  }
  auto p = ResolveProfile("SIMT emulator", "host_emulator", "tpu_v5", recommend::BuiltinProfiles());
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("matches profile host_emulator, not tpu_v5 (no profile has that name)"));
}

}  // namespace
}  // namespace tilec::worker
