// RunIsolated / RunIsolatedBatch: RunCases in a forked child that reports
// each stage and result over a pipe, so that a crash or a hang of generated
// code costs one case.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/difftest/runner.h"

namespace tilec::difftest {
namespace {

void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string Clean(std::string s, size_t limit) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\t' || ch == '\r') ch = ' ';
  }
  if (s.size() > limit) s.resize(limit);
  return s;
}

}  // namespace

// A temporary folder for one child's host builds, removed with this object.
struct ChildWorkDir {
  std::string path;
  ChildWorkDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/tilec-difftest-XXXXXX";
    if (mkdtemp(templ.data()) != nullptr) path = templ;
  }
  ~ChildWorkDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

std::vector<CaseResult> RunIsolatedBatch(const std::vector<Case>& cases,
                                         const RunnerOptions& parent_options) {
  auto start = std::chrono::steady_clock::now();
  ChildWorkDir work;
  RunnerOptions options = parent_options;
  if (!work.path.empty()) options.host_work_dir = work.path;
  int fds[2];
  if (pipe(fds) != 0) return RunCases(cases, options, {});
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    BatchHooks hooks;
    hooks.on_start = [&](size_t i, const std::string& stage) {
      WriteAll(fds[1], absl::StrCat("S\t", i, "\t", stage, "\n"));
    };
    hooks.on_result = [&](size_t i, const TargetResult& r) {
      WriteAll(fds[1],
               absl::StrCat("R\t", i, "\t", r.target, "\t", static_cast<int>(r.outcome), "\t",
                            Clean(r.category, 200), "\t", Clean(r.detail, 4000), "\n"));
    };
    RunCases(cases, options, hooks);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string buffer, stage = "start";
  size_t in_flight = 0;
  std::vector<std::map<std::string, TargetResult>> got(cases.size());
  bool timed_out = false;
  // Each stage (a frontend, an interpreter run, the host build, one
  // emulated variant) must report within the limit.
  auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(options.child_time_limit_s));
  auto deadline = start + limit;
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    int ms =
        static_cast<int>(std::chrono::duration<double, std::milli>(deadline - now).count()) + 1;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) continue;
    char chunk[4096];
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;  // EOF: the child finished or died
    buffer.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::vector<std::string> f = absl::StrSplit(buffer.substr(0, nl), '\t');
      buffer.erase(0, nl + 1);
      size_t i = 0;
      if (f.size() < 3 || !absl::SimpleAtoi(f[1], &i) || i >= cases.size()) continue;
      deadline = std::chrono::steady_clock::now() + limit;
      if (f[0] == "S") {
        in_flight = i;
        stage = f[2];
      } else if (f[0] == "R" && f.size() >= 6) {
        got[i][f[2]] = {f[2], static_cast<Outcome>(std::atoi(f[3].c_str())), f[4], f[5]};
      }
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  bool died = timed_out || WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  double each = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                static_cast<double>(cases.size());
  std::vector<CaseResult> results(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<std::string> names = ExpectedTargets(cases[i], options);
    bool complete = true;
    for (const std::string& n : names) complete &= got[i].contains(n);
    if (!complete && died && i != in_flight && cases.size() > 1) {
      // Not reached (or cut short) by a child that died elsewhere: on its own.
      results[i] = RunIsolatedBatch({cases[i]}, options)[0];
      continue;
    }
    CaseResult& r = results[i];
    r.seed = cases[i].seed;
    r.seconds = each;
    for (const std::string& n : names) {
      if (got[i].contains(n)) {
        r.targets.push_back(got[i][n]);
        continue;
      }
      TargetResult t;
      t.target = n;
      std::string where = stage == n ? "target" : stage;
      if (timed_out) {
        t.outcome = Outcome::kHang;
        t.category = "timeout during " + where;
        t.detail = absl::StrCat(stage, " ran past ", options.child_time_limit_s, " s");
      } else if (WIFSIGNALED(status)) {
        t.outcome = Outcome::kCrash;
        t.category = absl::StrCat("signal ", WTERMSIG(status), " during ", where);
        t.detail = absl::StrCat("the process died of signal ", WTERMSIG(status), " in ", stage);
      } else {
        t.outcome = Outcome::kInternalError;
        t.category = "no result";
        t.detail =
            absl::StrCat("the child exited with status ", WEXITSTATUS(status), " in ", stage);
      }
      r.targets.push_back(t);
    }
  }
  return results;
}

CaseResult RunIsolated(const Case& c, const RunnerOptions& options) {
  return RunIsolatedBatch({c}, options)[0];
}

}  // namespace tilec::difftest
