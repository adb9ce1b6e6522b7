#include "compiler/targets/cuda/emitter_vector_body.h"

#include "compiler/ir/visitor.h"

namespace tilec::cuda::vector_body {
namespace {

using ir::BinaryOp;
using ir::DType;

// How an expression changes as j grows.
enum class Dir { kConst, kUp, kDown, kUnknown };

Dir Flip(Dir d) {
  if (d == Dir::kUp) return Dir::kDown;
  if (d == Dir::kDown) return Dir::kUp;
  return d;
}

Dir Join(Dir a, Dir b) {
  if (a == Dir::kConst) return b;
  if (b == Dir::kConst || a == b) return a;
  return Dir::kUnknown;
}

Dir Direction(const ir::Expr& e, const ir::VarNode* j) {
  if (!UsesVar(e, j)) return Dir::kConst;
  if (e.get() == j) return Dir::kUp;
  if (const auto* c = e->as<ir::CastNode>()) {
    const DType t = c->dtype;
    const bool wide =
        t == DType::kInt32 || t == DType::kInt64 || t == DType::kFloat32 || t == DType::kFloat64;
    return wide && ir::IsInt(c->value->dtype) ? Direction(c->value, j) : Dir::kUnknown;
  }
  const auto* b = e->as<ir::BinaryNode>();
  if (!b || !ir::IsInt(b->dtype)) return Dir::kUnknown;
  const Dir da = Direction(b->a, j), db = Direction(b->b, j);
  auto scaled = [](Dir d, int64_t c) { return c > 0 ? d : c < 0 ? Flip(d) : Dir::kConst; };
  switch (b->op) {
    case BinaryOp::kAdd:
    case BinaryOp::kMin:
    case BinaryOp::kMax: return Join(da, db);
    case BinaryOp::kSub: return Join(da, Flip(db));
    case BinaryOp::kMul:
      if (auto c = ir::AsConstInt(b->b)) return scaled(da, *c);
      if (auto c = ir::AsConstInt(b->a)) return scaled(db, *c);
      return Dir::kUnknown;
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv: {
      auto c = ir::AsConstInt(b->b);
      return c && *c > 0 ? da : Dir::kUnknown;
    }
    default: return Dir::kUnknown;
  }
}

}  // namespace

bool UsesVar(const ir::Expr& e, const ir::VarNode* v) {
  struct Finder : ir::IRVisitor {
    const ir::VarNode* var = nullptr;
    bool found = false;
    void Visit(const ir::Expr& x) override {
      if (!x || found) return;
      if (x.get() == var) found = true;
      ir::IRVisitor::Visit(x);
    }
    using ir::IRVisitor::Visit;
  } f;
  f.var = v;
  f.Visit(e);
  return f.found;
}

bool HasLoad(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void Visit(const ir::Expr& x) override {
      if (!x || found) return;
      if (x->kind == ir::ExprKind::kLoad) found = true;
      ir::IRVisitor::Visit(x);
    }
    using ir::IRVisitor::Visit;
  } f;
  f.Visit(e);
  return f.found;
}

bool RunGuard(const ir::Expr& cond, const ir::VarNode* j, std::vector<RunCheck>* out) {
  if (HasLoad(cond)) return false;
  if (!UsesVar(cond, j)) {
    out->push_back({cond, false});
    return true;
  }
  const auto* b = cond->as<ir::BinaryNode>();
  if (!b) return false;
  if (b->op == BinaryOp::kAnd) return RunGuard(b->a, j, out) && RunGuard(b->b, j, out);
  // The direction of a - b.
  const Dir d = Join(Direction(b->a, j), Flip(Direction(b->b, j)));
  if (d == Dir::kUnknown) return false;
  switch (b->op) {
    case BinaryOp::kLt:
    case BinaryOp::kLe: out->push_back({cond, d == Dir::kUp}); return true;
    case BinaryOp::kGt:
    case BinaryOp::kGe: out->push_back({cond, d == Dir::kDown}); return true;
    default: return false;
  }
}

}  // namespace tilec::cuda::vector_body
