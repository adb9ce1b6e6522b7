// Binding a program's unbound tile parameters by recommendation, as Compile
// does it (tilecd and the embedded CLI share this path through
// server::CompileCore): the top-ranked config for the target's hardware
// profile is bound, until autotuning knows better.
//
// ProfileForTarget: the profile named `requested` (an id or alias) when it is
// not empty, else the one that names `target` ("sm_90a", "sm_80") among its
// aliases (sm_90a: h100_sxm, sm_80: a100). The profile's arch, or the arch it
// emulates, must be `target`. Errors: INVALID_ARGUMENT naming the known
// profiles, or the arch mismatch.
//
// BindTopRecommendation: Before: `program` verifies. After (OK): `program`
// of the result verifies and binds every tile parameter; when the input had
// unbound ones, `config` holds the value chosen for each (deduced ones
// included), `profile_id` and `predicted_us` the recommendation's; otherwise
// the program is returned as it is and `config` is empty. The result is
// ir::ProgramHash-identical to the same program bound with -D (bind.h), so
// an explicit compile of the chosen config is the same cache entry.
// Errors: FAILED_PRECONDITION when no config is valid on the profile (with
// the most common rejections); DEADLINE_EXCEEDED past `deadline`;
// CANCELLED once `cancelled` returns true; INVALID_ARGUMENT for
// contradictions in deduction or a search space over kMaxSearchConfigs.
#ifndef TILEC_COMPILER_RECOMMEND_AUTO_BIND_H_
#define TILEC_COMPILER_RECOMMEND_AUTO_BIND_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/ir/ir.h"
#include "compiler/recommend/profile.h"
#include "compiler/recommend/space.h"

namespace tilec::recommend {

// True when some tile parameter of `program` has no value.
bool HasUnboundTileParams(const ir::Program& program);

absl::StatusOr<HardwareProfile> ProfileForTarget(const std::vector<HardwareProfile>& profiles,
                                                 std::string_view target,
                                                 std::string_view requested);

struct AutoBinding {
  ir::Program program;     // every tile parameter bound
  Config config;           // the values chosen; empty when none was unbound
  std::string profile_id;  // "" when none was unbound
  double predicted_us = 0;
};

absl::StatusOr<AutoBinding> BindTopRecommendation(const ir::Program& program,
                                                  const HardwareProfile& profile,
                                                  absl::Time deadline,
                                                  std::function<bool()> cancelled = nullptr);

// "block_M=128 block_N=64 ...", in the config's (name) order.
std::string ConfigText(const Config& config);

}  // namespace tilec::recommend

#endif  // TILEC_COMPILER_RECOMMEND_AUTO_BIND_H_
