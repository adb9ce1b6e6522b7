// The proof that every fragment access runs on a thread that holds the
// element: checked on the layout plan before any code is emitted from it.
//
// For every load and store of a fragment F with layout L_F:
//   - inside a T.Parallel nest with iteration layout L_N, at an index the nest
//     owns (OwnedDims in loop_partition.h): L_F is L_N (all the nest's
//     variables) or L_N projected onto the variables used (a subset), slot for
//     slot (SameLayout). The thread running an iteration then holds the
//     element, and every thread holding it runs the iteration.
//   - inside a nest at any other index: L_F is replicated over every thread
//     (so any thread can read any element); for a store, L_N is too (so every
//     copy of the element is written, not only the running thread's).
//   - outside any nest (every thread runs the statement): L_F is replicated
//     over every thread.
// T.copy, T.gemm, T.reduce and T.cumsum derive their partitions from the
// layouts themselves (loop_partition.h, the emitter's templates) and are not
// checked here.
//
// Before: `plan` is InferLayouts' plan for `program` (keyed by its nodes).
// After (OK): the properties above hold. Otherwise INTERNAL, "compiler bug",
// naming the fragment, both layouts and the access's position: inference
// produced a map that the generated code would read wrongly.
#ifndef TILEC_COMPILER_INFERENCE_FRAGMENT_CHECK_H_
#define TILEC_COMPILER_INFERENCE_FRAGMENT_CHECK_H_

#include "absl/status/status.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

absl::Status CheckFragmentAccesses(const ir::Program& program, const LayoutPlan& plan);

// Local and var buffers (T.alloc_local, T.alloc_var) are per thread: one that
// is stored inside a T.Parallel nest holds only the iterations its thread
// ran, so it may be used only inside that nest (a per-iteration temporary).
// INVALID_ARGUMENT naming the buffer, the nest and the use outside it
// otherwise, with the fix (a fragment: T.alloc_fragment).
absl::Status CheckThreadPrivateBuffers(const ir::Program& program);

// The iterations of a T.Parallel nest are independent. A store whose index
// leaves out one of the nest's variables, and whose value reads the element
// it stores (`r[j] += A[i, j]` in T.Parallel(M, N)), makes several
// iterations read, modify and write one element: a reduction written as a
// race, which no thread mapping computes. INVALID_ARGUMENT naming the
// element, the nest and the variables, with the fix (T.reduce_*), for
// fragment, shared and global buffers (thread-private buffers are
// CheckThreadPrivateBuffers's).
absl::Status CheckParallelAccumulation(const ir::Program& program);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_FRAGMENT_CHECK_H_
