#include "compiler/ir/visitor.h"

#include <utility>

namespace tilec::ir {

void IRVisitor::Visit(const Expr& e) {
  if (!e) return;
  switch (e->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar: return;
    case ExprKind::kBinary: {
      const auto* n = e->as<BinaryNode>();
      Visit(n->a);
      Visit(n->b);
      return;
    }
    case ExprKind::kUnary: Visit(e->as<UnaryNode>()->a); return;
    case ExprKind::kSelect: {
      const auto* n = e->as<SelectNode>();
      Visit(n->cond);
      Visit(n->t);
      Visit(n->f);
      return;
    }
    case ExprKind::kCast: Visit(e->as<CastNode>()->value); return;
    case ExprKind::kCall:
      for (const Expr& a : e->as<CallNode>()->args) Visit(a);
      return;
    case ExprKind::kLoad: {
      const auto* n = e->as<LoadNode>();
      VisitBuffer(n->buffer);
      for (const Expr& i : n->indices) Visit(i);
      return;
    }
  }
}

void IRVisitor::VisitRegion(const Region& r) {
  VisitBuffer(r.buffer);
  for (const Expr& m : r.mins) Visit(m);
  for (const Expr& x : r.extents) Visit(x);
}

void IRVisitor::VisitBuffer(const Buffer& b) {
  if (!b) return;
  for (const Expr& d : b->shape) Visit(d);
}

void IRVisitor::Visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : s->as<SeqNode>()->stmts) Visit(c);
      return;
    case StmtKind::kKernel: {
      const auto* n = s->as<KernelNode>();
      for (const Expr& g : n->grid) Visit(g);
      for (const Var& v : n->block_vars) Visit(Expr(v));
      Visit(n->threads);
      Visit(n->body);
      return;
    }
    case StmtKind::kAllocate: {
      const auto* n = s->as<AllocateNode>();
      VisitBuffer(n->buffer);
      Visit(n->init);
      return;
    }
    case StmtKind::kFor: {
      const auto* n = s->as<ForNode>();
      Visit(Expr(n->var));
      Visit(n->min);
      Visit(n->extent);
      Visit(n->num_stages);
      Visit(n->body);
      return;
    }
    case StmtKind::kIf: {
      const auto* n = s->as<IfNode>();
      Visit(n->cond);
      Visit(n->then_case);
      Visit(n->else_case);
      return;
    }
    case StmtKind::kWhile: {
      const auto* n = s->as<WhileNode>();
      Visit(n->cond);
      Visit(n->body);
      return;
    }
    case StmtKind::kStore: {
      const auto* n = s->as<StoreNode>();
      VisitBuffer(n->buffer);
      for (const Expr& i : n->indices) Visit(i);
      Visit(n->value);
      return;
    }
    case StmtKind::kLet: {
      const auto* n = s->as<LetNode>();
      Visit(Expr(n->var));
      Visit(n->value);
      return;
    }
    case StmtKind::kCopy: {
      const auto* n = s->as<CopyNode>();
      VisitRegion(n->src);
      VisitRegion(n->dst);
      return;
    }
    case StmtKind::kGemm: {
      const auto* n = s->as<GemmNode>();
      VisitRegion(n->a);
      VisitRegion(n->b);
      VisitRegion(n->c);
      return;
    }
    case StmtKind::kFill: {
      const auto* n = s->as<FillNode>();
      VisitRegion(n->dst);
      Visit(n->value);
      return;
    }
    case StmtKind::kReduce: {
      const auto* n = s->as<ReduceNode>();
      VisitBuffer(n->src);
      VisitBuffer(n->dst);
      return;
    }
    case StmtKind::kCumsum: {
      const auto* n = s->as<CumsumNode>();
      VisitBuffer(n->src);
      VisitBuffer(n->dst);
      return;
    }
    case StmtKind::kAtomicAdd: {
      const auto* n = s->as<AtomicAddNode>();
      VisitRegion(n->dst);
      if (n->src) VisitRegion(*n->src);
      Visit(n->value);
      if (n->result) VisitBuffer(n->result);
      return;
    }
    case StmtKind::kAnnotateLayout: {
      const auto* n = s->as<AnnotateLayoutNode>();
      VisitBuffer(n->buffer);
      for (const Var& v : n->layout.vars) Visit(Expr(v));
      for (const Expr& i : n->layout.indices) Visit(i);
      return;
    }
    case StmtKind::kUseSwizzle: Visit(s->as<UseSwizzleNode>()->panel_size); return;
  }
}

