#include "compiler/inference/index_expr.h"

#include <algorithm>
#include <cstdlib>

namespace tilec::inference {
namespace {

using ir::BinaryNode;
using ir::BinaryOp;
using ir::Expr;

constexpr int64_t kBigDivisor = int64_t{1} << 30;

const BinaryNode* AsBinary(const Expr& e, BinaryOp op) {
  const auto* b = e->as<BinaryNode>();
  return b != nullptr && b->op == op ? b : nullptr;
}

// `e` is x * c with a constant c: returns c and sets *x.
std::optional<int64_t> MulByConst(const Expr& e, Expr* x) {
  if (const auto* m = AsBinary(e, BinaryOp::kMul)) {
    if (auto c = ir::AsConstInt(m->b)) {
      *x = m->a;
      return c;
    }
  }
  return std::nullopt;
}

// Whether `e` is known to be a multiple of c.
bool IsMultipleOf(const Expr& e, int64_t c) {
  if (auto v = ir::AsConstInt(e)) return *v % c == 0;
  Expr x;
  if (auto k = MulByConst(e, &x)) return *k % c == 0;
  if (const auto* a = AsBinary(e, BinaryOp::kAdd)) {
    return IsMultipleOf(a->a, c) && IsMultipleOf(a->b, c);
  }
  return false;
}

int64_t LowestPow2(int64_t v) {
  if (v == 0) return kBigDivisor;
  v = std::llabs(v);
  return std::min<int64_t>(v & -v, kBigDivisor);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

void IndexBuilder::SetBound(const ir::Var& v, int64_t bound) { bounds_[v.get()] = bound; }

Expr IndexBuilder::Const(int64_t c) const { return ir::IntImm(c); }

std::optional<int64_t> IndexBuilder::UpperBound(const Expr& e) const {
  if (auto v = ir::AsConstInt(e)) {
    if (*v < 0) return std::nullopt;
    return *v + 1;
  }
  if (const auto* var = e->as<ir::VarNode>()) {
    auto it = bounds_.find(var);
    if (it == bounds_.end()) return std::nullopt;
    return it->second;
  }
  const auto* b = e->as<BinaryNode>();
  if (b == nullptr) return std::nullopt;
  auto ua = UpperBound(b->a);
  auto ub = UpperBound(b->b);
  if (!ua || !ub) return std::nullopt;
  switch (b->op) {
    case BinaryOp::kAdd: return *ua + *ub - 1;
    case BinaryOp::kMul: return (*ua - 1) * (*ub - 1) + 1;
    case BinaryOp::kDiv: {
      auto c = ir::AsConstInt(b->b);
      if (!c || *c <= 0) return std::nullopt;
      return (*ua - 1) / *c + 1;
    }
    case BinaryOp::kMod: {
      auto c = ir::AsConstInt(b->b);
      if (!c || *c <= 0) return std::nullopt;
      return std::min(*c, *ua);
    }
    default: return std::nullopt;
  }
}

Expr IndexBuilder::Add(const Expr& a, const Expr& b) const {
  auto ca = ir::AsConstInt(a);
  auto cb = ir::AsConstInt(b);
  if (ca && cb) return Const(*ca + *cb);
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  if (ca) return Add(b, a);  // constants to the right
  return ir::Binary(BinaryOp::kAdd, a, b);
}

Expr IndexBuilder::Mul(const Expr& a, int64_t c) const {
  if (c == 0) return Const(0);
  if (c == 1) return a;
  if (auto v = ir::AsConstInt(a)) return Const(*v * c);
  Expr x;
  if (auto k = MulByConst(a, &x)) return Mul(x, *k * c);
  return ir::Binary(BinaryOp::kMul, a, Const(c));
}

Expr IndexBuilder::Div(const Expr& a, int64_t c) const {
  if (c == 1) return a;
  if (auto v = ir::AsConstInt(a)) return Const(*v / c);
  if (auto ub = UpperBound(a); ub && *ub <= c) return Const(0);
  if (const auto* d = AsBinary(a, BinaryOp::kDiv)) {
    if (auto inner = ir::AsConstInt(d->b)) return Div(d->a, *inner * c);
  }
  Expr x;
  if (auto k = MulByConst(a, &x); k && *k % c == 0) return Mul(x, *k / c);
  if (const auto* s = AsBinary(a, BinaryOp::kAdd)) {
    // (p + q) / c with p a multiple of c: p / c + q / c.
    if (IsMultipleOf(s->a, c)) return Add(Div(s->a, c), Div(s->b, c));
    if (IsMultipleOf(s->b, c)) return Add(Div(s->b, c), Div(s->a, c));
  }
  return ir::Binary(BinaryOp::kDiv, a, Const(c));
}

Expr IndexBuilder::Mod(const Expr& a, int64_t c) const {
  if (c == 1) return Const(0);
  if (auto v = ir::AsConstInt(a)) return Const(*v % c);
  if (auto ub = UpperBound(a); ub && *ub <= c) return a;
  if (IsMultipleOf(a, c)) return Const(0);
  if (const auto* s = AsBinary(a, BinaryOp::kAdd)) {
    if (IsMultipleOf(s->a, c)) return Mod(s->b, c);
    if (IsMultipleOf(s->b, c)) return Mod(s->a, c);
  }
  return ir::Binary(BinaryOp::kMod, a, Const(c));
}

std::optional<int64_t> EvalInt(const Expr& e, const std::map<const ir::VarNode*, int64_t>& values) {
  if (e == nullptr) return std::nullopt;
  if (auto v = ir::AsConstInt(e)) return v;
  if (const auto* var = e->as<ir::VarNode>()) {
    auto it = values.find(var);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  if (const auto* c = e->as<ir::CastNode>()) {
    if (!ir::IsInt(c->dtype)) return std::nullopt;
    return EvalInt(c->value, values);
  }
  if (const auto* call = e->as<ir::CallNode>()) {
    if (call->fn != ir::CallFn::kCeilDiv || call->args.size() != 2) return std::nullopt;
    auto a = EvalInt(call->args[0], values);
    auto b = EvalInt(call->args[1], values);
    if (!a || !b || *b == 0) return std::nullopt;
    return -FloorDiv(-*a, *b);
  }
  const auto* b = e->as<BinaryNode>();
  if (b == nullptr || !ir::IsInt(b->dtype)) return std::nullopt;
  auto x = EvalInt(b->a, values);
  auto y = EvalInt(b->b, values);
  if (!x || !y) return std::nullopt;
  switch (b->op) {
    case BinaryOp::kAdd: return *x + *y;
    case BinaryOp::kSub: return *x - *y;
    case BinaryOp::kMul: return *x * *y;
    case BinaryOp::kDiv:
      if (*y == 0) return std::nullopt;
      return *x / *y;
    case BinaryOp::kMod:
      if (*y == 0) return std::nullopt;
      return *x % *y;
    case BinaryOp::kFloorDiv:
      if (*y == 0) return std::nullopt;
      return FloorDiv(*x, *y);
    case BinaryOp::kFloorMod:
      if (*y == 0) return std::nullopt;
      return *x - FloorDiv(*x, *y) * *y;
    case BinaryOp::kMin: return std::min(*x, *y);
    case BinaryOp::kMax: return std::max(*x, *y);
    case BinaryOp::kBitAnd: return *x & *y;
    case BinaryOp::kBitOr: return *x | *y;
    case BinaryOp::kBitXor: return *x ^ *y;
    case BinaryOp::kShl:
      if (*y < 0 || *y >= 63) return std::nullopt;
      return *x << *y;
    case BinaryOp::kShr:
      if (*y < 0 || *y >= 63) return std::nullopt;
      return *x >> *y;
    default: return std::nullopt;
  }
}

int64_t KnownPow2Divisor(const Expr& e, const std::map<const ir::VarNode*, int64_t>& var_divisors) {
  if (e == nullptr) return 1;
  if (auto v = ir::AsConstInt(e)) return LowestPow2(*v);
  if (const auto* var = e->as<ir::VarNode>()) {
    auto it = var_divisors.find(var);
    return it == var_divisors.end() ? 1 : it->second;
  }
  if (const auto* c = e->as<ir::CastNode>()) {
    return ir::IsInt(c->dtype) ? KnownPow2Divisor(c->value, var_divisors) : 1;
  }
  const auto* b = e->as<BinaryNode>();
  if (b == nullptr) return 1;
  int64_t da = KnownPow2Divisor(b->a, var_divisors);
  int64_t db = KnownPow2Divisor(b->b, var_divisors);
  switch (b->op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSub: return std::min(da, db);
    case BinaryOp::kMul: return std::min(da * db, kBigDivisor);
    case BinaryOp::kShl: {
      auto s = ir::AsConstInt(b->b);
      if (!s || *s < 0 || *s > 30) return 1;
      return std::min(da << *s, kBigDivisor);
    }
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv: {
      auto c = ir::AsConstInt(b->b);
      if (!c || *c <= 0 || LowestPow2(*c) != *c || da % *c != 0) return 1;
      return std::max<int64_t>(da / *c, 1);
    }
    case BinaryOp::kMod:
    case BinaryOp::kFloorMod: {
      // a - q * c: what divides a and c divides it.
      auto c = ir::AsConstInt(b->b);
      if (!c || *c <= 0) return 1;
      return std::min(da, LowestPow2(*c));
    }
    default: return 1;
  }
}

}  // namespace tilec::inference
