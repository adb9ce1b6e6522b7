#include "compiler/targets/amdgpu/toolchain.h"

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "compiler/device/device_headers.h"
#include "compiler/targets/tools/tool_run.h"

namespace tilec::amdgpu {
namespace {

namespace fs = std::filesystem;

// A fresh folder under `parent`, removed with the object.
class BuildDir {
 public:
  static absl::StatusOr<BuildDir> Make(const std::string& parent) {
    std::string base = parent;
    if (base.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    std::string templ = (fs::path(base) / "tilec-hip-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot make a build folder under ", base, " for the AMD compile"));
    }
    return BuildDir(templ);
  }
  BuildDir(BuildDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  ~BuildDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  explicit BuildDir(std::string p) : path_(std::move(p)) {}
  fs::path path_;
};

}  // namespace

bool IsAmdArch(std::string_view arch) { return arch == "gfx942" || arch == "gfx90a"; }

absl::StatusOr<Hsaco> CompileHsaco(std::string_view source, std::string_view arch,
                                   const HsacoOptions& options) {
  if (!IsAmdArch(arch)) {
    return absl::InvalidArgumentError(absl::StrCat("AMD target \"", std::string(arch),
                                                   "\": tilec compiles for gfx942 and gfx90a"));
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<BuildDir> dir = BuildDir::Make(options.work_dir);
  if (!dir.ok()) return dir.status();
  const fs::path include = dir->path() / "include";
  for (const device::DeviceHeader& h : device::DeviceHeaders(device::DeviceTarget::kHip)) {
    if (absl::Status s = tools::WriteFile(include / std::string(h.path), h.text); !s.ok()) return s;
  }
  const fs::path src = dir->path() / options.source_name;
  if (absl::Status s = tools::WriteFile(src, source); !s.ok()) return s;
  const fs::path out = dir->path() / "kernel.hsaco";
  const std::string log = (dir->path() / "clang.log").string();
  // The build folder is mapped to "." so nothing in the output names it, and
  // no compilation-unit id symbol (__hip_cuid_<hash of the path>) is made.
  const std::vector<std::string> argv = {
      options.clang, "-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib",
      "-nogpuinc", "-O3", "-std=c++20", "-mcode-object-version=5", "-fuse-cuid=none",
      absl::StrCat("--offload-arch=", std::string(arch)),
      absl::StrCat("-ffile-prefix-map=", dir->path().string(), "=."), "-I", include.string(),
      src.string(), "-o", out.string()};
  absl::StatusOr<int> rc = tools::RunTool(argv, log, "the AMD compiler");
  if (!rc.ok()) return rc.status();
  if (*rc != 0) {
    return absl::InternalError(absl::StrCat(
        "clang rejected the AMD kernel source (exit ", *rc,
        "; for generated code this is a tilec bug):\n", tools::Trim(tools::ReadAll(log))));
  }
  Hsaco h;
  h.arch = std::string(arch);
  h.code_object = tools::ReadAll(out.string());
  absl::StatusOr<CodeObjectInfo> info = ReadCodeObject(h.code_object);
  if (!info.ok()) {
    return absl::InternalError(absl::StrCat("clang wrote no readable code object for ",
                                            std::string(arch), ": ", info.status().message()));
  }
  h.info = *std::move(info);
  h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return h;
}

absl::StatusOr<std::string> ClangVersion(const HsacoOptions& options) {
  // Asked once per compiler binary and process: every AMD artifact names it.
  static absl::Mutex mu(absl::kConstInit);
  static auto* known = new std::map<std::string, std::string>();
  const std::string program = tools::ResolveProgram(options.clang);
  {
    absl::MutexLock lock(&mu);
    if (auto it = known->find(program); !program.empty() && it != known->end()) return it->second;
  }
  absl::StatusOr<BuildDir> dir = BuildDir::Make(options.work_dir);
  if (!dir.ok()) return dir.status();
  const std::string log = (dir->path() / "version.log").string();
  absl::StatusOr<int> rc = tools::RunTool({options.clang, "--version"}, log, "the AMD compiler");
  if (!rc.ok()) return rc.status();
  const std::string text = tools::ReadAll(log);
  if (*rc != 0 || text.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(options.clang, " --version failed"));
  }
  std::string version = text.substr(0, text.find('\n'));
  if (!program.empty()) {
    absl::MutexLock lock(&mu);
    known->emplace(program, version);
  }
  return version;
}

}  // namespace tilec::amdgpu
