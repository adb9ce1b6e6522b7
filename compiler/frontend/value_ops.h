// Python operators over staging values, and the IR typing rules they follow
// when a runtime value is involved.
//
// Staging operands (bool, int, float, str, tuple, list, ...) are folded with
// Python semantics: `//` and `%` floor, `/` is true division, `**` stays an
// int for non-negative int exponents, bool counts as int, str/tuple/list
// concatenate and repeat. int is 64-bit here; overflow is an error.
//
// When either operand is runtime (an IR expression, a buffer element, or an
// alloc_var buffer, which reads as its single element), the result is an IR
// expression typed the way TileLang (TVM) types it:
// - A Python literal takes the dtype of the other operand when it can: an int
//   or float literal next to a float16 expression becomes a float16 literal;
//   an int literal next to an int expression takes that int type (int64 when
//   it does not fit). A float literal next to an int expression is float32
//   and the int side is cast to float32. Alone, an int literal is int32
//   (int64 if needed), a float literal float32, a bool literal bool.
// - Two expressions of different dtypes: bool is cast to the other type; an
//   int is cast to the float type; of two floats or two ints the narrower is
//   cast to the wider (equal widths: two floats go to float32, signed wins
//   over unsigned).
// - `/` between two integer runtime values is rejected, as in TVM (ambiguous:
//   use `//`); `//` and `%` are floor division and modulo; `**` is pow on
//   floats; comparisons yield bool; `and`/`or`/`not` work on bool (other
//   operands are compared with zero).
// - Two integer literals combine into a literal (folded); nothing else folds,
//   except the negation of a literal (so `-T.infinity(dt)` is a literal).
//
// Errors are INVALID_ARGUMENT statuses whose message has no location; the
// builder adds it.
#ifndef TILEC_COMPILER_FRONTEND_VALUE_OPS_H_
#define TILEC_COMPILER_FRONTEND_VALUE_OPS_H_

#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/value.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

// The largest staging str, tuple, list or dict tilec builds (elements or
// characters); bigger ones are an error rather than a memory blow-up.
inline constexpr size_t kMaxStagingItems = 1 << 16;
// Dicts are searched linearly: they stay small.
inline constexpr size_t kMaxDictItems = 1 << 12;
// Iterations one staging `while` loop may run before it is reported as
// endless (the overall step budget of the builder bounds the rest).
inline constexpr int64_t kMaxWhileIterations = 100'000;

// True for values that denote a runtime scalar: kExpr, kElement, and a kBuffer
// of scope var.
bool IsRuntimeScalar(const Value& v);

// The IR expression of a number or runtime scalar (literals get their default
// dtype). Fails for other values.
absl::StatusOr<ir::Expr> ToExpr(const Value& v);

// The IR expression of a number or runtime scalar converted to `t`: literals
// are made of dtype `t`, expressions of another dtype are cast.
absl::StatusOr<ir::Expr> ToExprAs(const Value& v, ir::DType t);

// A literal of dtype t (IntImm for int/bool types, FloatImm for floats).
ir::Expr MakeLiteral(const Value& number, ir::DType t);

// e itself when it already has dtype t, otherwise Cast(t, e); casting a
// literal folds.
ir::Expr CastTo(ir::DType t, const ir::Expr& e);

// TVM's operand type matching for two expressions (see above).
std::pair<ir::Expr, ir::Expr> MatchTypes(ir::Expr a, ir::Expr b);

// Converts two operands (numbers or runtime scalars, at least one runtime) to
// expressions of a common dtype, literals taking the other side's dtype.
absl::StatusOr<std::pair<ir::Expr, ir::Expr>> PromoteOperands(const Value& a, const Value& b);

// A bool expression: e itself if bool, else e != 0.
ir::Expr AsBool(const ir::Expr& e);

absl::StatusOr<Value> ApplyBinOp(BinOpKind op, const Value& a, const Value& b);
// `a op b` where one is a torch tensor of host code (tl_torch.cc); nullopt
// when neither is.
std::optional<absl::StatusOr<Value>> HostTensorBinOp(BinOpKind op, const Value& a, const Value& b);
absl::StatusOr<Value> ApplyUnaryOp(UnaryOpKind op, const Value& a);
// One comparison (chains are split by the caller).
absl::StatusOr<Value> ApplyCompare(CmpOpKind op, const Value& a, const Value& b);

// Binary IR op with literal folding for two IntImms of the same dtype.
ir::Expr FoldBinary(ir::BinaryOp op, ir::Expr a, ir::Expr b);

// Python's floor division and modulo on int64 (b != 0).
int64_t FloorDiv(int64_t a, int64_t b);
int64_t FloorMod(int64_t a, int64_t b);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_VALUE_OPS_H_
