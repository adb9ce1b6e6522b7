#include "compiler/targets/registry.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tilec::targets {
namespace {

// MI300X / MI250X compute units: 64 KiB of LDS per workgroup, 1024 work-items.
inference::TargetInfo AmdInfo(std::string name) {
  inference::TargetInfo t;
  t.name = std::move(name);
  t.warp_size = 64;
  t.max_threads_per_block = 1024;
  t.shared_memory_per_block = 64 * 1024;
  t.vector_bytes = 16;
  return t;
}

const std::vector<Target>& All() {
  static const auto* targets = new std::vector<Target>{
      {"sm_80", Vendor::kNvidia, "nvrtc", "a100", ".cubin", true, inference::TargetInfo::Sm80()},
      {"sm_90a", Vendor::kNvidia, "nvrtc", "h100_sxm", ".cubin", true,
       inference::TargetInfo::Sm90a()},
      {"gfx942", Vendor::kAmd, "clang-19", "mi300x", ".hsaco", false, AmdInfo("gfx942")},
      {"gfx90a", Vendor::kAmd, "clang-19", "mi250x", ".hsaco", false, AmdInfo("gfx90a")},
  };
  return *targets;
}

}  // namespace

std::span<const Target> Targets() { return All(); }

std::string TargetNames(bool compiled_only) {
  std::vector<std::string> names;
  for (const Target& t : All()) {
    if (!compiled_only || t.emits) names.emplace_back(t.name);
  }
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<const Target*> FindTarget(std::string_view name) {
  for (const Target& t : All()) {
    if (t.name == name) return &t;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown target '", std::string(name),
                                                 "'; tilec knows ", TargetNames()));
}

absl::StatusOr<const Target*> CompileTarget(std::string_view name) {
  absl::StatusOr<const Target*> t = FindTarget(name);
  if (!t.ok()) return t.status();
  if (!(*t)->emits) {
    return absl::UnimplementedError(absl::StrCat(
        "tilec does not emit code for ", std::string(name),
        (*t)->vendor == Vendor::kAmd ? " (AMD) yet: its toolchain is built, its emitter is not"
                                     : " yet",
        "; it compiles for ", TargetNames(/*compiled_only=*/true)));
  }
  return t;
}

}  // namespace tilec::targets
