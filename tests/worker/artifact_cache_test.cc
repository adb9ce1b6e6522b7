#include "worker/artifact_cache.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::worker {
namespace {

using ::testing::HasSubstr;

class ArtifactCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint64_t seed = std::random_device{}();
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng(seed);
    bytes_.resize(1000 + rng() % 4000);
    for (char& c : bytes_) c = static_cast<char>(rng());
    digest_ = cache::Sha256Hex(bytes_);
    dir_ = absl::StrCat(::testing::TempDir(), "/worker_cache_", ::getpid(), "_", seed);
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A cache whose server holds `served` for every digest.
  std::unique_ptr<ArtifactCache> Open(std::string served) {
    auto c = std::make_unique<ArtifactCache>(dir_, [this, served](const std::string& d) {
      ++fetches_;
      last_fetched_ = d;
      return absl::StatusOr<std::string>(served);
    });
    EXPECT_TRUE(c->Init().ok());
    return c;
  }
  std::string FileBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  int Entries() {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++n;
    return n;
  }

  std::string bytes_, digest_, dir_, last_fetched_;
  int fetches_ = 0;
};

TEST_F(ArtifactCacheTest, FetchesOnceThenReadsTheVerifiedFile) {
  auto cache = Open(bytes_);
  absl::StatusOr<std::string> got = cache->Get(digest_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, bytes_);
  EXPECT_EQ(fetches_, 1);
  EXPECT_EQ(last_fetched_, digest_);
  EXPECT_EQ(FileBytes(cache->PathFor(digest_)), bytes_);
  EXPECT_EQ(Entries(), 1);  // no temporary file left behind
  got = cache->Get(digest_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, bytes_);
  EXPECT_EQ(fetches_, 1);
  EXPECT_EQ(cache->counters().hits, 1);
  EXPECT_EQ(cache->counters().fetches, 1);
}

TEST_F(ArtifactCacheTest, ACorruptedFileIsRemovedAndFetchedAgain) {
  auto cache = Open(bytes_);
  ASSERT_TRUE(cache->Get(digest_).ok());
  std::string flipped = bytes_;
  flipped[flipped.size() / 2] ^= 0x10;
  std::ofstream(cache->PathFor(digest_), std::ios::binary | std::ios::trunc) << flipped;
  absl::StatusOr<std::string> got = cache->Get(digest_);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, bytes_);
  EXPECT_EQ(fetches_, 2);
  EXPECT_EQ(cache->counters().corrupt, 1);
  EXPECT_EQ(FileBytes(cache->PathFor(digest_)), bytes_);
}

TEST_F(ArtifactCacheTest, ACorruptedFileIsRefusedWhenTheServerSendsItToo) {
  std::string flipped = bytes_;
  flipped[0] ^= 1;
  auto cache = Open(flipped);
  std::ofstream(cache->PathFor(digest_), std::ios::binary) << flipped;
  absl::StatusOr<std::string> got = cache->Get(digest_);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr(absl::StrCat("artifact ", digest_, " from the server hashes to ",
                                     cache::Sha256Hex(flipped))));
  EXPECT_FALSE(std::filesystem::exists(cache->PathFor(digest_)));  // never stored
  EXPECT_EQ(Entries(), 0);
}

TEST_F(ArtifactCacheTest, RefusesADigestThatIsNotHex) {
  auto cache = Open(bytes_);
  for (std::string bad :
       {std::string("../../etc/passwd"), digest_.substr(1), absl::AsciiStrToUpper(digest_)}) {
    absl::StatusOr<std::string> got = cache->Get(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(fetches_, 0);
}

TEST_F(ArtifactCacheTest, KeepsTheFetchersCode) {
  ArtifactCache cache(dir_, [](const std::string&) -> absl::StatusOr<std::string> {
    return absl::NotFoundError("no artifact with that digest");
  });
  ASSERT_TRUE(cache.Init().ok());
  absl::StatusOr<std::string> got = cache.Get(digest_);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("fetching artifact ", digest_, ": no artifact with that digest"));
}

TEST_F(ArtifactCacheTest, InitNamesTheFolderItCannotCreate) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ + "/file") << "x";
  ArtifactCache cache(dir_ + "/file/sub", nullptr);
  absl::Status st = cache.Init();
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr(dir_ + "/file/sub"));
}

}  // namespace
}  // namespace tilec::worker
