// The ISA semantics of the warp collectives the host device library exposes
// (tl/abi.h WarpOp): given every lane's operands, compute every lane's result
// exactly as the PTX ISA specifies for
//   shfl.sync.bfly.b32 / shfl.sync.idx.b32 (full member mask, c = 0x1f),
//   ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16,
//   stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 (writes the rows),
//   mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
// with the fragment layouts of docs/cuda_backend.md "Primitives".
//
// Pure functions over the lanes' operand structs: the emulator's scheduler
// calls ExecuteWarpOp once every lane of a warp has arrived. Errors (lanes that
// disagree on the operation's variant, a row address outside shared memory, a
// shuffle from a lane the warp does not have) are returned as
// FAILED_PRECONDITION naming the lane; the caller adds kernel/block/warp.
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATOR_WARP_OPS_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATOR_WARP_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace tilec::host {

// One lane's operands (`in`, the op's *In struct) and result buffer (`out`).
struct LaneOperands {
  const void* in = nullptr;
  void* out = nullptr;
};

// The block's dynamic shared memory, for ldmatrix's and stmatrix's address
// checks.
struct SharedWindow {
  const uint8_t* base = nullptr;
  uint64_t bytes = 0;
};

// Runs collective `op` (a tl::host::WarpOp) for a warp of lanes.size() lanes
// (lane i at index i) on hardware with `warp_size` lanes per warp; writes each
// lane's result through its `out` (stmatrix writes its lanes' rows instead).
// ldmatrix, stmatrix and mma need 32 lanes.
absl::Status ExecuteWarpOp(uint32_t op, absl::Span<const LaneOperands> lanes, int warp_size,
                           const SharedWindow& smem);

// The name of a WarpOp for messages ("shfl_xor", "ldmatrix", "mma", ...).
const char* WarpOpName(uint32_t op);

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATOR_WARP_OPS_H_
