// LruMap (server/lru_map.h): what stays within the budget, in which order
// entries leave, and what a lookup or a replacement changes.
#include "server/lru_map.h"

#include <string>

#include "gtest/gtest.h"

namespace tilec::server {
namespace {

TEST(LruMap, EvictsTheLeastRecentlyUsedDownToTheBudget) {
  LruMap<int> m(3);
  m.Put("a", 1, 1);
  m.Put("b", 2, 1);
  m.Put("c", 3, 1);
  ASSERT_NE(m.Find("a"), nullptr);  // a is now the most recent; b the least
  m.Put("d", 4, 1);
  EXPECT_EQ(m.Find("b"), nullptr);
  ASSERT_NE(m.Find("a"), nullptr);
  EXPECT_EQ(*m.Find("a"), 1);
  EXPECT_EQ(*m.Find("c"), 3);
  EXPECT_EQ(*m.Find("d"), 4);
  EXPECT_EQ(m.size(), 3u);
}

TEST(LruMap, CostsAreWhatTheOwnerSays) {
  LruMap<std::string> m(10);
  m.Put("x", "xxxx", 4);
  m.Put("y", "yyyy", 4);
  m.Put("z", "zz", 2);  // 10: all fit
  EXPECT_EQ(m.size(), 3u);
  m.Put("w", "w", 1);  // 11: x, the oldest, leaves
  EXPECT_EQ(m.Find("x"), nullptr);
  EXPECT_EQ(m.size(), 3u);
  m.Put("y", "y", 1);  // replacing y frees 3 of its 4
  m.Put("v", "vvv", 3);
  EXPECT_NE(m.Find("z"), nullptr);
  EXPECT_NE(m.Find("w"), nullptr);
  ASSERT_NE(m.Find("y"), nullptr);
  EXPECT_EQ(*m.Find("y"), "y");
  EXPECT_EQ(m.size(), 4u);
}

TEST(LruMap, AnEntryOverTheBudgetAloneIsNotKept) {
  LruMap<int> m(5);
  m.Put("small", 1, 2);
  m.Put("huge", 2, 6);
  EXPECT_EQ(m.Find("huge"), nullptr);
  EXPECT_EQ(m.Find("small"), nullptr);  // evicted first, as the older one
  EXPECT_EQ(m.size(), 0u);
  m.Put("again", 3, 5);
  EXPECT_NE(m.Find("again"), nullptr);
}

TEST(LruMap, EraseForgetsTheEntryAndItsCost) {
  LruMap<int> m(2);
  m.Put("a", 1, 1);
  m.Put("b", 2, 1);
  m.Erase("a");
  m.Erase("missing");
  m.Put("c", 3, 1);  // fits beside b
  EXPECT_NE(m.Find("b"), nullptr);
  EXPECT_NE(m.Find("c"), nullptr);
  EXPECT_EQ(m.Find("a"), nullptr);
}

}  // namespace
}  // namespace tilec::server
