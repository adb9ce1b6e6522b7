#include "server/scheduler.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace tilec::server {
namespace {

TEST(SchedulerTest, RunsEverythingSubmitted) {
  std::atomic<int> sum{0};
  {
    Scheduler s(3, 100);
    for (int i = 1; i <= 50; ++i) {
      ASSERT_TRUE(s.Submit([&sum, i] { sum.fetch_add(i); }).ok());
    }
  }  // the destructor drains the queue
  EXPECT_EQ(sum.load(), 50 * 51 / 2);
}

TEST(SchedulerTest, FullQueueIsResourceExhausted) {
  absl::Notification release, started;
  Scheduler s(1, 2);
  ASSERT_TRUE(s.Submit([&] {
    started.Notify();
    release.WaitForNotification();
  }).ok());
  started.WaitForNotification();
  EXPECT_TRUE(s.Submit([] {}).ok());
  EXPECT_TRUE(s.Submit([] {}).ok());
  EXPECT_EQ(s.queue_depth(), 2);
  EXPECT_EQ(s.running(), 1);
  absl::Status full = s.Submit([] {});
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  release.Notify();
}

}  // namespace
}  // namespace tilec::server
