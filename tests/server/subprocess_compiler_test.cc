#include "server/subprocess_compiler.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/ir/ir.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

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
  o.child_argv = {TEST_COMPILE_CHILD_BINARY};
  o.time_limit = absl::Seconds(2);
  o.max_parallel = 2;
  return o;
}

class SubprocessCompilerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::signal(SIGPIPE, SIG_IGN); }
};

TEST_F(SubprocessCompilerTest, ReturnsTheChildsArtifact) {
  SubprocessCompiler c(Options());
  auto a = c.Compile(Job("sm_80"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->bytes, "cubin:abc123:sm_80:kernel");
  EXPECT_EQ(a->metadata_json, "{\"target\":\"sm_80\"}");
}

TEST_F(SubprocessCompilerTest, KeepsTheChildsStatusCode) {
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

TEST_F(SubprocessCompilerTest, AChildKilledFromOutsideIsUnavailableNotACompilerBug) {
  SubprocessCompiler c(Options());
  auto killed = c.Compile(Job("killed"));
  EXPECT_TRUE(absl::IsUnavailable(killed.status())) << killed.status();
  EXPECT_NE(killed.status().message().find("killed (SIGKILL) from outside tilecd"),
            absl::string_view::npos)
      << killed.status();
  EXPECT_EQ(killed.status().message().find("compiler bug"), absl::string_view::npos);
  EXPECT_TRUE(c.Compile(Job("sm_80")).ok());  // still serving
}

TEST_F(SubprocessCompilerTest, StartingRemovesTheFoldersOfAKilledServersCompiles) {
  // A tilecd killed mid-compile leaves its children's folders
  // (tilec-compile-<its pid>-...); the next one removes them, and never the
  // folders of a server still running.
  const std::string tmp = tilec::testing::MakeTempDir("leftovers");
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  const std::string gone = absl::StrCat(tmp, "/tilec-compile-", dead, "-abcdef");
  const std::string alive = absl::StrCat(tmp, "/tilec-compile-", ::getppid(), "-abcdef");
  const std::string other = tmp + "/tilec-compile-notapid";
  for (const std::string& d : {gone, alive, other}) {
    ASSERT_TRUE(std::filesystem::create_directories(d + "/sub"));
    std::ofstream(d + "/sub/out.cubin") << "partial";
  }
  const char* saved = ::getenv("TMPDIR");
  const std::string saved_value = saved != nullptr ? saved : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  { SubprocessCompiler c(Options()); }
  if (saved != nullptr) {
    ::setenv("TMPDIR", saved_value.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  EXPECT_FALSE(std::filesystem::exists(gone));
  EXPECT_TRUE(std::filesystem::exists(alive + "/sub/out.cubin"));
  EXPECT_TRUE(std::filesystem::exists(other + "/sub/out.cubin"));
}

TEST_F(SubprocessCompilerTest, MissingChildBinaryIsReported) {
  SubprocessOptions o = Options();
  o.child_argv = {"/nonexistent/tilec-compile-child"};
  SubprocessCompiler c(o);
  auto a = c.Compile(Job("sm_80"));
  EXPECT_TRUE(absl::IsInternal(a.status()));
  EXPECT_NE(a.status().message().find("cannot run"), absl::string_view::npos) << a.status();
}

TEST_F(SubprocessCompilerTest, ChildThatCannotStartIsReportedInItsOwnWords) {
  // The dynamic loader exits 127 with its reason on stderr when a library is
  // missing; a script stands in for it (so the file-system sandbox, which
  // would keep /bin/sh out of reach, is off).
  const std::string dir = ::tilec::testing::MakeTempDir("no_start");
  ASSERT_FALSE(dir.empty());
  const std::string script = dir + "/child.sh";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\necho 'child.sh: error while loading shared libraries: libgrpc++.so.1.51: "
         "cannot open shared object file' >&2\nexit 127\n";
  }
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  SubprocessOptions o = Options();
  o.child_argv = {script};
  o.sandbox.restrict_files = false;
  o.sandbox.user = "";
  SubprocessCompiler c(o);
  auto a = c.Compile(Job("sm_80"));
  EXPECT_TRUE(absl::IsInternal(a.status()));
  EXPECT_NE(a.status().message().find("cannot run the compile child"), absl::string_view::npos)
      << a.status();
  EXPECT_NE(a.status().message().find("libgrpc++.so.1.51: cannot open shared object file"),
            absl::string_view::npos)
      << a.status();
  std::filesystem::remove_all(dir);
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

// --- The sandbox (child_sandbox.h) --------------------------------------

bool KernelHasLandlock() {
  return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1 /* VERSION */) > 0;
}

std::string Probe(SubprocessCompiler& c, const std::string& path) {
  cache::CompileJob job = Job("probe");
  std::const_pointer_cast<ir::Program>(job.program)->name = path;
  auto a = c.Compile(job);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? a->bytes : "";
}

TEST_F(SubprocessCompilerTest, ChildHasAnEmptyEnvironmentAndOnlyItsFiles) {
  ::setenv("TILEC_TEST_SECRET", "hunter2", 1);
  ::unsetenv("CUDA_HOME");
  ::unsetenv("CUDA_PATH");
  ::unsetenv("LD_LIBRARY_PATH");
  SubprocessCompiler c(Options());
  std::string own = Probe(c, TEST_COMPILE_CHILD_BINARY);
  EXPECT_NE(own.find("env=0;read=0;"), std::string::npos) << own;
  EXPECT_NE(own.find(";cwd_write=0;"), std::string::npos) << own;  // its temp dir
  EXPECT_NE(own.find(";cpu=3;"), std::string::npos) << own;        // the 2 s limit + 1
  EXPECT_NE(c.protections() & kEmptyEnvironment, 0u);
  EXPECT_NE(c.protections() & kParentDeathSignal, 0u);
  EXPECT_NE(c.protections() & kCpuLimit, 0u);
  EXPECT_EQ(c.DescribeProtections().rfind("empty environment", 0), 0) << c.DescribeProtections();
  if (::geteuid() == 0) {
    EXPECT_NE(own.find(";uid=65534"), std::string::npos) << own;  // nobody
    EXPECT_NE(c.protections() & kSeparateUser, 0u);
  }
  if (!KernelHasLandlock()) {
    GTEST_SKIP() << "this kernel has no Landlock (landlock_create_ruleset fails): the file "
                    "system part of the sandbox is inactive here";
  }
  EXPECT_NE(c.protections() & kFileSystem, 0u) << c.DescribeProtections();
  // World-readable files outside the sandbox are out of reach.
  for (const char* path : {"/etc/passwd", "/etc/hostname", "/proc/self/environ"}) {
    std::string r = Probe(c, path);
    EXPECT_NE(r.find(";read=13;"), std::string::npos) << path << ": " << r;  // EACCES
  }
}

TEST_F(SubprocessCompilerTest, ChildKeepsTheLibraryPathAndMayReadIt) {
  // tilecd installed with its libraries outside the system's directories
  // runs its compile children (the same binary) through LD_LIBRARY_PATH: the
  // child gets the variable and may read those directories.
  const std::string dir = ::tilec::testing::MakeTempDir("lib_path");
  ASSERT_FALSE(dir.empty());
  const std::string lib = dir + "/libtilec_test.so";
  std::ofstream(lib) << "not really a library";
  ::chmod(dir.c_str(), 0755);
  ::chmod(lib.c_str(), 0644);
  ::unsetenv("CUDA_HOME");
  ::unsetenv("CUDA_PATH");
  ::unsetenv("LD_LIBRARY_PATH");
  std::string without;
  {
    SubprocessCompiler c(Options());
    without = Probe(c, lib);
  }
  ::setenv("LD_LIBRARY_PATH", dir.c_str(), 1);
  std::string with;
  std::string described;
  {
    SubprocessCompiler c(Options());
    with = Probe(c, lib);
    described = c.DescribeProtections();
  }
  ::unsetenv("LD_LIBRARY_PATH");
  std::filesystem::remove_all(dir);
  EXPECT_NE(without.find("env=0;"), std::string::npos) << without;
  EXPECT_NE(with.find("env=1;read=0;"), std::string::npos) << with;
  if (!KernelHasLandlock()) {
    GTEST_SKIP() << "this kernel has no Landlock: the file system part of the sandbox is "
                    "inactive here";
  }
  EXPECT_NE(without.find(";read=13;"), std::string::npos) << without;  // EACCES
  EXPECT_NE(described.find(dir), std::string::npos) << described;
}

TEST_F(SubprocessCompilerTest, ChildDiesWithItsParent) {
  // This process adopts orphans, so it can wait for the compile child once
  // its parent is killed.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  // The killed parent cannot remove its compile directory: it goes under a
  // directory this test removes.
  const std::string scratch = ::tilec::testing::MakeTempDir("killed_parent");
  ASSERT_FALSE(scratch.empty());
  pid_t middle = ::fork();
  if (middle == 0) {
    ::setenv("TMPDIR", scratch.c_str(), 1);
    SubprocessOptions o = Options();
    o.time_limit = absl::Seconds(60);
    SubprocessCompiler c(o);
    (void)c.Compile(Job("hang"));
    ::_exit(0);
  }
  ASSERT_GT(middle, 0);
  // The compile child: the middle process's child running the compile child.
  pid_t child = -1;
  for (int i = 0; i < 200 && child < 0; ++i) {
    absl::SleepFor(absl::Milliseconds(25));
    std::ifstream children(absl::StrCat("/proc/", middle, "/task/", middle, "/children"));
    pid_t pid;
    while (children >> pid) {
      std::ifstream cmdline(absl::StrCat("/proc/", pid, "/cmdline"));
      std::string argv0;
      std::getline(cmdline, argv0, '\0');
      if (argv0 == TEST_COMPILE_CHILD_BINARY) child = pid;
    }
  }
  ASSERT_GT(child, 0) << "the compile child never started";
  ASSERT_EQ(::kill(middle, SIGKILL), 0);
  int status;
  ASSERT_EQ(::waitpid(middle, &status, 0), middle);
  absl::Time killed = absl::Now();
  pid_t reaped = 0;
  while (reaped == 0 && absl::Now() - killed < absl::Seconds(3)) {
    reaped = ::waitpid(child, &status, WNOHANG);
    if (reaped == 0) absl::SleepFor(absl::Milliseconds(10));
  }
  if (reaped != child) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    FAIL() << "the compile child outlived its parent by 3 s";
  }
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_LT(absl::Now() - killed, absl::Seconds(2));
}

TEST_F(SubprocessCompilerTest, OutOfMemoryAbortIsResourceExhausted) {
  SubprocessOptions o = Options();
  o.memory_limit_bytes = int64_t{256} << 20;
  SubprocessCompiler c(o);
  auto a = c.Compile(Job("alloc"));
  EXPECT_TRUE(absl::IsResourceExhausted(a.status())) << a.status();
  EXPECT_NE(a.status().message().find("memory limit of 256 MiB"), absl::string_view::npos)
      << a.status();
  // Without a memory limit an abort is still a crash.
  EXPECT_TRUE(absl::IsInternal(c.Compile(Job("crash")).status()));
}

}  // namespace
}  // namespace tilec::server
