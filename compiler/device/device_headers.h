// The device header library (compiler/device/{common,cuda,host,hip}/tl/*.h),
// embedded in the tilec binary at build time so that compiling generated code
// does not depend on the source tree or the working directory.
//
// DeviceHeaders(target) lists, sorted by path, the target's own headers
// (cuda/ or host/) together with the target-neutral common/ headers, each
// with its path relative to the include root ("tl/tl.h", "tl/gemm.h") and its
// exact text. Generated code includes only "tl/tl.h". The texts are static
// and live for the whole program.
#ifndef TILEC_COMPILER_DEVICE_DEVICE_HEADERS_H_
#define TILEC_COMPILER_DEVICE_DEVICE_HEADERS_H_

#include <span>
#include <string_view>

namespace tilec::device {

enum class DeviceTarget {
  kCuda,  // NVRTC (sm_80, sm_90a): cuda/ + common/
  kHost,  // the SIMT emulator (clang-19): host/ + common/
  kHip,   // AMD GPUs (clang-19, amdgcn-amd-amdhsa): hip/ + common/
};

struct DeviceHeader {
  std::string_view path;  // relative to the include root, e.g. "tl/tl.h"
  std::string_view text;
};

std::span<const DeviceHeader> DeviceHeaders(DeviceTarget target);

}  // namespace tilec::device

#endif  // TILEC_COMPILER_DEVICE_DEVICE_HEADERS_H_
