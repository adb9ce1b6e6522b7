// Fragment staging: the conversion for fragment stores that no thread map
// carries.
//
// Inside a T.Parallel nest each iteration runs on the threads that the
// nest's partition names. A store to a fragment at an index the nest does not
// own (OwnedDims in loop_partition.h: not the nest's loop variables in order,
// e.g. `t1[i * bn + j] = ...`, a reshape through registers) makes layout
// inference replicate the fragment, since its readers may need any element on
// any thread; but only the threads that ran the iteration would hold the
// value. This pass routes such stores through shared memory, where every
// thread sees them:
//   - a shared buffer `<F>_stage` with F's dtype and constant shape is
//     allocated at the top of the kernel;
//   - inside the nest every load and store of F uses `<F>_stage` instead;
//   - after the nest, `T.copy(<F>_stage, F)` gives every thread the elements
//     its layout of F holds;
//   - before the nest, `T.copy(F, <F>_stage)` keeps the elements the nest
//     does not write, unless the nest provably writes all of F (stores under
//     no condition and no inner loop whose indices, evaluated over the whole
//     iteration space, reach every element).
// A load at an index the nest does not own needs nothing when the fragment
// can be replicated; a T.gemm's C or A operand cannot (its layout is the
// mma's), so such a nest reads it through `<F>_stage` too: filled before the
// nest, copied back only if the nest also stores to it.
// The emitter places the barriers between the shared accesses
// (emitter_stmt.cc); F itself then takes whatever layout its other uses
// decide.
//
// Before: `program` verifies and every tile parameter is bound. After: no
// T.Parallel nest stores to a fragment, or loads a T.gemm operand fragment,
// at an index it does not own, and the program verifies; `*changed` says whether anything was
// staged (the result is then a new program sharing every untouched node). UNIMPLEMENTED, naming the
// fragment and the nest, when a fragment that needs staging has a non-constant shape or the nest is
// a statement of a T.Pipelined loop with order=/stage= lists (whose length the extra statements
// would change).
#ifndef TILEC_COMPILER_INFERENCE_FRAGMENT_STAGING_H_
#define TILEC_COMPILER_INFERENCE_FRAGMENT_STAGING_H_

#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

// `read_copies` (nest outer loop, fragment): also stage these read-only
// accesses, which layout inference found cannot use the fragment's own
// layout: the nest reads `<F>_stage`, filled from F before it; nothing is
// copied back.
absl::StatusOr<ir::Program> StageFragmentStores(
    const ir::Program& program, bool* changed,
    const std::set<std::pair<const ir::ForNode*, const ir::BufferNode*>>& read_copies = {});

}  // namespace tilec::inference

namespace tilec::inference {

// The conversion for reductions whose destination fragment cannot take its
// source's projected layout: each of `reduces` reduces into a fresh fragment
// `<dst>_red` (allocated at the top of its kernel, same dtype and shape),
// filled from dst first when the reduction accumulates (clear=False), and
// `T.copy(<dst>_red, dst)` follows (a copy between fragments of different
// layouts, which goes through shared memory). The three statements replace the
// reduction as one nested sequence, so T.Pipelined order=/stage= lists keep
// their length. `*changed` says whether any was found.
absl::StatusOr<ir::Program> ConvertReductions(const ir::Program& program,
                                              const std::set<const ir::ReduceNode*>& reduces,
                                              bool* changed);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_FRAGMENT_STAGING_H_
