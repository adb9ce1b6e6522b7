// The target registry: every target tilec knows, what each is, and the
// messages that name them.
#include "compiler/targets/registry.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::targets {
namespace {

using ::testing::HasSubstr;

TEST(TargetRegistry, KnowsTheNvidiaAndAmdTargets) {
  std::set<std::string> names;
  for (const Target& t : Targets()) {
    names.insert(std::string(t.name));
    EXPECT_EQ(t.info.name, t.name);
    EXPECT_EQ(t.info.warp_size, t.vendor == Vendor::kAmd ? 64 : 32) << t.name;
    EXPECT_EQ(t.binary_suffix, t.vendor == Vendor::kAmd ? ".hsaco" : ".cubin") << t.name;
    EXPECT_FALSE(t.default_profile.empty()) << t.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"sm_80", "sm_90a", "gfx942", "gfx90a"}));
  EXPECT_EQ(TargetNames(), "sm_80, sm_90a, gfx942, gfx90a");
  absl::StatusOr<const Target*> h = FindTarget("sm_90a");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE((*h)->info.supports_tma);
  EXPECT_EQ((*h)->default_profile, "h100_sxm");
  absl::StatusOr<const Target*> mi = FindTarget("gfx942");
  ASSERT_TRUE(mi.ok());
  EXPECT_EQ((*mi)->toolchain, "clang-19");
  EXPECT_EQ((*mi)->info.shared_memory_per_block, 64 * 1024);
  EXPECT_TRUE((*mi)->info.supports_mfma);
  EXPECT_FALSE((*mi)->info.supports_mma);
  EXPECT_FALSE((*mi)->info.supports_cp_async);
}

TEST(TargetRegistry, UnknownTargetsSaySoAndEveryKnownOneCompiles) {
  absl::StatusOr<const Target*> t = FindTarget("sm_75");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(),
              HasSubstr("unknown target 'sm_75'; tilec knows sm_80, sm_90a, gfx942, gfx90a"));
  for (const Target& known : Targets()) EXPECT_TRUE(CompileTarget(known.name).ok()) << known.name;
  EXPECT_EQ(CompileTarget("gfx1100").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tilec::targets
