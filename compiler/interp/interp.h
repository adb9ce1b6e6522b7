// The reference interpreter: the golden model of tile semantics.
//
// RunProgram executes a tile program on the CPU straight from the IR, with
// TileLang's tile-level semantics and no lowering, so that it shares no bug
// with the code generators; every backend is checked against it.
//
// Before: `program` is verified (compiler/ir/verifier.h). An unverified
// program may still run; constructs the verifier would reject are reported as
// FailedPrecondition errors rather than crashes.
//
// Execution model:
// - Kernels run one after another in program order. The blocks of a kernel
//   run one at a time, block index 0 fastest (bx, then by, then bz), or in a
//   seeded random order (RunOptions::shuffle_blocks) to expose programs that
//   depend on block order. Within a block, statements run in program order;
//   a T.Parallel loop runs its iterations in ascending order (a correct
//   program does not depend on it), a T.Pipelined loop runs as a serial loop
//   (its stages and order are a schedule, not a meaning). T.annotate_layout,
//   T.use_swizzle, the thread count and the prelude do not change results and
//   are ignored.
// - Every allocation is zero-initialised each time its Allocate runs: global
//   workspaces (T.alloc_global) once, shared/fragment/local buffers once per
//   block (hardware leaves those undefined; a correct program writes before it
//   reads). T.alloc_var's init value, when given, fills the buffer instead.
// - Dynamic dims are bound from the tensor arguments' shapes: a dim that is a
//   tensor dimension takes that dimension's size; two tensors giving it
//   different sizes is an error naming both. Every shape expression is then
//   checked against its argument. Scalar parameters take their 0-d tensor's
//   value. An unbound tile parameter is an error.
// - Numerics (numerics.h): every value has its IR dtype; float arithmetic and
//   math functions compute in double and round to the expression's dtype
//   (a float16 exp rounds to float16), every store and cast rounds into the
//   destination dtype (fp8 with satfinite). Integers wrap as in C; / and %
//   truncate, // and % of Python (kFloorDiv, kFloorMod) floor; integer
//   division by zero and shifts by a negative amount or by at least the bit
//   width are errors. max/min follow CUDA's fmaxf/fminf: a NaN operand is
//   ignored (T.max(NaN, x) is x), exp(NaN) is NaN, exp(-inf) is 0.
//   T.round rounds half to even (rint, as TVM lowers it for float16 and for
//   LLVM targets). `and`/`or` and if_then_else evaluate lazily, so a guarded
//   load is never evaluated out of bounds.
// - Per-thread code (ir/thread_dependence.h): in a kernel that reads the
//   thread index, each statement that mentions a per-thread value (the
//   thread index, a T.alloc_local / T.alloc_var buffer, a name bound from
//   them) and contains no collective tile operator runs for every thread in
//   turn, thread 0 first, each with its own private buffers and names; the
//   block's other statements run once. Every thread finishes a statement
//   before the next statement starts, as if a block barrier separated them.
//   A collective operator on a per-thread value, or under a condition or
//   loop bound that depends on the thread, is INVALID_ARGUMENT.
// - Load and Store out of a buffer's bounds are errors naming the buffer, the
//   index, and the kernel and block. Tile operators clip instead: T.copy and
//   tile T.atomic_add read zeros outside the source buffer and drop writes
//   outside the destination; T.fill drops writes outside its buffer.
// - T.gemm: C = (clear_accum ? 0 : C) + op(A) @ op(B) with operands converted
//   to C's dtype, each product and each sum rounded to C's dtype, k ascending.
//   Operand regions may have leading extent-1 dimensions and must lie inside
//   their buffers.
// - T.reduce_*: the source element converted to dst's dtype and combined in
//   dst's dtype along `dim` in ascending order. clear=false for sum/abssum
//   adds the reduction to dst's old value; for max/min/absmax it starts from
//   dst's old value (absmax from its magnitude), as TileLang lowers them.
// - T.cumsum: inclusive scan in dst's dtype; dst may be src.
// - T.atomic_add: dst += src converted to dst's dtype, rounded in dst's dtype.
// - T.atomic_max / T.atomic_min (scalar or tile form): dst = max/min(dst, src)
//   with value converted to dst's dtype; floats as T.max/T.min (a NaN
//   operand is ignored).
#ifndef TILEC_COMPILER_INTERP_INTERP_H_
#define TILEC_COMPILER_INTERP_INTERP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/ir.h"

namespace tilec::interp {

struct RunOptions {
  // Run each kernel's blocks in a random order drawn from shuffle_seed.
  bool shuffle_blocks = false;
  uint64_t shuffle_seed = 0;
};

// Runs `program` on `args`, one per Program::params entry in ABI order:
// a tensor of the parameter's dtype and rank for a tensor parameter, a 0-d
// tensor (any dtype; its value converts to the scalar's dtype) for a scalar
// parameter. Outputs are written into `args` in place. On error the contents
// of `args` are unspecified.
absl::Status RunProgram(const ir::Program& program, std::vector<Tensor>& args,
                        const RunOptions& options = {});

// Allocates an argument for every parameter: tensors of the parameter's shape
// with random contents (RandomTensor, uniform; a different stream per
// parameter derived from `seed`), outputs included, so that an output the
// program fails to write shows up as a mismatch. `values` gives every dynamic
// dim by name, and may give scalar parameters by name; a scalar parameter not
// in `values` gets a random value (integers in [1, 8], floats uniform in
// [-1, 1)). A name in `values` that is neither is an error, as is a missing
// dynamic dim.
absl::StatusOr<std::vector<Tensor>> MakeInputs(
    const ir::Program& program, const absl::flat_hash_map<std::string, int64_t>& values,
    uint64_t seed);

}  // namespace tilec::interp

#endif  // TILEC_COMPILER_INTERP_INTERP_H_
