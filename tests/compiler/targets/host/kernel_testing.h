// Helpers of the emulator tests that run hand-written kernels: the module
// built from a test's kernel source (once per process), the "file:line:"
// location of a `// @name` marker in that source, as the emulator's fault
// messages print it, and a status message search.
//
//   constexpr char kKernels[] = R"cu(... x[i] = 0;  // @store ...)cu";
//   const absl::StatusOr<HostModule>& Module() { return CompileOnce(kKernels, "k.cu"); }
//   EXPECT_TRUE(Contains(status, " at " + MarkerLine(kKernels, "k.cu", "store")));
//
// ASSERT_MODULE() asserts that the Module() in scope compiled.
#ifndef TILEC_TESTS_COMPILER_TARGETS_HOST_KERNEL_TESTING_H_
#define TILEC_TESTS_COMPILER_TARGETS_HOST_KERNEL_TESTING_H_

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/targets/host/toolchain.h"
#include "gtest/gtest.h"

namespace tilec::host {

// `source` built by CompileHost with options.source_name = `source_name`,
// the first time a test asks for it; later calls with the same text return
// the same module. The modules live until the process ends (never unloaded,
// so no test outlives its kernels); their build directories are removed at
// exit. Not thread-safe (tests ask from the main thread).
inline const absl::StatusOr<HostModule>& CompileOnce(const std::string& source,
                                                     const std::string& source_name = "kernel.cu") {
  struct RemoveAtExit {
    std::vector<std::string> dirs;
    ~RemoveAtExit() {
      std::error_code ec;
      for (const std::string& d : dirs) std::filesystem::remove_all(d, ec);
    }
  };
  static RemoveAtExit cleanup;
  static auto* modules = new std::map<std::string, absl::StatusOr<HostModule>>();
  auto it = modules->find(source);
  if (it == modules->end()) {
    HostOptions options;
    options.source_name = source_name;
    it = modules->emplace(source, CompileHost(source, options)).first;
    if (it->second.ok()) cleanup.dirs.push_back(it->second->dir());
  }
  return it->second;
}

// "<source_name>:<line>:" for the line of `source` holding `// @<marker>`;
// a marker not in the source fails the test.
inline std::string MarkerLine(std::string_view source, std::string_view source_name,
                              std::string_view marker) {
  const size_t at = source.find("// @" + std::string(marker));
  EXPECT_NE(at, std::string_view::npos) << marker;
  int line = 1;
  for (size_t i = 0; i < at && i < source.size(); ++i) line += source[i] == '\n';
  return std::string(source_name) + ":" + std::to_string(line) + ":";
}

// Whether the status message contains `text`.
inline bool Contains(const absl::Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

}  // namespace tilec::host

#define ASSERT_MODULE() ASSERT_TRUE(Module().ok()) << Module().status()

#endif  // TILEC_TESTS_COMPILER_TARGETS_HOST_KERNEL_TESTING_H_
