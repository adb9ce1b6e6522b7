#include "compiler/targets/registry.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tilec::targets {
namespace {

const std::vector<Target>& All() {
  static const auto* targets = new std::vector<Target>{
      {"sm_80", Vendor::kNvidia, "nvrtc", "a100", ".cubin", inference::TargetInfo::Sm80()},
      {"sm_90a", Vendor::kNvidia, "nvrtc", "h100_sxm", ".cubin",
       inference::TargetInfo::Sm90a()},
      {"gfx942", Vendor::kAmd, "clang-19", "mi300x", ".hsaco",
       inference::TargetInfo::Gfx942()},
      {"gfx90a", Vendor::kAmd, "clang-19", "mi250x", ".hsaco",
       inference::TargetInfo::Gfx90a()},
  };
  return *targets;
}

}  // namespace

std::span<const Target> Targets() { return All(); }

std::string TargetNames() {
  std::vector<std::string> names;
  for (const Target& t : All()) names.emplace_back(t.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<const Target*> FindTarget(std::string_view name) {
  for (const Target& t : All()) {
    if (t.name == name) return &t;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown target '", std::string(name),
                                                 "'; tilec knows ", TargetNames()));
}

absl::StatusOr<const Target*> CompileTarget(std::string_view name) { return FindTarget(name); }

}  // namespace tilec::targets
