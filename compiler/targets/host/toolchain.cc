#include "compiler/targets/host/toolchain.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
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

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/device/device_headers.h"
#include "compiler/device/host/tl/abi.h"
#include "compiler/targets/tools/tool_run.h"

extern char** environ;

namespace tilec::host {
namespace {

namespace fs = std::filesystem;
using tools::ReadAll;
using tools::ResolveProgram;
using tools::RunTool;
using tools::Trim;
using tools::WriteFile;

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





// FNV-1a, 64 bits: stable across processes and machines.
class Fnv64 {
 public:
  void Add(std::string_view bytes) {
    for (unsigned char c : bytes) h_ = (h_ ^ c) * 0x100000001b3ull;
    h_ = (h_ ^ 0xFF) * 0x100000001b3ull;  // terminator: "ab"+"c" != "a"+"bc"
  }
  std::string Hex() const { return absl::StrCat(absl::Hex(h_, absl::kZeroPad16)); }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};


// The embedded headers written into `root`/<key>/include, and tl/tl.h
// precompiled with exactly the flags of the kernel compiles (the key covers
// the headers' text, the flags, and the compiler binary's identity, so a
// changed one makes a new entry). Entries are built once under a file lock
// and never modified; deleting the cache is always safe between compiles.
struct HeaderCache {
  fs::path include_dir;
  fs::path pch;  // empty when precompiling failed or was not asked for
};

absl::StatusOr<HeaderCache> PrepareHeaders(const fs::path& root,
                                           const std::vector<std::string>& flags, bool use_pch) {
  Fnv64 key;
  key.Add(absl::StrCat("abi ", tl::host::kAbiVersion, use_pch ? " pch" : ""));
  const auto headers = device::DeviceHeaders(device::DeviceTarget::kHost);
  for (const device::DeviceHeader& h : headers) {
    key.Add(h.path);
    key.Add(h.text);
  }
  for (const std::string& f : flags) key.Add(f);
  struct stat st {};
  if (const std::string clang = ResolveProgram(flags[0]);
      !clang.empty() && stat(clang.c_str(), &st) == 0) {
    key.Add(absl::StrCat(clang, " ", st.st_size, " ", st.st_mtime, " ", st.st_ino));
  }
  std::error_code ec;
  fs::create_directories(root, ec);
  const fs::path entry = root / key.Hex();
  HeaderCache cache{entry / "include", use_pch ? entry / "tl.h.pch" : fs::path()};
  const fs::path ready = entry / "ready";
  if (fs::exists(ready)) {
    if (!fs::exists(cache.pch)) cache.pch.clear();
    return cache;
  }
  const std::string lock_path = (root / (key.Hex() + ".lock")).string();
  const int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot use the host header cache ",
                                                      root.string(), ": ", std::strerror(errno)));
  }
  struct Unlock {
    int fd;
    ~Unlock() { close(fd); }  // closing releases the flock
  } unlock{lock};
  while (flock(lock, LOCK_EX) != 0) {
    if (errno != EINTR) return absl::InternalError("flock failed on the host header cache");
  }
  if (!fs::exists(ready)) {  // not built by another process meanwhile
    fs::remove_all(entry, ec);
    for (const device::DeviceHeader& h : headers) {
      if (absl::Status s = WriteFile(cache.include_dir / std::string(h.path), h.text); !s.ok()) {
        return s;
      }
    }
    if (use_pch) {
      std::vector<std::string> argv = flags;
      for (const std::string& f :
           {std::string("-I") + cache.include_dir.string(), std::string("-x"),
            std::string("c++-header"), (cache.include_dir / "tl" / "tl.h").string(),
            std::string("-o"), cache.pch.string()}) {
        argv.push_back(f);
      }
      // A failure here is not fatal: the kernel compiles without the PCH and
      // reports whatever is wrong itself.
      absl::StatusOr<int> rc = RunTool(argv, (entry / "pch.log").string(), "the host compiler");
      if (!rc.ok() || *rc != 0) fs::remove(cache.pch, ec);
    }
    if (absl::Status s = WriteFile(ready, ""); !s.ok()) return s;
  }
  if (!fs::exists(cache.pch)) cache.pch.clear();
  return cache;
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

  // The flags every compile of these headers shares (the PCH must match them).
  std::vector<std::string> flags = {options.clang, "-std=c++20", options.opt_level};
  if (options.debug_info) flags.push_back("-g");
  // -fno-strict-aliasing: the shared-memory plan places buffers of
  // different element types on the same bytes at different times.
  for (const char* f : {"-fPIC", "-DTILEC_HOST", "-fno-strict-aliasing"}) flags.push_back(f);
  for (const std::string& f : options.extra_flags) flags.push_back(f);
  // Code emitted for an AMD target defines TL_AMDGPU before tl/tl.h (64-lane
  // wavefronts, MFMA); the precompiled tl/tl.h must see it too.
  if (absl::StrContains(source, "\n#define TL_AMDGPU 1\n")) flags.push_back("-DTL_AMDGPU=1");
  fs::path cache_root = options.cache_dir;
  if (cache_root.empty())
    cache_root = fs::path(parent) / absl::StrCat("tilec-host-cache-", getuid());
  absl::StatusOr<HeaderCache> headers = PrepareHeaders(cache_root, flags, options.use_pch);
  if (!headers.ok()) return headers.status();

  // Lines of the source keep their numbers under the name the user knows.
  std::string text = absl::StrCat("#line 1 \"", options.source_name, "\"\n", source);
  absl::StrAppend(&text,
                  "\n\n// Appended by tilec's host toolchain: the emulator's entry points.\n",
                  "#include \"tl/entry.h\"\nTILEC_HOST_MODULE()\n");
  for (const std::string& k : module.kernels_)
    absl::StrAppend(&text, "TILEC_HOST_ENTRY(", k, ")\n");
  if (absl::Status s = WriteFile(dir / "kernel.cc", text); !s.ok()) return s;

  std::vector<std::string> argv = flags;
  argv.push_back("-shared");
  argv.push_back("-I" + headers->include_dir.string());
  if (!headers->pch.empty()) {
    argv.push_back("-include-pch");
    argv.push_back(headers->pch.string());
  }
  for (const std::string& f :
       {std::string("-o"), (dir / "kernel.so").string(), (dir / "kernel.cc").string()}) {
    argv.push_back(f);
  }
  const std::string log_path = (dir / "clang.log").string();
  absl::StatusOr<int> rc = RunTool(argv, log_path, "the host compiler");
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
  // The directory goes with the module (the emulator symbolizes kernel.so).
  const bool keep = options.keep_files;
  cleanup.keep = true;
  module.handle_ = std::shared_ptr<void>(handle, [dir, keep](void* h) {
    dlclose(h);
    std::error_code ec;
    if (!keep) fs::remove_all(dir, ec);
  });
  auto* version = reinterpret_cast<unsigned (*)()>(dlsym(handle, "tilec_host_abi_version"));
  if (version == nullptr || version() != tl::host::kAbiVersion) {
    return absl::InternalError(absl::StrCat(
        "the host kernel module was built against another emulator ABI (",
        version == nullptr ? 0u : version(), ", expected ", tl::host::kAbiVersion, ")"));
  }
  return module;
}

}  // namespace tilec::host
