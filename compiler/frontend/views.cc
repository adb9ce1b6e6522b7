#include "compiler/frontend/views.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/index_simplify.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::frontend {
namespace {

using ir::BinaryOp;
using ir::Expr;

Expr Add(Expr a, Expr b) { return ir::Binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr Mul(Expr a, Expr b) { return ir::Binary(BinaryOp::kMul, std::move(a), std::move(b)); }
Expr AsInt64(const Expr& e) {
  return e->dtype == ir::DType::kInt64 ? e : ir::Cast(ir::DType::kInt64, e);
}

class ViewRewriter : public ir::IRMutator {
 public:
  explicit ViewRewriter(const ViewMap& views) : views_(views) {}
  using ir::IRMutator::Mutate;

  Expr Mutate(const Expr& e) override {
    if (!e) return e;
    if (const auto* l = e->as<ir::LoadNode>()) {
      auto it = views_.find(l->buffer.get());
      if (it != views_.end()) {
        std::vector<Expr> idx;
        for (const Expr& i : l->indices) idx.push_back(Mutate(i));
        return ir::Load(it->second.base, BaseIndex(it->second, l->buffer, idx));
      }
    }
    return IRMutator::Mutate(e);
  }

  ir::Stmt Mutate(const ir::Stmt& s) override {
    if (!status_.ok() || !s) return s;
    if (const auto* st = s->as<ir::StoreNode>()) {
      auto it = views_.find(st->buffer.get());
      if (it != views_.end()) {
        std::vector<Expr> idx;
        for (const Expr& i : st->indices) idx.push_back(Mutate(i));
        return ir::Store(it->second.base, BaseIndex(it->second, st->buffer, idx),
                         Mutate(st->value));
      }
    }
    if (const auto* c = s->as<ir::CopyNode>()) {
      if (views_.count(c->src.buffer.get()) || views_.count(c->dst.buffer.get())) {
        return CopyThroughView(*c);
      }
    }
    if (s->kind != ir::StmtKind::kSeq && s->kind != ir::StmtKind::kFor &&
        s->kind != ir::StmtKind::kIf && s->kind != ir::StmtKind::kKernel &&
        s->kind != ir::StmtKind::kLet && s->kind != ir::StmtKind::kStore) {
      std::vector<const ir::BufferNode*> used = ViewsIn(s);
      if (!used.empty()) return Bracket(s, used);
    }
    return IRMutator::Mutate(s);
  }

  const absl::Status& status() const { return status_; }

 private:
  // The base tensor's indices of the view element at `idx`: the row-major
  // offset in the view, taken apart in the base's shape.
  // In int32 when the base's shape is constant and small, else in int64.
  std::vector<Expr> BaseIndex(const View& v, const ir::Buffer& view, const std::vector<Expr>& idx) {
    int64_t elements = 1;
    bool small = true;
    for (const Expr& e : v.base->shape) {
      std::optional<int64_t> c = ir::AsConstInt(e);
      if (!c) small = false;
      if (small) elements *= *c;
      if (elements >= (int64_t{1} << 31)) small = false;
    }
    auto wide = [&](const Expr& e) { return small ? e : AsInt64(e); };
    Expr flat;
    for (size_t d = 0; d < idx.size(); ++d) {
      flat = flat ? Add(Mul(flat, wide(view->shape[d])), wide(idx[d])) : wide(idx[d]);
    }
    const std::vector<Expr>& shape = v.base->shape;
    std::vector<Expr> out(shape.size());
    Expr rest = flat;
    for (size_t d = shape.size(); d-- > 0;) {
      if (d == 0) {
        out[d] = rest;
      } else {
        out[d] = ir::Binary(BinaryOp::kFloorMod, rest, wide(shape[d]));
        rest = ir::Binary(BinaryOp::kFloorDiv, rest, wide(shape[d]));
      }
    }
    for (Expr& e : out) {
      if (!small) e = ir::Cast(ir::DType::kInt32, e);
      e = SimplifyIndex(e);
    }
    return out;
  }

  // Whether view indices lie inside the view's shape.
  Expr InBounds(const ir::Buffer& view, const std::vector<Expr>& idx) {
    Expr all;
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr c = ir::Binary(BinaryOp::kAnd, ir::Binary(BinaryOp::kGe, idx[d], ir::IntImm(0)),
                          ir::Binary(BinaryOp::kLt, idx[d], view->shape[d]));
      all = all ? ir::Binary(BinaryOp::kAnd, all, c) : c;
    }
    return all;
  }

  // T.copy with a view on either side, element by element in a T.Parallel
  // nest over the copy's extents: elements outside the source read as zero,
  // writes outside the destination are dropped, as for T.copy.
  ir::Stmt CopyThroughView(const ir::CopyNode& c) {
    ir::Region src = MutateRegion(c.src), dst = MutateRegion(c.dst);
    // The moved shape: the destination's extents without unit dims match the
    // source's (the frontend checked that).
    std::vector<int64_t> shape;
    std::vector<size_t> dst_dims;
    for (size_t d = 0; d < dst.extents.size(); ++d) {
      std::optional<int64_t> n = ir::AsConstInt(dst.extents[d]);
      if (!n) {
        status_ = absl::UnimplementedError(
            absl::StrCat("a T.copy through a view with the non-constant extent ",
                         ir::PrintExpr(dst.extents[d])));
        return nullptr;
      }
      if (*n != 1) {
        shape.push_back(*n);
        dst_dims.push_back(d);
      }
    }
    std::vector<ir::Var> vars;
    for (size_t k = 0; k < shape.size(); ++k) {
      vars.push_back(ir::MakeVar(absl::StrCat("v", k), ir::DType::kInt32));
    }
    auto index = [&](const ir::Region& r) {
      std::vector<Expr> idx = r.mins;
      size_t k = shape.size();
      for (size_t d = r.extents.size(); d-- > 0 && k > 0;) {
        if (ir::AsConstInt(r.extents[d]) == 1) continue;
        idx[d] = SimplifyIndex(Add(idx[d], vars[--k]));
      }
      return idx;
    };
    std::vector<Expr> si = index(src), di = index(dst);
    auto load = [&]() -> Expr {
      auto it = views_.find(src.buffer.get());
      Expr value = it != views_.end()
                       ? ir::Load(it->second.base, BaseIndex(it->second, src.buffer, si))
                       : ir::Load(src.buffer, si);
      if (src.buffer->scope != ir::Scope::kGlobal) return value;
      return ir::Select(InBounds(src.buffer, si), value,
                        ir::Cast(src.buffer->dtype, ir::IntImm(0)));
    };
    Expr value = ir::Cast(dst.buffer->dtype, load());
    ir::Stmt body;
    auto dit = views_.find(dst.buffer.get());
    if (dit != views_.end()) {
      body = ir::Store(dit->second.base, BaseIndex(dit->second, dst.buffer, di), value);
    } else {
      body = ir::Store(dst.buffer, di, value);
    }
    if (dst.buffer->scope == ir::Scope::kGlobal) body = ir::If(InBounds(dst.buffer, di), body);
    for (size_t k = shape.size(); k-- > 0;) {
      body = ir::For(vars[k], ir::IntImm(0), ir::IntImm(shape[k]), ir::ForKind::kParallel, body);
    }
    (void)dst_dims;
    return body;
  }

  // The views a statement names, in the order first seen.
  std::vector<const ir::BufferNode*> ViewsIn(const ir::Stmt& s) const {
    struct Find : ir::IRVisitor {
      const ViewMap* views;
      std::vector<const ir::BufferNode*> found;
      void VisitBuffer(const ir::Buffer& b) override {
        if (b && views->count(b.get()) &&
            std::find(found.begin(), found.end(), b.get()) == found.end()) {
          found.push_back(b.get());
        }
        ir::IRVisitor::VisitBuffer(b);
      }
    } find;
    find.views = &views_;
    find.Visit(s);
    return find.found;
  }

  // The buffers a tile operation writes; null when it is not one of those
  // whose writes are known (then every view it names is copied back).
  static std::optional<std::vector<const ir::BufferNode*>> Writes(const ir::Stmt& s) {
    switch (s->kind) {
      case ir::StmtKind::kGemm: return std::vector{s->as<ir::GemmNode>()->c.buffer.get()};
      case ir::StmtKind::kFill: return std::vector{s->as<ir::FillNode>()->dst.buffer.get()};
      case ir::StmtKind::kReduce: return std::vector{s->as<ir::ReduceNode>()->dst.get()};
      case ir::StmtKind::kCumsum: return std::vector{s->as<ir::CumsumNode>()->dst.get()};
      case ir::StmtKind::kAtomicAdd:
        return std::vector{s->as<ir::AtomicAddNode>()->dst.buffer.get()};
      default: return std::nullopt;
    }
  }

  // A T.Parallel nest over `shape` whose body `body(vars)` builds.
  template <typename F>
  static ir::Stmt ParallelNest(const std::vector<Expr>& shape, F body) {
    std::vector<ir::Var> vars;
    std::vector<Expr> idx;
    for (size_t k = 0; k < shape.size(); ++k) {
      vars.push_back(ir::MakeVar(absl::StrCat("v", k), ir::DType::kInt32));
      idx.push_back(vars.back());
    }
    ir::Stmt nest = body(idx);
    for (size_t k = shape.size(); k-- > 0;) {
      nest = ir::For(vars[k], ir::IntImm(0), shape[k], ir::ForKind::kParallel, nest);
    }
    return nest;
  }

  // A tile operation on views of shared or fragment buffers, on buffers of
  // the views' shapes filled from their bases (views.h).
  ir::Stmt Bracket(const ir::Stmt& s, const std::vector<const ir::BufferNode*>& used) {
    std::map<const ir::BufferNode*, ir::Buffer> temps;
    for (const ir::BufferNode* v : used) {
      const View& view = views_.at(v);
      ir::Scope scope = view.base->scope;
      if (scope != ir::Scope::kShared && scope != ir::Scope::kFragment) {
        std::string what = scope == ir::Scope::kGlobal
                               ? "global tensor"
                               : absl::StrCat(std::string(ir::ScopeName(scope)), " buffer");
        status_ = absl::UnimplementedError(absl::StrCat(
            "`", v->name, "` is a view of the ", what, " `", view.base->name,
            "`; tilec supports views of a ", what, " in element accesses and T.copy only"));
        return s;
      }
      temps[v] = ir::MakeBuffer(v->name, v->dtype, v->shape, scope);
    }
    struct Subst : ir::IRMutator {
      const std::map<const ir::BufferNode*, ir::Buffer>* temps;
      ir::Buffer MutateBuffer(const ir::Buffer& b) override {
        auto it = temps->find(b.get());
        return it == temps->end() ? b : it->second;
      }
    } subst;
    subst.temps = &temps;
    std::optional<std::vector<const ir::BufferNode*>> writes = Writes(s);
    std::vector<ir::Stmt> allocs, before, after;
    for (const ir::BufferNode* v : used) {
      const View& view = views_.at(v);
      const ir::Buffer& temp = temps.at(v);
      ir::Buffer vb = temp;  // same shape as the view
      allocs.push_back(ir::Allocate(temp));
      before.push_back(ParallelNest(temp->shape, [&](const std::vector<Expr>& idx) {
        return ir::Store(temp, idx, ir::Load(view.base, BaseIndex(view, vb, idx)));
      }));
      if (!writes || std::find(writes->begin(), writes->end(), v) != writes->end()) {
        after.push_back(ParallelNest(temp->shape, [&](const std::vector<Expr>& idx) {
          return ir::Store(view.base, BaseIndex(view, vb, idx), ir::Load(temp, idx));
        }));
      }
    }
    std::vector<ir::Stmt> seq = allocs;
    seq.insert(seq.end(), before.begin(), before.end());
    seq.push_back(subst.Mutate(s));
    seq.insert(seq.end(), after.begin(), after.end());
    return ir::Seq(std::move(seq));
  }

  const ViewMap& views_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<ir::Stmt> LowerViews(const ir::Stmt& body, const ViewMap& views) {
  if (views.empty()) return body;
  ViewRewriter r(views);
  ir::Stmt out = r.Mutate(body);
  if (!r.status().ok()) return r.status();
  return out;
}

}  // namespace tilec::frontend
