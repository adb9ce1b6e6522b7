#include "server/child_sandbox.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tilec::server {
namespace {

// The ruleset attribute as the running kernel may read it: fields past
// handled_access_fs exist from Landlock ABI 4 (net) and 6 (scoped); the
// size passed tells the kernel which ones are there.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

constexpr uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5
constexpr uint64_t kNetBindTcp = 1ULL << 0;   // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;
constexpr uint64_t kReadFile = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE;
constexpr uint64_t kReadDir = kReadFile | LANDLOCK_ACCESS_FS_READ_DIR;

uint64_t HandledFs(int abi) {
  uint64_t fs = (1ULL << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) fs |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) fs |= kFsTruncate;
  if (abi >= 5) fs |= kFsIoctlDev;
  return fs;
}

int LandlockAbi() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

bool AddRule(int ruleset, int fd, uint64_t access) {
  landlock_path_beneath_attr rule{};
  rule.allowed_access = access;
  rule.parent_fd = fd;
  return ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
}

std::string RealPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(path, ec);
  return ec ? "" : p.string();
}

}  // namespace

std::unique_ptr<ChildSandbox> ChildSandbox::Prepare(const SandboxConfig& config,
                                                    const std::string& child_binary) {
  std::unique_ptr<ChildSandbox> s(new ChildSandbox());
  s->config_ = config;
  s->root_ = ::geteuid() == 0;
  if (s->root_ && !config.user.empty()) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(config.user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 &&
        found != nullptr && found->pw_uid != 0) {
      s->drop_user_ = true;
      s->uid_ = found->pw_uid;
      s->gid_ = found->pw_gid;
    }
  }
  // LD_LIBRARY_PATH too: the child is tilecd's own binary, and an install
  // whose libraries lie outside the system's directories (a bundle, a
  // prefix) finds them only through it.
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
      s->passed_env_.push_back(absl::StrCat(var, "=", v));
    }
  }
  if (config.restrict_files) s->landlock_abi_ = LandlockAbi();
  if (s->landlock_abi_ > 0) {
    std::set<std::string> dirs;
    std::vector<std::string> candidates = {"/usr/lib", "/usr/lib64", "/lib", "/lib64",
                                           "/usr/local/cuda"};
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* v = std::getenv(var); v != nullptr && *v != '\0') candidates.push_back(v);
    }
    if (const char* v = std::getenv("LD_LIBRARY_PATH"); v != nullptr) {
      for (absl::string_view d : absl::StrSplit(v, ':', absl::SkipEmpty())) {
        candidates.push_back(std::string(d));
      }
    }
    for (const std::string& p : config.extra_read_paths) candidates.push_back(p);
    for (const std::string& c : candidates) {
      std::string real = RealPath(c);
      if (real.empty() || !std::filesystem::is_directory(real) || !dirs.insert(real).second) {
        continue;
      }
      int fd = ::open(real.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY);
      if (fd < 0) continue;
      s->read_dirs_.push_back(fd);
      s->read_paths_.push_back(real);
    }
    for (const std::string& f : {RealPath(child_binary), RealPath("/etc/ld.so.cache")}) {
      if (f.empty()) continue;
      int fd = ::open(f.c_str(), O_PATH | O_CLOEXEC);
      if (fd < 0) continue;
      s->read_files_.push_back(fd);
      s->read_paths_.push_back(f);
    }
    s->dev_null_ = ::open("/dev/null", O_PATH | O_CLOEXEC);
  }
  return s;
}

ChildSandbox::~ChildSandbox() {
  for (int fd : read_dirs_) ::close(fd);
  for (int fd : read_files_) ::close(fd);
  if (dev_null_ >= 0) ::close(dev_null_);
}

std::vector<std::string> ChildSandbox::Environment(const std::string& temp_dir) const {
  std::vector<std::string> env = passed_env_;
  if (!temp_dir.empty()) env.push_back(absl::StrCat("TMPDIR=", temp_dir));
  return env;
}

void ChildSandbox::HandOver(const std::string& dir) const {
  if (drop_user_) {
    if (::chown(dir.c_str(), uid_, gid_) != 0) {
      // The child then cannot write its temp dir; NVRTC works in memory.
    }
  }
}

