#include "tests/testing/command.h"

#include <sys/wait.h>

#include <cstdio>

namespace tilec::testing {

CommandResult RunShellCommand(const std::string& command_line) {
  CommandResult r;
  const std::string cmd = command_line + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace tilec::testing
