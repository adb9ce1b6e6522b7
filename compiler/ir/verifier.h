// The tile IR verifier: checks that a program is well formed.
//
// Every pass may assume its input verifies, and must leave a program that
// verifies; the pipeline runs Verify between passes. The frontend runs it on
// what it builds, so a user error it missed still gets a readable message.
//
// Verify returns OK or INVALID_ARGUMENT with the first problem found, as
//
//   <position>: <what is wrong, naming the buffer, variable or operator>
//
// The position is a path from the program down to the statement, e.g.
// `kernel 0 > for k > T.copy #2`: kernels are numbered from 0 in program
// order; loops, lets and allocations are named by what they declare
// (`for k`, `let base`, `T.alloc_shared A_shared`); other statements by their
// operator and a 1-based count among the statements of the same operator in
// the same body (`T.copy #2` is the second T.copy directly inside the loop
// body, nested Seqs included); an else branch adds `else`. Program-level
// problems are reported at `param A`, `dyn dim M`, `tile param block_M` or
// `program <name>`.
//
// What a well-formed program satisfies (checked here):
// - Scoping: every variable used is in scope (dynamic dims, scalar params and
//   unbound tile params everywhere; loop and block variables in their body;
//   Let and Allocate for the rest of the enclosing Seq and nested bodies),
//   and each variable or buffer node is declared once. Bound tile params do
//   not appear in the body (they were substituted). Buffers are params or
//   allocated in an enclosing scope.
// - No null operand where one is required (Allocate init, If else, a
//   loop's num_stages and AtomicAdd's src/value are the optional ones).
// - Placement: tile operators, stores, layout annotations, swizzles and
//   non-serial loops are inside a T.Kernel; kernels do not nest; shared,
//   fragment, local and var buffers are allocated inside a kernel, global
//   workspaces outside. Tensor params are global.
// - Shapes: index and region ranks equal the buffer's rank; constant extents,
//   grid sizes, thread counts and buffer dims are >= 1; T.copy and tile
//   T.atomic_add regions agree after dropping extent-1 dims; T.gemm operands
//   are 2-D (leading extent-1 dims dropped) with consistent M/N/K under the
//   transposes; reduce/cumsum dims are in range and the destination has the
//   source's shape (minus the reduced dim; [1] for a 1-D source). Symbolic
//   extents are compared only where both sides are constants.
// - Operand scopes: T.gemm A/B in shared or fragment, C in fragment or local;
//   reduce and cumsum not on global buffers; T.atomic_add into global or
//   shared memory.
// - Types: indices, loop bounds, shapes, grid and thread counts are integers;
//   if and select conditions are bool; binary operands share a dtype (logical
//   ops on bool, bitwise ops on integers or bool, shifts on integers,
//   arithmetic not on bool); select branches share a dtype; math calls have
//   their arity and argument dtypes (float functions on floats, ceildiv on
//   integers); literals fit their dtype. A stored value, a Let value and a
//   scalar atomic_add value have exactly the destination's dtype; a T.fill
//   value or alloc_var init may also be a literal of another dtype (it is
//   converted). T.gemm A and B are both floats or both integers, with a float
//   or int32 accumulator to match.
// - Loops: num_stages, order and stage only on T.Pipelined; a constant
//   num_stages is >= 1; order and stage have one entry per statement of the
//   pipelined body.
// - Kernels: 1 to 3 grid extents and one block variable per extent.
// - Custom layouts: one variable per buffer dimension.
// - Limits (limits.h), the same embedded and served: statements (blocks
//   included) and expressions nest at most kMaxNesting deep on any path; the
//   program's and every variable's, buffer's and tile parameter's name is at
//   most kMaxNameLength characters (messages show long names cut short).
// - Float literals keep their value in their dtype (and, for a T.fill value
//   or alloc_var init converted to the buffer's dtype, in that one too): a
//   finite literal whose magnitude is beyond the dtype's largest finite value
//   (1e300 in float32, 1e5 in float16) would become infinity, and a nonzero
//   one below the dtype's smallest subnormal (1e-320 in float32) would become
//   0; both are errors, as for a CUDA C++ floating constant out of range and
//   TVM's FloatImm. Infinity and NaN literals (T.infinity) are meant and
//   kept.
// - Region extents (every T.copy, T.fill, T.gemm, reduce, atomic_add region)
//   are fixed when the kernel is launched: they use constants, dynamic dims,
//   scalar parameters and tile parameters only, not loop, block or let
//   variables or loads (the frontend's rule for slices, for wire-form
//   programs too).
// - Grids: a constant grid extent is within CUDA's launch limits (x at most
//   2^31 - 1, y and z at most 65535); a dynamic one is checked at launch.
// - Inline source: a kernel's prelude passes CheckInlineSource
//   (inline_source.h: nothing that reaches the file system), reported at
//   `kernel 0 > prelude:<line>:<col>`.
#ifndef TILEC_COMPILER_IR_VERIFIER_H_
#define TILEC_COMPILER_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "compiler/ir/ir.h"

namespace tilec::ir {

absl::Status Verify(const Program& program);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_VERIFIER_H_
