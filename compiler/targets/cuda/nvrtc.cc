#include "compiler/targets/cuda/nvrtc.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "compiler/device/device_headers.h"
#include "compiler/ir/sv.h"

namespace tilec::cuda {
namespace {

// Abseil as installed has its own absl::string_view, distinct from
// std::string_view; the string helpers below take the former.

// The slice of the NVRTC C API tilec uses (nvrtc.h, stable since CUDA 11.1).
// Declared here so that the build needs no CUDA headers.
using NvrtcProgram = void*;
using NvrtcResultCode = int;
constexpr NvrtcResultCode kNvrtcSuccess = 0;

struct NvrtcApi {
  std::string error;        // why loading failed; empty when loaded
  bool out_of_memory = false;  // loading failed for lack of memory, not of a toolkit
  std::string library;      // the path or soname that loaded
  std::string include_dir;  // the toolkit's include folder, or empty
  const char* (*GetErrorString)(NvrtcResultCode) = nullptr;
  NvrtcResultCode (*Version)(int*, int*) = nullptr;
  NvrtcResultCode (*CreateProgram)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                                   const char* const*) = nullptr;
  NvrtcResultCode (*DestroyProgram)(NvrtcProgram*) = nullptr;
  NvrtcResultCode (*CompileProgram)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResultCode (*GetProgramLogSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResultCode (*GetProgramLog)(NvrtcProgram, char*) = nullptr;
  NvrtcResultCode (*GetCUBINSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResultCode (*GetCUBIN)(NvrtcProgram, char*) = nullptr;
};

std::vector<std::filesystem::path> CudaHomes() {
  std::vector<std::filesystem::path> homes;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') homes.emplace_back(v);
  }
  homes.emplace_back("/usr/local/cuda");
  return homes;
}

// The toolkit's include folder (holding cuda_fp16.h) for a library at
// <home>/lib64/x, <home>/targets/<triple>/lib/x or the like: the first
// ancestor, up to three levels, with such an include folder.
std::string IncludeDirForLibrary(const std::filesystem::path& library) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::canonical(library, ec).parent_path();
  if (ec) return "";
  for (int level = 0; level < 3 && dir.has_relative_path(); ++level, dir = dir.parent_path()) {
    const std::filesystem::path include = dir / "include";
    if (std::filesystem::exists(include / "cuda_fp16.h", ec)) return include.string();
  }
  return "";
}

template <typename F>
bool Bind(void* handle, const char* symbol, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(handle, symbol));
  if (fn == nullptr) missing = symbol;
  return fn != nullptr;
}

NvrtcApi* LoadNvrtc() {
  auto* api = new NvrtcApi();
  std::vector<std::string> candidates;
  for (const auto& home : CudaHomes()) {
    candidates.push_back((home / "lib64" / "libnvrtc.so").string());
  }
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
    candidates.push_back(soname);
  }
  void* handle = nullptr;
  std::vector<std::string> failures;
  for (const std::string& c : candidates) {
    handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      api->library = c;
      break;
    }
    const char* why = dlerror();
    failures.push_back(why != nullptr ? why : c);
  }
  if (handle == nullptr) {
    // A library that is there but cannot be mapped: the process ran out of
    // memory (an address-space limit), and no toolkit path would help.
    for (const std::string& f : failures) {
      const std::string lower = absl::AsciiStrToLower(f);
      if (absl::StrContains(lower, "failed to map segment") ||
          absl::StrContains(lower, "cannot allocate memory") ||
          absl::StrContains(lower, "cannot map zero-fill pages")) {
        api->out_of_memory = true;
        api->error = absl::StrCat("cannot load NVRTC: out of memory mapping the library (", f,
                                  "); the process's memory limit is too small for NVRTC");
        return api;
      }
    }
    api->error = absl::StrCat(
        "cannot load NVRTC (libnvrtc.so); set CUDA_HOME to a CUDA toolkit (12 or 13). Tried: ",
        absl::StrJoin(failures, "; "));
    return api;
  }
  std::string missing;
  const bool ok = Bind(handle, "nvrtcGetErrorString", api->GetErrorString, missing) &&
                  Bind(handle, "nvrtcVersion", api->Version, missing) &&
                  Bind(handle, "nvrtcCreateProgram", api->CreateProgram, missing) &&
                  Bind(handle, "nvrtcDestroyProgram", api->DestroyProgram, missing) &&
                  Bind(handle, "nvrtcCompileProgram", api->CompileProgram, missing) &&
                  Bind(handle, "nvrtcGetProgramLogSize", api->GetProgramLogSize, missing) &&
                  Bind(handle, "nvrtcGetProgramLog", api->GetProgramLog, missing) &&
                  Bind(handle, "nvrtcGetCUBINSize", api->GetCUBINSize, missing) &&
                  Bind(handle, "nvrtcGetCUBIN", api->GetCUBIN, missing);
  if (!ok) {
    api->error = absl::StrCat("NVRTC at ", api->library, " lacks ", missing,
                              "; tilec needs CUDA 11.1 or later");
    return api;
  }
  // The library's real location tells where the toolkit's headers are.
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(api->Version), &info) != 0 && info.dli_fname != nullptr) {
    api->include_dir = IncludeDirForLibrary(info.dli_fname);
  }
  if (api->include_dir.empty()) {
    for (const auto& home : CudaHomes()) {
      std::error_code ec;
      if (std::filesystem::exists(home / "include" / "cuda_fp16.h", ec)) {
        api->include_dir = (home / "include").string();
        break;
      }
    }
  }
  return api;
}

