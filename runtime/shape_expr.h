// Integer expressions of artifact metadata (shapes, grid extents, workspace
// bytes): the text the compiler's IR printer writes for an int expression
// over the dynamic dims, read back and evaluated by the runtime.
//
//   absl::StatusOr<ShapeExpr> e = ShapeExpr::Parse("T.ceildiv(M, 128) * 2");
//   e->Eval({{"M", 1000}})  // 16
//
// The grammar is exactly what the printer writes for the integer expressions
// the compiler can evaluate: integer literals (also as T.int64(7) and the
// other integer dtypes), names, parentheses, unary - and ~, * / // % (``/``
// truncates, ``%`` is floor modulo, as in the tile IR), + -, << >>, & ^ |,
// T.ceildiv, T.min, T.max, T.truncmod and T.cast(x, "<int dtype>"); and for
// the conditions of requirements, one comparison (== != < <= > >=), not,
// and, or (Python's precedence) and True / False, which evaluate to 1 or 0.
// Anything else is INVALID_ARGUMENT naming the text and the column.
#ifndef TILEC_RUNTIME_SHAPE_EXPR_H_
#define TILEC_RUNTIME_SHAPE_EXPR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::runtime {

class ShapeExpr {
 public:
  struct Node;

  static absl::StatusOr<ShapeExpr> Parse(std::string_view text);

  // The value with every name bound in `dims`: INVALID_ARGUMENT for an
  // unbound name, a division by zero or an out-of-range shift, naming the
  // expression.
  absl::StatusOr<int64_t> Eval(const std::map<std::string, int64_t>& dims) const;

  // The expression is a bare name (a dynamic dim a tensor dimension binds).
  bool is_name() const;
  // The expression is a literal (no names).
  bool is_constant() const { return names_.empty(); }
  // The names it mentions, sorted.
  const std::vector<std::string>& names() const { return names_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::vector<std::string> names_;
};

}  // namespace tilec::runtime

#endif  // TILEC_RUNTIME_SHAPE_EXPR_H_
