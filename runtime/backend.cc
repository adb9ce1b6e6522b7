#include "runtime/backend.h"

#include "absl/strings/str_cat.h"

namespace tilec::runtime {

absl::StatusOr<DeviceSpec> DeviceSpec::Parse(std::string_view text) {
  DeviceSpec spec;
  if (text == "emulator") return spec;
  auto colon = text.find(':');
  std::string_view kind = text.substr(0, colon);
  if (kind == "cuda") {
    spec.backend = Backend::kCuda;
  } else if (kind == "hip") {
    spec.backend = Backend::kHip;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("device \"", std::string(text), "\": expected cuda:N, hip:N or emulator"));
  }
  if (colon != std::string_view::npos) {
    std::string_view num = text.substr(colon + 1);
    int v = 0;
    if (num.empty() || num.size() > 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("device \"", std::string(text), "\": bad ordinal"));
    }
    for (char c : num) {
      if (c < '0' || c > '9')
        return absl::InvalidArgumentError(
            absl::StrCat("device \"", std::string(text), "\": bad ordinal"));
      v = v * 10 + (c - '0');
    }
    spec.ordinal = v;
  }
  return spec;
}

std::string DeviceSpec::ToString() const {
  switch (backend) {
    case Backend::kCuda: return absl::StrCat("cuda:", ordinal);
    case Backend::kHip: return absl::StrCat("hip:", ordinal);
    case Backend::kEmulator: return "emulator";
  }
  return "?";
}

DeviceType DeviceSpec::memory_type() const {
  switch (backend) {
    case Backend::kCuda: return DeviceType::kCuda;
    case Backend::kHip: return DeviceType::kHip;
    case Backend::kEmulator: return DeviceType::kCpu;
  }
  return DeviceType::kCpu;
}

absl::StatusOr<std::unique_ptr<Backend>> OpenBackend(const DeviceSpec& device,
                                                     const EmulatorBackendOptions& options) {
  switch (device.backend) {
    case DeviceSpec::Backend::kCuda: return OpenCudaBackend(device.ordinal);
    case DeviceSpec::Backend::kHip: return OpenHipBackend(device.ordinal);
    case DeviceSpec::Backend::kEmulator: return OpenEmulatorBackend(options);
  }
  return absl::InvalidArgumentError("unknown device");
}

}  // namespace tilec::runtime