const NvrtcApi& Api() {
  static const NvrtcApi* const api = LoadNvrtc();
  return *api;
}

absl::Status ApiError(const NvrtcApi& api, absl::string_view call, NvrtcResultCode code) {
  return absl::InternalError(
      absl::StrCat(call, " failed: ", api.GetErrorString(code), " (NVRTC at ", api.library, ")"));
}

// The tl headers as NUL-terminated names and texts for nvrtcCreateProgram.
struct InMemoryHeaders {
  std::vector<std::string> names;
  std::vector<std::string> texts;
  std::vector<const char*> name_ptrs;
  std::vector<const char*> text_ptrs;
};

const InMemoryHeaders& CudaHeaders() {
  static const InMemoryHeaders* const headers = [] {
    auto* h = new InMemoryHeaders();
    for (const device::DeviceHeader& d : device::DeviceHeaders(device::DeviceTarget::kCuda)) {
      h->names.emplace_back(d.path);
      h->texts.emplace_back(d.text);
    }
    for (size_t i = 0; i < h->names.size(); ++i) {
      h->name_ptrs.push_back(h->names[i].c_str());
      h->text_ptrs.push_back(h->texts[i].c_str());
    }
    return h;
  }();
  return *headers;
}

// The number right before `suffix` in `line` (e.g. "12" in "12 bytes smem").
bool NumberBefore(absl::string_view line, absl::string_view suffix, int64_t* out) {
  const size_t pos = line.find(suffix);
  if (pos == absl::string_view::npos) return false;
  size_t end = pos;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  return begin < end && absl::SimpleAtoi(line.substr(begin, end - begin), out);
}

// The text between the first pair of single quotes after `key`, or "".
absl::string_view QuotedAfter(absl::string_view line, absl::string_view key) {
  const size_t k = line.find(key);
  if (k == absl::string_view::npos) return {};
  const size_t open = line.find('\'', k + key.size());
  if (open == absl::string_view::npos) return {};
  const size_t close = line.find('\'', open + 1);
  if (close == absl::string_view::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

struct KernelSpan {
  std::string name;
  int first_line = 0;  // 1-based, the line of the name
  int last_line = 0;   // the line of the closing brace
};

// __global__ functions of `source` with the lines they span. Comments and
// string literals are skipped when matching braces.
std::vector<KernelSpan> FindKernels(absl::string_view source) {
  std::vector<KernelSpan> kernels;
  size_t at = 0;
  while ((at = source.find("__global__", at)) != absl::string_view::npos) {
    at += absl::string_view("__global__").size();
    // The name is the identifier right before the parameter list; skip
    // attribute groups such as __launch_bounds__(128).
    size_t paren = at;
    size_t begin = 0;
    size_t end = 0;
    while (true) {
      paren = source.find('(', paren);
      if (paren == absl::string_view::npos) break;
      end = paren;
      while (end > at && std::isspace(static_cast<unsigned char>(source[end - 1]))) --end;
      begin = end;
      while (begin > at && (std::isalnum(static_cast<unsigned char>(source[begin - 1])) ||
                            source[begin - 1] == '_')) {
        --begin;
      }
      const absl::string_view word = source.substr(begin, end - begin);
      if (word != "__launch_bounds__" && word != "__attribute__" && word != "__maxnreg__") break;
      int depth = 0;
      for (; paren < source.size(); ++paren) {
        if (source[paren] == '(') ++depth;
        if (source[paren] == ')' && --depth == 0) break;
      }
    }
    if (paren == absl::string_view::npos) break;
    if (begin == end) continue;
    KernelSpan k;
    k.name = std::string(source.substr(begin, end - begin));
    k.first_line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + begin, '\n'));
    const size_t open = source.find('{', paren);
    if (open == absl::string_view::npos) break;
    int depth = 0;
    size_t i = open;
    for (; i < source.size(); ++i) {
      const char c = source[i];
      if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
        i = source.find('\n', i);
        if (i == absl::string_view::npos) break;
      } else if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
        i = source.find("*/", i + 2);
        if (i == absl::string_view::npos) break;
        ++i;
      } else if (c == '"' || c == '\'') {
        for (++i; i < source.size() && source[i] != c; ++i) {
          if (source[i] == '\\') ++i;
        }
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        break;
      }
    }
    const size_t close = std::min(i, source.size());
    k.last_line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + close, '\n'));
    kernels.push_back(std::move(k));
    at = close;
  }
  return kernels;
}

