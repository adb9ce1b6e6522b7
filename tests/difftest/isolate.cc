// RunIsolated: RunCase in a forked child that reports each stage and result
// over a pipe, so that a crash or a hang of generated code costs one case.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>

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

CaseResult RunIsolated(const Case& c, const RunnerOptions& options) {
  auto start = std::chrono::steady_clock::now();
  int fds[2];
  if (pipe(fds) != 0) return RunCase(c, options);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    RunHooks hooks;
    hooks.on_start = [&](const std::string& stage) { WriteAll(fds[1], "S\t" + stage + "\n"); };
    hooks.on_result = [&](const TargetResult& r) {
      WriteAll(fds[1], absl::StrCat("R\t", r.target, "\t", static_cast<int>(r.outcome), "\t",
                                    Clean(r.category, 200), "\t", Clean(r.detail, 4000), "\n"));
    };
    RunCase(c, options, hooks);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  CaseResult result;
  result.seed = c.seed;
  std::string buffer, stage = "start";
  std::map<std::string, TargetResult> got;
  std::vector<std::string> order;
  bool timed_out = false;
  auto deadline = start + std::chrono::duration<double>(options.child_time_limit_s);
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    int ms =
        static_cast<int>(std::chrono::duration<double, std::milli>(deadline - now).count()) + 1;
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, ms);
    if (ready < 0) continue;
    if (ready == 0) continue;
    char chunk[4096];
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;  // EOF: the child finished or died
    buffer.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      std::vector<std::string> f = absl::StrSplit(line, '\t');
      if (f.size() >= 2 && f[0] == "S") stage = f[1];
      if (f.size() >= 5 && f[0] == "R") {
        TargetResult r{f[1], static_cast<Outcome>(std::atoi(f[2].c_str())), f[3], f[4]};
        if (!got.contains(r.target)) order.push_back(r.target);
        got[r.target] = r;
      }
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  // Every target the run would have reported.
  std::vector<std::string> names = options.targets;
  if (options.metamorphic && !c.alt_bindings.empty() && !options.targets.empty())
    names.push_back(options.targets[c.seed % options.targets.size()] + "+alt");
  for (const std::string& n : names) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), n) == options.only.end())
      continue;
    if (got.contains(n)) {
      result.targets.push_back(got[n]);
      continue;
    }
    TargetResult r;
    r.target = n;
    if (timed_out) {
      r.outcome = Outcome::kHang;
      r.category = absl::StrCat("timeout during ", stage == n ? "target" : stage);
      r.detail = absl::StrCat("the case ran past ", options.child_time_limit_s, " s in ", stage);
    } else if (WIFSIGNALED(status)) {
      r.outcome = Outcome::kCrash;
      r.category =
          absl::StrCat("signal ", WTERMSIG(status), " during ", stage == n ? "target" : stage);
      r.detail = absl::StrCat("the process died of signal ", WTERMSIG(status), " in ", stage);
    } else {
      r.outcome = Outcome::kInternalError;
      r.category = "no result";
      r.detail = absl::StrCat("the child exited with status ", WEXITSTATUS(status), " in ", stage);
    }
    result.targets.push_back(r);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tilec::difftest
