// The CUDA targets tilec compiles for, and the per-target registry of tile
// operator lowerings.
//
// A CudaTarget names an architecture (sm_80, sm_90a) and carries the limits
// that inference and emission check (inference::TargetInfo). Tile operators
// (T.copy, T.gemm, T.fill, T.reduce_*, T.cumsum, T.atomic_add) are lowered to
// CUDA C++ by implementations registered per (operator, target); lookup of an
// operator no implementation covers on a target fails loudly with
// UNIMPLEMENTED naming both, e.g. "T.gemm has no lowering for target sm_90a",
// instead of silently picking another target's code.
#ifndef TILEC_COMPILER_TARGETS_CUDA_TARGET_H_
#define TILEC_COMPILER_TARGETS_CUDA_TARGET_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "compiler/ir/sv.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/inference/target_info.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/nvrtc.h"

namespace tilec::cuda {

// Abseil as installed here has its own absl::string_view, distinct from
// std::string_view, and absl::StrCat takes only the former.
using ::tilec::Sv;
inline absl::string_view Sv(absl::string_view s) { return s; }

// The emitter writes one C++ dialect for NVIDIA and AMD targets: AMD's
// (`amd`, gfx942 and gfx90a) is the same text with `#define TL_AMDGPU`
// before tl/tl.h, compiled by clang-19 against the AMD device library
// (compiler/device/hip/tl), which gives it CUDA's spellings; inference
// (TargetInfo: wave64, MFMA, no cp.async) makes the choices that differ.
struct CudaTarget {
  CudaArch arch = CudaArch::kSm80;  // NVIDIA targets only
  bool amd = false;
  inference::TargetInfo info;  // limits and features; info.name is the target's name

  absl::string_view name() const { return absl::string_view(info.name); }

  static CudaTarget ForArch(CudaArch arch);
  // A target of the registry (compiler/targets/registry.h: sm_80, sm_90a,
  // gfx942, gfx90a) with its TargetInfo; INVALID_ARGUMENT naming the known
  // ones otherwise.
  static absl::StatusOr<CudaTarget> FromName(absl::string_view name);
};

// OK when every element type of `program` lowers on `target`; UNIMPLEMENTED
// naming the first that does not (the float8 formats of the other vendor;
// any float8 on gfx90a).
absl::Status CheckTypesForTarget(const ir::Program& program, const CudaTarget& target);

// "T.copy", "T.gemm", "T.fill", "T.reduce", "T.cumsum", "T.atomic_add"; the
// statement kind's name for anything else.
absl::string_view TileOpName(ir::StmtKind kind);

class EmitContext;  // compiler/targets/cuda/emitter_internal.h

// Emits the code of one tile operator statement into the context.
using TileOpLowering = absl::Status (*)(EmitContext& ctx, const ir::Stmt& stmt);

class LoweringRegistry {
 public:
  // Registers `fn` for `op` on the target named `target`. Registering the
  // same pair twice is a compiler bug (INTERNAL).
  absl::Status Register(ir::StmtKind op, absl::string_view target, TileOpLowering fn);

  // The implementation of `op` on `target`: UNIMPLEMENTED naming the
  // operator and the target when there is none.
  absl::StatusOr<TileOpLowering> Find(ir::StmtKind op, absl::string_view target) const;

 private:
  std::map<std::pair<ir::StmtKind, std::string>, TileOpLowering> impls_;
};

// Every lowering, registered for sm_80, sm_90a, gfx942 and gfx90a (built on
// first use).
const LoweringRegistry& CudaLowerings();

}  // namespace tilec::cuda

#endif  // TILEC_COMPILER_TARGETS_CUDA_TARGET_H_
