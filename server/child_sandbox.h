// The sandbox of a compile child: what SubprocessCompiler applies between
// fork and exec, so that a program (and its inline source) cannot make the
// compile read the server's files, reach the network or outlive tilecd.
//
// Protections, each reported active or not (the kernel or the privileges
// tilecd runs with may lack one; the others still apply):
// - empty environment: the child gets only CUDA_HOME/CUDA_PATH (where NVRTC
//   is) and TMPDIR (its own temp dir), nothing of tilecd's environment;
// - no network: a fresh network namespace (unshare(CLONE_NEWNET), with a user
//   namespace when not root); where Landlock ABI >= 4 is there, TCP bind and
//   connect are refused as well;
// - file system (Landlock): read and execute only the system libraries, the
//   CUDA toolkit and the child's binary, read /etc/ld.so.cache and /dev/null,
//   and read/write its own temp dir; nothing else (tilec's device headers are
//   compiled into the binary and handed to NVRTC in memory);
// - separate user: when tilecd runs as root, the child runs as `user`
//   (default `nobody`), with no supplementary groups;
// - parent-death signal: SIGKILL when tilecd dies (checked against the race
//   where tilecd died before it was set);
// - CPU limit: RLIMIT_CPU of the compile's time limit plus a second.
// The memory limit (RLIMIT_AS) is SubprocessCompiler's.
#ifndef TILEC_SERVER_CHILD_SANDBOX_H_
#define TILEC_SERVER_CHILD_SANDBOX_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tilec::server {

enum Protection : uint32_t {
  kEmptyEnvironment = 1u << 0,
  kNoNetwork = 1u << 1,
  kFileSystem = 1u << 2,
  kSeparateUser = 1u << 3,
  kParentDeathSignal = 1u << 4,
  kCpuLimit = 1u << 5,
};
inline constexpr uint32_t kAllProtections = (1u << 6) - 1;

struct SandboxConfig {
  bool isolate_network = true;
  bool restrict_files = true;
  // The user compiles run as when tilecd runs as root; empty: stay root.
  std::string user = "nobody";
  // More directories the child may read (and execute from).
  std::vector<std::string> extra_read_paths;
};

class ChildSandbox {
 public:
  // In the parent. `child_binary` is the file the child executes.
  static std::unique_ptr<ChildSandbox> Prepare(const SandboxConfig& config,
                                               const std::string& child_binary);
  ~ChildSandbox();

  // The child's environment, given its temp dir (NULL-terminated array in
  // the returned strings' order; build it before fork).
  std::vector<std::string> Environment(const std::string& temp_dir) const;

  // In the parent: makes `dir` the child's own (owned by the user the child
  // runs as).
  void HandOver(const std::string& dir) const;

  // After fork, in the child, before exec: only async-signal-safe calls.
  // `temp_dir_fd` (O_PATH) may be -1; `cpu_seconds` <= 0 for no CPU limit;
  // `parent` is the pid of the process that forked. Returns the protections
  // now active (kEmptyEnvironment is the exec's, counted by the caller).
  uint32_t Apply(int temp_dir_fd, int64_t cpu_seconds, pid_t parent) const;

  // Forks a child that applies the sandbox and reports what is active.
  uint32_t Probe() const;

  // "empty environment, no network, ...; inactive: file system (...)".
  std::string Describe(uint32_t active) const;

  int landlock_abi() const { return landlock_abi_; }

 private:
  ChildSandbox() = default;

  SandboxConfig config_;
  int landlock_abi_ = 0;  // 0: the kernel has no Landlock
  bool root_ = false;
  bool drop_user_ = false;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::vector<int> read_dirs_;   // O_PATH fds: read and execute beneath
  std::vector<int> read_files_;  // O_PATH fds: read and execute this file
  int dev_null_ = -1;
  std::vector<std::string> read_paths_;  // for Describe
  std::vector<std::string> passed_env_;  // CUDA_HOME=..., CUDA_PATH=...
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_CHILD_SANDBOX_H_
