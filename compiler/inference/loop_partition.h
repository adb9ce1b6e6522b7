// Loop partitions: how a T.Parallel nest, a T.copy or a tile T.atomic_add is
// split over the threads of a block, and how wide its vector accesses may be.
// Used by layout inference (layout_inference.h) once the fragment layouts
// are decided; the results are the LoopPartition records of the LayoutPlan.
//
// Vector widths are powers of two. An access is contiguous in the innermost
// iteration when its last index is `base + j` (j the innermost loop variable
// of a nest, or the innermost dimension of a copy) and no other index uses
// j; it allows a vector of v elements when v * element size <= the target's
// vector_bytes, v divides the power of two known to divide `base`, and (for
// buffers of rank >= 2 whose last dimension is a constant) v divides the
// buffer's last dimension, so that every vector starts aligned and lies
// wholly inside or outside each row. A symbolic last dimension does not limit
// the vector: the emitter tests such runs' alignment at run time. Fragment
// and per-thread (local, var) accesses never limit the vector.
#ifndef TILEC_COMPILER_INFERENCE_LOOP_PARTITION_H_
#define TILEC_COMPILER_INFERENCE_LOOP_PARTITION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/inference/layout.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/inference/target_info.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

// A T.Parallel nest: directly nested kParallel loops from 0 with constant
// extents (a body that is a one-statement Seq counts as direct nesting).
struct ParallelNest {
  const ir::ForNode* outer = nullptr;
  std::vector<ir::Var> vars;  // outermost first
  std::vector<int64_t> extents;
  ir::Stmt body;  // inside the innermost loop
};

// The nest whose outermost loop is `f` (a kParallel loop); nullopt when a
// loop of the chain does not start at a constant 0 or has no constant extent
// >= 1 (layout inference reports those).
std::optional<ParallelNest> NestAt(const ir::ForNode& f);

// For an access of a fragment of `shape` at `indices` inside `nest`: the nest
// dimension of each index when every index is one of the nest's loop
// variables, in increasing nest order, and each of those loops' extent is the
// fragment's dimension there; empty otherwise. The nest "owns" such an
// access: layout inference gives the fragment the nest's layout (all the
// variables) or its projection onto them (a subset), so the thread running
// an iteration holds the element. Any other access of a fragment inside a
// nest needs the fragment on every thread.
std::vector<int> OwnedDims(const ParallelNest& nest, const std::vector<ir::Expr>& indices,
                           const std::vector<int64_t>& shape);

// Whether an access at `indices` (lets substituted) walks consecutive
// elements as `j` steps by one: no index but the last uses j, and the last is
// a sum with exactly one term `j` (added, possibly cast) and other terms free
// of j. Then `base_divisor` (if given) receives the power of two known to
// divide the sum of the other terms.
bool ContiguousIn(const std::vector<ir::Expr>& indices, const ir::VarNode* j,
                  int64_t* base_divisor = nullptr);

// The largest power of two dividing x (x >= 1), and the largest power of two
// not above x (x >= 1).
int64_t Pow2Divisor(int64_t x);
int64_t FloorPow2(int64_t x);

// The widest vector every contiguous non-fragment access of the nest allows
// (vector_bytes / 1 when it has none).
int64_t NestAccessVector(const ParallelNest& nest, const TargetInfo& target);

// The layout of a nest that no fragment drives: Blocked over its extents
// with the access vector, limited by the last extent and by elements /
// threads (so that no thread idles while another has two runs).
FragmentLayout DefaultNestLayout(const ParallelNest& nest, int64_t threads,
                                 const TargetInfo& target);

// The layout of a fragment nothing constrains: Blocked with vector_bytes /
// element size, limited by the last dim and by elements / threads.
FragmentLayout DefaultFragmentLayout(const std::vector<int64_t>& shape, int64_t elem_bytes,
                                     int64_t threads, const TargetInfo& target);

// The partition of a nest whose iteration layout is decided (`follows` the
// fragment that drove it, or null).
LoopPartition NestPartition(const ParallelNest& nest, const FragmentLayout& layout,
                            ir::Buffer follows, const TargetInfo& target);

// The partition of a T.copy or tile T.atomic_add from `src` to `dst`.
// `src_layout` / `dst_layout` are the layouts of the sides that are whole
// fragments (null otherwise). The partition follows the destination fragment
// if there is one, else the source fragment, else it is Blocked over the
// destination region's extents (UNIMPLEMENTED when they are not constants).
absl::StatusOr<LoopPartition> RegionPartition(LoopPartition::Kind kind, const ir::Region& src,
                                              const ir::Region& dst,
                                              const FragmentLayout* src_layout,
                                              const FragmentLayout* dst_layout, int64_t threads,
                                              const TargetInfo& target);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_LOOP_PARTITION_H_
