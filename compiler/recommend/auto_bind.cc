#include "compiler/recommend/auto_bind.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/verifier.h"
#include "compiler/recommend/bind.h"
#include "compiler/recommend/recommend.h"

namespace tilec::recommend {

bool HasUnboundTileParams(const ir::Program& program) {
  for (const ir::TileParam& tp : program.tile_params) {
    if (!tp.value) return true;
  }
  return false;
}

absl::StatusOr<HardwareProfile> ProfileForTarget(const std::vector<HardwareProfile>& profiles,
                                                 std::string_view target,
                                                 std::string_view requested) {
  absl::StatusOr<HardwareProfile> profile =
      FindProfile(profiles, requested.empty() ? target : requested);
  if (!profile.ok()) {
    if (requested.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no hardware profile for target ", std::string(target),
          " to recommend the unbound tile parameters with; name one (profile): ",
          profile.status().message()));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("profile: ", profile.status().message()));
  }
  if (profile->arch() != target && profile->emulates() != target) {
    return absl::InvalidArgumentError(absl::StrCat(
        "profile ", profile->id(), " is for ", profile->arch(), ", not for the target ",
        std::string(target), "; name a profile of ", std::string(target), " or none"));
  }
  return profile;
}

absl::StatusOr<AutoBinding> BindTopRecommendation(const ir::Program& program,
                                                  const HardwareProfile& profile,
                                                  absl::Time deadline,
                                                  std::function<bool()> cancelled) {
  AutoBinding out;
  if (!HasUnboundTileParams(program)) {
    out.program = program;
    return out;
  }
  RecommendOptions options;
  options.top_k = 1;
  options.deadline = deadline;
  options.cancelled = std::move(cancelled);
  absl::StatusOr<std::vector<Recommendation>> recs = Recommend(program, profile, options);
  if (!recs.ok()) {
    if (recs.status().code() == absl::StatusCode::kNotFound) {
      // No valid config is a property of the program on this hardware.
      return absl::FailedPreconditionError(recs.status().message());
    }
    return recs.status();
  }
  if (recs->empty()) {
    return absl::InternalError(
        absl::StrCat("compiler bug: recommendation for ", program.name, " on ", profile.id(),
                     " returned no config and no error"));
  }
  const Recommendation& top = recs->front();
  absl::StatusOr<ir::Program> bound = BindTileParams(program, top.config);
  if (!bound.ok()) return bound.status();
  if (HasUnboundTileParams(*bound)) {
    return absl::InternalError(absl::StrCat("compiler bug: the recommended config ",
                                            ConfigText(top.config), " of ", program.name,
                                            " leaves tile parameters unbound"));
  }
  if (absl::Status st = ir::Verify(*bound); !st.ok()) {
    return absl::InternalError(absl::StrCat("compiler bug: binding the recommended config ",
                                            ConfigText(top.config), " of ", program.name,
                                            " gives a program that does not verify: ",
                                            st.message()));
  }
  out.program = *std::move(bound);
  out.config = top.config;
  out.profile_id = profile.id();
  out.predicted_us = top.predicted_us;
  return out;
}

std::string ConfigText(const Config& config) {
  return absl::StrJoin(config, " ", absl::PairFormatter("="));
}

}  // namespace tilec::recommend
