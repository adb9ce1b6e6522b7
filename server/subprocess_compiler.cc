#include "server/subprocess_compiler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/ir/proto_convert.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::server {
namespace {

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::StatusOr<cache::Artifact> SubprocessCompiler::Compile(const cache::CompileJob& job) {
  waiting_.fetch_add(1);
  {
    absl::MutexLock lock(&mu_);
    auto free_slot = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return slots_used_ < options_.max_parallel;
    };
    while (!mu_.AwaitWithTimeout(absl::Condition(&free_slot), absl::Milliseconds(50))) {
      bool cancelled = job.cancel != nullptr && job.cancel->cancelled();
      if (cancelled || absl::Now() >= job.deadline) {
        waiting_.fetch_sub(1);
        return cancelled ? absl::CancelledError("the compile was cancelled while queued")
                         : absl::DeadlineExceededError("the deadline passed while queued");
      }
    }
    ++slots_used_;
  }
  waiting_.fetch_sub(1);
  running_.fetch_add(1);
  absl::StatusOr<cache::Artifact> result = RunChild(job);
  running_.fetch_sub(1);
  absl::MutexLock lock(&mu_);
  --slots_used_;
  return result;
}

absl::StatusOr<cache::Artifact> SubprocessCompiler::RunChild(const cache::CompileJob& job) {
  if (job.program == nullptr) return absl::InternalError("compiler bug: job without a program");
  tilec::v1::WorkerRequest request;
  *request.mutable_program() = ir::ToProto(*job.program);
  request.set_program_hash(job.program_hash);
  request.set_target(job.target);
  request.mutable_options()->set_line_info(job.options.line_info);
  request.mutable_options()->set_max_registers(job.options.max_registers);
  std::string request_bytes = request.SerializeAsString();

  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return absl::InternalError("cannot create a pipe");
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return absl::InternalError("cannot create a pipe");
  }
  std::vector<char*> argv;
  for (const std::string& a : options_.worker_argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  absl::Time start = absl::Now();
  pid_t pid = ::fork();
  if (pid < 0) return absl::UnavailableError(absl::StrCat("fork failed: ", strerror(errno)));
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    if (options_.memory_limit_bytes > 0) {
      rlimit lim{static_cast<rlim_t>(options_.memory_limit_bytes),
                 static_cast<rlim_t>(options_.memory_limit_bytes)};
      ::setrlimit(RLIMIT_AS, &lim);
    }
    ::execv(argv[0], argv.data());
    ::_exit(errno == ENOMEM ? 125 : 127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  Fd to_child{in_pipe[1]}, from_child{out_pipe[0]};

  absl::Time limit = std::min(start + options_.time_limit, job.deadline);
  // The child reads its whole request before writing anything, so a
  // blocking write cannot deadlock; a child that died early gives EPIPE
  // (SIGPIPE is ignored by the server).
  bool wrote = WriteAll(to_child.fd, request_bytes);
  to_child.Close();

  std::string output;
  enum { kRunning, kTimedOut, kCancelled } why = kRunning;
  while (true) {
    pollfd p{from_child.fd, POLLIN, 0};
    int r = ::poll(&p, 1, 20);
    if (r > 0) {
      char buf[1 << 16];
      ssize_t n = ::read(from_child.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EOF: the child closed stdout (exited)
      output.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (job.cancel != nullptr && job.cancel->cancelled()) {
      why = kCancelled;
      break;
    }
    if (absl::Now() >= limit) {
      why = kTimedOut;
      break;
    }
  }
  if (why != kRunning) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (why == kCancelled) return absl::CancelledError("the compile was cancelled");
  if (why == kTimedOut) {
    bool deadline = job.deadline <= start + options_.time_limit;
    return absl::DeadlineExceededError(
        deadline ? absl::StrCat("the request's deadline passed after ", seconds,
                                " s of compiling; the compile was stopped")
                 : absl::StrCat("the compile ran past its time limit of ",
                                absl::ToDoubleSeconds(options_.time_limit),
                                " s and was killed"));
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrCat("compiler bug: the compile worker crashed with ",
                                            strsignal(WTERMSIG(status)), " (signal ",
                                            WTERMSIG(status), ")"));
  }
  tilec::v1::WorkerResult result;
  if (!wrote || !result.ParseFromString(output) || output.empty()) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 125) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the compile worker cannot start within the memory limit of ",
          options_.memory_limit_bytes >> 20, " MiB"));
    }
    if (code == 127) {
      return absl::InternalError(absl::StrCat("cannot run the compile worker ",
                                              options_.worker_argv.empty()
                                                  ? std::string("(none configured)")
                                                  : options_.worker_argv[0]));
    }
    return absl::InternalError(absl::StrCat(
        "compiler bug: the compile worker exited with code ", code, " without a result"));
  }
  if (result.code() != 0) {
    return absl::Status(static_cast<absl::StatusCode>(result.code()), result.message());
  }
  cache::Artifact artifact;
  artifact.bytes = std::move(*result.mutable_artifact());
  artifact.metadata_json = std::move(*result.mutable_metadata_json());
  artifact.compile_seconds = result.compile_seconds();
  return artifact;
}

}  // namespace tilec::server
