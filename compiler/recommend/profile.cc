#include "compiler/recommend/profile.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/recommend/builtin_profiles.h"
#include "compiler/targets/registry.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace tilec::recommend {
namespace {

// Collects text-format parse errors with their line and column.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

absl::Status Bad(std::string_view origin, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(origin), ": invalid hardware profile: ", std::string(what)));
}

void SortById(std::vector<HardwareProfile>& profiles) {
  std::sort(profiles.begin(), profiles.end(),
            [](const HardwareProfile& a, const HardwareProfile& b) { return a.id() < b.id(); });
}

}  // namespace

absl::Status ValidateProfile(const HardwareProfile& p, std::string_view origin) {
  if (p.id().empty()) return Bad(origin, "id is missing");
  for (char c : p.id()) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      return Bad(origin, absl::StrCat("id '", p.id(), "' may hold only letters, digits, _ and -"));
    }
  }
  if (p.vendor() != "nvidia" && p.vendor() != "amd" && p.vendor() != "host") {
    return Bad(origin, absl::StrCat("vendor '", p.vendor(), "' is not nvidia, amd or host"));
  }
  if (p.arch().empty()) return Bad(origin, "arch is missing");
  struct Positive {
    const char* name;
    double value;
  };
  const Positive positives[] = {
      {"sm_count", static_cast<double>(p.sm_count())},
      {"warp_size", static_cast<double>(p.warp_size())},
      {"registers_per_sm", static_cast<double>(p.registers_per_sm())},
      {"max_registers_per_thread", static_cast<double>(p.max_registers_per_thread())},
      {"max_registers_per_block", static_cast<double>(p.max_registers_per_block())},
      {"shared_memory_per_sm_bytes", static_cast<double>(p.shared_memory_per_sm_bytes())},
      {"shared_memory_per_block_bytes", static_cast<double>(p.shared_memory_per_block_bytes())},
      {"max_threads_per_block", static_cast<double>(p.max_threads_per_block())},
      {"max_threads_per_sm", static_cast<double>(p.max_threads_per_sm())},
      {"max_blocks_per_sm", static_cast<double>(p.max_blocks_per_sm())},
      {"l2_cache_bytes", static_cast<double>(p.l2_cache_bytes())},
      {"memory_bandwidth_gbps", p.memory_bandwidth_gbps()},
      {"boost_clock_mhz", p.boost_clock_mhz()},
      {"vector_fp32_tflops", p.vector_fp32_tflops()},
      {"shared_memory_bytes_per_clock", static_cast<double>(p.shared_memory_bytes_per_clock())},
      {"memory_latency_ns", p.memory_latency_ns()},
      {"max_pipeline_stages", static_cast<double>(p.max_pipeline_stages())},
  };
  for (const Positive& f : positives) {
    if (!(f.value > 0)) return Bad(origin, absl::StrCat(f.name, " must be > 0"));
  }
  if (p.warp_size() != 32 && p.warp_size() != 64) return Bad(origin, "warp_size must be 32 or 64");
  if (p.shared_memory_per_block_bytes() > p.shared_memory_per_sm_bytes()) {
    return Bad(origin, "shared_memory_per_block_bytes exceeds shared_memory_per_sm_bytes");
  }
  if (p.shared_memory_reserved_per_block_bytes() < 0) {
    return Bad(origin, "shared_memory_reserved_per_block_bytes must be >= 0");
  }
  if (p.max_threads_per_block() > p.max_threads_per_sm()) {
    return Bad(origin, "max_threads_per_block exceeds max_threads_per_sm");
  }
  if (p.max_threads_per_block() % p.warp_size() != 0) {
    return Bad(origin, "max_threads_per_block is not a whole number of warps");
  }
  if (p.max_registers_per_block() > p.registers_per_sm()) {
    return Bad(origin, "max_registers_per_block exceeds registers_per_sm");
  }
  for (const auto& peak : p.matrix_peaks()) {
    if (!ir::ParseDType(peak.dtype())) {
      return Bad(origin, absl::StrCat("matrix_peaks dtype '", peak.dtype(), "' is not a dtype"));
    }
    if (!(peak.tflops() > 0)) {
      return Bad(origin, absl::StrCat("matrix_peaks ", peak.dtype(), " tflops must be > 0"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<HardwareProfile> ParseProfileText(std::string_view text, std::string_view origin) {
  HardwareProfile profile;
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &profile)) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(origin), ":", errors.first()));
  }
  if (absl::Status st = ValidateProfile(profile, origin); !st.ok()) return st;
  return profile;
}

absl::StatusOr<HardwareProfile> LoadProfileFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read hardware profile ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseProfileText(text.str(), path);
}

const std::vector<HardwareProfile>& BuiltinProfiles() {
  static const std::vector<HardwareProfile>* profiles = [] {
    auto* out = new std::vector<HardwareProfile>;
    for (const auto& [file, text] : internal::BuiltinProfileTexts()) {
      auto p = ParseProfileText(text, absl::StrCat("deploy/profiles/", std::string(file)));
      // The files are checked by the recommend tests; a bad one is our bug.
      if (!p.ok()) {
        std::fprintf(stderr, "tilec: internal error (a compiler bug): built-in %s\n",
                     std::string(p.status().message()).c_str());
        std::abort();
      }
      out->push_back(*std::move(p));
    }
    SortById(*out);
    return out;
  }();
  return *profiles;
}