// Whether `line` opens an NVRTC diagnostic: "<file>(<n>): <severity>: ...".
// Sets *is_error for errors.
bool IsDiagnosticStart(absl::string_view line, bool* is_error) {
  const size_t close = line.find("): ");
  if (close == absl::string_view::npos || line.find('(') > close) return false;
  const absl::string_view rest = line.substr(close + 3);
  *is_error = absl::StartsWith(rest, "error") || absl::StartsWith(rest, "catastrophic error");
  return *is_error || absl::StartsWith(rest, "warning") || absl::StartsWith(rest, "remark");
}

}  // namespace

std::string OwnDiagnosticsOnly(std::string_view log_in, std::string_view own_file_in) {
  const absl::string_view log = Sv(log_in);
  const std::string own = absl::StrCat(Sv(own_file_in), "(");
  const InMemoryHeaders& headers = CudaHeaders();
  auto known = [&](absl::string_view line) {
    if (absl::StartsWith(line, own)) return true;
    const absl::string_view file = line.substr(0, line.find('('));
    for (const char* h : headers.name_ptrs) {
      if (file == h) return true;
    }
    return false;
  };
  std::string out;
  bool keep = true;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    bool is_error = false;
    if (absl::StrContains(line, "detected in the compilation of")) {
      keep = true;
    } else if (IsDiagnosticStart(line, &is_error)) {
      keep = known(line);
      if (!keep) {
        // Running out of memory is the compile's, wherever NVRTC was: say so
        // (the memory limit is classified by it), without the file's path.
        absl::StrAppend(&out, absl::StrContains(line, "catastrophic error: out of memory")
                                  ? "(catastrophic error: out of memory, in a file other than "
                                    "the generated source)\n"
                                  : "(a diagnostic about a file other than the generated source "
                                    "was left out)\n");
      }
    }
    if (!keep) continue;
    absl::StrAppend(&out, line, "\n");
  }
  if (!out.empty() && (log.empty() || log.back() != '\n')) out.pop_back();
  return out;
}

std::vector<int> ErrorLines(std::string_view log_in, std::string_view own_file_in) {
  const std::string own = absl::StrCat(Sv(own_file_in), "(");
  std::vector<int> lines;
  for (absl::string_view line : absl::StrSplit(Sv(log_in), '\n')) {
    bool is_error = false;
    if (!IsDiagnosticStart(line, &is_error) || !is_error || !absl::StartsWith(line, own)) continue;
    const absl::string_view digits = line.substr(own.size());
    int n = 0;
    if (absl::SimpleAtoi(digits.substr(0, digits.find(')')), &n)) lines.push_back(n);
  }
  return lines;
}

std::string_view CudaArchName(CudaArch arch) {
  switch (arch) {
    case CudaArch::kSm80: return "sm_80";
    case CudaArch::kSm90a: return "sm_90a";
  }
  return "sm_unknown";
}

