// Readable TileLang-style text for the tile IR.
//
// The output is for people (debug dumps, `tilec inspect`, error messages) and
// for golden tests: it is deterministic, and it looks like the TileLang source
// a user would have written:
//
//   # dyn dims: M, N, K
//   # tile params: block_M=128, num_stages (unbound, candidates 2,3,4)
//   @T.prim_func
//   def gemm(A: T.Tensor((M, K), "float16"), ...):
//       with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
//           A_shared = T.alloc_shared((128, 32), "float16")
//           for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):
//               T.copy(A[by * 128:by * 128 + 128, k * 32:k * 32 + 32], A_shared)
//
// Conventions:
// - Four spaces per indentation level; nested Seqs are flattened; an empty
//   body prints `pass`; a null node prints `<null>` (the printer never fails,
//   so it can show ill-formed IR).
// - A region covering its whole buffer prints as the bare buffer name, any
//   other region as Python slices `A[lo:hi, ...]`.
// - Directly nested T.Parallel loops starting at 0 print as one
//   `for i, j in T.Parallel(M, N):`.
// - Expressions use Python precedence with the fewest parentheses. min, max,
//   truncating mod, select and casts print as T.min, T.max, T.truncmod,
//   T.if_then_else and T.cast calls. int32 and float32 literals print bare,
//   other dtypes wrapped (`T.float16(0.5)`, `T.int64(7)`); floats use the
//   shortest text that reads back to the same double; infinities print as
//   `T.infinity("float32")` / `-T.infinity("float32")`, NaN as
//   `T.float32("nan")`.
// - Names are kept, except that distinct variables or buffers sharing a name
//   (vars and buffers share one namespace, as in Python) are told apart: the
//   first keeps the name, later ones, in order of first appearance, get _1,
//   _2, ... (skipping names already used in the printed unit).
#ifndef TILEC_COMPILER_IR_PRINTER_H_
#define TILEC_COMPILER_IR_PRINTER_H_

#include <string>

#include "compiler/ir/ir.h"

namespace tilec::ir {

// The whole program: header comments, `@T.prim_func`, signature and body.
std::string Print(const Program& program);

// One statement (and everything below it), at indentation level 0. Ends with
// a newline.
std::string PrintStmt(const Stmt& stmt);

// One expression, without a trailing newline.
std::string PrintExpr(const Expr& expr);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_PRINTER_H_
