#include "server/subprocess_compiler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/ir/proto_convert.h"
#include "proto/tilec/v1/service.pb.h"
#include "server/leftovers.h"

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

bool Pipe(int fds[2]) { return ::pipe2(fds, O_CLOEXEC) == 0; }

std::filesystem::path TempBase() {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  return ec ? std::filesystem::path("/tmp") : base;
}

// A per-compile directory, the child's working directory, removed with all
// it holds when the compile is done. Its name carries tilecd's pid, so that
// the next tilecd removes those a killed one left (kTempDirMarker).
constexpr char kTempDirMarker[] = "tilec-compile-";
struct TempDir {
  std::string path;
  bool Create() {
    std::string tmpl =
        (TempBase() / absl::StrCat(kTempDirMarker, ::getpid(), "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) return false;
    path = tmpl;
    return true;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// Whether the child's stderr says that memory ran out: NVRTC and the C++
// runtime abort with these words when an allocation fails under RLIMIT_AS.
bool RanOutOfMemory(const std::string& errors) {
  for (const char* words : {"bad_alloc", "out of memory", "Out of memory", "Cannot allocate memory",
                            "failed to map segment", "memory allocation failed"}) {
    if (errors.find(words) != std::string::npos) return true;
  }
  return false;
}

// A crashed child's stderr goes to tilecd's log, not to the client: it may
// quote anything the compiler saw.
void LogChildErrors(const std::string& errors) {
  if (errors.empty()) return;
  std::string tail = errors.size() > 2000 ? errors.substr(errors.size() - 2000) : errors;
  std::fprintf(stderr, "tilecd: a compile child failed; its stderr ends with:\n%s\n", tail.c_str());
}

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

SubprocessCompiler::SubprocessCompiler(SubprocessOptions options)
    : options_(std::move(options)),
      sandbox_(ChildSandbox::Prepare(options_.sandbox,
                                     options_.child_argv.empty() ? "" : options_.child_argv[0])) {
  protections_.store(sandbox_->Probe());
  RemoveLeftoversOfDeadProcesses(TempBase().string(), kTempDirMarker, /*at_start=*/true);
}

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
  tilec::v1::CompileChildRequest request;
  *request.mutable_program() = ir::ToProto(*job.program);
  request.set_program_hash(job.program_hash);
  request.set_target(job.target);
  request.mutable_options()->set_line_info(job.options.line_info);
  request.mutable_options()->set_max_registers(job.options.max_registers);
  std::string request_bytes = request.SerializeAsString();

  TempDir temp;
  if (!temp.Create()) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a temp dir for the compile: ", strerror(errno)));
  }
  sandbox_->HandOver(temp.path);
  Fd temp_fd{::open(temp.path.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY)};

  int in_pipe[2], out_pipe[2], err_pipe[2], report_pipe[2];
  if (!Pipe(in_pipe)) return absl::InternalError("cannot create a pipe");
  Fd in_r{in_pipe[0]}, in_w{in_pipe[1]};
  if (!Pipe(out_pipe)) return absl::InternalError("cannot create a pipe");
  Fd out_r{out_pipe[0]}, out_w{out_pipe[1]};
  if (!Pipe(err_pipe)) return absl::InternalError("cannot create a pipe");
  Fd err_r{err_pipe[0]}, err_w{err_pipe[1]};
  if (!Pipe(report_pipe)) return absl::InternalError("cannot create a pipe");
  Fd report_r{report_pipe[0]}, report_w{report_pipe[1]};

  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& a : options_.child_argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env = sandbox_->Environment("");
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int64_t cpu_seconds = 0;
  if (options_.time_limit < absl::Hours(24 * 365)) {
    cpu_seconds = static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(options_.time_limit))) + 1;
  }
  const pid_t parent = ::getpid();
  absl::Time start = absl::Now();
  pid_t pid = ::fork();
  if (pid < 0) return absl::UnavailableError(absl::StrCat("fork failed: ", strerror(errno)));
  if (pid == 0) {
    ::dup2(in_r.fd, 0);
    ::dup2(out_w.fd, 1);
    ::dup2(err_w.fd, 2);
    if (options_.memory_limit_bytes > 0) {
      rlimit lim{static_cast<rlim_t>(options_.memory_limit_bytes),
                 static_cast<rlim_t>(options_.memory_limit_bytes)};
      ::setrlimit(RLIMIT_AS, &lim);
    }
    if (temp_fd.fd >= 0 && ::fchdir(temp_fd.fd) != 0) {
      // O_PATH fds cannot be fchdir'd on old kernels; the path works too.
      if (::chdir(temp.path.c_str()) != 0) ::_exit(127);
    }
    uint32_t active = sandbox_->Apply(temp_fd.fd, cpu_seconds, parent) | kEmptyEnvironment;
    ssize_t n = ::write(report_w.fd, &active, sizeof active);
    (void)n;
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(errno == ENOMEM ? 125 : 127);
  }
  in_r.Close();
  out_w.Close();
  err_w.Close();
  report_w.Close();
  {
    uint32_t active = 0;
    ssize_t n;
    while ((n = ::read(report_r.fd, &active, sizeof active)) < 0 && errno == EINTR) {
    }
    if (n == sizeof active) protections_.store(active);
  }