absl::StatusOr<std::vector<HardwareProfile>> LoadProfiles(const std::string& dir) {
  std::map<std::string, HardwareProfile> by_id;
  for (const HardwareProfile& p : BuiltinProfiles()) by_id[p.id()] = p;
  if (!dir.empty()) {
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".textproto") files.push_back(entry.path().string());
    }
    if (ec)
      return absl::NotFoundError(
          absl::StrCat("cannot list profile folder ", dir, ": ", ec.message()));
    std::sort(files.begin(), files.end());
    std::map<std::string, std::string> seen;
    for (const std::string& f : files) {
      auto p = LoadProfileFile(f);
      if (!p.ok()) return p.status();
      if (auto it = seen.find(p->id()); it != seen.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(f, ": profile id '", p->id(), "' is also defined by ", it->second));
      }
      seen[p->id()] = f;
      by_id[p->id()] = *std::move(p);
    }
  }
  std::vector<HardwareProfile> out;
  for (auto& [id, p] : by_id) out.push_back(std::move(p));
  return out;
}

absl::StatusOr<HardwareProfile> FindProfile(const std::vector<HardwareProfile>& profiles,
                                            std::string_view target) {
  const std::string want = absl::AsciiStrToLower(std::string(target));
  for (const HardwareProfile& p : profiles) {
    if (absl::AsciiStrToLower(p.id()) == want) return p;
  }
  for (const HardwareProfile& p : profiles) {
    for (const std::string& alias : p.aliases()) {
      if (absl::AsciiStrToLower(alias) == want) return p;
    }
  }
  std::vector<std::string> ids;
  for (const HardwareProfile& p : profiles) ids.push_back(p.id());
  return absl::NotFoundError(
      absl::StrCat("unknown target '", std::string(target),
                   "'; known hardware profiles: ", absl::StrJoin(ids, ", ")));
}

double MatrixPeakTflops(const HardwareProfile& profile, ir::DType dtype) {
  for (const auto& peak : profile.matrix_peaks()) {
    if (ir::ParseDType(peak.dtype()) == dtype) return peak.tflops();
  }
  return 0;
}

inference::TargetInfo TargetInfoFor(const HardwareProfile& p) {
  const std::string arch =
      p.vendor() == "host" ? (p.emulates().empty() ? p.arch() : p.emulates()) : p.arch();
  // The lowering of the target the profile is for (the registry's features:
  // wave size, mma / wgmma / MFMA, TMA), within the profile's limits.
  inference::TargetInfo t;
  if (absl::StatusOr<const targets::Target*> known = targets::FindTarget(arch); known.ok()) {
    t = (*known)->info;
  } else {
    t.warp_size = p.warp_size() > 0 ? p.warp_size() : 32;
    t.vector_bytes = 16;
    t.supports_ldmatrix = p.vendor() == "nvidia";
    t.supports_mma = p.vendor() != "amd";
    t.supports_mfma = p.vendor() == "amd";
  }
  t.name = arch;
  t.max_threads_per_block = p.max_threads_per_block();
  t.shared_memory_per_block = p.shared_memory_per_block_bytes();
  t.supports_cp_async = t.supports_cp_async && p.async_copy();
  return t;
}

frontend::DeviceFacts DeviceFactsOf(const HardwareProfile& profile) {
  frontend::DeviceFacts d;
  d.profile = profile.id();
  d.name = profile.name();
  d.vendor = profile.vendor();
  const std::string arch = profile.emulates().empty() ? profile.arch() : profile.emulates();
  if (arch.size() >= 5 && arch.rfind("sm_", 0) == 0 && std::isdigit(arch[3]) &&
      std::isdigit(arch[4])) {
    d.major = arch[3] - '0';
    d.minor = arch[4] - '0';
  } else if (arch.size() >= 6 && arch.rfind("gfx", 0) == 0 && std::isdigit(arch[3])) {
    d.major = arch[3] - '0';
    d.minor = std::isdigit(arch[5]) ? arch[5] - '0' : 0;
  }
  d.sm_count = profile.sm_count();
  d.warp_size = profile.warp_size();
  d.shared_memory_per_block = profile.shared_memory_per_block_bytes();
  // Without opting in, an NVIDIA block gets 48 KB of shared memory.
  d.shared_memory_per_block_default = d.vendor == "nvidia"
                                          ? std::min<int64_t>(48 * 1024, d.shared_memory_per_block)
                                          : d.shared_memory_per_block;
  d.shared_memory_per_sm = profile.shared_memory_per_sm_bytes();
  d.registers_per_block = profile.max_registers_per_block();
  d.registers_per_sm = profile.registers_per_sm();
  d.max_threads_per_block = profile.max_threads_per_block();
  d.max_threads_per_sm = profile.max_threads_per_sm();
  d.l2_cache_bytes = profile.l2_cache_bytes();
  return d;
}

}  // namespace tilec::recommend
