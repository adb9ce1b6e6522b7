// Small integer-expression utilities for the inference passes: building
// simplified index expressions over bounded non-negative variables, folding
// constant expressions, and knowing what an index is a multiple of.
#ifndef TILEC_COMPILER_INFERENCE_INDEX_EXPR_H_
#define TILEC_COMPILER_INFERENCE_INDEX_EXPR_H_

#include <cstdint>
#include <map>
#include <optional>

#include "compiler/ir/ir.h"

namespace tilec::inference {

// Builds int32 index expressions with + * / % over variables known to lie in
// [0, bound). Every result is simplified as it is built: constants fold,
// x + 0, x * 1, x / 1 and x * 0 vanish, x % c is x and x / c is 0 when x < c
// is known, (x / a) / b is x / (a * b) and (x * c) / c is x. Operands must be
// non-negative (so C and floor division agree).
class IndexBuilder {
 public:
  void SetBound(const ir::Var& v, int64_t bound);  // v in [0, bound)

  ir::Expr Const(int64_t c) const;
  ir::Expr Add(const ir::Expr& a, const ir::Expr& b) const;
  ir::Expr Mul(const ir::Expr& a, int64_t c) const;
  ir::Expr Div(const ir::Expr& a, int64_t c) const;  // c >= 1
  ir::Expr Mod(const ir::Expr& a, int64_t c) const;  // c >= 1

  // An exclusive upper bound of a non-negative expression built from bounded
  // variables, constants, + * / % (nullopt when unknown).
  std::optional<int64_t> UpperBound(const ir::Expr& e) const;

 private:
  std::map<const ir::VarNode*, int64_t> bounds_;
};

// The value of an integer expression made of constants (and of the
// variables in `values`), folding + - * / % // (floor) min max and ceildiv;
// nullopt when something else appears or a division by zero would happen.
std::optional<int64_t> EvalInt(const ir::Expr& e,
                               const std::map<const ir::VarNode*, int64_t>& values = {});

// A power of two that `e` is known to be a multiple of, given the same for
// some variables (others count as 1). Constants give their largest
// power-of-two divisor (0 gives 1 << 30).
int64_t KnownPow2Divisor(const ir::Expr& e,
                         const std::map<const ir::VarNode*, int64_t>& var_divisors = {});

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_INDEX_EXPR_H_
