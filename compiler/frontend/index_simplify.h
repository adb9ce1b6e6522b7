// Canonical form of integer index expressions, for region extents.
//
// A slice `A[k * bk:(k + 1) * bk]` has extent `(k + 1) * bk - k * bk`, which
// must come out as `bk` (TileLang's analyzer does the same). SimplifyIndex
// reads an integer expression as a polynomial with integer coefficients over
// atoms (variables, and any subexpression that is not +, -, * or a literal,
// such as a floordiv or a load), collects like terms and rebuilds it.
//
// The rebuilt expression orders terms by the first appearance of their atoms
// in `e` (never by name), then the constant, so the result is deterministic
// and unaffected by renaming. Expressions that are not of an integer dtype,
// and polynomials that would grow past a small size, are returned unchanged.
#ifndef TILEC_COMPILER_FRONTEND_INDEX_SIMPLIFY_H_
#define TILEC_COMPILER_FRONTEND_INDEX_SIMPLIFY_H_

#include "compiler/ir/ir.h"

namespace tilec::frontend {

ir::Expr SimplifyIndex(const ir::Expr& e);

// Structural equality of two expressions (variables and buffers by identity).
bool SameExpr(const ir::Expr& a, const ir::Expr& b);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_INDEX_SIMPLIFY_H_
