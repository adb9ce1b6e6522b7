// WorkerPool's leases, heartbeats and requeues, with a controlled clock and
// links that record what the pool sends (the sessions' side; the real
// sessions over gRPC are in tests/e2e/autotune_e2e_test.cc).
#include "server/worker_pool.h"

#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::server {
namespace {

using ::testing::HasSubstr;

class TestClock : public cache::Clock {
 public:
  absl::Time Now() override { return now; }
  absl::Time now = absl::FromUnixSeconds(1000);
};

struct RecordingLink : WorkerLink {
  void Send(const tilec::v1::WorkerCommand& c) override { sent.push_back(c); }
  void Close(const absl::Status& s) override { closed = s; }
  std::vector<tilec::v1::WorkerCommand> sent;
  std::optional<absl::Status> closed;
};

class PoolTest : public ::testing::Test {
 protected:
  PoolTest() : pool_(Options(), &clock_) {}
  static PoolOptions Options() {
    PoolOptions o;
    o.heartbeat_timeout = absl::Seconds(5);
    o.background_ticker = false;
    return o;
  }
  int64_t Add(const std::string& id, const std::string& profile,
              std::shared_ptr<RecordingLink> link) {
    tilec::v1::WorkerHello hello;
    hello.set_worker_id(id);
    hello.set_profile(profile);
    absl::StatusOr<int64_t> h = pool_.Register(hello, "peer", link);
    EXPECT_TRUE(h.ok()) << h.status();
    return *h;
  }
  std::string Submit(double lease_s = 10) {
    tilec::v1::MeasureJob job;
    job.set_lease_seconds(lease_s);
    return pool_.Submit("h100_sxm", job, [this](absl::StatusOr<MeasureOutcome> o) {
      outcomes_.push_back(std::move(o));
    });
  }
  void Message(int64_t w, const tilec::v1::WorkerMessage& m) { pool_.OnMessage(w, m); }
  void Started(int64_t w, const tilec::v1::MeasureJob& job) {
    tilec::v1::WorkerMessage m;
    m.mutable_started()->set_job_id(job.job_id());
    m.mutable_started()->set_lease(job.lease());
    Message(w, m);
  }
  void Result(int64_t w, const tilec::v1::MeasureJob& job, double ms) {
    tilec::v1::WorkerMessage m;
    m.mutable_result()->set_job_id(job.job_id());
    m.mutable_result()->set_lease(job.lease());
    m.mutable_result()->add_ms(ms);
    Message(w, m);
  }
  void Heartbeat(int64_t w) {
    tilec::v1::WorkerMessage m;
    m.mutable_heartbeat();
    Message(w, m);
  }