absl::StatusOr<CudaArch> ParseCudaArch(std::string_view name_in) {
  const absl::string_view name = Sv(name_in);
  for (CudaArch a : {CudaArch::kSm80, CudaArch::kSm90a}) {
    if (name_in == CudaArchName(a)) return a;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown CUDA architecture '", name, "'; tilec targets sm_80 and sm_90a"));
}

std::string NvrtcVersion() {
  const NvrtcApi& api = Api();
  if (!api.error.empty()) return "";
  int major = 0;
  int minor = 0;
  if (api.Version(&major, &minor) != kNvrtcSuccess) return "";
  return absl::StrCat(major, ".", minor);
}

std::vector<PtxasKernelInfo> ParsePtxasReport(std::string_view log_in) {
  const absl::string_view log = Sv(log_in);
  std::vector<PtxasKernelInfo> kernels;
  std::string properties_of;  // the function the next "stack frame" line describes
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::StartsWith(line, "ptxas")) continue;
    if (absl::string_view name = QuotedAfter(line, "Compiling entry function"); !name.empty()) {
      kernels.push_back(PtxasKernelInfo{.name = std::string(name)});
      continue;
    }
    if (const size_t p = line.find("Function properties for "); p != absl::string_view::npos) {
      properties_of = std::string(absl::StripAsciiWhitespace(
          line.substr(p + absl::string_view("Function properties for ").size())));
      continue;
    }
    if (line.find("bytes stack frame") != absl::string_view::npos) {
      for (PtxasKernelInfo& k : kernels) {
        if (k.name != properties_of) continue;
        NumberBefore(line, "bytes stack frame", &k.stack_frame_bytes);
        NumberBefore(line, "bytes spill stores", &k.spill_store_bytes);
        NumberBefore(line, "bytes spill loads", &k.spill_load_bytes);
      }
      continue;
    }
    if (line.find("Used ") != absl::string_view::npos && !kernels.empty()) {
      PtxasKernelInfo& k = kernels.back();
      int64_t v = 0;
      if (NumberBefore(line, "registers", &v)) k.registers = static_cast<int>(v);
      if (NumberBefore(line, "barriers", &v)) k.barriers = static_cast<int>(v);
      NumberBefore(line, "bytes smem", &k.shared_bytes);
    }
  }
  return kernels;
}

std::string TrimToolLog(std::string_view log_in, int head, int tail) {
  const absl::string_view log = Sv(log_in);
  std::vector<absl::string_view> lines = absl::StrSplit(log, '\n');
  while (!lines.empty() && absl::StripAsciiWhitespace(lines.back()).empty()) lines.pop_back();
  const int n = static_cast<int>(lines.size());
  if (n <= head + tail) return absl::StrJoin(lines, "\n");
  std::vector<absl::string_view> kept(lines.begin(), lines.begin() + head);
  const std::string omitted = absl::StrCat("... (", n - head - tail, " lines omitted) ...");
  kept.push_back(omitted);
  kept.insert(kept.end(), lines.end() - tail, lines.end());
  return absl::StrJoin(kept, "\n");
}

std::vector<std::string> KernelsWithErrors(std::string_view source_in,
                                           std::string_view file_name_in, std::string_view log_in) {
  const absl::string_view source = Sv(source_in);
  const absl::string_view file_name = Sv(file_name_in);
  const absl::string_view log = Sv(log_in);
  const std::vector<KernelSpan> kernels = FindKernels(source);
  std::set<std::string> hit;
  auto hit_line = [&](int line) {
    for (const KernelSpan& k : kernels) {
      if (line >= k.first_line && line <= k.last_line) hit.insert(k.name);
    }
  };
  const std::string at_file = absl::StrCat(file_name, "(");
  const std::string of_file = absl::StrCat(" of ", file_name);
  bool in_error = false;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    bool is_error = false;
    if (IsDiagnosticStart(line, &is_error)) {
      in_error = is_error;
      if (is_error && absl::StartsWith(line, at_file)) {
        int n = 0;
        const absl::string_view digits = line.substr(at_file.size());
        if (absl::SimpleAtoi(digits.substr(0, digits.find(')')), &n)) hit_line(n);
      }
      continue;
    }
    if (absl::StripAsciiWhitespace(line).empty()) {
      in_error = false;
      continue;
    }
    if (absl::StartsWith(line, "ptxas error") || absl::StartsWith(line, "ptxas fatal")) {
      for (const KernelSpan& k : kernels) {
        if (line.find(absl::StrCat("'", k.name, "'")) != absl::string_view::npos) {
          hit.insert(k.name);
        }
      }
      continue;
    }
    // Instantiation context of an error in a header: "... at line N of <file>".
    if (in_error && absl::EndsWith(absl::StripTrailingAsciiWhitespace(line), of_file)) {
      const absl::string_view l = absl::StripTrailingAsciiWhitespace(line);
      const size_t at = l.rfind("at line ");
      if (at == absl::string_view::npos) continue;
      const absl::string_view num = l.substr(at + 8, l.size() - of_file.size() - at - 8);
      int n = 0;
      if (absl::SimpleAtoi(num, &n)) hit_line(n);
    }
  }
  return std::vector<std::string>(hit.begin(), hit.end());
}

