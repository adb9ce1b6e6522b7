// What an AMDGPU code object (the hsaco ELF clang and lld write for
// amdgcn-amd-amdhsa) says about its kernels: the AMDGPU metadata note
// (NT_AMDGPU_METADATA, a MessagePack map, code object v4/v5), read without
// any ROCm or LLVM library.
//
//   amdhsa.target   "amdgcn-amd-amdhsa--gfx942"
//   amdhsa.kernels  one map per kernel: .name, .vgpr_count, .agpr_count,
//                   .sgpr_count, .group_segment_fixed_size (LDS bytes),
//                   .private_segment_fixed_size (scratch bytes per lane, the
//                   spills), .kernarg_segment_size, .max_flat_workgroup_size,
//                   .wavefront_size, .vgpr_spill_count, .sgpr_spill_count
#ifndef TILEC_COMPILER_TARGETS_AMDGPU_CODE_OBJECT_H_
#define TILEC_COMPILER_TARGETS_AMDGPU_CODE_OBJECT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::amdgpu {

struct AmdKernelInfo {
  std::string name;
  int64_t vgprs = 0;
  int64_t agprs = 0;
  int64_t sgprs = 0;
  int64_t lds_bytes = 0;
  int64_t scratch_bytes = 0;  // per lane: register spills and stack
  int64_t kernarg_bytes = 0;
  int64_t max_flat_workgroup_size = 0;
  int64_t wavefront_size = 0;
  int64_t vgpr_spills = 0;
  int64_t sgpr_spills = 0;
};

struct CodeObjectInfo {
  std::string target;  // "amdgcn-amd-amdhsa--gfx942"
  // The compiler that wrote it, from the .comment section ("Debian clang
  // version 19.1.7 (3~deb12u1)"); empty when the object does not say.
  std::string compiler;
  std::vector<AmdKernelInfo> kernels;
};

// INVALID_ARGUMENT (naming what is wrong and where) for bytes that are not a
// 64-bit little-endian AMDGPU ELF with a well-formed metadata note.
absl::StatusOr<CodeObjectInfo> ReadCodeObject(std::string_view elf);

}  // namespace tilec::amdgpu

#endif  // TILEC_COMPILER_TARGETS_AMDGPU_CODE_OBJECT_H_
