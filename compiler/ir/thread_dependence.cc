#include "compiler/ir/thread_dependence.h"

#include "compiler/ir/visitor.h"

namespace tilec::ir {
namespace {

class FindThreadIndex : public IRVisitor {
 public:
  using IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (!e || found) return;
    if (const auto* c = e->as<CallNode>(); c && c->fn == CallFn::kThreadIndex) {
      found = true;
      return;
    }
    IRVisitor::Visit(e);
  }
  bool found = false;
};

// Whether anything inside reads the thread index, a variable of `vars` or
// a thread-private buffer.
class Mentions : public IRVisitor {
 public:
  explicit Mentions(const std::set<const VarNode*>& vars) : vars_(vars) {}
  using IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (!e || found) return;
    if (const auto* c = e->as<CallNode>(); c && c->fn == CallFn::kThreadIndex) found = true;
    if (const auto* v = e->as<VarNode>(); v && vars_.count(v)) found = true;
    IRVisitor::Visit(e);
  }
  void VisitBuffer(const Buffer& b) override {
    if (b && ThreadPrivate(b)) found = true;
    IRVisitor::VisitBuffer(b);
  }
  bool found = false;

 private:
  const std::set<const VarNode*>& vars_;
};

}  // namespace

bool ThreadPrivate(const Buffer& b) { return b->scope == Scope::kLocal || b->scope == Scope::kVar; }

bool UsesThreadIndex(const Stmt& s) {
  FindThreadIndex f;
  f.Visit(s);
  return f.found;
}

bool UsesThreadIndex(const ir::Expr& e) {
  FindThreadIndex f;
  f.Visit(e);
  return f.found;
}

ThreadDependence::ThreadDependence(const Stmt& kernel_body) { Walk(kernel_body); }

// Lets and loops bind before their uses in program order, so one walk in
// that order finds every dependent variable.
void ThreadDependence::Walk(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : s->as<SeqNode>()->stmts) Walk(c);
      return;
    case StmtKind::kLet: {
      const auto* l = s->as<LetNode>();
      if (Expr(l->value)) vars_.insert(l->var.get());
      return;
    }
    case StmtKind::kFor: {
      const auto* f = s->as<ForNode>();
      if (Expr(f->min) || Expr(f->extent)) vars_.insert(f->var.get());
      Walk(f->body);
      return;
    }
    case StmtKind::kIf: {
      const auto* i = s->as<IfNode>();
      Walk(i->then_case);
      Walk(i->else_case);
      return;
    }
    default: return;
  }
}

bool ThreadDependence::Expr(const ir::Expr& e) const {
  if (!e) return false;
  Mentions m(vars_);
  m.Visit(e);
  return m.found;
}

bool ThreadDependence::PerThread(const Stmt& s) const {
  if (!s) return false;
  Mentions m(vars_);
  m.Visit(s);
  return m.found;
}

bool ThreadDependence::Divergent(const Stmt& s) const {
  if (!s) return false;
  if (const auto* i = s->as<IfNode>()) return Expr(i->cond);
  if (const auto* f = s->as<ForNode>()) return Expr(f->min) || Expr(f->extent);
  return false;
}

ThreadDependence::Role ThreadDependence::RoleOf(const Stmt& s) const {
  if (!PerThread(s)) return Role::kUniform;
  if (!Collective(s)) return Role::kPerThread;
  return Role::kContainer;
}

absl::Status ThreadDependence::Check(const Stmt& s) const {
  if (!s || RoleOf(s) != Role::kContainer) return absl::OkStatus();
  std::string what;
  Collective(s, &what);
  auto refuse = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        "in a kernel that reads the thread index (T.get_thread_binding), " + what + " " + why +
        "; tile operators run once for the whole block, so they cannot depend on per-thread "
        "values (thread indices, T.alloc_local / T.alloc_var buffers, names bound from them)");
  };
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : s->as<SeqNode>()->stmts) {
        if (absl::Status st = Check(c); !st.ok()) return st;
      }
      return absl::OkStatus();
    case StmtKind::kFor: {
      const auto* f = s->as<ForNode>();
      if (f->kind == ForKind::kParallel) return refuse("reads a per-thread value");
      if (Divergent(s)) return refuse("runs in a loop whose bounds depend on the thread");
      return Check(f->body);
    }
    case StmtKind::kIf: {
      const auto* i = s->as<IfNode>();
      if (Divergent(s)) return refuse("runs under a condition that depends on the thread");
      if (absl::Status st = Check(i->then_case); !st.ok()) return st;
      return Check(i->else_case);
    }
    default: return refuse("reads a per-thread value");
  }
}

bool ThreadDependence::Collective(const Stmt& s, std::string* what) {
  struct V : IRVisitor {
    using IRVisitor::Visit;
    void Visit(const Stmt& s) override {
      if (!s || !found.empty()) return;
      switch (s->kind) {
        case StmtKind::kFor: {
          const auto* f = s->as<ForNode>();
          if (f->kind == ForKind::kParallel) found = "a T.Parallel loop";
          if (f->kind == ForKind::kPipelined) found = "a T.Pipelined loop";
          break;
        }
        case StmtKind::kCopy: {
          const auto* c = s->as<CopyNode>();
          if (!ThreadPrivate(c->src.buffer) && !ThreadPrivate(c->dst.buffer)) found = "T.copy";
          break;
        }
        case StmtKind::kFill:
          if (!ThreadPrivate(s->as<FillNode>()->dst.buffer)) found = "T.fill";
          break;
        case StmtKind::kGemm: found = "T.gemm"; break;
        case StmtKind::kReduce: found = "a T.reduce"; break;
        case StmtKind::kCumsum: found = "T.cumsum"; break;
        case StmtKind::kAtomicAdd:
          // The scalar form (one element, one value) is each thread's own.
          if (s->as<AtomicAddNode>()->src) found = "a tile atomic update";
          break;
        default: break;
      }
      if (found.empty()) IRVisitor::Visit(s);
    }
    std::string found;
  } v;
  v.Visit(s);
  if (what) *what = v.found;
  return !v.found.empty();
}

}  // namespace tilec::ir
