// T.sync_grid() (a barrier across every block of the grid) at the top level
// of a T.Kernel: the kernel is cut there into consecutive kernels of the same
// grid and block. Kernels of a program run in order, so every block has
// finished what comes before the barrier when any block starts what follows,
// which is all the barrier promises, and no launch has to keep the whole grid
// resident (a cooperative launch).
//
// What a block keeps in its own storage does not cross the cut: a shared,
// fragment or local buffer used on both sides is refused, naming it, and so
// is a name bound before the barrier from such storage and read after it.
// Names bound from parameters and block indices only are bound again after
// the cut; allocations, layout annotations and T.use_swizzle go with the part
// that uses them (T.use_swizzle with every part).
#ifndef TILEC_COMPILER_FRONTEND_GRID_SYNC_H_
#define TILEC_COMPILER_FRONTEND_GRID_SYNC_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

// Cuts `kernel` (its body a Seq of `stmts`) before each statement index in
// `cuts` (ascending). Parts with no statements are dropped. INVALID_ARGUMENT
// (the message without a location) when storage would cross a cut.
absl::StatusOr<std::vector<std::shared_ptr<ir::KernelNode>>> SplitAtGridSyncs(
    const ir::KernelNode& kernel, const std::vector<ir::Stmt>& stmts,
    const std::vector<size_t>& cuts);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_GRID_SYNC_H_
