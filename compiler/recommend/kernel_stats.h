// What one launch of each kernel of a bound program needs and does: the
// resources a block holds (threads, shared memory, registers) and the work a
// block performs (global traffic, matrix and vector arithmetic), the inputs
// of the cost model (cost_model.h) and of the resource limits.
//
// Before: every tile parameter of `program` is bound (bind.h). Extents are
// evaluated with the dynamic dims at `dyn_dims` (missing ones at
// kDefaultDynDim), block indices at the middle of their range, loop
// variables at the middle of theirs (so a causal loop bound counts its
// average trip), and scalar parameters at 1. An extent that still does not
// evaluate counts as 1.
//
// Counting rules (per block):
//  - shared memory: every shared allocation, rounded up to 128 bytes (the
//    emitter's alignment); one written by a T.copy inside a T.Pipelined loop
//    is held once per stage; plus the plan's fragment exchanges (a copy
//    between two fragments of different layouts goes through shared memory).
//  - registers per thread: the fragments' slots (the plan's local_size, or
//    elements / threads without a plan) in 32-bit words, local and var
//    buffers, the largest T.gemm's operand registers for one k16 step (4 per
//    16-row and 2 per 8-column mma tile of the warp), on targets without
//    asynchronous copies the registers a global->shared copy passes through,
//    and kRegisterOverhead for addresses, indices, loop counters and
//    predicates; rounded up to the allocation granularity of 8.
//  - global traffic: the elements T.copy, T.fill, T.atomic_add (twice: read
//    and write), loads and stores move to or from global buffers, times the
//    trip counts of the loops around them; and, once, the size of every
//    global buffer touched (what the kernel must move at least once).
//  - loop trips: iterations of each T.Pipelined loop and of serial loops not
//    nested in another main loop, times the trips around them (each costs
//    a barrier and the pipeline's bookkeeping).
//  - an if with an else counts each branch at half weight.
//  - arithmetic: T.gemm is 2*M*N*K matrix flops in the dtype of A; each
//    arithmetic operation in a statement counts once per execution, each
//    reduced or scanned element once (vector flops).
#ifndef TILEC_COMPILER_RECOMMEND_KERNEL_STATS_H_
#define TILEC_COMPILER_RECOMMEND_KERNEL_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/ir.h"
#include "compiler/recommend/profile.h"

namespace tilec::recommend {

inline constexpr int64_t kDefaultDynDim = 4096;
inline constexpr int64_t kRegisterOverhead = 32;

struct KernelStats {
  int index = 0;        // kernel number in program order
  int64_t blocks = 1;   // grid size
  int64_t threads = 1;  // per block
  int64_t shared_bytes = 0;
  int64_t registers = 0;  // per thread, estimated
  bool registers_from_plan = false;
  double matrix_flops = 0;  // per block
  ir::DType matrix_dtype = ir::DType::kFloat16;
  double vector_flops = 0;       // per block
  double global_bytes = 0;       // per block
  double unique_bytes = 0;       // whole kernel: sizes of the global buffers it touches
  double shared_read_bytes = 0;  // per block: T.gemm operand reads from shared memory
  double bytes_per_stage = 0;    // global bytes one iteration of the main loop brings in
  int64_t num_stages = 1;        // of the T.Pipelined loops (largest)
  double loop_trips = 0;         // iterations of the main (pipelined or top serial) loops
  int gemms = 0;                 // T.gemm statements in the kernel
};

absl::StatusOr<std::vector<KernelStats>> AnalyzeKernels(
    const ir::Program& program, const HardwareProfile& profile,
    const std::map<std::string, int64_t>& dyn_dims, const inference::LayoutPlan* plan);

// The registers per thread a kernel's estimate may reach: the profile's
// per-thread maximum, or 3/4 of it for a kernel that chains T.gemms (an
// attention or decode block: scores, their cast, the output accumulator and
// the softmax temporaries are live together). The estimate counts the
// buffers the program holds, not ptxas's temporaries; on the GQA decode
// example the count ptxas reported ran ~1.4x the estimate, and its config
// estimated at 192 of 255 spilled on both sm_80 and sm_90a. Past this a
// config is rejected as likely to spill.
int64_t SpillFreeRegisters(const HardwareProfile& profile, const KernelStats& k);

// OK when a kernel fits the profile's per-block and per-SM limits, else
// RESOURCE_EXHAUSTED naming the limit ("shared memory 232449 bytes > 232448
// per block on h100_sxm").
absl::Status CheckLimits(const KernelStats& k, const HardwareProfile& profile);

// Resident blocks per SM allowed by threads, shared memory (plus the
// per-block reservation), registers and the block limit; `limit` says which
// bounds it ("shared memory", "registers", "threads", "blocks").
int64_t BlocksPerSm(const KernelStats& k, const HardwareProfile& profile, std::string* limit);

}  // namespace tilec::recommend

#endif  // TILEC_COMPILER_RECOMMEND_KERNEL_STATS_H_
