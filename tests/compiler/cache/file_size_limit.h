// A full disk without privileges: `fn` runs in a forked child under
// RLIMIT_FSIZE = `limit_bytes` with SIGXFSZ ignored, so that a write past
// the limit fails with EFBIG as a write to a full file system fails with
// ENOSPC, through the same system calls. Returns fn's result as the child's
// exit code (0..255), or -1 when the child did not exit normally.
#ifndef TILEC_TESTS_COMPILER_CACHE_FILE_SIZE_LIMIT_H_
#define TILEC_TESTS_COMPILER_CACHE_FILE_SIZE_LIMIT_H_

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace tilec::cache {

inline int RunWithFileSizeLimit(rlim_t limit_bytes, const std::function<int()>& fn) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{limit_bytes, limit_bytes};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(250);
    ::_exit(fn());
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tilec::cache

#endif  // TILEC_TESTS_COMPILER_CACHE_FILE_SIZE_LIMIT_H_
