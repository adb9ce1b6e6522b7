#include "worker/profile_match.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tilec::worker {

absl::StatusOr<std::string> MatchProfile(runtime::DeviceSpec::Backend backend,
                                         const std::string& name) {
  using Backend = runtime::DeviceSpec::Backend;
  const std::string upper = absl::AsciiStrToUpper(std::string(name));
  auto has = [&](const char* part) { return absl::StrContains(upper, part); };
  switch (backend) {
    case Backend::kEmulator: return std::string("host_emulator");
    case Backend::kCuda:
      if (has("H100") && has("PCIE")) return std::string("h100_pcie");
      if (has("H100")) return std::string("h100_sxm");
      if (has("H200")) return std::string("h200");
      if (has("A100")) return std::string("a100");
      break;
    case Backend::kHip:
      if (has("MI300")) return std::string("mi300x");
      if (has("MI250")) return std::string("mi250x");
      break;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("device '", name,
                   "' matches no hardware profile (known: H100 PCIe, H100 SXM, H200, A100, "
                   "MI300X, MI250X, the emulator); tilec-worker measures only profiled devices"));
}

absl::StatusOr<std::string> ResolveProfile(
    const std::string& device_name, const std::string& matched, const std::string& requested,
    const std::vector<recommend::HardwareProfile>& profiles) {
  if (requested.empty()) return std::string(matched);
  absl::StatusOr<recommend::HardwareProfile> p = recommend::FindProfile(profiles, requested);
  if (p.ok() && p->id() == matched) return std::string(matched);
  return absl::InvalidArgumentError(absl::StrCat("device ", device_name, " matches profile ",
                                                 matched, ", not ", requested,
                                                 p.ok() ? "" : " (no profile has that name)"));
}

}  // namespace tilec::worker
