#include "compiler/cache/disk_store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "gtest/gtest.h"
#include "tests/compiler/cache/file_size_limit.h"
#include "tests/testing/temp_dir.h"

namespace tilec::cache {
namespace {

class FakeClock : public Clock {
 public:
  absl::Time Now() override { return now; }
  absl::Time now = absl::FromUnixSeconds(1700000000);
};

std::string TempDir() {
  std::string dir = testing::MakeTempDir("disk_store");
  EXPECT_FALSE(dir.empty());
  return dir;
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() | 1);  // never all zeros
  return s;
}

class DiskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = std::random_device{}();
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed_));
    rng_.seed(seed_);
    dir_ = TempDir();
  }
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::string dir_;
  FakeClock clock_;
};

TEST_F(DiskStoreTest, PutThenGetRoundTripsAndVerifies) {
  auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
  ASSERT_TRUE(store.ok()) << store.status();
  std::string key = Sha256Hex("k1"), bytes = RandomBytes(rng_, 1000);
  auto miss = (*store)->Get(key);
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());
  auto digest = (*store)->Put(key, "schema=x\n", bytes, "{\"a\":1}");
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(*digest, Sha256Hex(bytes));
  auto hit = (*store)->Get(key);
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->bytes, bytes);
  EXPECT_EQ((*hit)->metadata_json, "{\"a\":1}");
  EXPECT_EQ((*hit)->digest, *digest);
  auto blob = (*store)->GetBlob(*digest);
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(*blob, bytes);
  StoreStats st = (*store)->Stats();
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(st.misses, 1);
  EXPECT_EQ(st.bytes, 1000);
  EXPECT_EQ(st.entries, 1);
}

TEST_F(DiskStoreTest, SurvivesReopen) {
  std::string key = Sha256Hex("k"), bytes = RandomBytes(rng_, 300);
  {
    auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put(key, "", bytes, "{}").ok());
  }
  auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Stats().entries, 1);
  auto hit = (*store)->Get(key);
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->bytes, bytes);
}

TEST_F(DiskStoreTest, CorruptBlobIsEvictedNotServed) {
  auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
  ASSERT_TRUE(store.ok());
  std::string key = Sha256Hex("k"), bytes = RandomBytes(rng_, 500);
  auto digest = (*store)->Put(key, "", bytes, "{}");
  ASSERT_TRUE(digest.ok());
  std::string blob_path = dir_ + "/blobs/" + *digest;
  {
    std::fstream f(blob_path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(123);
    f.put(static_cast<char>(bytes[123] ^ 0x40));
  }
  auto got = (*store)->Get(key);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  EXPECT_EQ((*store)->Stats().corrupt, 1);
  EXPECT_FALSE(std::filesystem::exists(blob_path));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/keys/" + key));
}

TEST_F(DiskStoreTest, TruncatedBlobAndEntryAreMisses) {
  auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
  ASSERT_TRUE(store.ok());
  std::string k1 = Sha256Hex("1"), k2 = Sha256Hex("2");
  auto d1 = (*store)->Put(k1, "", RandomBytes(rng_, 400), "{}");
  ASSERT_TRUE((*store)->Put(k2, "", RandomBytes(rng_, 400), "{\"x\":2}").ok());
  ASSERT_TRUE(d1.ok());
  ASSERT_EQ(::truncate((dir_ + "/blobs/" + *d1).c_str(), 200), 0);
  std::string entry2 = dir_ + "/keys/" + k2;
  ASSERT_EQ(::truncate(entry2.c_str(), std::filesystem::file_size(entry2) - 3), 0);
  for (const std::string& k : {k1, k2}) {
    auto got = (*store)->Get(k);
    ASSERT_TRUE(got.ok());
    EXPECT_FALSE(got->has_value()) << k;
  }
  EXPECT_EQ((*store)->Stats().corrupt, 2);
  auto blob = (*store)->GetBlob(Sha256Hex("no such"));
  EXPECT_TRUE(absl::IsNotFound(blob.status()));
  EXPECT_TRUE(absl::IsInvalidArgument((*store)->GetBlob("../../etc/passwd").status()));
}

TEST_F(DiskStoreTest, EvictsLeastRecentlyUsedUnderBudget) {
  auto store = DiskStore::Open(dir_, 3000, &clock_);
  ASSERT_TRUE(store.ok());
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(Sha256Hex(absl::StrCat("key", i)));
    clock_.now += absl::Seconds(10);
    ASSERT_TRUE((*store)->Put(keys[i], "", RandomBytes(rng_, 1000), "{}").ok());
  }
  clock_.now += absl::Seconds(10);
  ASSERT_TRUE((*store)->Get(keys[0]).ok());  // key0 becomes the most recent
  clock_.now += absl::Seconds(10);
  keys.push_back(Sha256Hex("key3"));
  ASSERT_TRUE((*store)->Put(keys[3], "", RandomBytes(rng_, 1000), "{}").ok());
  StoreStats st = (*store)->Stats();
  EXPECT_EQ(st.evictions, 1);
  EXPECT_EQ(st.bytes, 3000);
  EXPECT_TRUE((*store)->Get(keys[0])->has_value());
  EXPECT_FALSE((*store)->Get(keys[1])->has_value());  // least recently used
  EXPECT_TRUE((*store)->Get(keys[2])->has_value());
  EXPECT_TRUE((*store)->Get(keys[3])->has_value());
}

