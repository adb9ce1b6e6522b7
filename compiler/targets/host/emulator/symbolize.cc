#include "compiler/targets/host/emulator/symbolize.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace tilec::host {
namespace {

// Runs argv and returns its standard output; empty when it cannot run.
std::string Capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  if (err == 0) {
    char buf[4096];
    for (;;) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n > 0) {
        out.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close(fds[0]);
  return out;
}

std::string Basename(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

std::string SourceLine(const void* pc, const std::string& symbolizer) {
  if (pc == nullptr || symbolizer.empty()) return "";
  Dl_info info{};
  if (dladdr(pc, &info) == 0 || info.dli_fname == nullptr || info.dli_fbase == nullptr) return "";
  const uintptr_t offset =
      reinterpret_cast<uintptr_t>(pc) - 1 - reinterpret_cast<uintptr_t>(info.dli_fbase);
  const std::string out = Capture(
      {symbolizer, "--inlining", "--obj", info.dli_fname, absl::StrCat("0x", absl::Hex(offset))});
  // Pairs of lines: function, then file:line:col; innermost frame first.
  std::vector<std::string> frames;
  std::vector<absl::string_view> lines = absl::StrSplit(out, '\n');
  for (size_t i = 1; i < lines.size(); i += 2) {
    const absl::string_view loc = lines[i];
    if (loc.empty() || absl::StartsWith(loc, "??")) continue;
    std::vector<absl::string_view> parts = absl::StrSplit(loc, ':');
    if (parts.size() < 3 || parts[parts.size() - 2] == "0") continue;
    const absl::string_view file = loc.substr(
        0, loc.size() - parts[parts.size() - 1].size() - parts[parts.size() - 2].size() - 2);
    frames.push_back(
        absl::StrCat(Basename(file), ":", parts[parts.size() - 2], ":", parts[parts.size() - 1]));
  }
  for (const std::string& f : frames) {
    if (absl::StrContains(f, ".cu:")) return f;
  }
  return frames.empty() ? "" : frames.front();
}

}  // namespace tilec::host
