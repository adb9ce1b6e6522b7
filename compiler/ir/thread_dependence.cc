#include "compiler/ir/thread_dependence.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::ir {
namespace {

using LetValues = std::map<const VarNode*, Expr>;

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
// a thread-private buffer (one outside `uniform`, when given).
class Mentions : public IRVisitor {
 public:
  explicit Mentions(const std::set<const VarNode*>& vars,
                    const std::set<const BufferNode*>* uniform = nullptr)
      : vars_(vars), uniform_(uniform) {}
  using IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (!e || found) return;
    if (const auto* c = e->as<CallNode>(); c && c->fn == CallFn::kThreadIndex) found = true;
    if (const auto* v = e->as<VarNode>(); v && vars_.count(v)) found = true;
    IRVisitor::Visit(e);
  }
  void VisitBuffer(const Buffer& b) override {
    if (b && ThreadPrivate(b) && !(uniform_ && uniform_->count(b.get()))) found = true;
    IRVisitor::VisitBuffer(b);
  }
  bool found = false;

 private:
  const std::set<const VarNode*>& vars_;
  const std::set<const BufferNode*>* uniform_;
};

// The private buffers a statement mentions (for statements other than
// stores, lets and control, whose writes are not told apart from reads).
class PrivateBuffers : public IRVisitor {
 public:
  using IRVisitor::Visit;
  void VisitBuffer(const Buffer& b) override {
    if (b && ThreadPrivate(b)) found.insert(b.get());
    IRVisitor::VisitBuffer(b);
  }
  std::set<const BufferNode*> found;
};

// The value of an integer or bool expression over constants, the thread
// index `t` and lets of such expressions; nullopt for anything else (other
// variables, loads, floats).
std::optional<int64_t> EvalMask(const ir::Expr& e, int64_t t, const LetValues& lets) {
  if (!e) return std::nullopt;
  if (const auto* i = e->as<IntImmNode>()) return i->value;
  if (const auto* v = e->as<VarNode>()) {
    auto it = lets.find(v);
    if (it == lets.end()) return std::nullopt;
    return EvalMask(it->second, t, lets);
  }
  if (const auto* c = e->as<CallNode>()) {
    if (c->fn == CallFn::kThreadIndex) return t;
    return std::nullopt;
  }
  if (const auto* c = e->as<CastNode>()) {
    if (IsFloat(e->dtype) || IsFloat(c->value->dtype)) return std::nullopt;
    std::optional<int64_t> v = EvalMask(c->value, t, lets);
    if (v && e->dtype == DType::kBool) return *v != 0;
    return v;
  }
  if (const auto* u = e->as<UnaryNode>()) {
    std::optional<int64_t> a = EvalMask(u->a, t, lets);
    if (!a) return std::nullopt;
    switch (u->op) {
      case UnaryOp::kNeg: return -*a;
      case UnaryOp::kNot: return *a == 0;
      case UnaryOp::kBitNot: return ~*a;
    }
    return std::nullopt;
  }
  if (const auto* s = e->as<SelectNode>()) {
    std::optional<int64_t> c = EvalMask(s->cond, t, lets);
    if (!c) return std::nullopt;
    return EvalMask(*c ? s->t : s->f, t, lets);
  }
  const auto* b = e->as<BinaryNode>();
  if (!b || IsFloat(b->a->dtype)) return std::nullopt;
  std::optional<int64_t> x = EvalMask(b->a, t, lets), y = EvalMask(b->b, t, lets);
  if (!x || !y) return std::nullopt;
  const int64_t p = *x, q = *y;
  switch (b->op) {
    case BinaryOp::kAdd: return p + q;
    case BinaryOp::kSub: return p - q;
    case BinaryOp::kMul: return p * q;
    case BinaryOp::kDiv:
      if (q == 0) return std::nullopt;
      return p / q;
    case BinaryOp::kMod:
      if (q == 0) return std::nullopt;
      return p % q;
    case BinaryOp::kFloorDiv: {
      if (q == 0) return std::nullopt;
      int64_t d = p / q;
      return (p % q != 0 && ((p < 0) != (q < 0))) ? d - 1 : d;
    }
    case BinaryOp::kFloorMod: {
      if (q == 0) return std::nullopt;
      int64_t m = p % q;
      return (m != 0 && ((m < 0) != (q < 0))) ? m + q : m;
    }
    case BinaryOp::kMin: return std::min(p, q);
    case BinaryOp::kMax: return std::max(p, q);
    case BinaryOp::kEq: return p == q;
    case BinaryOp::kNe: return p != q;
    case BinaryOp::kLt: return p < q;
    case BinaryOp::kLe: return p <= q;
    case BinaryOp::kGt: return p > q;
    case BinaryOp::kGe: return p >= q;
    case BinaryOp::kAnd: return p != 0 && q != 0;
    case BinaryOp::kOr: return p != 0 || q != 0;
    case BinaryOp::kBitAnd: return p & q;
    case BinaryOp::kBitOr: return p | q;
    case BinaryOp::kBitXor: return p ^ q;
    case BinaryOp::kShl:
    case BinaryOp::kShr:
      if (q < 0 || q >= 63) return std::nullopt;
      return b->op == BinaryOp::kShl ? p << q : p >> q;
  }
  return std::nullopt;
}

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

