// The body of a T.Parallel nest as the vector path sees it (emitter_vector.cc):
// its global and shared accesses, which of them every element of a run
// makes, and the guard `if`s that hold on a whole run when they hold at its
// two ends.
#ifndef TILEC_COMPILER_TARGETS_CUDA_EMITTER_VECTOR_BODY_H_
#define TILEC_COMPILER_TARGETS_CUDA_EMITTER_VECTOR_BODY_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda::vector_body {

// Whether `e` mentions the variable v; whether it loads from a buffer.
bool UsesVar(const ir::Expr& e, const ir::VarNode* v);
bool HasLoad(const ir::Expr& e);

// A guard condition checked at one end of the run (false: its start, true:
// its end).
struct RunCheck {
  ir::Expr cond;
  bool at_end = false;
};

// Whether `cond` (lets substituted) holds on the whole run when the checks
// appended to `out` hold.
bool RunGuard(const ir::Expr& cond, const ir::VarNode* j, std::vector<RunCheck>* out);

// One global or shared access of the body.
struct BodyAccess {
  ir::Buffer buffer;
  std::vector<ir::Expr> indices;  // lets substituted: over the nest's variables
  const ir::ExprNode* load = nullptr;
  const ir::StmtNode* store = nullptr;
  bool unconditional = false;  // made for every element of a run the guards admit
  int order = 0;               // program order within an element
  // The load is T.if_then_else(guard, load, otherwise) with a guard that
  // has one value on the whole run (lets substituted).
  ir::Expr guard;
  const ir::SelectNode* select = nullptr;
};

// Collects the body's accesses and guards. Anything the vector path cannot
// reorder safely makes ok() false.
class BodyScan {
 public:
  // `decide`: a condition's value where the ranges decide it; `uniform`:
  // whether an expression has one value on every run.
  BodyScan(const ir::VarNode* j, std::function<std::optional<bool>(const ir::Expr&)> decide,
           std::function<bool(const ir::Expr&)> uniform)
      : j_(j), decide_(std::move(decide)), uniform_(std::move(uniform)) {}
  bool ok() const { return ok_; }
  const std::vector<BodyAccess>& accesses() const { return accesses_; }
  const std::vector<RunCheck>& checks() const { return checks_; }
  const std::set<const ir::StmtNode*>& guards() const { return guards_; }

  void Stmt(const ir::Stmt& s, bool conditional) {
    if (!s || !ok_) return;
    switch (s->kind) {
      case ir::StmtKind::kSeq:
        for (const ir::Stmt& x : s->as<ir::SeqNode>()->stmts) Stmt(x, conditional);
        return;
      case ir::StmtKind::kLet: {
        const auto* l = s->as<ir::LetNode>();
        Expr(l->value, conditional);
        lets_[l->var.get()] = Substitute(l->value, lets_);
        return;
      }
      case ir::StmtKind::kStore: {
        const auto* st = s->as<ir::StoreNode>();
        for (const ir::Expr& i : st->indices) Expr(i, conditional);
        Expr(st->value, conditional);
        Record(st->buffer, st->indices, nullptr, s.get(), conditional);
        return;
      }
      case ir::StmtKind::kIf: {
        const auto* i = s->as<ir::IfNode>();
        Expr(i->cond, conditional);
        std::vector<RunCheck> checks;
        if (!conditional && RunGuard(Substitute(i->cond, lets_), j_, &checks)) {
          guards_.insert(s.get());
          checks_.insert(checks_.end(), checks.begin(), checks.end());
          Stmt(i->then_case, false);
        } else {
          Stmt(i->then_case, true);
        }
        Stmt(i->else_case, true);
        return;
      }
      case ir::StmtKind::kFor: {
        const auto* f = s->as<ir::ForNode>();
        Expr(f->min, conditional);
        Expr(f->extent, conditional);
        Stmt(f->body, true);
        return;
      }
      case ir::StmtKind::kAtomicAdd: {
        const auto* a = s->as<ir::AtomicAddNode>();
        if (a->src) {
          ok_ = false;
          return;
        }
        for (const ir::Expr& m : a->dst.mins) Expr(m, conditional);
        Expr(a->value, conditional);
        Record(a->dst.buffer, a->dst.mins, nullptr, s.get(), /*conditional=*/true);
        return;
      }
      default: ok_ = false; return;
    }
  }

