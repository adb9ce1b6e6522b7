#include "compiler/targets/host/toolchain.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/device/device_headers.h"
#include "compiler/device/host/tl/abi.h"

extern char** environ;

namespace tilec::host {
namespace {

namespace fs = std::filesystem;

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A cursor over C++ source that skips whitespace, comments and literals.
class Scanner {
 public:
  explicit Scanner(const std::string& s) : s_(s) {}

  bool done() const { return i_ >= s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  void advance() { ++i_; }

  // Skips whitespace, comments and preprocessor lines.
  void SkipTrivia() {
    while (!done()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++i_;
        line_start_ = true;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (!done() && s_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        const size_t end = s_.find("*/", i_ + 2);
        i_ = end == std::string::npos ? s_.size() : end + 2;
      } else if (c == '#' && line_start_) {
        while (!done() && !(s_[i_] == '\n' && s_[i_ - 1] != '\\')) ++i_;
      } else {
        return;
      }
    }
  }

  // The next token: an identifier, or a single other character (string and
  // character literals are consumed whole and returned as "\"").
  std::string Next() {
    SkipTrivia();
    line_start_ = false;
    if (done()) return "";
    const char c = s_[i_];
    if (IsIdent(c)) {
      const size_t start = i_;
      while (!done() && IsIdent(s_[i_])) ++i_;
      return s_.substr(start, i_ - start);
    }
    if (c == '"' || c == '\'') {
      ++i_;
      while (!done() && s_[i_] != c) i_ += s_[i_] == '\\' ? 2 : 1;
      ++i_;
      return "\"";
    }
    ++i_;
    return std::string(1, c);
  }

  // After an opening '(': skips to just past the matching ')'.
  void SkipParens() {
    int depth = 1;
    while (!done() && depth > 0) {
      const std::string t = Next();
      if (t == "(") ++depth;
      if (t == ")") --depth;
    }
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
  bool line_start_ = true;
};

std::string Trim(const std::string& log) {
  constexpr size_t kHead = 3000, kTail = 2000;
  if (log.size() <= kHead + kTail) return log;
  return absl::StrCat(log.substr(0, kHead), "\n... (", log.size() - kHead - kTail,
                      " bytes omitted) ...\n", log.substr(log.size() - kTail));
}

absl::Status WriteFile(const fs::path& path, std::string_view text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (ec || !out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// Runs argv with stdout and stderr into `log_path`; the exit status.
absl::StatusOr<int> RunTool(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run the host compiler ", argv[0], ": ", std::strerror(err)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError("waitpid failed for the host compiler");
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<std::string> FindKernels(const std::string& source) {
  std::vector<std::string> kernels;
  Scanner sc(source);
  while (!sc.done()) {
    if (sc.Next() != "__global__") continue;
    // Qualifiers, the return type and __launch_bounds__(...) up to the name.
    for (;;) {
      const std::string t = sc.Next();
      if (t.empty() || !IsIdent(t[0])) break;
      if (t == "__launch_bounds__") {
        if (sc.Next() == "(") sc.SkipParens();
        continue;
      }
      sc.SkipTrivia();
      if (sc.peek() != '(') continue;
      if (std::find(kernels.begin(), kernels.end(), t) == kernels.end()) kernels.push_back(t);
      break;
    }
  }
  return kernels;
}

absl::StatusOr<KernelEntry> HostModule::Entry(const std::string& kernel) const {
  void* sym = handle_ ? dlsym(handle_.get(), ("tilec_host_entry_" + kernel).c_str()) : nullptr;
  if (sym == nullptr) {
    return absl::NotFoundError(absl::StrCat("no kernel '", kernel, "' in the host module (it has ",
                                            absl::StrJoin(kernels_, ", "), ")"));
  }
  return reinterpret_cast<KernelEntry>(sym);
}

absl::StatusOr<int> HostModule::Arity(const std::string& kernel) const {
  void* sym = handle_ ? dlsym(handle_.get(), ("tilec_host_arity_" + kernel).c_str()) : nullptr;
  if (sym == nullptr) {
    return absl::NotFoundError(absl::StrCat("no kernel '", kernel, "' in the host module (it has ",
                                            absl::StrJoin(kernels_, ", "), ")"));
  }
  return reinterpret_cast<int (*)()>(sym)();
}

absl::StatusOr<HostModule> CompileHost(const std::string& source, const HostOptions& options) {
  HostModule module;
  module.kernels_ = FindKernels(source);
  if (module.kernels_.empty()) {
    return absl::InvalidArgumentError("the host kernel source defines no __global__ function");
  }
  std::string parent = options.work_dir;
  if (parent.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string templ = parent + "/tilec-host-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create a build directory under ", parent, ": ", std::strerror(errno)));
  }
  module.dir_ = templ;
  const fs::path dir(templ);
  struct Cleanup {
    fs::path dir;
    bool keep;
    ~Cleanup() {
      std::error_code ec;
      if (!keep) fs::remove_all(dir, ec);
    }
  } cleanup{dir, options.keep_files};

  for (const device::DeviceHeader& h : device::DeviceHeaders(device::DeviceTarget::kHost)) {
    if (absl::Status s = WriteFile(dir / "include" / std::string(h.path), h.text); !s.ok()) {
      return s;
    }
  }
  std::string text = source;
  absl::StrAppend(&text,
                  "\n\n// Appended by tilec's host toolchain: the emulator's entry points.\n",
                  "#include \"tl/entry.h\"\nTILEC_HOST_MODULE()\n");
  for (const std::string& k : module.kernels_)
    absl::StrAppend(&text, "TILEC_HOST_ENTRY(", k, ")\n");
  if (absl::Status s = WriteFile(dir / "kernel.cc", text); !s.ok()) return s;

  std::vector<std::string> argv = {options.clang, "-std=c++20", options.opt_level};
  if (options.debug_info) argv.push_back("-g");
  for (const char* f : {"-fPIC", "-shared", "-DTILEC_HOST"}) argv.push_back(f);
  argv.push_back("-I" + (dir / "include").string());
  for (const std::string& f : options.extra_flags) argv.push_back(f);
  for (const std::string& f :
       {std::string("-o"), (dir / "kernel.so").string(), (dir / "kernel.cc").string()}) {
    argv.push_back(f);
  }
  const std::string log_path = (dir / "clang.log").string();
  absl::StatusOr<int> rc = RunTool(argv, log_path);
  if (!rc.ok()) return rc.status();
  if (*rc != 0) {
    return absl::InternalError(absl::StrCat("clang rejected the host kernel source (exit ", *rc,
                                            "; for generated code this is a tilec bug):\n",
                                            Trim(ReadAll(log_path))));
  }
  void* handle = dlopen((dir / "kernel.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::InternalError(absl::StrCat("cannot load the host kernel module: ", dlerror()));
  }
  module.handle_ = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
  auto* version = reinterpret_cast<unsigned (*)()>(dlsym(handle, "tilec_host_abi_version"));
  if (version == nullptr || version() != tl::host::kAbiVersion) {
    return absl::InternalError(absl::StrCat(
        "the host kernel module was built against another emulator ABI (",
        version == nullptr ? 0u : version(), ", expected ", tl::host::kAbiVersion, ")"));
  }
  return module;
}

}  // namespace tilec::host
