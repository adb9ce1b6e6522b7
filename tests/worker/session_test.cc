// The worker's session loop against a real gRPC server on loopback
// (fake_tilecd.h) with a scripted job runner: the hello, heartbeats, one job
// at a time with MeasureStarted first, draining mid-job, a refused session,
// and reconnects.
#include "worker/session.h"

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/worker/fake_tilecd.h"

namespace tilec::worker {
namespace {

using ::testing::ElementsAre;
using ::tilec::testing::FakeTilecd;
using ::tilec::testing::Next;
using ::tilec::testing::SessionStream;
using ::tilec::testing::Welcome;
using ::tilec::v1::WorkerCommand;
using ::tilec::v1::WorkerMessage;

// Answers every job with one 1.5 ms run; holds each until Release() when
// constructed holding.
class ScriptedRunner : public JobRunner {
 public:
  explicit ScriptedRunner(bool hold) : hold_(hold) {}
  tilec::v1::MeasureResult Run(const tilec::v1::MeasureJob& job) override {
    absl::MutexLock lock(&mu_);
    jobs_.push_back(job.job_id());
    mu_.Await(absl::Condition(
        +[](bool* hold) { return !*hold; }, &hold_));
    tilec::v1::MeasureResult r;
    r.set_job_id(job.job_id());
    r.set_lease(job.lease());
    r.add_ms(1.5);
    return r;
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    hold_ = false;
  }
  std::vector<std::string> jobs() {
    absl::MutexLock lock(&mu_);
    return jobs_;
  }

 private:
  absl::Mutex mu_;
  bool hold_;
  std::vector<std::string> jobs_;
};

SessionOptions Options(const FakeTilecd& server) {
  SessionOptions o;
  o.channel = server.Channel();
  o.token = "secret";
  o.hello.set_worker_id("host:1:emulator");
  o.hello.set_profile("host_emulator");
  o.hello.mutable_device()->set_device("emulator");
  o.backoff_initial_s = 0.01;
  o.backoff_max_s = 0.05;
  o.close_grace_s = 5;
  return o;
}

WorkerCommand Job(const std::string& id, uint64_t lease) {
  WorkerCommand c;
  c.mutable_job()->set_job_id(id);
  c.mutable_job()->set_lease(lease);
  return c;
}

std::string Kind(const WorkerMessage& m) {
  switch (m.message_case()) {
    case WorkerMessage::kHello: return "hello";
    case WorkerMessage::kStarted: return "started " + m.started().job_id();
    case WorkerMessage::kResult: return "result " + m.result().job_id();
    case WorkerMessage::kHeartbeat: return "heartbeat";
    case WorkerMessage::kDraining: return "draining";
    default: return "?";
  }
}

// The worker's messages until the stream ends, heartbeats counted apart.
std::vector<std::string> Rest(SessionStream* stream, int* heartbeats) {
  std::vector<std::string> seen;
  WorkerMessage m;
  while (Next(stream, &m)) {
    if (m.has_heartbeat())
      ++*heartbeats;
    else
      seen.push_back(Kind(m));
  }
  return seen;
}

TEST(WorkerLoop, HelloThenJobsWithHeartbeatsThenDrains) {
  std::promise<void> reported;
  std::vector<std::string> seen;
  int heartbeats = 0;
  tilec::v1::MeasureResult result;
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream* s) {
    WorkerMessage m;
    EXPECT_TRUE(Next(s, &m));
    EXPECT_EQ(m.hello().worker_id(), "host:1:emulator");
    EXPECT_EQ(m.hello().profile(), "host_emulator");
    s->Write(Welcome(0.1));
    s->Write(Job("j1", 7));
    while (Next(s, &m)) {
      if (m.has_heartbeat()) {
        ++heartbeats;
        continue;
      }
      seen.push_back(Kind(m));
      if (m.has_result()) break;
    }
    result = m.result();
    reported.set_value();
    seen.push_back("--");
    for (const std::string& k : Rest(s, &heartbeats)) seen.push_back(k);
    return grpc::Status::OK;
  });
  ScriptedRunner runner(/*hold=*/true);
  WorkerLoop loop(Options(server), &runner);
  int code = -1;
  std::thread worker([&] { code = loop.Run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the job runs: heartbeats go on
  runner.Release();
  ASSERT_EQ(reported.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  loop.Drain();
  worker.join();
  EXPECT_EQ(code, 0);
  EXPECT_THAT(seen, ElementsAre("started j1", "result j1", "--", "draining"));
  EXPECT_EQ(result.lease(), 7u);
  EXPECT_GE(heartbeats, 3);  // every 0.05 s for 0.5 s
  EXPECT_EQ(server.last_token(), "Bearer secret");
  EXPECT_EQ(loop.sessions(), 1);
}

TEST(WorkerLoop, DrainingMidJobFinishesAndReportsTheJob) {
  std::promise<void> started;
  std::vector<std::string> seen;
  int heartbeats = 0;
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream* s) {
    WorkerMessage m;
    EXPECT_TRUE(Next(s, &m));
    s->Write(Welcome(10));
    s->Write(Job("j1", 1));
    EXPECT_TRUE(Next(s, &m));
    EXPECT_EQ(Kind(m), "started j1");
    started.set_value();
    seen = Rest(s, &heartbeats);  // ends when the worker half-closes
    return grpc::Status::OK;
  });
  ScriptedRunner runner(/*hold=*/true);
  WorkerLoop loop(Options(server), &runner);
  int code = -1;
  std::thread worker([&] { code = loop.Run(); });
  ASSERT_EQ(started.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  loop.Drain();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  runner.Release();
  worker.join();
  EXPECT_EQ(code, 0);
  EXPECT_THAT(seen, ElementsAre("draining", "result j1"));
  EXPECT_THAT(runner.jobs(), ElementsAre("j1"));
}

TEST(WorkerLoop, ARefusedSessionEndsTheWorker) {
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream* s) {
    WorkerMessage m;
    EXPECT_TRUE(Next(s, &m));
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "profile h100_sxm is not served");
  });
  ScriptedRunner runner(false);
  WorkerLoop loop(Options(server), &runner);
  EXPECT_EQ(loop.Run(), 1);
  EXPECT_EQ(loop.sessions(), 1);
}

