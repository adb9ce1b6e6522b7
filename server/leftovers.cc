#include "server/leftovers.h"

#include <errno.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace tilec::server {

bool ProcessIsGone(pid_t pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

int RemoveLeftoversOfDeadProcesses(const std::string& dir, const std::string& marker,
                                   bool at_start) {
  std::error_code ec;
  std::vector<std::filesystem::path> doomed;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t at = name.find(marker);
    if (at == std::string::npos || (at_start && at != 0)) continue;
    const char* digits = name.c_str() + at + marker.size();
    char* end = nullptr;
    const long pid = std::strtol(digits, &end, 10);
    if (end == digits || pid <= 0 || pid > (1L << 22)) continue;
    if (ProcessIsGone(static_cast<pid_t>(pid))) doomed.push_back(entry.path());
  }
  int removed = 0;
  for (const auto& path : doomed) {
    if (std::filesystem::remove_all(path, ec) > 0 && !ec) ++removed;
  }
  return removed;
}

}  // namespace tilec::server
