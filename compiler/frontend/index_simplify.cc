#include "compiler/frontend/index_simplify.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tilec::frontend {
namespace {

// A polynomial: monomial (sorted atom ids, with repetition) -> coefficient.
using Monomial = std::vector<int>;
using Poly = std::map<Monomial, int64_t>;

constexpr size_t kMaxTerms = 32;

class Canonicalizer {
 public:
  explicit Canonicalizer(ir::DType t) : dtype_(t) {}

  std::optional<Poly> Read(const ir::Expr& e) {
    if (!e || e->dtype != dtype_) return Atom(e);
    if (const auto* imm = e->as<ir::IntImmNode>()) return Poly{{Monomial{}, imm->value}};
    if (const auto* bin = e->as<ir::BinaryNode>()) {
      if (bin->op == ir::BinaryOp::kAdd || bin->op == ir::BinaryOp::kSub ||
          bin->op == ir::BinaryOp::kMul) {
        std::optional<Poly> a = Read(bin->a);
        std::optional<Poly> b = Read(bin->b);
        if (!a || !b) return std::nullopt;
        if (bin->op == ir::BinaryOp::kMul) return Mul(*a, *b);
        return Add(*a, *b, bin->op == ir::BinaryOp::kSub ? -1 : 1);
      }
    }
    if (const auto* un = e->as<ir::UnaryNode>()) {
      if (un->op == ir::UnaryOp::kNeg) {
        std::optional<Poly> a = Read(un->a);
        if (!a) return std::nullopt;
        return Add(Poly{}, *a, -1);
      }
    }
    return Atom(e);
  }

  ir::Expr Build(const Poly& p) const {
    ir::Expr out;
    int64_t constant = 0;
    for (const auto& [mono, coef] : p) {
      if (coef == 0) continue;
      if (mono.empty()) {
        constant = coef;
        continue;
      }
      ir::Expr prod;
      for (int id : mono) {
        prod = prod ? ir::Binary(ir::BinaryOp::kMul, prod, atoms_[id]) : atoms_[id];
      }
      int64_t mag = coef < 0 ? -coef : coef;
      if (mag != 1) prod = ir::Binary(ir::BinaryOp::kMul, prod, ir::IntImm(mag, dtype_));
      if (!out) {
        out = coef < 0 ? ir::Unary(ir::UnaryOp::kNeg, prod) : prod;
      } else {
        out = ir::Binary(coef < 0 ? ir::BinaryOp::kSub : ir::BinaryOp::kAdd, out, prod);
      }
    }
    if (!out) return ir::IntImm(constant, dtype_);
    if (constant > 0) out = ir::Binary(ir::BinaryOp::kAdd, out, ir::IntImm(constant, dtype_));
    if (constant < 0) out = ir::Binary(ir::BinaryOp::kSub, out, ir::IntImm(-constant, dtype_));
    return out;
  }

 private:
  std::optional<Poly> Atom(const ir::Expr& e) {
    for (size_t k = 0; k < atoms_.size(); ++k) {
      if (SameExpr(atoms_[k], e)) return Poly{{Monomial{static_cast<int>(k)}, 1}};
    }
    atoms_.push_back(e);
    return Poly{{Monomial{static_cast<int>(atoms_.size() - 1)}, 1}};
  }

  static std::optional<Poly> Add(Poly a, const Poly& b, int64_t sign) {
    for (const auto& [mono, coef] : b) {
      int64_t scaled = 0, sum = 0;
      if (__builtin_mul_overflow(coef, sign, &scaled)) return std::nullopt;
      if (__builtin_add_overflow(a[mono], scaled, &sum)) return std::nullopt;
      if (sum == 0) {
        a.erase(mono);
      } else {
        a[mono] = sum;
      }
    }
    if (a.size() > kMaxTerms) return std::nullopt;
    return a;
  }

  static std::optional<Poly> Mul(const Poly& a, const Poly& b) {
    if (a.size() * b.size() > kMaxTerms) return std::nullopt;
    Poly out;
    for (const auto& [ma, ca] : a) {
      for (const auto& [mb, cb] : b) {
        Monomial m = ma;
        m.insert(m.end(), mb.begin(), mb.end());
        std::sort(m.begin(), m.end());
        int64_t prod = 0, sum = 0;
        if (__builtin_mul_overflow(ca, cb, &prod)) return std::nullopt;
        if (__builtin_add_overflow(out[m], prod, &sum)) return std::nullopt;
        if (sum == 0) {
          out.erase(m);
        } else {
          out[m] = sum;
        }
      }
    }
    return out;
  }

  ir::DType dtype_;
  std::vector<ir::Expr> atoms_;
};

}  // namespace

bool SameExpr(const ir::Expr& a, const ir::Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ir::ExprKind::kIntImm:
      return a->as<ir::IntImmNode>()->value == b->as<ir::IntImmNode>()->value;
    case ir::ExprKind::kFloatImm: {
      double x = a->as<ir::FloatImmNode>()->value, y = b->as<ir::FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ir::ExprKind::kVar: return false;
    case ir::ExprKind::kBinary: {
      const auto *x = a->as<ir::BinaryNode>(), *y = b->as<ir::BinaryNode>();
      return x->op == y->op && SameExpr(x->a, y->a) && SameExpr(x->b, y->b);
    }
    case ir::ExprKind::kUnary: {
      const auto *x = a->as<ir::UnaryNode>(), *y = b->as<ir::UnaryNode>();
      return x->op == y->op && SameExpr(x->a, y->a);
    }
    case ir::ExprKind::kSelect: {
      const auto *x = a->as<ir::SelectNode>(), *y = b->as<ir::SelectNode>();
      return SameExpr(x->cond, y->cond) && SameExpr(x->t, y->t) && SameExpr(x->f, y->f);
    }
    case ir::ExprKind::kCast:
      return SameExpr(a->as<ir::CastNode>()->value, b->as<ir::CastNode>()->value);
    case ir::ExprKind::kCall: {
      const auto *x = a->as<ir::CallNode>(), *y = b->as<ir::CallNode>();
      if (x->fn != y->fn || x->args.size() != y->args.size()) return false;
      for (size_t k = 0; k < x->args.size(); ++k) {
        if (!SameExpr(x->args[k], y->args[k])) return false;
      }
      return true;
    }
    case ir::ExprKind::kLoad: {
      const auto *x = a->as<ir::LoadNode>(), *y = b->as<ir::LoadNode>();
      if (x->buffer != y->buffer || x->indices.size() != y->indices.size()) return false;
      for (size_t k = 0; k < x->indices.size(); ++k) {
        if (!SameExpr(x->indices[k], y->indices[k])) return false;
      }
      return true;
    }
  }
  return false;
}

ir::Expr SimplifyIndex(const ir::Expr& e) {
  if (!e || !ir::IsInt(e->dtype)) return e;
  Canonicalizer c(e->dtype);
  std::optional<Poly> p = c.Read(e);
  if (!p) return e;
  return c.Build(*p);
}

}  // namespace tilec::frontend
