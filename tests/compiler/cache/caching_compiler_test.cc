#include "compiler/cache/caching_compiler.h"

#include <stdlib.h>

#include <fstream>
#include <memory>
#include <vector>

#include "compiler/cache/digest.h"
#include "gtest/gtest.h"
#include "tests/compiler/cache/file_size_limit.h"
#include "tests/compiler/cache/test_compiler.h"
#include "tests/testing/temp_dir.h"

namespace tilec::cache {
namespace {

std::string TempDir() {
  std::string dir = testing::MakeTempDir("caching");
  EXPECT_FALSE(dir.empty());
  return dir;
}

ToolchainInfo Tools() { return {"v1", "13.0", Sha256Hex("headers")}; }

TEST(CachingCompilerTest, MissCompilesHitServes) {
  auto store = DiskStore::Open(TempDir(), 1 << 20);
  ASSERT_TRUE(store.ok());
  auto inner = std::make_unique<HashingCompiler>();
  HashingCompiler* counter = inner.get();
  CachingCompiler cc(std::move(inner), store->get(), Tools());
  auto first = cc.Compile(TestJob("prog"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cache_hit);
  auto second = cc.Compile(TestJob("prog"));
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->bytes, first->bytes);
  EXPECT_EQ(second->metadata_json, first->metadata_json);
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_EQ(counter->calls.load(), 1);
  // Another target, other options: other keys, new compiles.
  EXPECT_FALSE(cc.Compile(TestJob("prog", "sm_90a"))->cache_hit);
  CompileJob li = TestJob("prog");
  li.options.line_info = true;
  EXPECT_FALSE(cc.Compile(li)->cache_hit);
  EXPECT_EQ(counter->calls.load(), 3);
}

TEST(CachingCompilerTest, CorruptEntryIsRecompiled) {
  std::string dir = TempDir();
  auto store = DiskStore::Open(dir, 1 << 20);
  ASSERT_TRUE(store.ok());
  auto inner = std::make_unique<HashingCompiler>();
  HashingCompiler* counter = inner.get();
  CachingCompiler cc(std::move(inner), store->get(), Tools());
  auto first = cc.Compile(TestJob("prog"));
  ASSERT_TRUE(first.ok());
  {
    std::ofstream f(dir + "/blobs/" + Sha256Hex(first->bytes), std::ios::trunc);
    f << "garbage";
  }
  auto again = cc.Compile(TestJob("prog"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->cache_hit);
  EXPECT_EQ(again->bytes, first->bytes);
  EXPECT_EQ(counter->calls.load(), 2);
  EXPECT_EQ((*store)->Stats().corrupt, 1);
  EXPECT_TRUE(cc.Compile(TestJob("prog"))->cache_hit);
}

TEST(CachingCompilerTest, ErrorsAreNotCached) {
  auto store = DiskStore::Open(TempDir(), 1 << 20);
  ASSERT_TRUE(store.ok());
  auto inner = std::make_unique<HashingCompiler>();
  inner->fail = true;
  HashingCompiler* counter = inner.get();
  CachingCompiler cc(std::move(inner), store->get(), Tools());
  EXPECT_TRUE(absl::IsInvalidArgument(cc.Compile(TestJob("p")).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(cc.Compile(TestJob("p")).status()));
  EXPECT_EQ(counter->calls.load(), 2);
  EXPECT_EQ((*store)->Stats().entries, 0);
}

TEST(CachingCompilerTest, ACompileTheFullDiskCannotStoreStillReturnsItsBytes) {
  // 64 KB artifacts under an 8 KB file-size limit: the store cannot write
  // the blob. The compile still succeeds with its bytes, says why it was not
  // stored, and counts the store error.
  std::string dir = TempDir();
  int code = RunWithFileSizeLimit(8 << 10, [&] {
    auto store = DiskStore::Open(dir, 1 << 20);
    if (!store.ok()) return 10;
    auto inner = std::make_unique<HashingCompiler>();
    inner->blocks = 1024;
    CachingCompiler cc(std::move(inner), store->get(), Tools());
    auto a = cc.Compile(TestJob(Sha256Hex("p")));
    if (!a.ok()) return 11;
    if (a->bytes.size() != 64u << 10) return 12;
    if (a->store_error.find("could not store") == std::string::npos ||
        a->store_error.find(dir) == std::string::npos ||
        a->store_error.find("File too large") == std::string::npos) {
      return 13;
    }
    if (cc.store_errors() != 1) return 14;
    auto again = cc.Compile(TestJob(Sha256Hex("p")));  // not stored: compiled again
    if (!again.ok() || again->cache_hit || again->bytes != a->bytes) return 15;
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(CachingCompilerTest, LookupAnswersHitsWithoutCompiling) {
  auto store = DiskStore::Open(TempDir(), 1 << 20);
  ASSERT_TRUE(store.ok());
  auto inner = std::make_unique<HashingCompiler>();
  HashingCompiler* counter = inner.get();
  CachingCompiler cc(std::move(inner), store->get(), Tools());
  auto miss = cc.Lookup(TestJob(Sha256Hex("p")));
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());
  EXPECT_EQ(counter->calls.load(), 0);
  auto compiled = cc.Compile(TestJob(Sha256Hex("p")));
  ASSERT_TRUE(compiled.ok());
  EXPECT_TRUE(compiled->store_error.empty());
  auto hit = cc.Lookup(TestJob(Sha256Hex("p")));
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_TRUE((*hit)->cache_hit);
  EXPECT_EQ((*hit)->bytes, compiled->bytes);
  EXPECT_EQ(counter->calls.load(), 1);
}

}  // namespace
}  // namespace tilec::cache
