// The targets tilec knows, in one place (issue 15, "one notion of a
// target"): the server, the cache, the CLI and the recommender ask this
// registry what a target name means and whether tilec emits code for it.
//
//   name     vendor  toolchain  wave  default profile  binary
//   sm_80    nvidia  nvrtc       32   a100             .cubin
//   sm_90a   nvidia  nvrtc       32   h100_sxm         .cubin
//   gfx942   amd     clang-19    64   mi300x           .hsaco
//   gfx90a   amd     clang-19    64   mi250x           .hsaco
//
// A new target is a row here and its own folder under compiler/targets/.
#ifndef TILEC_COMPILER_TARGETS_REGISTRY_H_
#define TILEC_COMPILER_TARGETS_REGISTRY_H_

#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/inference/target_info.h"

namespace tilec::targets {

enum class Vendor { kNvidia, kAmd };

struct Target {
  std::string_view name;             // "sm_90a"
  Vendor vendor;
  std::string_view toolchain;        // "nvrtc", "clang-19"
  std::string_view default_profile;  // the hardware profile recommendation uses by default
  std::string_view binary_suffix;    // ".cubin", ".hsaco"
  inference::TargetInfo info;        // what inference and lowering need (wave size, limits)
};

// Every known target, NVIDIA first, in the order above.
std::span<const Target> Targets();

// The target named `name`; INVALID_ARGUMENT naming the known ones otherwise.
absl::StatusOr<const Target*> FindTarget(std::string_view name);

// The target named `name`, for a compile: tilec compiles for every target
// it knows. INVALID_ARGUMENT naming the known ones otherwise.
absl::StatusOr<const Target*> CompileTarget(std::string_view name);

// "sm_80, sm_90a, gfx942, gfx90a".
std::string TargetNames();

}  // namespace tilec::targets

#endif  // TILEC_COMPILER_TARGETS_REGISTRY_H_
