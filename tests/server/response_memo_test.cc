// ResponseMemo: what it remembers, and that it serves a response only while
// the artifacts it names are stored unchanged.
#include "server/response_memo.h"

#include <map>
#include <set>

#include "gtest/gtest.h"

namespace tilec::server {
namespace {

tilec::v1::CompileRequest Request(const std::string& fn) {
  tilec::v1::CompileRequest r;
  r.mutable_source()->set_function(fn);
  r.add_targets("sm_80");
  return r;
}

tilec::v1::CompileResponse Response(const std::string& key, const std::string& digest) {
  tilec::v1::CompileResponse r;
  tilec::v1::CompileResult* res = r.add_results();
  res->set_cache_key(key);
  res->set_digest(digest);
  res->set_compile_seconds(1.5);
  return r;
}

struct FakeStore {
  std::set<std::string> keys;
  std::map<std::string, std::string> stamps;
  ResponseMemo Memo(size_t capacity) {
    return ResponseMemo(
        capacity, [this](const std::string& k) { return keys.count(k) > 0; },
        [this](const std::string& d) { return stamps.count(d) ? stamps[d] : std::string(); });
  }
};

TEST(ResponseMemo, ServesARepeatedRequestWhileItsArtifactsAreStoredUnchanged) {
  FakeStore store;
  store.keys = {"k1"};
  store.stamps["d1"] = "100:7:1.0";
  ResponseMemo memo = store.Memo(8);
  const std::string key = ResponseMemo::KeyOf(Request("f").SerializeAsString());
  EXPECT_NE(key, ResponseMemo::KeyOf(Request("g").SerializeAsString()));
  EXPECT_FALSE(memo.Get(key).has_value());
  memo.Put(key, Response("k1", "d1"));
  std::optional<std::string> bytes = memo.Get(key);
  ASSERT_TRUE(bytes.has_value());
  tilec::v1::CompileResponse r;
  ASSERT_TRUE(r.ParseFromString(*bytes));
  EXPECT_EQ(r.results(0).cache_key(), "k1");
  EXPECT_EQ(r.results(0).digest(), "d1");
  EXPECT_TRUE(r.results(0).cache_hit());
  EXPECT_EQ(r.results(0).compile_seconds(), 0);
  EXPECT_EQ(memo.hits(), 1);
  store.stamps["d1"] = "100:7:2.0";  // modified in place
  EXPECT_FALSE(memo.Get(key).has_value());
  EXPECT_FALSE(memo.Get(key).has_value());  // and forgotten
  memo.Put(key, Response("k1", "d1"));
  store.keys.clear();  // the entry was evicted
  EXPECT_FALSE(memo.Get(key).has_value());
}

TEST(ResponseMemo, KeepsOnlyResponsesThatDependOnTheRequestAlone) {
  FakeStore store;
  store.keys = {"k1"};
  store.stamps["d1"] = "s";
  ResponseMemo memo = store.Memo(8);
  tilec::v1::CompileResponse chosen = Response("k1", "d1");
  chosen.mutable_results(0)->add_config()->set_name("block_M");  // by recommendation
  memo.Put("a", chosen);
  tilec::v1::CompileResponse unstored = Response("k1", "d1");
  unstored.mutable_results(0)->set_store_error("disk full");
  memo.Put("b", unstored);
  memo.Put("c", Response("k1", "absent"));  // no blob to stamp
  for (const char* k : {"a", "b", "c"}) EXPECT_FALSE(memo.Get(k).has_value()) << k;
}

TEST(ResponseMemo, ForgetsTheLeastRecentlyUsedBeyondItsCapacity) {
  FakeStore store;
  store.keys = {"k"};
  store.stamps["d"] = "s";
  ResponseMemo memo = store.Memo(2);
  memo.Put("a", Response("k", "d"));
  memo.Put("b", Response("k", "d"));
  ASSERT_TRUE(memo.Get("a").has_value());  // b is now the least recent
  memo.Put("c", Response("k", "d"));
  EXPECT_TRUE(memo.Get("a").has_value());
  EXPECT_FALSE(memo.Get("b").has_value());
  EXPECT_TRUE(memo.Get("c").has_value());
}

}  // namespace
}  // namespace tilec::server