TEST(WorkerLoop, ReconnectsWhenTheServerEndsTheSession) {
  std::promise<void> third;
  FakeTilecd server([&](int index, grpc::ServerContext*, SessionStream* s) {
    WorkerMessage m;
    EXPECT_TRUE(Next(s, &m));
    EXPECT_TRUE(m.has_hello()) << "session " << index;
    if (index == 0) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting");
    if (index == 1) return grpc::Status::OK;
    s->Write(Welcome(10));
    third.set_value();
    while (Next(s, &m)) {
    }
    return grpc::Status::OK;
  });
  ScriptedRunner runner(false);
  WorkerLoop loop(Options(server), &runner);
  int code = -1;
  std::thread worker([&] { code = loop.Run(); });
  ASSERT_EQ(third.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  loop.Drain();
  worker.join();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(loop.sessions(), 3);
}

TEST(WorkerLoop, DrainsAtOnceWhileNoServerAnswers) {
  std::string address;
  {
    FakeTilecd gone([](int, grpc::ServerContext*, SessionStream*) { return grpc::Status::OK; });
    address = gone.address();
  }
  FakeTilecd unused([](int, grpc::ServerContext*, SessionStream*) { return grpc::Status::OK; });
  SessionOptions o = Options(unused);
  o.channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  ScriptedRunner runner(false);
  WorkerLoop loop(o, &runner);
  int code = -1;
  std::thread worker([&] { code = loop.Run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = std::chrono::steady_clock::now();
  loop.Drain();
  worker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(code, 0);
  EXPECT_GE(loop.sessions(), 2);  // it kept trying
}

TEST(ShouldReconnect, RetriesRestartsAndTheNetworkOnly) {
  for (auto c : {grpc::StatusCode::OK, grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::CANCELLED,
                 grpc::StatusCode::ABORTED, grpc::StatusCode::DEADLINE_EXCEEDED,
                 grpc::StatusCode::UNKNOWN}) {
    EXPECT_TRUE(ShouldReconnect(c)) << c;
  }
  for (auto c : {grpc::StatusCode::PERMISSION_DENIED, grpc::StatusCode::INVALID_ARGUMENT,
                 grpc::StatusCode::UNAUTHENTICATED, grpc::StatusCode::FAILED_PRECONDITION,
                 grpc::StatusCode::UNIMPLEMENTED, grpc::StatusCode::INTERNAL}) {
    EXPECT_FALSE(ShouldReconnect(c)) << c;
  }
}

}  // namespace
}  // namespace tilec::worker