ThreadDependence::ThreadDependence(const Stmt& kernel_body) {
  Walk(kernel_body);
  FindUniform(kernel_body);
}

void ThreadDependence::FindUniform(const Stmt& body) {
  struct Allocations : IRVisitor {
    using IRVisitor::Visit;
    void Visit(const Stmt& s) override {
      if (const auto* a = s ? s->as<AllocateNode>() : nullptr; a && ThreadPrivate(a->buffer)) {
        found.insert(a->buffer.get());
      }
      IRVisitor::Visit(s);
    }
    std::set<const BufferNode*> found;
  } allocations;
  allocations.Visit(body);
  uniform_buffers_ = std::move(allocations.found);
  for (;;) {
    const size_t before = uniform_buffers_.size();
    differing_.clear();
    WalkUniform(body, false);
    if (uniform_buffers_.size() == before) return;
  }
}

// One round in program order (lets and loops bind before their uses): the
// variables whose values may differ (a T.Parallel loop's variable does: its
// iterations are spread over the threads), and the private buffers written
// with a differing value or index, or under differing control, dropped.
void ThreadDependence::WalkUniform(const Stmt& s, bool divergent_control) {
  if (!s) return;
  auto drop = [&](const Buffer& b) {
    if (b) uniform_buffers_.erase(b.get());
  };
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : s->as<SeqNode>()->stmts) WalkUniform(c, divergent_control);
      return;
    case StmtKind::kLet: {
      const auto* l = s->as<LetNode>();
      if (Differs(l->value)) differing_.insert(l->var.get());
      return;
    }
    case StmtKind::kFor: {
      const auto* f = s->as<ForNode>();
      const bool d = f->kind == ForKind::kParallel || Differs(f->min) || Differs(f->extent);
      if (d) differing_.insert(f->var.get());
      WalkUniform(f->body, divergent_control || d);
      return;
    }
    case StmtKind::kIf: {
      const auto* i = s->as<IfNode>();
      const bool d = divergent_control || Differs(i->cond);
      WalkUniform(i->then_case, d);
      WalkUniform(i->else_case, d);
      return;
    }
    case StmtKind::kWhile: {
      const auto* w = s->as<WhileNode>();
      WalkUniform(w->body, divergent_control || Differs(w->cond));
      return;
    }
    case StmtKind::kAllocate: {
      const auto* a = s->as<AllocateNode>();
      if (ThreadPrivate(a->buffer) && (divergent_control || Differs(a->init))) drop(a->buffer);
      return;
    }
    case StmtKind::kStore: {
      const auto* st = s->as<StoreNode>();
      if (!ThreadPrivate(st->buffer)) return;
      bool differs = divergent_control || Differs(st->value);
      for (const ir::Expr& i : st->indices) differs = differs || Differs(i);
      if (differs) drop(st->buffer);
      return;
    }
    default: {
      // Atomic results, copies, fills, reductions into private buffers...:
      // whatever private buffer the statement mentions may differ.
      PrivateBuffers p;
      p.Visit(s);
      for (const BufferNode* b : p.found) uniform_buffers_.erase(b);
      return;
    }
  }
}

