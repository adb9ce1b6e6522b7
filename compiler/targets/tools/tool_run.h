// Running an external compiler (clang++-19 for the emulator's host builds and
// for AMD code objects): files in, one process, its log out. Shared by
// compiler/targets/host/toolchain.cc and compiler/targets/amdgpu/toolchain.cc.
#ifndef TILEC_COMPILER_TARGETS_TOOLS_TOOL_RUN_H_
#define TILEC_COMPILER_TARGETS_TOOLS_TOOL_RUN_H_

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tilec::tools {

// Writes `text` to `path`, creating its folder; INTERNAL naming the path on failure.
absl::Status WriteFile(const std::filesystem::path& path, std::string_view text);

// The whole file; empty when it cannot be read.
std::string ReadAll(const std::string& path);

// Runs argv (argv[0] looked up on PATH) with stdout and stderr into
// `log_path`; its exit status (128 + signal when killed). FAILED_PRECONDITION
// naming `what` and argv[0] when it cannot be started.
absl::StatusOr<int> RunTool(const std::vector<std::string>& argv, const std::string& log_path,
                            std::string_view what);

// A compiler log cut to its first 3000 and last 2000 bytes.
std::string Trim(const std::string& log);

// The file `program` runs: itself when it has a '/', else the first match on
// PATH; empty when not found.
std::string ResolveProgram(const std::string& program);

}  // namespace tilec::tools

#endif  // TILEC_COMPILER_TARGETS_TOOLS_TOOL_RUN_H_
