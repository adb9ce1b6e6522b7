// Runs the real tilec CLI binary for an end-to-end test and captures its
// exit code, stdout and stderr.
#ifndef TILEC_TESTS_E2E_CLI_PROCESS_H_
#define TILEC_TESTS_E2E_CLI_PROCESS_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {

struct RunResult {
  int code = -1;
  std::string out, err;
};

// Runs `binary` with `args` (no shell), TILEC_SERVER and TILEC_TOKEN unset,
// from the source folder so example paths are relative.
inline RunResult RunBinary(const std::string& binary, const std::vector<std::string>& args) {
  std::string dir = MakeTempDir("run");
  std::string out_path = dir + "/out", err_path = dir + "/err";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::unsetenv("TILEC_SERVER");
    ::unsetenv("TILEC_TOKEN");
    if (::chdir(TILEC_SOURCE_DIR) != 0) ::_exit(126);
    std::FILE* o = std::freopen(out_path.c_str(), "w", stdout);
    std::FILE* e = std::freopen(err_path.c_str(), "w", stderr);
    if (o == nullptr || e == nullptr) ::_exit(126);
    std::vector<std::string> full = {binary};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : full) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  RunResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

// Runs the tilec CLI as RunBinary does.
inline RunResult RunTilec(const std::vector<std::string>& args) {
  return RunBinary(TILEC_BINARY, args);
}

// True when `err` starts with "<path>:<line>:<col>".
inline bool Located(const std::string& err, const std::string& path) {
  if (err.rfind(path + ":", 0) != 0) return false;
  size_t i = path.size() + 1, digits = 0;
  while (i < err.size() && std::isdigit(static_cast<unsigned char>(err[i]))) ++i, ++digits;
  if (digits == 0 || i >= err.size() || err[i] != ':') return false;
  return i + 1 < err.size() && std::isdigit(static_cast<unsigned char>(err[i + 1]));
}

}  // namespace tilec::e2e

#endif  // TILEC_TESTS_E2E_CLI_PROCESS_H_
