#include "compiler/targets/cuda/sass.h"
#include "compiler/ir/sv.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "compiler/targets/cuda/nvrtc.h"

extern char** environ;

namespace tilec::cuda {
namespace {

// Abseil as installed has its own absl::string_view, distinct from
// std::string_view; the string helpers below take the former.

bool IsExecutable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (a path) with argv, capturing stdout and stderr.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return absl::InternalError(absl::StrCat("cannot run ", argv[0], ": ", std::strerror(spawned)));
  }
  ProcessResult result;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// The instruction of a SASS line ("  /*0090*/  @P0 HMMA.16816.F32 R4, ... ;"),
// without its predicate, or "" for other lines.
absl::string_view Instruction(absl::string_view line) {
  line = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::StartsWith(line, "/*")) return {};
  const size_t close = line.find("*/");
  if (close == absl::string_view::npos || close == 2) return {};
  for (size_t i = 2; i < close; ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(line[i]))) return {};
  }
  line = absl::StripLeadingAsciiWhitespace(line.substr(close + 2));
  if (absl::StartsWith(line, "@")) {
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) return {};
    line = absl::StripLeadingAsciiWhitespace(line.substr(space));
  }
  return line;
}

absl::string_view Opcode(absl::string_view instruction) {
  const size_t end = instruction.find_first_of(" ;");
  return instruction.substr(0, end);
}

}  // namespace

absl::StatusOr<std::string> FindCuobjdump() {
  std::vector<std::filesystem::path> tried;
  auto consider = [&](const std::filesystem::path& p) {
    tried.push_back(p);
    return IsExecutable(p);
  };
  if (const char* v = std::getenv("TILEC_CUOBJDUMP"); v != nullptr && *v != '\0') {
    if (consider(v)) return std::string(v);
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
      if (consider(std::filesystem::path(v) / "bin" / "cuobjdump")) {
        return tried.back().string();
      }
    }
  }
  if (consider("/usr/local/cuda/bin/cuobjdump")) return tried.back().string();
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      if (consider(std::filesystem::path(std::string(dir)) / "cuobjdump")) {
        return tried.back().string();
      }
    }
  }
#ifdef TILEC_CUOBJDUMP_DEFAULT
  if (consider(TILEC_CUOBJDUMP_DEFAULT)) return tried.back().string();
#endif
  std::vector<std::string> names;
  for (const auto& p : tried) names.push_back(p.string());
  return absl::FailedPreconditionError(absl::StrCat(
      "cuobjdump not found (install nvidia-cuda-cuobjdump with deploy/install-deps.sh or set "
      "TILEC_CUOBJDUMP); tried: ",
      absl::StrJoin(names, ", ")));
}

absl::StatusOr<std::string> DisassembleCubin(std::string_view cubin) {
  absl::StatusOr<std::string> tool = FindCuobjdump();
  if (!tool.ok()) return tool.status();
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string path = (dir / "tilec-cubin-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  size_t written = 0;
  while (written < cubin.size()) {
    const ssize_t n = write(fd, cubin.data() + written, cubin.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      unlink(path.c_str());
      return absl::InternalError(absl::StrCat("cannot write ", path, ": ", why));
    }
    written += static_cast<size_t>(n);
  }
  close(fd);
  absl::StatusOr<ProcessResult> run = RunProcess({*tool, "-sass", path});
  unlink(path.c_str());
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat(*tool, " -sass failed (exit code ", run->exit_code,
                                            "):\n", TrimToolLog(run->output)));
  }
  return std::move(run->output);
}

std::vector<SassFunction> SplitSassFunctions(std::string_view sass_in) {
  const absl::string_view sass = Sv(sass_in);
  std::vector<SassFunction> functions;
  for (absl::string_view line : absl::StrSplit(sass, '\n')) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(trimmed, "Function : ")) {
      functions.push_back(SassFunction{
          .name = std::string(absl::StripAsciiWhitespace(trimmed.substr(11))), .text = ""});
      continue;
    }
    if (!functions.empty()) absl::StrAppend(&functions.back().text, line, "\n");
  }
  return functions;
}

int CountOpcode(std::string_view sass_in, std::string_view opcode_in) {
  const absl::string_view sass = Sv(sass_in);
  const absl::string_view opcode = Sv(opcode_in);
  int count = 0;
  for (absl::string_view line : absl::StrSplit(sass, '\n')) {
    const absl::string_view op = Opcode(Instruction(line));
    if (op == opcode ||
        (absl::StartsWith(op, opcode) && op.size() > opcode.size() && op[opcode.size()] == '.')) {
      ++count;
    }
  }
  return count;
}

LocalMemoryTraffic CountLocalMemoryTraffic(std::string_view sass) {
  return LocalMemoryTraffic{.loads = CountOpcode(sass, "LDL"), .stores = CountOpcode(sass, "STL")};
}

}  // namespace tilec::cuda
