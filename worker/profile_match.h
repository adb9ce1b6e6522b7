// Which hardware profile (deploy/profiles/) a worker's device is: the
// profile the server files the worker's measurements under, so a worker must
// never claim one its device is not.
//
//   emulator                          host_emulator
//   CUDA, name has "H100" and "PCIe"  h100_pcie
//   CUDA, name has "H100"             h100_sxm
//   CUDA, name has "H200"             h200
//   CUDA, name has "A100"             a100
//   HIP, name has "MI300"             mi300x
//   HIP, name has "MI250"             mi250x
//
// Names are compared case-insensitively ("NVIDIA H100 PCIe",
// "NVIDIA H100 80GB HBM3", "NVIDIA H200", "AMD Instinct MI300X"). Any other
// device has no profile and the worker refuses to start.
#ifndef TILEC_WORKER_PROFILE_MATCH_H_
#define TILEC_WORKER_PROFILE_MATCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/recommend/profile.h"
#include "runtime/backend.h"

namespace tilec::worker {

// The profile id of the device `name` on `backend`; FAILED_PRECONDITION
// naming the device when it matches none.
absl::StatusOr<std::string> MatchProfile(runtime::DeviceSpec::Backend backend,
                                         const std::string& name);

// The profile to announce: `matched` when `requested` is empty or names the
// same profile (by id or alias among `profiles`); INVALID_ARGUMENT
// "device <name> matches profile <matched>, not <requested>" otherwise (also
// for a name no profile has).
absl::StatusOr<std::string> ResolveProfile(const std::string& device_name,
                                           const std::string& matched, const std::string& requested,
                                           const std::vector<recommend::HardwareProfile>& profiles);

}  // namespace tilec::worker

#endif  // TILEC_WORKER_PROFILE_MATCH_H_
