#include "compiler/cache/caching_compiler.h"

#include <stdlib.h>

#include <fstream>
#include <memory>
#include <vector>

#include "compiler/cache/digest.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tests/compiler/cache/test_compiler.h"

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

}  // namespace
}  // namespace tilec::cache