void IRVisitor::VisitProgram(const Program& p) {
  for (const Param& param : p.params) {
    if (param.tensor) VisitBuffer(param.tensor);
    if (param.scalar) Visit(Expr(param.scalar));
  }
  Visit(p.body);
}

// ---------------------------------------------------------------------------

std::vector<Expr> IRMutator::MutateAll(const std::vector<Expr>& es, bool* changed) {
  std::vector<Expr> out;
  out.reserve(es.size());
  for (const Expr& e : es) {
    out.push_back(Mutate(e));
    if (out.back() != e) *changed = true;
  }
  return out;
}

Expr IRMutator::Mutate(const Expr& e) {
  if (!e) return e;
  switch (e->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar: return e;
    case ExprKind::kBinary: {
      const auto* n = e->as<BinaryNode>();
      Expr a = Mutate(n->a), b = Mutate(n->b);
      if (a == n->a && b == n->b) return e;
      return std::make_shared<BinaryNode>(n->dtype, n->op, std::move(a), std::move(b));
    }
    case ExprKind::kUnary: {
      const auto* n = e->as<UnaryNode>();
      Expr a = Mutate(n->a);
      if (a == n->a) return e;
      return std::make_shared<UnaryNode>(n->dtype, n->op, std::move(a));
    }
    case ExprKind::kSelect: {
      const auto* n = e->as<SelectNode>();
      Expr c = Mutate(n->cond), t = Mutate(n->t), f = Mutate(n->f);
      if (c == n->cond && t == n->t && f == n->f) return e;
      return std::make_shared<SelectNode>(n->dtype, std::move(c), std::move(t), std::move(f));
    }
    case ExprKind::kCast: {
      const auto* n = e->as<CastNode>();
      Expr v = Mutate(n->value);
      if (v == n->value) return e;
      return std::make_shared<CastNode>(n->dtype, std::move(v));
    }
    case ExprKind::kCall: {
      const auto* n = e->as<CallNode>();
      bool changed = false;
      std::vector<Expr> args = MutateAll(n->args, &changed);
      if (!changed) return e;
      return std::make_shared<CallNode>(n->dtype, n->fn, std::move(args));
    }
    case ExprKind::kLoad: {
      const auto* n = e->as<LoadNode>();
      bool changed = false;
      Buffer b = MutateBuffer(n->buffer);
      std::vector<Expr> idx = MutateAll(n->indices, &changed);
      if (!changed && b == n->buffer) return e;
      return std::make_shared<LoadNode>(b->dtype, std::move(b), std::move(idx));
    }
  }
  return e;
}

Region IRMutator::MutateRegion(const Region& r) {
  bool changed = false;
  Region out{MutateBuffer(r.buffer), MutateAll(r.mins, &changed), MutateAll(r.extents, &changed)};
  return out;
}

namespace {
bool SameRegion(const Region& a, const Region& b) {
  return a.buffer == b.buffer && a.mins == b.mins && a.extents == b.extents;
}
}  // namespace

