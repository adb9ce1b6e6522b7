#include "server/tuning_db.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/autotune_core.h"
#include "tests/testing/temp_dir.h"

namespace tilec::server {
namespace {

TEST(TuningDb, KeepsRecordsAcrossOpensAndKeysEveryField) {
  const std::string dir = testing::MakeTempDir("tuning_db");
  const std::string key = TuningDb::KeyText("abc", "h100_sxm", {{"M", 4096}}, "v1", "13.0");
  {
    auto db = TuningDb::Open(dir);
    ASSERT_TRUE(db.ok());
    tilec::v1::TuningRecord r;
    r.set_key_text(key);
    r.add_best()->set_name("block_M");
    ASSERT_TRUE((*db)->Put(r).ok());
    EXPECT_EQ((*db)->Count(), 1);
  }
  auto db = TuningDb::Open(dir);
  ASSERT_TRUE(db.ok());
  auto got = (*db)->Get(key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->best(0).name(), "block_M");
  EXPECT_FALSE((*got)->key().empty());
  for (const std::string& other :
       {TuningDb::KeyText("abd", "h100_sxm", {{"M", 4096}}, "v1", "13.0"),
        TuningDb::KeyText("abc", "h200", {{"M", 4096}}, "v1", "13.0"),
        TuningDb::KeyText("abc", "h100_sxm", {{"M", 2048}}, "v1", "13.0"),
        TuningDb::KeyText("abc", "h100_sxm", {{"M", 4096}}, "v2", "13.0"),
        TuningDb::KeyText("abc", "h100_sxm", {{"M", 4096}}, "v1", "12.8")}) {
    auto none = (*db)->Get(other);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value()) << other;
  }
  // A damaged file is absent, not an error.
  std::ofstream(dir + "/" + (*got)->key() + ".tuning", std::ios::trunc) << "garbage";
  auto damaged = (*db)->Get(key);
  ASSERT_TRUE(damaged.ok());
  EXPECT_FALSE(damaged->has_value());
}

TEST(TuningDb, OpeningRemovesTheTemporaryFilesOfAKilledServer) {
  const std::string dir = testing::MakeTempDir("tuning_db");
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  const std::string gone = absl::StrCat(dir, "/abc.tuning.tmp.", dead, ".0");
  const std::string alive = absl::StrCat(dir, "/abd.tuning.tmp.", ::getpid(), ".3");
  std::ofstream(gone) << "half";
  std::ofstream(alive) << "being written";
  ASSERT_TRUE(TuningDb::Open(dir).ok());
  EXPECT_FALSE(std::filesystem::exists(gone));
  EXPECT_TRUE(std::filesystem::exists(alive));
}

TEST(Spearman, RankCorrelation) {
  EXPECT_DOUBLE_EQ(Spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(Spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(Spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}), 0.8, 1e-12);
  EXPECT_TRUE(std::isnan(Spearman({1}, {1})));
  EXPECT_TRUE(std::isnan(Spearman({1, 1, 1}, {1, 2, 3})));
}

}  // namespace
}  // namespace tilec::server
