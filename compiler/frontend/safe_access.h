// Out-of-bounds accesses of global tensors, as TileLang defines them: an
// element load whose indices may leave the tensor's shape reads the tensor's
// safe value instead (0, or the one `T.annotate_safe_value({A: v})` gives),
// and such a store does nothing. A T.copy clips its regions, and its
// out-of-bounds source elements read 0 or, for a tensor with a safe value,
// that value (such a copy becomes a T.Parallel nest of guarded accesses).
//
// LegalizeGlobalAccesses wraps every element load of a global tensor inside a
// kernel in `T.if_then_else(in bounds, load, safe value)` and every such
// store in `if in bounds:`, for the dimensions an interval analysis cannot
// prove in bounds: loop variables range over their loops, block indices
// over the grid, the thread index over the block, lets over their values;
// anything else (loaded values, dynamic dims, scalar parameters) is
// unbounded. Accesses with constant-shaped tensors and in-range indices,
// the usual case of divisible tiles, are left as they are.
#ifndef TILEC_COMPILER_FRONTEND_SAFE_ACCESS_H_
#define TILEC_COMPILER_FRONTEND_SAFE_ACCESS_H_

#include <map>
#include <set>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

// T.annotate_padding({S: v}) on a shared or local buffer S: out-of-bounds
// loads of global tensors in a value stored into S (element stores, and
// T.copy into S) read v instead of their tensor's safe value.
//
// Safe values by tensor (T.annotate_safe_value) and paddings by shared or
// local buffer (T.annotate_padding); a tensor not named reads 0.
using SafeValues = std::map<const ir::BufferNode*, ir::Expr>;

// With `only`, the accesses of those buffers alone (the frontend guards the
// views of strided tensors by their own shape before it lowers them).
absl::StatusOr<ir::Stmt> LegalizeGlobalAccesses(
    const ir::Stmt& body, const SafeValues& safe,
    const std::set<const ir::BufferNode*>* only = nullptr);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_SAFE_ACCESS_H_
