#include "compiler/frontend/safe_access.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/index_simplify.h"
#include "compiler/ir/visitor.h"

namespace tilec::frontend {
namespace {

using ir::BinaryOp;
using ir::Expr;

// A closed integer interval; an unset end is unbounded.
struct Range {
  std::optional<int64_t> lo, hi;
};

std::optional<int64_t> Add(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

class Bounds {
 public:
  void Set(const ir::VarNode* v, Range r) { ranges_[v] = r; }
  void Erase(const ir::VarNode* v) { ranges_.erase(v); }
  std::optional<Range> Get(const ir::VarNode* v) const {
    auto it = ranges_.find(v);
    return it == ranges_.end() ? std::nullopt : std::optional<Range>(it->second);
  }
  void set_threads(std::optional<int64_t> t) { threads_ = t; }

  Range Of(const Expr& e) const {
    if (!e) return {};
    switch (e->kind) {
      case ir::ExprKind::kIntImm: {
        int64_t v = e->as<ir::IntImmNode>()->value;
        return {v, v};
      }
      case ir::ExprKind::kVar: {
        auto it = ranges_.find(e->as<ir::VarNode>());
        return it == ranges_.end() ? Range{} : it->second;
      }
      case ir::ExprKind::kCast:
        return ir::IsInt(e->dtype) ? Of(e->as<ir::CastNode>()->value) : Range{};
      case ir::ExprKind::kSelect: {
        Range t = Of(e->as<ir::SelectNode>()->t), f = Of(e->as<ir::SelectNode>()->f);
        return {t.lo && f.lo ? std::optional(std::min(*t.lo, *f.lo)) : std::nullopt,
                t.hi && f.hi ? std::optional(std::max(*t.hi, *f.hi)) : std::nullopt};
      }
      case ir::ExprKind::kCall: {
        const auto* c = e->as<ir::CallNode>();
        if (c->fn == ir::CallFn::kThreadIndex && threads_) return {0, *threads_ - 1};
        return {};
      }
      case ir::ExprKind::kBinary: return OfBinary(*e->as<ir::BinaryNode>());
      case ir::ExprKind::kUnary: {
        const auto* u = e->as<ir::UnaryNode>();
        if (u->op != ir::UnaryOp::kNeg || !ir::IsInt(e->dtype)) return {};
        Range r = Of(u->a);
        return {r.hi ? std::optional(-*r.hi) : std::nullopt,
                r.lo ? std::optional(-*r.lo) : std::nullopt};
      }
      default: return {};
    }
  }

 private:
  Range OfBinary(const ir::BinaryNode& b) const {
    Range x = Of(b.a), y = Of(b.b);
    std::optional<int64_t> c = ir::AsConstInt(b.b);
    switch (b.op) {
      case BinaryOp::kAdd: return {Add(x.lo, y.lo), Add(x.hi, y.hi)};
      case BinaryOp::kSub:
        return {Add(x.lo, y.hi ? std::optional(-*y.hi) : std::nullopt),
                Add(x.hi, y.lo ? std::optional(-*y.lo) : std::nullopt)};
      case BinaryOp::kMul: {
        // By a constant: each end scaled (an unbounded end stays unbounded).
        std::optional<int64_t> ca = ir::AsConstInt(b.a);
        if (c || ca) {
          const int64_t k = c ? *c : *ca;
          const Range& r = c ? x : y;
          auto scale = [&](std::optional<int64_t> v) {
            return v ? std::optional<int64_t>(*v * k) : std::nullopt;
          };
          return k >= 0 ? Range{scale(r.lo), scale(r.hi)} : Range{scale(r.hi), scale(r.lo)};
        }
        if (!x.lo || !x.hi || !y.lo || !y.hi) return {};
        int64_t p[] = {*x.lo * *y.lo, *x.lo * *y.hi, *x.hi * *y.lo, *x.hi * *y.hi};
        return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
      }
      case BinaryOp::kFloorDiv:
      case BinaryOp::kDiv:
        if (!c || *c <= 0 || (b.op == BinaryOp::kDiv && (!x.lo || *x.lo < 0))) return {};
        return {x.lo ? std::optional(FloorDiv(*x.lo, *c)) : std::nullopt,
                x.hi ? std::optional(FloorDiv(*x.hi, *c)) : std::nullopt};
      case BinaryOp::kFloorMod:
      case BinaryOp::kMod:
        if (!c || *c <= 0 || (b.op == BinaryOp::kMod && (!x.lo || *x.lo < 0))) return {};
        if (x.lo && x.hi && *x.lo >= 0 && *x.hi < *c) return x;
        return {0, *c - 1};
      case BinaryOp::kMin:
        return {x.lo && y.lo ? std::optional(std::min(*x.lo, *y.lo)) : std::nullopt,
                x.hi && y.hi ? std::optional(std::min(*x.hi, *y.hi))
                : x.hi       ? x.hi
                             : y.hi};
      case BinaryOp::kMax:
        return {x.lo && y.lo ? std::optional(std::max(*x.lo, *y.lo))
                : x.lo       ? x.lo
                             : y.lo,
                x.hi && y.hi ? std::optional(std::max(*x.hi, *y.hi)) : std::nullopt};
      default: return {};
    }
  }

  std::map<const ir::VarNode*, Range> ranges_;
  std::optional<int64_t> threads_;
};

// A condition known to hold where an access runs (from an enclosing `if` or
// T.if_then_else): lhs < rhs, or lhs >= rhs.
struct Fact {
  Expr lhs, rhs;
  bool less;
};

// The comparisons of a conjunction, as facts; a variable bound by a let
// (`lets`) stands for its value.
void CollectFacts(const Expr& cond, const std::map<const ir::VarNode*, Expr>& lets,
                  std::vector<Fact>& out) {
  if (const auto* v = cond ? cond->as<ir::VarNode>() : nullptr) {
    auto it = lets.find(v);
    if (it != lets.end()) CollectFacts(it->second, lets, out);
    return;
  }
  const auto* b = cond ? cond->as<ir::BinaryNode>() : nullptr;
  if (!b) return;
  switch (b->op) {
    case BinaryOp::kAnd:
      CollectFacts(b->a, lets, out);
      CollectFacts(b->b, lets, out);
      break;
    case BinaryOp::kLt: out.push_back({b->a, b->b, true}); break;
    case BinaryOp::kGt: out.push_back({b->b, b->a, true}); break;
    case BinaryOp::kGe: out.push_back({b->a, b->b, false}); break;
    case BinaryOp::kLe:
      if (std::optional<int64_t> c = ir::AsConstInt(b->b)) {
        out.push_back({b->a, ir::IntImm(*c + 1, b->b->dtype), true});
      }
      break;
    default: break;
  }
}

class Legalizer : public ir::IRMutator {
 public:
  Legalizer(const SafeValues& safe, const std::set<const ir::BufferNode*>* only)
      : safe_(safe), only_(only) {}
  using ir::IRMutator::Mutate;

  Expr Mutate(const Expr& e) override {
    if (const auto* l = e ? e->as<ir::LoadNode>() : nullptr; l && Skip(l->buffer)) {
      return IRMutator::Mutate(e);
    }
    if (const auto* l = e ? e->as<ir::LoadNode>() : nullptr) {
      if (in_kernel_ && l->buffer->scope == ir::Scope::kGlobal) {
        std::vector<Expr> idx;
        for (const Expr& i : l->indices) idx.push_back(Mutate(i));
        idx = FromEnd(l->buffer, std::move(idx));
        Expr load = ir::Load(l->buffer, idx);
        Expr cond = InBounds(l->buffer, idx);
        if (!cond) return load;
        auto it = safe_.find(l->buffer.get());
        Expr safe = pad_                ? ir::Cast(l->buffer->dtype, pad_)
                    : it != safe_.end() ? it->second
                                        : ir::Cast(l->buffer->dtype, ir::IntImm(0));
        return ir::Select(cond, load, safe);
      }
      if (in_kernel_ && l->buffer->scope != ir::Scope::kVar) {
        std::vector<Expr> idx;
        for (const Expr& i : l->indices) idx.push_back(Mutate(i));
        return ir::Load(l->buffer, FromEnd(l->buffer, std::move(idx)));
      }
    }
    if (const auto* sel = e ? e->as<ir::SelectNode>() : nullptr) {
      Expr cond = Mutate(sel->cond);
      Expr t;
      {
        Assume a(this, sel->cond);
        t = Mutate(sel->t);
      }
      return ir::Select(cond, t, Mutate(sel->f));
    }
    return IRMutator::Mutate(e);
  }

  ir::Stmt Mutate(const ir::Stmt& s) override {
    if (!s) return s;
    switch (s->kind) {
      case ir::StmtKind::kKernel: {
        const auto* k = s->as<ir::KernelNode>();
        for (size_t d = 0; d < k->block_vars.size() && d < k->grid.size(); ++d) {
          Range g = bounds_.Of(k->grid[d]);
          bounds_.Set(k->block_vars[d].get(),
                      {0, g.hi ? std::optional<int64_t>(*g.hi - 1) : std::nullopt});
        }
        bounds_.set_threads(ir::AsConstInt(k->threads));
        const bool outer = in_kernel_;
        in_kernel_ = true;
        ir::Stmt out = IRMutator::Mutate(s);
        in_kernel_ = outer;
        return out;
      }
      case ir::StmtKind::kFor: {
        const auto* f = s->as<ir::ForNode>();
        Range lo = bounds_.Of(f->min), n = bounds_.Of(f->extent);
        bounds_.Set(f->var.get(), {lo.lo, n.hi ? Add(lo.hi, *n.hi - 1) : std::nullopt});
        ir::Stmt out = IRMutator::Mutate(s);
        bounds_.Erase(f->var.get());
        return out;
      }
      case ir::StmtKind::kLet: {
        const auto* l = s->as<ir::LetNode>();
        ir::Stmt out = IRMutator::Mutate(s);
        bounds_.Set(l->var.get(), bounds_.Of(l->value));
        lets_[l->var.get()] = l->value;
        return out;
      }
      case ir::StmtKind::kIf: {
        const auto* n = s->as<ir::IfNode>();
        Expr cond = Mutate(n->cond);
        ir::Stmt then_case;
        {
          Assume a(this, n->cond);
          then_case = Mutate(n->then_case);
        }
        return ir::If(cond, then_case, n->else_case ? Mutate(n->else_case) : nullptr);
      }
      case ir::StmtKind::kCopy: {
        const auto* c = s->as<ir::CopyNode>();
        const bool padded =
            c->dst.buffer->scope != ir::Scope::kGlobal && safe_.count(c->dst.buffer.get());
        const bool safe_src =
            c->src.buffer->scope == ir::Scope::kGlobal && safe_.count(c->src.buffer.get());
        if (in_kernel_ && (safe_src || padded) && !Skip(c->src.buffer)) {
          return SafeCopy(*c);
        }
        break;
      }
      case ir::StmtKind::kStore: {
        const auto* st = s->as<ir::StoreNode>();
        if (!in_kernel_ || st->buffer->scope == ir::Scope::kVar || Skip(st->buffer)) break;
        std::vector<Expr> idx;
        for (const Expr& i : st->indices) idx.push_back(Mutate(i));
        idx = FromEnd(st->buffer, std::move(idx));
        if (st->buffer->scope != ir::Scope::kGlobal) {
          // T.annotate_padding: what the stored value's out-of-bounds loads read.
          auto pad = safe_.find(st->buffer.get());
          const Expr outer = pad_;
          if (pad != safe_.end()) pad_ = pad->second;
          Expr value = Mutate(st->value);
          pad_ = outer;
          return ir::Store(st->buffer, idx, value);
        }
        ir::Stmt store = ir::Store(st->buffer, idx, Mutate(st->value));
        Expr cond = InBounds(st->buffer, idx);
        return cond ? ir::If(cond, store) : store;
      }
      case ir::StmtKind::kAtomicAdd: {
        // The one-element form updates like a store: dropped outside the
        // tensor (the tile form clips its regions itself).
        ir::Stmt out = IRMutator::Mutate(s);
        const auto* a = out->as<ir::AtomicAddNode>();
        if (!in_kernel_ || a->src || a->dst.buffer->scope != ir::Scope::kGlobal ||
            Skip(a->dst.buffer)) {
          return out;
        }
        Expr cond = InBounds(a->dst.buffer, a->dst.mins);
        return cond ? ir::If(cond, out) : out;
      }
      default: break;
    }
    return IRMutator::Mutate(s);
  }

 private:
  bool Skip(const ir::Buffer& b) const { return only_ && !only_->count(b.get()); }

  Expr pad_;  // while mutating a store's value into a padded buffer: the padding

  // The facts of `cond` hold while it lives: kept for InBounds, and those
  // that bound a variable by a constant narrow its range.
  class Assume {
   public:
    Assume(Legalizer* l, const Expr& cond) : l_(l), size_(l->facts_.size()) {
      std::vector<Fact> facts;
      CollectFacts(cond, l->lets_, facts);
      for (const Fact& f : facts) {
        l_->facts_.push_back(f);
        const auto* v = f.lhs->as<ir::VarNode>();
        std::optional<int64_t> c = ir::AsConstInt(f.rhs);
        if (!v || !c) continue;
        std::optional<Range> old = l_->bounds_.Get(v);
        saved_.push_back({v, old});
        Range r = old.value_or(Range{});
        if (f.less) {
          r.hi = r.hi ? std::min(*r.hi, *c - 1) : *c - 1;
        } else {
          r.lo = r.lo ? std::max(*r.lo, *c) : *c;
        }
        l_->bounds_.Set(v, r);
      }
    }
    ~Assume() {
      l_->facts_.resize(size_);
      for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
        if (it->second) {
          l_->bounds_.Set(it->first, *it->second);
        } else {
          l_->bounds_.Erase(it->first);
        }
      }
    }

   private:
    Legalizer* l_;
    size_t size_;
    std::vector<std::pair<const ir::VarNode*, std::optional<Range>>> saved_;
  };

  // TileLang's negative indices: an index the interval analysis proves
  // negative counts from the end of its dimension, as in Python (`A[-1]` is
  // the last element, `A[-i - 1]` over i >= 0 the i-th from the end); one
  // that may or may not be negative is left to the bounds guards.
  std::vector<Expr> FromEnd(const ir::Buffer& b, std::vector<Expr> idx) const {
    for (size_t d = 0; d < idx.size() && d < b->shape.size(); ++d) {
      Range r = bounds_.Of(idx[d]);
      if (!r.hi || *r.hi >= 0) continue;
      Expr extent = b->shape[d];
      if (extent->dtype != idx[d]->dtype) extent = ir::Cast(idx[d]->dtype, extent);
      idx[d] = SimplifyIndex(ir::Binary(BinaryOp::kAdd, extent, idx[d]));
    }
    return idx;
  }

  // Whether a fact says idx < extent (or idx >= 0 when `lower`).
  bool Known(const Expr& idx, const Expr& extent, bool lower) const {
    for (const Fact& f : facts_) {
      if (f.less == lower || !SameExpr(f.lhs, idx)) continue;
      std::optional<int64_t> c = ir::AsConstInt(f.rhs), n = ir::AsConstInt(extent);
      if (lower ? (c && *c >= 0) : (SameExpr(f.rhs, extent) || (c && n && *c <= *n))) return true;
    }
    return false;
  }

  // The condition that `idx` lies inside `b`, over the dimensions not
  // proven to; null when all are.
  Expr InBounds(const ir::Buffer& b, const std::vector<Expr>& idx) const {
    Expr all;
    for (size_t d = 0; d < idx.size() && d < b->shape.size(); ++d) {
      Range r = bounds_.Of(idx[d]);
      std::optional<int64_t> n = ir::AsConstInt(b->shape[d]);
      std::vector<Expr> parts;
      if ((!r.lo || *r.lo < 0) && !Known(idx[d], b->shape[d], true)) {
        parts.push_back(ir::Binary(BinaryOp::kGe, idx[d], ir::IntImm(0, idx[d]->dtype)));
      }
      if ((!r.hi || !n || *r.hi >= *n) && !Known(idx[d], b->shape[d], false)) {
        Expr extent = b->shape[d];
        if (extent->dtype != idx[d]->dtype) extent = ir::Cast(idx[d]->dtype, extent);
        parts.push_back(ir::Binary(BinaryOp::kLt, idx[d], extent));
      }
      for (Expr& p : parts) all = all ? ir::Binary(BinaryOp::kAnd, all, p) : p;
    }
    return all;
  }

  // A T.copy out of a tensor with a safe value, element by element in a
  // T.Parallel nest over the copy's extents: elements outside the source
  // read the safe value, writes outside a global destination are dropped.
  ir::Stmt SafeCopy(const ir::CopyNode& c) {
    std::vector<int64_t> shape;
    for (const Expr& e : c.dst.extents) {
      std::optional<int64_t> n = ir::AsConstInt(e);
      if (!n) {
        status_ = absl::UnimplementedError(
            absl::StrCat("a T.copy out of `", c.src.buffer->name,
                         "`, which has a safe value (T.annotate_safe_value or T.annotate_padding), "
                         "with extents not "
                         "known at compile time"));
        return nullptr;
      }
      if (*n != 1) shape.push_back(*n);
    }
    std::vector<ir::Var> vars;
    for (size_t k = 0; k < shape.size(); ++k) {
      vars.push_back(ir::MakeVar(absl::StrCat("v", k), ir::DType::kInt32));
    }
    // The moved elements: the copy's vars over the non-unit dims, last ones
    // first (the frontend checked that both sides agree).
    auto index = [&](const ir::Region& r) {
      std::vector<Expr> idx;
      for (const Expr& m : r.mins) idx.push_back(Mutate(m));
      size_t k = shape.size();
      for (size_t d = r.extents.size(); d-- > 0 && k > 0;) {
        if (ir::AsConstInt(r.extents[d]) == 1) continue;
        Expr v = vars[--k];
        if (v->dtype != idx[d]->dtype) v = ir::Cast(idx[d]->dtype, v);
        idx[d] = ir::Binary(BinaryOp::kAdd, idx[d], v);
      }
      return idx;
    };
    ir::Stmt body = ir::Store(c.dst.buffer, index(c.dst),
                              ir::Cast(c.dst.buffer->dtype, ir::Load(c.src.buffer, index(c.src))));
    for (size_t k = shape.size(); k-- > 0;) {
      body = ir::For(vars[k], ir::IntImm(0), ir::IntImm(shape[k]), ir::ForKind::kParallel, body);
    }
    // The loads and stores of the nest get their guards as any other.
    return Mutate(body);
  }

 public:
  const absl::Status& status() const { return status_; }

 private:
  const SafeValues& safe_;
  const std::set<const ir::BufferNode*>* only_;
  absl::Status status_;
  Bounds bounds_;
  std::vector<Fact> facts_;
  std::map<const ir::VarNode*, Expr> lets_;
  bool in_kernel_ = false;
};

}  // namespace

absl::StatusOr<ir::Stmt> LegalizeGlobalAccesses(const ir::Stmt& body, const SafeValues& safe,
                                                const std::set<const ir::BufferNode*>* only) {
  Legalizer l(safe, only);
  ir::Stmt out = l.Mutate(body);
  if (!l.status().ok()) return l.status();
  return out;
}

}  // namespace tilec::frontend
