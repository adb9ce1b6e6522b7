#include "tests/testing/temp_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace tilec::testing {
namespace {

// Owns the directories made by this process; removes them at exit.
class TempDirs {
 public:
  ~TempDirs() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& dir : dirs_) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
  void Add(std::string dir) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.push_back(std::move(dir));
  }

 private:
  std::mutex mu_;
  std::vector<std::string> dirs_;
};

TempDirs& Dirs() {
  static TempDirs dirs;
  return dirs;
}

}  // namespace

std::string MakeTempDir(std::string_view prefix) {
  const char* tmp = ::getenv("TMPDIR");
  std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" +
                     std::string(prefix) + "_XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return "";
  Dirs().Add(tmpl);
  return tmpl;
}

}  // namespace tilec::testing
