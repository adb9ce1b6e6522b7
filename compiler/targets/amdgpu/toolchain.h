// AMD code objects from HIP-flavoured C++: clang-19 in HIP device-only mode
// for amdgcn-amd-amdhsa, with no ROCm headers or device libraries (the
// project's tl/ headers for AMD, compiler/device/hip, are all the kernel
// sees), code object v5, linked by lld into the bare ELF the HIP runtime
// loads (hsaco). The kernels' register, LDS and scratch use come back from
// the code object's metadata note (code_object.h).
//
//   clang++-19 -x hip --cuda-device-only --no-gpu-bundle-output -nogpulib
//     -nogpuinc -O3 -std=c++20 -mcode-object-version=5 -fuse-cuid=none
//     --offload-arch=<arch>
//
// The build happens in a fresh folder under options.work_dir, removed
// afterwards; the output does not depend on that folder (byte-reproducible).
#ifndef TILEC_COMPILER_TARGETS_AMDGPU_TOOLCHAIN_H_
#define TILEC_COMPILER_TARGETS_AMDGPU_TOOLCHAIN_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/targets/amdgpu/code_object.h"

namespace tilec::amdgpu {

struct HsacoOptions {
  std::string clang = "clang++-19";
  std::string work_dir;                     // $TMPDIR or /tmp when empty
  std::string source_name = "kernel.hip";  // the name messages give the source
};

struct Hsaco {
  std::string arch;         // "gfx942"
  std::string code_object;  // the ELF
  CodeObjectInfo info;      // its metadata
  double seconds = 0;       // the compile's wall time
};

// Whether tilec compiles for `arch`: "gfx942" (MI300X) or "gfx90a" (MI250X).
bool IsAmdArch(std::string_view arch);

// INVALID_ARGUMENT for another arch; FAILED_PRECONDITION when clang cannot be
// run; INTERNAL with clang's log when it rejects the source (for generated
// code a tilec bug) or writes no readable code object.
absl::StatusOr<Hsaco> CompileHsaco(std::string_view source, std::string_view arch,
                                   const HsacoOptions& options = {});

// The first line of `clang --version` (part of the cache key of AMD builds).
absl::StatusOr<std::string> ClangVersion(const HsacoOptions& options = {});

}  // namespace tilec::amdgpu

#endif  // TILEC_COMPILER_TARGETS_AMDGPU_TOOLCHAIN_H_