 private:
  void Expr(const ir::Expr& e, bool conditional) {
    if (!e) return;
    switch (e->kind) {
      case ir::ExprKind::kLoad: {
        const auto* l = e->as<ir::LoadNode>();
        for (const ir::Expr& i : l->indices) Expr(i, conditional);
        Record(l->buffer, l->indices, l, nullptr, conditional);
        return;
      }
      case ir::ExprKind::kSelect: {
        const auto* s = e->as<ir::SelectNode>();
        Expr(s->cond, conditional);
        const ir::Expr cond = Substitute(s->cond, lets_);
        // A branch the ranges rule out is not emitted (EmitContext::Emit).
        if (std::optional<bool> d = decide_(cond)) {
          Expr(*d ? s->t : s->f, conditional);
          return;
        }
        // T.if_then_else(cond, load, constant) with cond the same on the
        // whole run (the im2col gather's padding test): the run loads its
        // vector when cond holds.
        const auto* t = s->t->as<ir::LoadNode>();
        const bool memory =
            t && (t->buffer->scope == ir::Scope::kGlobal || t->buffer->scope == ir::Scope::kShared);
        if (!conditional && memory && !HasLoad(cond) && !HasLoad(s->f) && uniform_(cond)) {
          for (const ir::Expr& i : t->indices) Expr(i, true);
          Record(t->buffer, t->indices, t, nullptr, false);
          accesses_.back().guard = cond;
          accesses_.back().select = s;
          return;
        }
        Expr(s->t, true);
        Expr(s->f, true);
        return;
      }
      case ir::ExprKind::kBinary: {
        const auto* b = e->as<ir::BinaryNode>();
        Expr(b->a, conditional);
        Expr(b->b, conditional || b->op == ir::BinaryOp::kAnd || b->op == ir::BinaryOp::kOr);
        return;
      }
      case ir::ExprKind::kUnary: Expr(e->as<ir::UnaryNode>()->a, conditional); return;
      case ir::ExprKind::kCast: Expr(e->as<ir::CastNode>()->value, conditional); return;
      case ir::ExprKind::kCall:
        for (const ir::Expr& a : e->as<ir::CallNode>()->args) Expr(a, conditional);
        return;
      default: return;
    }
  }

  void Record(const ir::Buffer& b, const std::vector<ir::Expr>& indices, const ir::ExprNode* load,
              const ir::StmtNode* store, bool conditional) {
    if (b->scope != ir::Scope::kGlobal && b->scope != ir::Scope::kShared) return;
    BodyAccess a;
    a.buffer = b;
    for (const ir::Expr& i : indices) a.indices.push_back(Substitute(i, lets_));
    a.load = load;
    a.store = store;
    a.unconditional = !conditional;
    a.order = order_++;
    accesses_.push_back(std::move(a));
  }

  const ir::VarNode* j_;
  std::function<std::optional<bool>(const ir::Expr&)> decide_;
  std::function<bool(const ir::Expr&)> uniform_;
  bool ok_ = true;
  std::map<const ir::VarNode*, ir::Expr> lets_;
  std::vector<BodyAccess> accesses_;
  std::vector<RunCheck> checks_;
  std::set<const ir::StmtNode*> guards_;
  int order_ = 0;
};

}  // namespace tilec::cuda::vector_body

#endif  // TILEC_COMPILER_TARGETS_CUDA_EMITTER_VECTOR_BODY_H_
