#include "compiler/recommend/profile.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tilec::recommend {
namespace {

TEST(ProfileTest, BuiltinProfilesAreTheDeployedOnes) {
  std::set<std::string> ids;
  for (const HardwareProfile& p : BuiltinProfiles()) {
    ids.insert(p.id());
    EXPECT_TRUE(ValidateProfile(p, p.id()).ok()) << p.id();
  }
  EXPECT_EQ(ids, (std::set<std::string>{"a100", "h100_pcie", "h100_sxm", "h200", "host_emulator",
                                        "mi250x", "mi300x"}));
}

TEST(ProfileTest, VendorNumbersLandInTheRightFields) {
  const auto& all = BuiltinProfiles();
  auto h100 = FindProfile(all, "h100");
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->id(), "h100_sxm");
  EXPECT_EQ(h100->sm_count(), 132);
  EXPECT_EQ(h100->shared_memory_per_block_bytes(), 227 * 1024);
  EXPECT_DOUBLE_EQ(MatrixPeakTflops(*h100, ir::DType::kFloat16), 989.4);
  EXPECT_EQ(MatrixPeakTflops(*h100, ir::DType::kFloat64), 0);
  auto mi300 = FindProfile(all, "MI300X");
  ASSERT_TRUE(mi300.ok());
  EXPECT_EQ(mi300->warp_size(), 64);
  EXPECT_EQ(mi300->sm_count(), 304);
  EXPECT_EQ(mi300->shared_memory_per_block_bytes(), 64 * 1024);
  auto a100 = FindProfile(all, "sm_80");
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(a100->id(), "a100");
  EXPECT_EQ(a100->shared_memory_per_block_bytes(), 163 * 1024);
  // The emulator's limits are the emulator's (compiler/targets/host).
  auto host = FindProfile(all, "emulator");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->shared_memory_per_block_bytes(), 232448);
  EXPECT_EQ(TargetInfoFor(*host).name, "sm_90a");
  // Every profile is faster at matrix math than at vector math.
  for (const HardwareProfile& p : all) {
    EXPECT_GT(MatrixPeakTflops(p, ir::DType::kFloat16), p.vector_fp32_tflops()) << p.id();
  }
}

TEST(ProfileTest, UnknownTargetListsTheKnownOnes) {
  auto p = FindProfile(BuiltinProfiles(), "b200");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(p.status().message(), "h100_sxm")) << p.status();
}

TEST(ProfileTest, ValidationNamesTheFileAndField) {
  HardwareProfile p = *FindProfile(BuiltinProfiles(), "a100");
  p.set_shared_memory_per_block_bytes(p.shared_memory_per_sm_bytes() + 1);
  absl::Status st = ValidateProfile(p, "mine.textproto");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.message(), "mine.textproto")) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "shared_memory_per_block_bytes")) << st;

  p = *FindProfile(BuiltinProfiles(), "a100");
  p.clear_memory_bandwidth_gbps();
  st = ValidateProfile(p, "x");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.message(), "memory_bandwidth_gbps")) << st;

  p = *FindProfile(BuiltinProfiles(), "a100");
  p.set_warp_size(48);
  EXPECT_FALSE(ValidateProfile(p, "x").ok());

  auto parsed = ParseProfileText("id: \"x\"\nsm_count: oops\n", "bad.textproto");
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(absl::StartsWith(parsed.status().message(), "bad.textproto:2:")) << parsed.status();
}

TEST(ProfileTest, UserFolderAddsAndReplacesProfiles) {
  const std::string dir = ::testing::TempDir() + "/tilec_profiles_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  HardwareProfile mine = *FindProfile(BuiltinProfiles(), "a100");
  mine.set_id("my_gpu");
  mine.clear_aliases();
  mine.add_aliases("mine");
  HardwareProfile replaced = *FindProfile(BuiltinProfiles(), "h200");
  replaced.set_memory_bandwidth_gbps(4000);
  {
    std::ofstream(dir + "/my_gpu.textproto") << mine.DebugString();
    std::ofstream(dir + "/h200.textproto") << replaced.DebugString();
    std::ofstream(dir + "/notes.txt") << "not a profile";
  }
  auto all = LoadProfiles(dir);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), BuiltinProfiles().size() + 1);
  auto found = FindProfile(*all, "mine");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->id(), "my_gpu");
  EXPECT_EQ(FindProfile(*all, "h200")->memory_bandwidth_gbps(), 4000);

  // Two files defining one id.
  std::ofstream(dir + "/my_gpu_copy.textproto") << mine.DebugString();
  auto dup = LoadProfiles(dir);
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(absl::StrContains(dup.status().message(), "my_gpu")) << dup.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tilec::recommend
