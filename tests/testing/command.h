// Runs a shell command line as a user would and captures what it prints
// (stdout and stderr together) and its exit code, for tests of the CLIs.
#ifndef TILEC_TESTS_TESTING_COMMAND_H_
#define TILEC_TESTS_TESTING_COMMAND_H_

#include <string>

namespace tilec::testing {

struct CommandResult {
  int code = -1;    // the exit code; -1 when it did not exit normally
  std::string out;  // stdout and stderr
};

CommandResult RunShellCommand(const std::string& command_line);

}  // namespace tilec::testing

#endif  // TILEC_TESTS_TESTING_COMMAND_H_
