#include "server/subprocess_compiler.h"

#include <signal.h>

#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "compiler/ir/ir.h"
#include "gtest/gtest.h"

namespace tilec::server {
namespace {

cache::CompileJob Job(const std::string& target) {
  auto program = std::make_shared<ir::Program>();
  program->name = "kernel";
  program->body = ir::Seq({});
  cache::CompileJob job;
  job.program = program;
  job.program_hash = "abc123";
  job.target = target;
  return job;
}

SubprocessOptions Options() {
  SubprocessOptions o;
  o.worker_argv = {TEST_WORKER_BINARY};
  o.time_limit = absl::Seconds(2);
  o.max_parallel = 2;
  return o;
}

class SubprocessCompilerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::signal(SIGPIPE, SIG_IGN); }
};

TEST_F(SubprocessCompilerTest, ReturnsTheWorkersArtifact) {
  SubprocessCompiler c(Options());
  auto a = c.Compile(Job("sm_80"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->bytes, "cubin:abc123:sm_80:kernel");
  EXPECT_EQ(a->metadata_json, "{\"target\":\"sm_80\"}");
}

TEST_F(SubprocessCompilerTest, KeepsTheWorkersStatusCode) {
  SubprocessCompiler c(Options());
  auto a = c.Compile(Job("fail"));
  EXPECT_TRUE(absl::IsInvalidArgument(a.status())) << a.status();
  EXPECT_EQ(a.status().message(), "gemm.py:4:7: error: test diagnostic");
}

TEST_F(SubprocessCompilerTest, HangIsKilledAtTheTimeLimitAndOthersGoOn) {
  SubprocessOptions o = Options();
  o.time_limit = absl::Milliseconds(500);
  SubprocessCompiler c(o);
  absl::StatusOr<cache::Artifact> hung = absl::UnknownError("");
  absl::Time start = absl::Now();
  std::thread t([&] { hung = c.Compile(Job("hang")); });
  auto ok = c.Compile(Job("sm_90a"));  // runs beside the hung one
  t.join();
  EXPECT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(hung.status())) << hung.status();
  EXPECT_NE(hung.status().message().find("time limit"), absl::string_view::npos);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(SubprocessCompilerTest, RequestDeadlineStopsTheChild) {
  SubprocessCompiler c(Options());
  cache::CompileJob job = Job("hang");
  job.deadline = absl::Now() + absl::Milliseconds(200);
  auto a = c.Compile(job);
  EXPECT_TRUE(absl::IsDeadlineExceeded(a.status())) << a.status();
  EXPECT_NE(a.status().message().find("deadline"), absl::string_view::npos);
}

TEST_F(SubprocessCompilerTest, CancelKillsTheChild) {
  SubprocessCompiler c(Options());
  auto cancel = std::make_shared<cache::Cancellation>();
  cache::CompileJob job = Job("hang");
  job.cancel = cancel;
  std::thread t([&] {
    absl::SleepFor(absl::Milliseconds(100));
    cancel->Cancel();
  });
  absl::Time start = absl::Now();
  auto a = c.Compile(job);
  t.join();
  EXPECT_TRUE(absl::IsCancelled(a.status())) << a.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST_F(SubprocessCompilerTest, CrashAndSilentExitAreInternalErrors) {
  SubprocessCompiler c(Options());
  auto crash = c.Compile(Job("crash"));
  EXPECT_TRUE(absl::IsInternal(crash.status()));
  EXPECT_NE(crash.status().message().find("crashed"), absl::string_view::npos) << crash.status();
  auto silent = c.Compile(Job("silent"));
  EXPECT_TRUE(absl::IsInternal(silent.status()));
  EXPECT_NE(silent.status().message().find("without a result"), absl::string_view::npos);
  EXPECT_TRUE(c.Compile(Job("sm_80")).ok());  // still serving
}

TEST_F(SubprocessCompilerTest, MissingWorkerIsReported) {
  SubprocessOptions o = Options();
  o.worker_argv = {"/nonexistent/tilec-worker"};
  SubprocessCompiler c(o);
  auto a = c.Compile(Job("sm_80"));
  EXPECT_TRUE(absl::IsInternal(a.status()));
  EXPECT_NE(a.status().message().find("cannot run"), absl::string_view::npos) << a.status();
}

TEST_F(SubprocessCompilerTest, AtMostMaxParallelChildren) {
  SubprocessOptions o = Options();
  o.max_parallel = 1;
  o.time_limit = absl::Milliseconds(300);
  SubprocessCompiler c(o);
  std::thread t([&] { (void)c.Compile(Job("hang")); });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(c.running(), 1);
  absl::Time start = absl::Now();
  auto a = c.Compile(Job("sm_80"));  // waits for the slot
  EXPECT_TRUE(a.ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(150));
  t.join();
}

}  // namespace
}  // namespace tilec::server
