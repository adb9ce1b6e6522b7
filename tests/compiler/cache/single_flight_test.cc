#include "compiler/cache/single_flight.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/compiler/cache/test_compiler.h"

namespace tilec::cache {
namespace {

std::string KeyOf(const CompileJob& job) { return job.program_hash + "/" + job.target; }

TEST(SingleFlightTest, ConcurrentIdenticalJobsCompileOnce) {
  auto inner = std::make_unique<HashingCompiler>();
  inner->delay = absl::Milliseconds(300);
  HashingCompiler* counter = inner.get();
  SingleFlightCompiler sf(std::move(inner), KeyOf);
  constexpr int kN = 64;
  std::vector<absl::StatusOr<Artifact>> results(kN, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kN; ++i) {
    threads.emplace_back([&, i] { results[i] = sf.Compile(TestJob("p1")); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter->calls.load(), 1);
  EXPECT_EQ(sf.joined(), kN - 1);
  int shared = 0;
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->bytes, results[0]->bytes);
    shared += r->shared;
  }
  EXPECT_EQ(shared, kN - 1);
}

TEST(SingleFlightTest, DistinctJobsAndLaterJobsCompileSeparately) {
  auto inner = std::make_unique<HashingCompiler>();
  inner->delay = absl::Milliseconds(100);
  HashingCompiler* counter = inner.get();
  SingleFlightCompiler sf(std::move(inner), KeyOf);
  std::thread a([&] { EXPECT_TRUE(sf.Compile(TestJob("p1", "sm_80")).ok()); });
  std::thread b([&] { EXPECT_TRUE(sf.Compile(TestJob("p1", "sm_90a")).ok()); });
  a.join();
  b.join();
  EXPECT_EQ(counter->calls.load(), 2);
  EXPECT_TRUE(sf.Compile(TestJob("p1", "sm_80")).ok());  // the flight is over
  EXPECT_EQ(counter->calls.load(), 3);
}

TEST(SingleFlightTest, ErrorsReachEveryWaiter) {
  auto inner = std::make_unique<HashingCompiler>();
  inner->delay = absl::Milliseconds(200);
  inner->fail = true;
  SingleFlightCompiler sf(std::move(inner), KeyOf);
  std::vector<std::thread> threads;
  std::atomic<int> invalid{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (absl::IsInvalidArgument(sf.Compile(TestJob("bad")).status())) invalid.fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(invalid.load(), 8);
}

TEST(SingleFlightTest, FollowerCancelDoesNotStopTheLeader) {
  auto inner = std::make_unique<HashingCompiler>();
  inner->delay = absl::Milliseconds(400);
  HashingCompiler* counter = inner.get();
  SingleFlightCompiler sf(std::move(inner), KeyOf);
  absl::StatusOr<Artifact> leader = absl::UnknownError("");
  std::thread t([&] { leader = sf.Compile(TestJob("p")); });
  absl::SleepFor(absl::Milliseconds(50));
  auto cancel = std::make_shared<Cancellation>();
  CompileJob follower = TestJob("p");
  follower.cancel = cancel;
  std::thread f([&] { EXPECT_TRUE(absl::IsCancelled(sf.Compile(follower).status())); });
  absl::SleepFor(absl::Milliseconds(50));
  cancel->Cancel();
  f.join();
  t.join();
  EXPECT_TRUE(leader.ok()) << leader.status();
  EXPECT_EQ(counter->cancelled_calls.load(), 0);
}

TEST(SingleFlightTest, CompileStopsWhenEveryRequestCancelled) {
  auto inner = std::make_unique<HashingCompiler>();
  inner->delay = absl::Seconds(30);
  HashingCompiler* counter = inner.get();
  SingleFlightCompiler sf(std::move(inner), KeyOf);
  auto c1 = std::make_shared<Cancellation>(), c2 = std::make_shared<Cancellation>();
  CompileJob j1 = TestJob("p"), j2 = TestJob("p");
  j1.cancel = c1;
  j2.cancel = c2;
  absl::Time start = absl::Now();
  std::thread t1([&] { EXPECT_TRUE(absl::IsCancelled(sf.Compile(j1).status())); });
  absl::SleepFor(absl::Milliseconds(50));
  std::thread t2([&] { EXPECT_TRUE(absl::IsCancelled(sf.Compile(j2).status())); });
  absl::SleepFor(absl::Milliseconds(50));
  c1->Cancel();
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(counter->cancelled_calls.load(), 0);  // the follower still waits
  c2->Cancel();
  t1.join();
  t2.join();
  EXPECT_EQ(counter->cancelled_calls.load(), 1);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(SingleFlightTest, FollowerDeadline) {
  auto inner = std::make_unique<HashingCompiler>();
  inner->delay = absl::Milliseconds(500);
  SingleFlightCompiler sf(std::move(inner), KeyOf);
  std::thread t([&] { EXPECT_TRUE(sf.Compile(TestJob("p")).ok()); });
  absl::SleepFor(absl::Milliseconds(50));
  CompileJob j = TestJob("p");
  j.deadline = absl::Now() + absl::Milliseconds(50);
  EXPECT_TRUE(absl::IsDeadlineExceeded(sf.Compile(j).status()));
  t.join();
}

}  // namespace
}  // namespace tilec::cache