absl::StatusOr<NvrtcResult> CompileCuda(const std::string& source, const std::string& name,
                                        CudaArch arch, const NvrtcOptions& options) {
  const NvrtcApi& api = Api();
  if (!api.error.empty()) {
    return api.out_of_memory ? absl::ResourceExhaustedError(api.error)
                             : absl::FailedPreconditionError(api.error);
  }
  if (options.max_registers < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_registers must be >= 0, got ", options.max_registers));
  }

  std::vector<std::string> args = {
      absl::StrCat("--gpu-architecture=", Sv(CudaArchName(arch))),
      "-std=c++20",
      "--ptxas-options=-v",
  };
  // NVRTC 12.9 and newer keep compiled PTX in the CUDA compute cache: a hit
  // returns the cubin without running ptxas, so the log has no ptxas report
  // (registers, spills) for the kernels. Every compile runs ptxas.
  if (int major = 0, minor = 0;
      api.Version(&major, &minor) == kNvrtcSuccess && (major > 12 || (major == 12 && minor >= 9))) {
    args.push_back("--no-cache");
  }
  if (options.line_info) args.push_back("-lineinfo");
  if (options.max_registers > 0) {
    args.push_back(absl::StrCat("--maxrregcount=", options.max_registers));
  }
  for (const std::string& d : options.defines) args.push_back(absl::StrCat("-D", d));
  for (const std::string& dir : options.include_dirs) args.push_back(absl::StrCat("-I", dir));
  if (!api.include_dir.empty()) args.push_back(absl::StrCat("-I", api.include_dir));
  for (const std::string& o : options.extra_options) args.push_back(o);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args) arg_ptrs.push_back(a.c_str());

  const InMemoryHeaders& headers = CudaHeaders();
  NvrtcProgram prog = nullptr;
  if (NvrtcResultCode rc = api.CreateProgram(&prog, source.c_str(), name.c_str(),
                                             static_cast<int>(headers.names.size()),
                                             headers.text_ptrs.data(), headers.name_ptrs.data());
      rc != kNvrtcSuccess) {
    return ApiError(api, "nvrtcCreateProgram", rc);
  }
  struct Destroy {
    const NvrtcApi& api;
    NvrtcProgram* prog;
    ~Destroy() { api.DestroyProgram(prog); }
  } destroy{api, &prog};

  NvrtcResult result;
  result.nvrtc_version = NvrtcVersion();
  const absl::Time start = absl::Now();
  const NvrtcResultCode compiled =
      api.CompileProgram(prog, static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  result.compile_seconds = absl::ToDoubleSeconds(absl::Now() - start);

  size_t log_size = 0;
  if (NvrtcResultCode rc = api.GetProgramLogSize(prog, &log_size); rc != kNvrtcSuccess) {
    return ApiError(api, "nvrtcGetProgramLogSize", rc);
  }
  result.log.assign(log_size, '\0');
  if (log_size > 0) {
    if (NvrtcResultCode rc = api.GetProgramLog(prog, result.log.data()); rc != kNvrtcSuccess) {
      return ApiError(api, "nvrtcGetProgramLog", rc);
    }
    while (!result.log.empty() && result.log.back() == '\0') result.log.pop_back();
  }

  if (compiled != kNvrtcSuccess) {
    const std::vector<std::string> kernels = KernelsWithErrors(source, name, result.log);
    const std::string where =
        kernels.empty() ? "" : absl::StrCat(" (errors in ", absl::StrJoin(kernels, ", "), ")");
    absl::Status status = absl::InternalError(
        absl::StrCat("NVRTC ", result.nvrtc_version, " could not compile ", name, " for ",
                     Sv(CudaArchName(arch)), where, ": ", api.GetErrorString(compiled), "\n",
                     TrimToolLog(OwnDiagnosticsOnly(result.log, name))));
    status.SetPayload(kNvrtcLogPayload, absl::Cord(result.log));
    return status;
  }

  size_t cubin_size = 0;
  if (NvrtcResultCode rc = api.GetCUBINSize(prog, &cubin_size); rc != kNvrtcSuccess) {
    return ApiError(api, "nvrtcGetCUBINSize", rc);
  }
  result.cubin.assign(cubin_size, '\0');
  if (NvrtcResultCode rc = api.GetCUBIN(prog, result.cubin.data()); rc != kNvrtcSuccess) {
    return ApiError(api, "nvrtcGetCUBIN", rc);
  }
  result.kernels = ParsePtxasReport(result.log);
  return result;
}

}  // namespace tilec::cuda
