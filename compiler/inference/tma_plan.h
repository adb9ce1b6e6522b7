// Which global->shared copies TMA expresses, and how (docs/cuda_backend.md
// "TMA"). A T.copy of a box of a kernel parameter's tensor into a whole
// shared buffer becomes one cp.async.bulk.tensor per 128-byte column block
// of the buffer's layout when every rule of the hardware and of the layout
// holds; otherwise it stays on cp.async, and the reason is kept for the
// generated code's comments:
//
// - the source is a tensor parameter (not a strided view, not a workspace)
//   of rank 1 to 5 and the copy converts nothing; every dimension but the
//   first is a constant, so the strides are known and each is a multiple
//   of 16 bytes (the first may be dynamic: the runtime reads it at launch);
// - the copy's extents are constants, its destination is the whole shared
//   buffer, and the extents other than 1 are the buffer's, in order (the box
//   lands row-major in the buffer's element order);
// - the buffer's layout is one TMA writes: row-major with rows of a multiple
//   of 16 bytes, or tl::Swizzled with rows of 32, 64 or 128 bytes (the 32-,
//   64-, 128-byte swizzle modes: the same XOR of address bits 4.. with 7..),
//   or rows of a multiple of 128 bytes stored as 128-byte column blocks of
//   one matrix (one load per block, 128-byte swizzle);
// - every box dimension is at most 256 elements;
// - the buffer (each of its stages) starts on the swizzle's period (128
//   bytes unswizzled; 256, 512, 1024 for 32, 64, 128 bytes).
// Out-of-bounds elements of the box read as zero, as T.copy's do.
#ifndef TILEC_COMPILER_INFERENCE_TMA_PLAN_H_
#define TILEC_COMPILER_INFERENCE_TMA_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/inference/layout.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

struct TmaCopyPlan {
  int param = -1;             // Program.params index of the source tensor
  int64_t elem_bytes = 0;
  std::vector<int64_t> box;   // per tensor dimension, outermost first
  int64_t swizzle_bytes = 0;  // 0, 32, 64, 128
  struct Load {
    int64_t smem_elements = 0;  // destination, in elements from the buffer's start
    int64_t last_dim_offset = 0;  // added to the copy's min of the tensor's last dimension
  };
  std::vector<Load> loads;
  int64_t bytes = 0;  // all loads of one copy
};

// The plan for `copy`, or FAILED_PRECONDITION saying why TMA cannot do it.
// `layout` is the destination's shared layout, `rows_allocated` its rows as
// allocated (padding included), `smem_offset` and `stage_bytes` where it (and
// each pipeline stage of it) starts.
absl::StatusOr<TmaCopyPlan> PlanTmaCopy(const ir::Program& program, const ir::CopyNode& copy,
                                        const SharedLayout& layout, int64_t rows_allocated,
                                        int64_t smem_offset, int64_t stage_bytes);

// The same for a TMA store: a T.copy of a whole shared buffer to a box of a
// tensor parameter (elements outside the tensor are dropped, as T.copy's are).
absl::StatusOr<TmaCopyPlan> PlanTmaStore(const ir::Program& program, const ir::CopyNode& copy,
                                         const SharedLayout& layout, int64_t rows_allocated,
                                         int64_t smem_offset);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_TMA_PLAN_H_