bool ThreadDependence::Differs(const ir::Expr& e) const {
  if (!e) return false;
  Mentions m(differing_, &uniform_buffers_);
  m.Visit(e);
  return m.found;
}

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
      if (Expr(l->value)) {
        vars_.insert(l->var.get());
        lets_[l->var.get()] = l->value;
      }
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
    case StmtKind::kWhile: Walk(s->as<WhileNode>()->body); return;
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
  if (const auto* i = s->as<IfNode>()) return Differs(i->cond);
  if (const auto* w = s->as<WhileNode>()) return Differs(w->cond);
  if (const auto* f = s->as<ForNode>()) return Differs(f->min) || Differs(f->extent);
  return false;
}

// Whether `s` writes a shared buffer and also reads it at an element other
// than the one written (values passing between threads).
bool ExchangesThroughShared(const Stmt& s) {
  struct V : IRVisitor {
    using IRVisitor::Visit;
    std::map<const BufferNode*, std::set<std::string>> writes, reads;
    static std::string Key(const std::vector<ir::Expr>& idx) {
      std::string k;
      for (const ir::Expr& e : idx) k += PrintExpr(e) + ";";
      return k;
    }
    void Visit(const ir::Expr& e) override {
      if (!e) return;
      if (const auto* l = e->as<LoadNode>(); l && l->buffer->scope == Scope::kShared) {
        reads[l->buffer.get()].insert(Key(l->indices));
      }
      IRVisitor::Visit(e);
    }
    void Visit(const Stmt& s) override {
      if (!s) return;
      if (const auto* st = s->as<StoreNode>(); st && st->buffer->scope == Scope::kShared) {
        writes[st->buffer.get()].insert(Key(st->indices));
      }
      IRVisitor::Visit(s);
    }
  } v;
  v.Visit(s);
  for (const auto& [b, w] : v.writes) {
    auto it = v.reads.find(b);
    if (it == v.reads.end()) continue;
    for (const std::string& r : it->second) {
      if (!w.count(r) || w.size() > 1) return true;
    }
  }
  return false;
}

ThreadDependence::Role ThreadDependence::RoleOf(const Stmt& s) const {
  if (!PerThread(s)) return Role::kUniform;
  if (!Collective(s)) {
    // A uniform loop or branch whose body passes values between threads
    // through shared memory runs statement by statement (a barrier between
    // them), not as one unit per thread.
    const bool compound =
        s->kind == StmtKind::kFor || s->kind == StmtKind::kIf || s->kind == StmtKind::kWhile;
    if (compound && !Divergent(s) && ExchangesThroughShared(s)) return Role::kContainer;
    return Role::kPerThread;
  }
  if (const auto* i = s->as<IfNode>(); i && EvalMask(i->cond, 0, lets_).has_value() &&
                                       !PerThread(i->then_case) && !PerThread(i->else_case)) {
    return Role::kMasked;
  }
  return Role::kContainer;
}

std::pair<bool, bool> ThreadDependence::MaskedBranches(const IfNode& s, int64_t threads) const {
  bool some = false, not_all = false;
  for (int64_t t = 0; t < threads && !(some && not_all); ++t) {
    const bool c = EvalMask(s.cond, t, lets_).value_or(0) != 0;
    some |= c;
    not_all |= !c;
  }
  return {some, not_all};
}

absl::Status ThreadDependence::Check(const Stmt& s) const {
  if (s && RoleOf(s) == Role::kPerThread && Divergent(s) && ExchangesThroughShared(s)) {
    return absl::InvalidArgumentError(
        "in a kernel that reads the thread index (T.get_thread_binding), a loop or branch whose "
        "bounds or condition depend on the thread both writes a shared buffer and reads other "
        "elements of it: threads would pass values with no barrier between them (a barrier "
        "cannot sit in code that only some threads run); write and read in separate statements "
        "outside such control");
  }
  if (!s || RoleOf(s) != Role::kContainer) return absl::OkStatus();  // kMasked included
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
    case StmtKind::kWhile:
      if (Divergent(s)) return refuse("runs in a `while` whose condition depends on the thread");
      return Check(s->as<WhileNode>()->body);
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
