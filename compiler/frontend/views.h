// Views of global tensors: `T.Tensor(shape, dtype, A.data)` (and
// `T.reshape` / `T.view` of a global tensor) inside a kernel names the
// elements of A, row-major, in another shape of the same dtype.
//
// The frontend gives each view a buffer of its own while it builds the
// kernel; LowerViews then rewrites every use into uses of the base tensor:
// an element access at the element with the same row-major offset, a T.copy
// from or to a view into a T.Parallel nest of such accesses (elements outside
// the source read as zero, writes outside the destination are dropped, as
// T.copy does). Any other use of a view (a T.gemm operand, a fill, ...) is
// UNIMPLEMENTED naming the view. After: no view buffer is referenced.
#ifndef TILEC_COMPILER_FRONTEND_VIEWS_H_
#define TILEC_COMPILER_FRONTEND_VIEWS_H_

#include <map>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

struct View {
  ir::Buffer base;  // a global tensor
};
using ViewMap = std::map<const ir::BufferNode*, View>;

absl::StatusOr<ir::Stmt> LowerViews(const ir::Stmt& body, const ViewMap& views);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_VIEWS_H_
