// Layout inference: decides where every fragment element lives, how each
// T.Parallel nest, T.copy and tile T.atomic_add is split over the threads of
// the block, how each shared buffer is laid out, and the warp partition of
// every T.gemm (docs/cuda_backend.md "Layout plan").
//
// Before: `program` verifies (compiler/ir/verifier.h) and every tile
// parameter is bound (else FAILED_PRECONDITION naming the unbound ones, "bind
// them with -D"). Thread counts, fragment and shared shapes and T.Parallel
// extents are constants (else UNIMPLEMENTED naming the buffer or loop).
//
// Pipeline: StageFragmentStores (fragment_staging.h) first, since stores it
// routes through shared memory must not constrain the fragment; then the
// fixed point below; then CheckFragmentAccesses (fragment_check.h) proves
// that every fragment access runs on a thread holding its element, so no
// code is ever emitted from an unproven map.
//
// After (OK): every fragment buffer allocated in a kernel has a layout over
// the kernel's thread count; every shared buffer a SharedLayout; every
// T.gemm a warp partition; every T.Parallel nest (keyed by its outermost
// ForNode), every T.copy and every tile T.atomic_add (keyed by the node) a
// LoopPartition.
//
// The fixed point, from strict to free (a worklist; hard constraints always
// fire before soft ones, and a free choice is made only when nothing fires):
//  1. strict: a T.gemm's C fragment is MmaAccumulator(M, N, partition); an A
//     operand in a fragment is RegisterA of the same gemm; a fragment read or
//     written where no T.Parallel nest owns the index (outside any nest, or
//     inside one with indices that are not loop variables) is Replicated
//     (every thread holds it all).
//  2. hard propagation: reduce dst = Projected(src, dim); cumsum dst = src;
//     in a T.Parallel nest, every fragment indexed by exactly the nest's
//     variables in order has the nest's layout, and every fragment indexed by
//     an ordered subset of them has the nest's layout projected onto that
//     subset (assigned when free, checked when already decided).
//  3. soft propagation: T.copy between two whole fragments of the same shape
//     gives the free side the other side's layout. When both sides are
//     already decided and differ, the copy is an exchange (through shared
//     memory), not a conflict: this is how `T.copy(acc_s, acc_s_cast)` feeds a
//     register-A gemm whose partition differs from the producer's.
//  4. free: a nest that no fragment decides but whose projection onto a
//     fragment is decided (`S[i, j] = m[i]` with m a row reduction) takes a
//     layout that projects to it ("lifted": the dropped dimensions spread
//     over m's replicas, the rest in registers). Otherwise the undecided
//     fragment or nest of highest rank (then most elements, then first in
//     program order) becomes Blocked with the widest vector: vector_bytes /
//     element size (for a nest, the largest element size among its
//     contiguous accesses, and their alignment), limited by the last
//     dimension and by elements / threads. Then back to 2.
// A hard constraint between two decided, different layouts is a conflict.
// Conversions: when a program as written has one, inference runs again with
// the accesses a nest only reads made weak (LayoutSolver::Solve with
// conversions: every other constraint first, then each weak one, dropped when
// it would conflict); a dropped read is served from a shared copy of the
// fragment filled before the nest (fragment_staging.h, read_copies), and
// inference runs on the converted program, which LayoutPlan::program holds.
// (Two T.gemm accumulators of different warp layouts sharing a row vector,
// as in attention and MLA decode, need this.) A conflict that no conversion
// removes (both sides written) is INVALID_ARGUMENT naming both buffers (or
// the nest), both layouts and the statements that imposed them, each by its
// position (`kernel 0 > for k > T.gemm #2`, as the verifier writes
// positions): the message of the program as written.
//
// Other errors: a kernel with more threads than the target allows, or with
// shared buffers larger than the target's shared memory per block,
// INVALID_ARGUMENT; T.gemm on a target without mma, with a thread count that
// is not a whole number of warps, with B in a fragment, or with part of a
// fragment as an operand, UNIMPLEMENTED.
#ifndef TILEC_COMPILER_INFERENCE_LAYOUT_INFERENCE_H_
#define TILEC_COMPILER_INFERENCE_LAYOUT_INFERENCE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/inference/layout.h"
#include "compiler/inference/target_info.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

// How a T.Parallel nest, T.copy or tile T.atomic_add is split over threads.
struct LoopPartition {
  enum class Kind : uint8_t { kParallel, kCopy, kAtomicAdd };
  Kind kind = Kind::kParallel;
  int64_t threads = 0;  // threads of the block
  // Consecutive last-dimension iterations one thread runs in consecutive
  // local slots, such that every access that is contiguous in the last
  // iteration index (global/shared index `base + j` with j the last loop
  // variable, or the last dim of a copy) starts at a multiple of `vector`
  // elements and stays within vector_bytes: those accesses may be vectorised.
  int64_t vector = 1;
  // The fragment whose layout drives the iteration (for a T.copy between two
  // fragments, the destination), or null.
  ir::Buffer follows;
  // Which thread runs which iteration: a layout over the iteration space.
  // kParallel: shape = the nest's extents. kCopy/kAtomicAdd: the followed
  // fragment's layout when `follows` is set (over the fragment's shape),
  // else a layout over the destination region's extents. A replicated
  // iteration is run by `replicate` threads; side effects outside fragments
  // (stores to shared/global, atomics) must be done by replica 0 only.
  FragmentLayout layout;
  // kCopy between two fragments whose layouts differ: the data moves through
  // shared memory (every thread writes its source slots, a barrier, every
  // thread reads its destination slots).
  bool exchange = false;
  // kParallel: the nest's loop variables, outermost first, and the body
  // inside the innermost loop of the nest.
  std::vector<ir::Var> loop_vars;
  ir::Stmt body;
};

struct LayoutPlan {
  std::map<const ir::BufferNode*, FragmentLayout> fragments;
  std::map<const ir::BufferNode*, SharedLayout> shared;
  // Keyed by the outermost ForNode of a T.Parallel nest, a CopyNode or an
  // AtomicAddNode (tile form).
  std::map<const ir::StmtNode*, LoopPartition> loops;
  std::map<const ir::StmtNode*, GemmWarpPartition> gemms;
  // When InferLayouts converted something (fragment_staging.h), the program
  // the plan is for: the input with the conversions inserted. Emit that one.
  // Null when the plan is for the input program itself.
  std::shared_ptr<const ir::Program> program;
};

// The program `plan` describes, given the program it was inferred from.
const ir::Program& PlannedProgram(const LayoutPlan& plan, const ir::Program& input);

absl::StatusOr<LayoutPlan> InferLayouts(const ir::Program& program, const TargetInfo& target);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_LAYOUT_INFERENCE_H_