  absl::Time limit = std::min(start + options_.time_limit, job.deadline);
  // The child reads its whole request before writing anything, so a
  // blocking write cannot deadlock as long as stderr is drained; a child
  // that died early gives EPIPE (SIGPIPE is ignored by the server). stderr
  // is read on the side so that a chatty child cannot block on it.
  std::string errors;
  std::thread drain([&errors, fd = err_r.fd] {
    char buf[4096];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      errors.append(buf, static_cast<size_t>(n));
      if (errors.size() > 64 * 1024) errors.erase(0, errors.size() - 32 * 1024);  // keep the tail
    }
  });
  bool wrote = WriteAll(in_w.fd, request_bytes);
  in_w.Close();

  std::string output;
  enum { kRunning, kTimedOut, kCancelled } why = kRunning;
  while (true) {
    pollfd p{out_r.fd, POLLIN, 0};
    int r = ::poll(&p, 1, 20);
    if (r > 0) {
      char buf[1 << 16];
      ssize_t n = ::read(out_r.fd, buf, sizeof buf);
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
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  drain.join();
  const double cpu_used =
      static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
      1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (why == kCancelled) return absl::CancelledError("the compile was cancelled");
  if (why == kTimedOut) {
    bool deadline = job.deadline <= start + options_.time_limit;
    return absl::DeadlineExceededError(
        deadline ? absl::StrCat("the request's deadline passed after ", seconds,
                                " s of compiling; the compile was stopped")
                 : absl::StrCat("the compile ran past its time limit of ",
                                absl::ToDoubleSeconds(options_.time_limit), " s and was killed"));
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    // Past the soft limit the kernel sends SIGXCPU, past the hard one SIGKILL.
    if (cpu_seconds > 0 &&
        (sig == SIGXCPU || (sig == SIGKILL && cpu_used >= static_cast<double>(cpu_seconds)))) {
      return absl::DeadlineExceededError(absl::StrCat("the compile used up its CPU time limit of ",
                                                      cpu_seconds, " s and was killed"));
    }
    if (options_.memory_limit_bytes > 0 && RanOutOfMemory(errors)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the compile ran out of its memory limit of ", options_.memory_limit_bytes >> 20,
          " MiB and was stopped (the compiler aborted with ", strsignal(sig), ")"));
    }
    if (sig == SIGKILL) {
      // Nothing in the child raises SIGKILL: someone outside tilecd sent it
      // (an operator, the kernel's out-of-memory killer). Retrying may work.
      LogChildErrors(errors);
      return absl::UnavailableError(absl::StrCat(
          "the compile child was killed (SIGKILL) from outside tilecd after ", seconds,
          " s, by an operator or the kernel's out-of-memory killer; the compile can be retried"));
    }
    LogChildErrors(errors);
    return absl::InternalError(absl::StrCat("compiler bug: the compile child crashed with ",
                                            strsignal(sig), " (signal ", sig, ")"));
  }
  tilec::v1::CompileChildResult result;
  if (!wrote || !result.ParseFromString(output) || output.empty()) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 125) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the compile child cannot start within the memory limit of ",
                       options_.memory_limit_bytes >> 20, " MiB"));
    }
    if (code == 126) {
      return absl::InternalError(
          absl::StrCat("cannot switch the compile child to user ", options_.sandbox.user));
    }
    if (code == 127) {
      // exec failed, or the dynamic loader could not start the binary (it
      // says why on stderr: a library it cannot find or read).
      std::string why(absl::StripAsciiWhitespace(errors));
      if (size_t nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
      if (why.size() > 300) why = why.substr(why.size() - 300);
      return absl::InternalError(absl::StrCat(
          "cannot run the compile child ",
          options_.child_argv.empty() ? std::string("(none configured)") : options_.child_argv[0],
          why.empty() ? "" : ": ", why));
    }
    if (options_.memory_limit_bytes > 0 && RanOutOfMemory(errors)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the compile ran out of its memory limit of ",
                       options_.memory_limit_bytes >> 20, " MiB and was stopped"));
    }
    LogChildErrors(errors);
    return absl::InternalError(absl::StrCat("compiler bug: the compile child exited with code ",
                                            code, " without a result"));
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
