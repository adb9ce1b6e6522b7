#include "compiler/cache/cache_key.h"

#include <set>

#include "compiler/cache/digest.h"
#include "gtest/gtest.h"

namespace tilec::cache {
namespace {

CacheKey Base() {
  CacheKey k;
  k.program_hash = Sha256Hex("program");
  k.target = "sm_90a";
  k.toolchain = {"v1", "13.0", Sha256Hex("headers")};
  return k;
}

TEST(CacheKeyTest, EveryFieldChangesTheDigest) {
  std::set<std::string> digests;
  digests.insert(Base().Digest());
  auto vary = [&](auto mutate) {
    CacheKey k = Base();
    mutate(k);
    EXPECT_TRUE(digests.insert(k.Digest()).second) << k.Encode();
  };
  vary([](CacheKey& k) { k.program_hash = Sha256Hex("other program"); });
  vary([](CacheKey& k) { k.target = "sm_80"; });
  vary([](CacheKey& k) { k.toolchain.compiler_version = "v2"; });
  vary([](CacheKey& k) { k.toolchain.nvrtc_version = "12.8"; });
  vary([](CacheKey& k) { k.toolchain.device_headers_hash = Sha256Hex("edited headers"); });
  vary([](CacheKey& k) { k.options.line_info = true; });
  vary([](CacheKey& k) { k.options.max_registers = 128; });
  EXPECT_EQ(digests.size(), 8u);
}

TEST(CacheKeyTest, EncodingNamesEveryFieldInOrder) {
  CacheKey k = Base();
  k.options.max_registers = 96;
  EXPECT_EQ(k.Encode(), "schema=" + std::string(kCacheSchema) + "\nprogram=" + k.program_hash +
                            "\ntarget=sm_90a\ncompiler=v1\nnvrtc=13.0\ndevice_headers=" +
                            k.toolchain.device_headers_hash + "\nline_info=0\nmax_registers=96\n");
  EXPECT_EQ(k.Digest(), Sha256Hex(k.Encode()));
  EXPECT_EQ(Base().Digest(), Base().Digest());
}

TEST(CacheKeyTest, MakeCacheKeyTakesTheJobsFields) {
  CompileJob job;
  job.program_hash = Sha256Hex("p");
  job.target = "sm_80";
  job.options.line_info = true;
  ToolchainInfo tools{"v9", "13.0", "h"};
  CacheKey k = MakeCacheKey(job, tools);
  EXPECT_EQ(k.program_hash, job.program_hash);
  EXPECT_EQ(k.target, "sm_80");
  EXPECT_TRUE(k.options.line_info);
  EXPECT_EQ(k.toolchain.compiler_version, "v9");
}

// An AMD target's key names clang's version and the AMD device headers in
// place of NVRTC's and the CUDA headers; each changes the key, and the
// NVIDIA fields do not.
TEST(CacheKeyTest, AmdTargetsAreKeyedByClangAndTheirOwnHeaders) {
  CacheKey k = Base();
  k.target = "gfx942";
  k.toolchain.clang_version = "Debian clang version 19.1.7";
  k.toolchain.amd_headers_hash = Sha256Hex("amd headers");
  EXPECT_NE(k.Encode().find("\nclang=Debian clang version 19.1.7\ndevice_headers=" +
                            k.toolchain.amd_headers_hash + "\n"),
            std::string::npos)
      << k.Encode();
  EXPECT_EQ(k.Encode().find("nvrtc="), std::string::npos);
  const std::string digest = k.Digest();
  CacheKey other_nvrtc = k;
  other_nvrtc.toolchain.nvrtc_version = "99.9";
  other_nvrtc.toolchain.device_headers_hash = Sha256Hex("other cuda headers");
  EXPECT_EQ(other_nvrtc.Digest(), digest);
  CacheKey other_clang = k;
  other_clang.toolchain.clang_version = "Debian clang version 19.1.8";
  EXPECT_NE(other_clang.Digest(), digest);
  CacheKey other_headers = k;
  other_headers.toolchain.amd_headers_hash = Sha256Hex("changed");
  EXPECT_NE(other_headers.Digest(), digest);
  CacheKey gfx90a = k;
  gfx90a.target = "gfx90a";
  EXPECT_NE(gfx90a.Digest(), digest);
  EXPECT_NE(DeviceHeadersHash(device::DeviceTarget::kHip), DeviceHeadersHash());
}

TEST(CacheKeyTest, VersionsAreFilledIn) {
  EXPECT_FALSE(CompilerVersion().empty());
  EXPECT_TRUE(IsHexDigest(DeviceHeadersHash()));
  EXPECT_EQ(DeviceHeadersHash(), DeviceHeadersHash());
}

}  // namespace
}  // namespace tilec::cache
