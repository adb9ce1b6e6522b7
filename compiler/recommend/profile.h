// Hardware profiles: the numbers of one GPU (or of the host emulator) that
// recommendation needs, as data (proto/tilec/v1/profile.proto).
//
// The built-in profiles are the files of deploy/profiles/, embedded in the
// binary at build time so that tilec works from any directory. Users add
// profiles by writing more `<id>.textproto` files in the same format and
// passing their folder (LoadProfileDir); a user profile with the id of a
// built-in one replaces it.
//
// Every loaded profile is validated (ValidateProfile): a missing or
// inconsistent number is an INVALID_ARGUMENT naming the file and the field,
// never a silent zero in the cost model.
#ifndef TILEC_COMPILER_RECOMMEND_PROFILE_H_
#define TILEC_COMPILER_RECOMMEND_PROFILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/frontend.h"
#include "compiler/inference/target_info.h"
#include "compiler/ir/dtype.h"
#include "proto/tilec/v1/profile.pb.h"

namespace tilec::recommend {

using HardwareProfile = ::tilec::v1::HardwareProfile;

// Checks that every field the recommender reads is set and consistent
// (positive counts and rates, per-block limits within per-SM ones, a known
// vendor). `origin` names the file in the message.
absl::Status ValidateProfile(const HardwareProfile& profile, std::string_view origin);

// Parses one profile in text format and validates it.
absl::StatusOr<HardwareProfile> ParseProfileText(std::string_view text, std::string_view origin);

// Reads one `.textproto` file (NOT_FOUND when unreadable).
absl::StatusOr<HardwareProfile> LoadProfileFile(const std::string& path);

// The built-in profiles, sorted by id.
const std::vector<HardwareProfile>& BuiltinProfiles();

// The built-in profiles, then every `*.textproto` of `dir` (when not empty),
// a user profile replacing a built-in one of the same id; sorted by id.
// Duplicate ids within `dir` are INVALID_ARGUMENT.
absl::StatusOr<std::vector<HardwareProfile>> LoadProfiles(const std::string& dir);

// The profile whose id or one of whose aliases is `target` (case-insensitive),
// NOT_FOUND listing the known ids otherwise.
absl::StatusOr<HardwareProfile> FindProfile(const std::vector<HardwareProfile>& profiles,
                                            std::string_view target);

// Dense matrix-unit peak (TFLOP/s) for gemm inputs of `dtype`; 0 when the
// profile has no matrix rate for it.
double MatrixPeakTflops(const HardwareProfile& profile, ir::DType dtype);

// What layout inference needs to know about the profile's target. AMD
// profiles get the layout plan the CUDA lowering would make (tilec has no
// gfx9 lowering yet; the LDS, wavefront and register limits are checked by
// the recommender itself from the plan), so their warp_size here is 32.
inference::TargetInfo TargetInfoFor(const HardwareProfile& profile);

// What the frontend answers when a kernel asks the device (tl_device.cc):
// the profile's numbers, its compute capability from its arch (or the arch
// it emulates): sm_90a is 9.0, gfx942 9.4.
frontend::DeviceFacts DeviceFactsOf(const HardwareProfile& profile);

}  // namespace tilec::recommend

#endif  // TILEC_COMPILER_RECOMMEND_PROFILE_H_
