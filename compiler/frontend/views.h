// Views: `T.reshape` / `T.view` of a global tensor or of a shared, fragment
// or local buffer, and `T.Tensor(shape, dtype, A.data)` inside a kernel, name
// the elements of a base buffer, row-major, in another shape of the same
// dtype.
//
// The frontend gives each view a buffer of its own while it builds the
// kernel; LowerViews then rewrites its uses in terms of the base:
// - an element access goes to the base element with the same row-major
//   offset;
// - a T.copy from or to a view becomes a T.Parallel nest of such accesses
//   (elements outside the source read as zero, writes outside the destination
//   are dropped, as T.copy does);
// - any other tile operation on a view of a shared or fragment buffer (a
//   reduction, a scan, a fill, a gemm operand, ...) runs on a buffer of the
//   view's shape in the base's scope, filled from the base just before and,
//   when the operation writes it, copied back just after. The buffer lives
//   for that statement only, so the shared-memory plan reuses its space.
// Tile operations on a view of a global tensor, other than T.copy, are
// UNIMPLEMENTED naming the view. After: no view buffer is referenced.
#ifndef TILEC_COMPILER_FRONTEND_VIEWS_H_
#define TILEC_COMPILER_FRONTEND_VIEWS_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

struct View {
  ir::Buffer base;  // a global tensor, or a shared, fragment or local buffer
  // A strided tensor parameter (T.StridedTensor): view element idx is base
  // element [idx[axes[0]], idx[axes[1]], ...], of the same dtype. Empty: the
  // row-major reinterpretation above.
  std::vector<int32_t> axes;
};
using ViewMap = std::map<const ir::BufferNode*, View>;

absl::StatusOr<ir::Stmt> LowerViews(const ir::Stmt& body, const ViewMap& views);

// Why LowerViews would refuse the statement `s` as the frontend emits it (a
// store through a narrower view, a tile operator other than T.copy on a view
// of a global tensor or a local buffer); nullopt when it would not. Lets the
// frontend report it at the statement's source location.
std::optional<std::string> UnsupportedViewUse(const ir::Stmt& s, const ViewMap& views);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_VIEWS_H_