uint32_t ChildSandbox::Apply(int temp_dir_fd, int64_t cpu_seconds, pid_t parent) const {
  uint32_t active = 0;
  if (cpu_seconds > 0) {
    rlimit cpu{static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds + 1)};
    if (::setrlimit(RLIMIT_CPU, &cpu) == 0) active |= kCpuLimit;
  }
  if (config_.isolate_network) {
    int flags = root_ ? CLONE_NEWNET : (CLONE_NEWUSER | CLONE_NEWNET);
    if (::unshare(flags) == 0) active |= kNoNetwork;
  }
  if (drop_user_) {
    bool ok = ::syscall(SYS_setgroups, 0, nullptr) == 0 &&
              ::syscall(SYS_setresgid, gid_, gid_, gid_) == 0 &&
              ::syscall(SYS_setresuid, uid_, uid_, uid_) == 0;
    if (!ok) ::_exit(126);  // half-dropped privileges: never exec
    active |= kSeparateUser;
  }
  if (landlock_abi_ > 0 && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
    RulesetAttr attr{HandledFs(landlock_abi_), 0, 0};
    size_t size = sizeof(uint64_t);
    if (landlock_abi_ >= 4) {
      attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
      size = 2 * sizeof(uint64_t);
    }
    if (landlock_abi_ >= 6) {
      attr.scoped = kScopeAbstractUnix | kScopeSignal;
      size = sizeof attr;
    }
    int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
    if (ruleset >= 0) {
      bool ok = true;
      for (int fd : read_dirs_) ok &= AddRule(ruleset, fd, kReadDir);
      for (int fd : read_files_) ok &= AddRule(ruleset, fd, kReadFile);
      uint64_t rw_file = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE;
      if (dev_null_ >= 0) ok &= AddRule(ruleset, dev_null_, rw_file);
      if (temp_dir_fd >= 0) {
        ok &= AddRule(ruleset, temp_dir_fd, HandledFs(landlock_abi_) & ~LANDLOCK_ACCESS_FS_EXECUTE);
      }
      if (ok && ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0) active |= kFileSystem;
      ::close(ruleset);
    }
  }
  // After the user change, which clears the parent-death signal.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0) {
    // The parent may have died before the signal was set: then it never
    // comes, and the child was reparented.
    if (::getppid() != parent) ::_exit(125);
    active |= kParentDeathSignal;
  }
  return active;
}

uint32_t ChildSandbox::Probe() const {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return 0;
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    uint32_t active = Apply(-1, 60, parent) | kEmptyEnvironment;
    ssize_t n = ::write(p[1], &active, sizeof active);
    ::_exit(n == sizeof active ? 0 : 1);
  }
  ::close(p[1]);
  uint32_t active = 0;
  if (pid > 0) {
    ssize_t n;
    while ((n = ::read(p[0], &active, sizeof active)) < 0 && errno == EINTR) {
    }
    if (n != sizeof active) active = 0;
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(p[0]);
  return active;
}

std::string ChildSandbox::Describe(uint32_t active) const {
  std::vector<std::string> on, off;
  auto add = [&](uint32_t bit, std::string what, std::string why_off) {
    if (active & bit) {
      on.push_back(std::move(what));
    } else {
      off.push_back(absl::StrCat(what, " (", why_off, ")"));
    }
  };
  add(kEmptyEnvironment, "empty environment", "not applied");
  add(kNoNetwork,
      absl::StrCat("no network", landlock_abi_ >= 4 ? " (network namespace; TCP refused)" : ""),
      config_.isolate_network ? "unshare(CLONE_NEWNET) is not permitted here" : "disabled");
  add(kFileSystem,
      absl::StrCat("file system restricted by Landlock ABI ", landlock_abi_, " to read ",
                   absl::StrJoin(read_paths_, ", "), " and its temp dir"),
      !config_.restrict_files ? "disabled"
      : landlock_abi_ == 0    ? "the kernel has no Landlock"
                              : "Landlock refused the ruleset");
  if (drop_user_ || (root_ && !config_.user.empty())) {
    add(kSeparateUser, absl::StrCat("user ", config_.user),
        drop_user_ ? "setuid failed" : "no such user");
  } else if (root_) {
    off.push_back("separate user (disabled; compiles run as root)");
  } else {
    on.push_back("unprivileged user (tilecd is not root)");
  }
  add(kParentDeathSignal, "parent-death signal", "prctl failed");
  add(kCpuLimit, "CPU time limit", "setrlimit failed");
  std::string out = absl::StrJoin(on, ", ");
  if (!off.empty()) absl::StrAppend(&out, "; inactive: ", absl::StrJoin(off, ", "));
  return out;
}

}  // namespace tilec::server