TEST_F(DiskStoreTest, TwoStoresOnOneDirectoryConcurrently) {
  auto a = DiskStore::Open(dir_, 1 << 24);
  auto b = DiskStore::Open(dir_, 1 << 24);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::string> payloads;
  for (int i = 0; i < 16; ++i) payloads.push_back(RandomBytes(rng_, 2000 + 37 * i));
  auto work = [&](DiskStore* s, int parity) {
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < 16; ++i) {
        std::string key = Sha256Hex(absl::StrCat("k", i));
        auto got = s->Get(key);
        ASSERT_TRUE(got.ok());
        if (got->has_value()) {
          EXPECT_EQ((*got)->bytes, payloads[i]);
        } else if ((i + round) % 2 == parity) {
          ASSERT_TRUE(s->Put(key, "", payloads[i], "{}").ok());
        }
      }
    }
  };
  std::thread t1(work, a->get(), 0), t2(work, b->get(), 1);
  t1.join();
  t2.join();
  for (int i = 0; i < 16; ++i) {
    auto got = (*a)->Get(Sha256Hex(absl::StrCat("k", i)));
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ((*got)->bytes, payloads[i]);
  }
  EXPECT_EQ((*a)->Stats().corrupt + (*b)->Stats().corrupt, 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/tmp"));
}

TEST_F(DiskStoreTest, AFullDiskLeavesNoOrphanBlob) {
  // The blob (1 KB) fits under the 16 KB file-size limit, its entry (64 KB of
  // metadata) does not: Put fails with RESOURCE_EXHAUSTED naming the errno,
  // and the blob it wrote is removed, not orphaned.
  std::string key = Sha256Hex("k"), bytes = RandomBytes(rng_, 1000);
  std::string metadata = absl::StrCat("{\"pad\":\"", std::string(64 << 10, 'x'), "\"}");
  int code = RunWithFileSizeLimit(16 << 10, [&] {
    auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
    if (!store.ok()) return 10;
    auto put = (*store)->Put(key, "", bytes, metadata);
    if (put.ok()) return 11;
    if (!absl::IsResourceExhausted(put.status())) return 12;
    if (put.status().message().find("File too large") == std::string::npos) return 13;
    return 0;
  });
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/blobs"));
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/keys"));
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/tmp"));
}

TEST_F(DiskStoreTest, UnreferencedBlobsAreSwept) {
  // A blob whose entry was never written (a writer killed between the two
  // renames) is swept when the store opens; referenced blobs stay.
  std::string kept_key = Sha256Hex("kept"), kept = RandomBytes(rng_, 400);
  std::string orphan = RandomBytes(rng_, 700);
  {
    auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put(kept_key, "", kept, "{}").ok());
  }
  std::ofstream(dir_ + "/blobs/" + Sha256Hex(orphan), std::ios::binary) << orphan;
  auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
  ASSERT_TRUE(store.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/blobs/" + Sha256Hex(orphan)));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/blobs/" + Sha256Hex(kept)));
  EXPECT_EQ((*store)->Stats().orphans_swept, 1);
  auto hit = (*store)->Get(kept_key);
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->bytes, kept);
}

TEST_F(DiskStoreTest, OpeningRemovesWhatDeadWritersLeftInTmp) {
  // A writer killed between creating its temporary file and renaming it
  // leaves the file in tmp/; the next store to open removes it, however
  // recent, since writers hold the lock for the whole write.
  std::string key = Sha256Hex("k"), bytes = RandomBytes(rng_, 300);
  {
    auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put(key, "", bytes, "{}").ok());
  }
  std::ofstream(dir_ + "/tmp/w.half", std::ios::binary) << RandomBytes(rng_, 123);
  std::ofstream(dir_ + "/tmp/w.empty", std::ios::binary);
  auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/tmp"));
  auto hit = (*store)->Get(key);
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->bytes, bytes);
}

TEST_F(DiskStoreTest, AHugeDigestIsNotEchoedBack) {
  auto store = DiskStore::Open(dir_, 1 << 20, &clock_);
  ASSERT_TRUE(store.ok());
  auto blob = (*store)->GetBlob(std::string(1 << 20, 'a'));
  EXPECT_TRUE(absl::IsInvalidArgument(blob.status()));
  EXPECT_LT(blob.status().message().size(), 200u) << blob.status().message().size();
  EXPECT_NE(blob.status().message().find("1048576 characters"), std::string::npos);
}

TEST_F(DiskStoreTest, RejectsBadBudgetAndKeys) {
  EXPECT_TRUE(absl::IsInvalidArgument(DiskStore::Open(dir_, 0).status()));
  auto store = DiskStore::Open(dir_, 100);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(absl::IsInvalidArgument((*store)->Get("abc").status()));
  EXPECT_TRUE(absl::IsInvalidArgument((*store)->Put("ABC", "", "x", "{}").status()));
}

}  // namespace
}  // namespace tilec::cache