Stmt IRMutator::Mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::kSeq: {
      const auto* n = s->as<SeqNode>();
      std::vector<Stmt> out;
      bool changed = false;
      for (const Stmt& c : n->stmts) {
        out.push_back(Mutate(c));
        if (out.back() != c) changed = true;
      }
      if (!changed) return s;
      return Seq(std::move(out));
    }
    case StmtKind::kKernel: {
      const auto* n = s->as<KernelNode>();
      bool changed = false;
      std::vector<Expr> grid = MutateAll(n->grid, &changed);
      Expr threads = Mutate(n->threads);
      Stmt body = Mutate(n->body);
      if (!changed && threads == n->threads && body == n->body) return s;
      auto k = std::make_shared<KernelNode>(*n);
      k->grid = std::move(grid);
      k->threads = std::move(threads);
      k->body = std::move(body);
      return k;
    }
    case StmtKind::kAllocate: {
      const auto* n = s->as<AllocateNode>();
      Buffer b = MutateBuffer(n->buffer);
      Expr init = Mutate(n->init);
      if (b == n->buffer && init == n->init) return s;
      return Allocate(std::move(b), std::move(init));
    }
    case StmtKind::kFor: {
      const auto* n = s->as<ForNode>();
      Expr min = Mutate(n->min), extent = Mutate(n->extent), stages = Mutate(n->num_stages);
      Stmt body = Mutate(n->body);
      if (min == n->min && extent == n->extent && stages == n->num_stages && body == n->body)
        return s;
      auto f = std::make_shared<ForNode>(*n);
      f->min = std::move(min);
      f->extent = std::move(extent);
      f->num_stages = std::move(stages);
      f->body = std::move(body);
      return f;
    }
    case StmtKind::kIf: {
      const auto* n = s->as<IfNode>();
      Expr c = Mutate(n->cond);
      Stmt t = Mutate(n->then_case), e = Mutate(n->else_case);
      if (c == n->cond && t == n->then_case && e == n->else_case) return s;
      return If(std::move(c), std::move(t), std::move(e));
    }
    case StmtKind::kWhile: {
      const auto* n = s->as<WhileNode>();
      Expr c = Mutate(n->cond);
      Stmt b = Mutate(n->body);
      if (c == n->cond && b == n->body) return s;
      return While(std::move(c), std::move(b));
    }
    case StmtKind::kStore: {
      const auto* n = s->as<StoreNode>();
      bool changed = false;
      Buffer b = MutateBuffer(n->buffer);
      std::vector<Expr> idx = MutateAll(n->indices, &changed);
      Expr v = Mutate(n->value);
      if (!changed && b == n->buffer && v == n->value) return s;
      return Store(std::move(b), std::move(idx), std::move(v));
    }
    case StmtKind::kLet: {
      const auto* n = s->as<LetNode>();
      Expr v = Mutate(n->value);
      if (v == n->value) return s;
      return Let(n->var, std::move(v));
    }
    case StmtKind::kCopy: {
      const auto* n = s->as<CopyNode>();
      Region src = MutateRegion(n->src), dst = MutateRegion(n->dst);
      if (SameRegion(src, n->src) && SameRegion(dst, n->dst)) return s;
      return Copy(std::move(src), std::move(dst), n->disable_tma);
    }
    case StmtKind::kGemm: {
      const auto* n = s->as<GemmNode>();
      Region a = MutateRegion(n->a), b = MutateRegion(n->b), c = MutateRegion(n->c);
      if (SameRegion(a, n->a) && SameRegion(b, n->b) && SameRegion(c, n->c)) return s;
      auto g = std::make_shared<GemmNode>(*n);
      g->a = std::move(a);
      g->b = std::move(b);
      g->c = std::move(c);
      return g;
    }
    case StmtKind::kFill: {
      const auto* n = s->as<FillNode>();
      Region d = MutateRegion(n->dst);
      Expr v = Mutate(n->value);
      if (SameRegion(d, n->dst) && v == n->value) return s;
      return Fill(std::move(d), std::move(v));
    }
    case StmtKind::kReduce: {
      const auto* n = s->as<ReduceNode>();
      Buffer src = MutateBuffer(n->src), dst = MutateBuffer(n->dst);
      if (src == n->src && dst == n->dst) return s;
      return std::make_shared<ReduceNode>(n->reduce_kind, std::move(src), std::move(dst), n->dim,
                                          n->clear);
    }
    case StmtKind::kCumsum: {
      const auto* n = s->as<CumsumNode>();
      Buffer src = MutateBuffer(n->src), dst = MutateBuffer(n->dst);
      if (src == n->src && dst == n->dst) return s;
      return std::make_shared<CumsumNode>(std::move(src), std::move(dst), n->dim, n->reverse);
    }
    case StmtKind::kAtomicAdd: {
      const auto* n = s->as<AtomicAddNode>();
      Region d = MutateRegion(n->dst);
      std::optional<Region> src;
      if (n->src) src = MutateRegion(*n->src);
      Expr v = Mutate(n->value);
      Buffer r = n->result ? MutateBuffer(n->result) : nullptr;
      if (SameRegion(d, n->dst) && (!src || SameRegion(*src, *n->src)) && v == n->value &&
          r == n->result) {
        return s;
      }
      return std::make_shared<AtomicAddNode>(std::move(d), std::move(src), std::move(v), n->op,
                                             std::move(r));
    }
    case StmtKind::kAnnotateLayout: {
      const auto* n = s->as<AnnotateLayoutNode>();
      bool changed = false;
      Buffer b = MutateBuffer(n->buffer);
      Layout l = n->layout;
      l.indices = MutateAll(n->layout.indices, &changed);
      if (!changed && b == n->buffer) return s;
      return std::make_shared<AnnotateLayoutNode>(std::move(b), std::move(l));
    }
    case StmtKind::kUseSwizzle: {
      const auto* n = s->as<UseSwizzleNode>();
      Expr p = Mutate(n->panel_size);
      if (p == n->panel_size) return s;
      return std::make_shared<UseSwizzleNode>(std::move(p), n->column_major, n->enable);
    }
  }
  return s;
}

}  // namespace tilec::ir
