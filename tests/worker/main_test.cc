// The tilec-worker binary against a loopback gRPC server (fake_tilecd.h):
// what main wires (the hello's device description and profile, the token
// file), SIGTERM draining with and without a job in flight, and the exit
// codes of a refused session and of a device that is not --profile.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tests/worker/fake_tilecd.h"

extern char** environ;

namespace tilec::worker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::tilec::testing::FakeTilecd;
using ::tilec::testing::Next;
using ::tilec::testing::SessionStream;
using ::tilec::v1::WorkerMessage;

// tilec-worker with `args`, its stdout and stderr going to `log`.
class WorkerProcess {
 public:
  WorkerProcess(const std::vector<std::string>& args, const std::string& log) : log_(log) {
    std::vector<std::string> argv = {TILEC_WORKER_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (std::string& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    EXPECT_EQ(posix_spawn(&pid_, c_argv[0], &files, nullptr, c_argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&files);
  }
  ~WorkerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void Signal(int sig) { ::kill(pid_, sig); }
  // The exit code; -1 when it did not exit within `seconds` (then killed).
  int Wait(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  std::string Log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

class WorkerMain : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("worker_main");
    ASSERT_FALSE(dir_.empty());
    std::ofstream(dir_ + "/token") << "tok123\n";
  }
  std::vector<std::string> Args(const FakeTilecd& server) {
    return {"--server",      server.address(), "--device", "emulator",     "--cache_dir",
            dir_ + "/cache", "--id",           "w1",       "--token_file", dir_ + "/token"};
  }
  std::string dir_;
};

TEST_F(WorkerMain, SaysHelloAndDrainsOnSigterm) {
  std::promise<void> welcomed;
  WorkerMessage hello;
  std::vector<std::string> rest;
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream* s) {
    EXPECT_TRUE(Next(s, &hello));
    s->Write(testing::Welcome(10));
    welcomed.set_value();
    WorkerMessage m;
    while (Next(s, &m)) {
      if (!m.has_heartbeat()) rest.push_back(m.has_draining() ? "draining" : "other");
    }
    return grpc::Status::OK;
  });
  WorkerProcess worker(Args(server), dir_ + "/log");
  ASSERT_EQ(welcomed.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << worker.Log();
  worker.Signal(SIGTERM);
  EXPECT_EQ(worker.Wait(20), 0) << worker.Log();
  EXPECT_EQ(hello.hello().worker_id(), "w1");
  EXPECT_EQ(hello.hello().profile(), "host_emulator");
  EXPECT_EQ(hello.hello().device().device(), "emulator");
  EXPECT_FALSE(hello.hello().device().name().empty());
  EXPECT_FALSE(hello.hello().device().toolkit_version().empty());
  EXPECT_EQ(server.last_token(), "Bearer tok123");
  EXPECT_THAT(rest, ElementsAre("draining"));
  EXPECT_THAT(worker.Log(), HasSubstr("SIGTERM: draining"));
}

TEST_F(WorkerMain, SigintMidJobReportsTheJobThenExits) {
  std::promise<void> started;
  std::vector<std::string> rest;
  tilec::v1::MeasureResult result;
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream* s) {
    WorkerMessage m;
    EXPECT_TRUE(Next(s, &m));
    s->Write(testing::Welcome(10));
    tilec::v1::WorkerCommand job;
    job.mutable_job()->set_job_id("j9");
    job.mutable_job()->set_artifact_digest(std::string(64, 'b'));  // and no metadata: fails
    s->Write(job);
    EXPECT_TRUE(Next(s, &m));
    EXPECT_EQ(m.started().job_id(), "j9");
    started.set_value();
    while (Next(s, &m)) {
      if (m.has_heartbeat()) continue;
      rest.push_back(m.has_draining() ? "draining" : m.has_result() ? "result" : "other");
      if (m.has_result()) result = m.result();
    }
    return grpc::Status::OK;
  });
  std::vector<std::string> args = Args(server);
  args.insert(args.end(), {"--test_job_delay_s", "1"});
  WorkerProcess worker(args, dir_ + "/log");
  ASSERT_EQ(started.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << worker.Log();
  worker.Signal(SIGINT);  // within the job's second of delay
  EXPECT_EQ(worker.Wait(20), 0) << worker.Log();
  EXPECT_THAT(rest, ElementsAre("draining", "result"));
  EXPECT_EQ(result.job_id(), "j9");
  EXPECT_EQ(result.code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(result.message(), HasSubstr("the job's artifact metadata"));
  EXPECT_THAT(worker.Log(), HasSubstr("TEST-ONLY fault injection is on"));
  EXPECT_THAT(worker.Log(), HasSubstr("job j9 config"));
}

TEST_F(WorkerMain, ARefusedSessionExitsOne) {
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream* s) {
    WorkerMessage m;
    EXPECT_TRUE(Next(s, &m));
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "profile host_emulator is refused");
  });
  WorkerProcess worker(Args(server), dir_ + "/log");
  EXPECT_EQ(worker.Wait(20), 1) << worker.Log();
  EXPECT_THAT(worker.Log(),
              HasSubstr("the server ended the session: INVALID_ARGUMENT: profile host_emulator "
                        "is refused"));
}

TEST_F(WorkerMain, RefusesAProfileTheDeviceIsNot) {
  FakeTilecd server([&](int, grpc::ServerContext*, SessionStream*) {
    ADD_FAILURE() << "the worker must not connect";
    return grpc::Status::OK;
  });
  std::vector<std::string> args = Args(server);
  args.insert(args.end(), {"--profile", "h200"});
  WorkerProcess worker(args, dir_ + "/log");
  EXPECT_EQ(worker.Wait(20), 2) << worker.Log();
  EXPECT_THAT(worker.Log(), HasSubstr("matches profile host_emulator, not h200"));
}

TEST_F(WorkerMain, UsageErrorsExitTwo) {
  WorkerProcess worker({"--device", "emulator", "--gpu", "1"}, dir_ + "/log");
  EXPECT_EQ(worker.Wait(20), 2) << worker.Log();
  EXPECT_THAT(worker.Log(), HasSubstr("tilec-worker: unknown flag --gpu"));
}

}  // namespace
}  // namespace tilec::worker