  TestClock clock_;
  WorkerPool pool_;
  std::vector<absl::StatusOr<MeasureOutcome>> outcomes_;
};

TEST_F(PoolTest, JobsGoToIdleWorkersOfTheirProfile) {
  auto a100 = std::make_shared<RecordingLink>(), h100 = std::make_shared<RecordingLink>();
  Add("a", "a100", a100);
  int64_t w = Add("h", "h100_sxm", h100);
  Submit();
  EXPECT_TRUE(a100->sent.empty());
  ASSERT_EQ(h100->sent.size(), 1u);
  const tilec::v1::MeasureJob job = h100->sent[0].job();
  EXPECT_EQ(pool_.Workers().size(), 2u);
  Submit();  // queued: the only h100 worker is busy
  EXPECT_EQ(h100->sent.size(), 1u);
  Started(w, job);
  Result(w, job, 1.5);
  ASSERT_EQ(outcomes_.size(), 1u);
  ASSERT_TRUE(outcomes_[0].ok());
  EXPECT_EQ(outcomes_[0]->result.ms(0), 1.5);
  EXPECT_EQ(outcomes_[0]->worker.worker_id(), "h");
  ASSERT_EQ(h100->sent.size(), 2u);  // the second job follows at once
  EXPECT_EQ(pool_.counters().jobs_completed, 1);
}

TEST_F(PoolTest, TheLeaseCountsFromTheStartNotFromTheQueue) {
  auto link = std::make_shared<RecordingLink>();
  int64_t w = Add("h", "h100_sxm", link);
  Submit(/*lease_s=*/10);
  const tilec::v1::MeasureJob job = link->sent[0].job();
  clock_.now += absl::Seconds(4);  // offered, not yet started: heartbeats keep it
  Heartbeat(w);
  Started(w, job);
  clock_.now += absl::Seconds(4);
  Heartbeat(w);
  clock_.now += absl::Seconds(4);  // 12 s since offered, 8 since started
  Heartbeat(w);
  pool_.Tick();
  EXPECT_EQ(pool_.counters().leases_expired, 0);
  clock_.now += absl::Seconds(3);  // 11 s since started
  Heartbeat(w);
  pool_.Tick();
  EXPECT_EQ(pool_.counters().leases_expired, 1);
  // The late result of the expired lease is ignored; the job is queued again.
  Result(w, job, 2.0);
  EXPECT_TRUE(outcomes_.empty());
  ASSERT_EQ(link->sent.size(), 2u);
  EXPECT_NE(link->sent[1].job().lease(), job.lease());
  EXPECT_EQ(link->sent[1].job().job_id(), job.job_id());
}

TEST_F(PoolTest, ASilentWorkersJobGoesToAnother) {
  auto first = std::make_shared<RecordingLink>(), second = std::make_shared<RecordingLink>();
  int64_t w1 = Add("first", "h100_sxm", first);
  Submit();
  const tilec::v1::MeasureJob job = first->sent[0].job();
  Started(w1, job);
  int64_t w2 = Add("second", "h100_sxm", second);
  clock_.now += absl::Seconds(3);
  Heartbeat(w2);
  clock_.now += absl::Seconds(3);  // first silent for 6 s
  Heartbeat(w2);
  pool_.Tick();
  ASSERT_TRUE(first->closed.has_value());
  EXPECT_THAT(first->closed->message(), HasSubstr("no heartbeat"));
  ASSERT_EQ(second->sent.size(), 1u);
  EXPECT_EQ(second->sent[0].job().job_id(), job.job_id());
  Started(w2, second->sent[0].job());
  Result(w2, second->sent[0].job(), 3.0);
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_TRUE(outcomes_[0].ok());
  EXPECT_EQ(pool_.counters().jobs_requeued, 1);
}

TEST_F(PoolTest, AJobThatKillsTwoWorkersIsPoisoned) {
  auto a = std::make_shared<RecordingLink>(), b = std::make_shared<RecordingLink>(),
       c = std::make_shared<RecordingLink>();
  int64_t wa = Add("a", "h100_sxm", a);
  Submit();
  Started(wa, a->sent[0].job());
  pool_.OnDisconnect(wa);
  int64_t wb = Add("b", "h100_sxm", b);
  ASSERT_EQ(b->sent.size(), 1u);
  Started(wb, b->sent[0].job());
  pool_.OnDisconnect(wb);
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(outcomes_[0].status().message(), HasSubstr("poisoned"));
  Add("c", "h100_sxm", c);
  EXPECT_TRUE(c->sent.empty());  // not retried
  EXPECT_EQ(pool_.counters().jobs_poisoned, 1);
}

TEST_F(PoolTest, AWorkerThatDiesBeforeStartingCostsNoDeath) {
  auto a = std::make_shared<RecordingLink>(), b = std::make_shared<RecordingLink>();
  int64_t wa = Add("a", "h100_sxm", a);
  Submit();
  pool_.OnDisconnect(wa);  // offered, never started
  int64_t wb = Add("b", "h100_sxm", b);
  Started(wb, b->sent[0].job());
  pool_.OnDisconnect(wb);
  EXPECT_TRUE(outcomes_.empty());  // one death only: queued again
  EXPECT_EQ(pool_.counters().jobs_poisoned, 0);
}

TEST_F(PoolTest, DrainingWorkersTakeNoJobsAndCancelFailsTheUnfinished) {
  auto a = std::make_shared<RecordingLink>();
  int64_t wa = Add("a", "h100_sxm", a);
  tilec::v1::WorkerMessage drain;
  drain.mutable_draining();
  Message(wa, drain);
  EXPECT_EQ(pool_.WorkersFor("h100_sxm"), 0);
  std::string id = Submit();
  EXPECT_TRUE(a->sent.empty());
  pool_.Cancel({id});
  ASSERT_EQ(outcomes_.size(), 1u);
  EXPECT_EQ(outcomes_[0].status().code(), absl::StatusCode::kCancelled);
  tilec::v1::WorkerHello dup;
  dup.set_worker_id("a");
  EXPECT_EQ(pool_.Register(dup, "p", a).status().code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace tilec::server
