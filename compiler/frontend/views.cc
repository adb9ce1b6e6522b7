#include "compiler/frontend/views.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/index_simplify.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/sv.h"
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
        return LoadThrough(it->second, l->buffer, idx);
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
        return StoreThrough(it->second, st->buffer, idx, Mutate(st->value));
      }
    }
    if (const auto* c = s->as<ir::CopyNode>()) {
      if (views_.count(c->src.buffer.get()) || views_.count(c->dst.buffer.get())) {
        return CopyThroughView(*c);
      }
    }
    if (s->kind != ir::StmtKind::kSeq && s->kind != ir::StmtKind::kFor &&
        s->kind != ir::StmtKind::kIf && s->kind != ir::StmtKind::kWhile &&
        s->kind != ir::StmtKind::kKernel && s->kind != ir::StmtKind::kLet &&
        s->kind != ir::StmtKind::kStore) {
      std::vector<const ir::BufferNode*> used = ViewsIn(s);
      if (!used.empty()) return Bracket(s, used);
    }
    return IRMutator::Mutate(s);
  }

  const absl::Status& status() const { return status_; }

 private:
  // Whether offsets into the base fit in int32 (its shape is constant and
  // small).
  static bool Small(const View& v) {
    int64_t elements = 1;
    for (const Expr& e : v.base->shape) {
      std::optional<int64_t> c = ir::AsConstInt(e);
      if (!c) return false;
      elements *= *c;
      if (elements >= (int64_t{1} << 31)) return false;
    }
    return true;
  }

  // The row-major offset of the view element at `idx`, in view elements.
  static Expr Flat(const View& v, const ir::Buffer& view, const std::vector<Expr>& idx) {
    const bool small = Small(v);
    auto wide = [&](const Expr& e) { return small ? e : AsInt64(e); };
    Expr flat;
    for (size_t d = 0; d < idx.size(); ++d) {
      flat = flat ? Add(Mul(flat, wide(view->shape[d])), wide(idx[d])) : wide(idx[d]);
    }
    return flat;
  }

  // The base's indices of base element `flat` (row-major).
  static std::vector<Expr> Unflatten(const View& v, const Expr& flat) {
    const bool small = Small(v);
    auto wide = [&](const Expr& e) { return small ? e : AsInt64(e); };
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

  static ir::DType Unsigned(int bits) {
    switch (bits) {
      case 8: return ir::DType::kUInt8;
      case 16: return ir::DType::kUInt16;
      case 32: return ir::DType::kUInt32;
      default: return ir::DType::kUInt64;
    }
  }
  static Expr BitCast(ir::DType t, const Expr& x) {
    if (x->dtype == t) return x;
    return std::make_shared<ir::CallNode>(t, ir::CallFn::kReinterpret, std::vector<Expr>{x});
  }

  // The view element at `idx` read from the base: the same element, its
  // bits read as the view's dtype, a part of a wider base element, or
  // whole base elements put together (little-endian, as memory holds them).
  // A strided tensor's element in its storage.
  static std::vector<Expr> Permuted(const View& v, const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (int32_t a : v.axes) out.push_back(idx[a]);
    return out;
  }

  Expr LoadThrough(const View& v, const ir::Buffer& view, const std::vector<Expr>& idx) {
    if (!v.axes.empty()) return ir::Load(v.base, Permuted(v, idx));
    const ir::DType vt = view->dtype, bt = v.base->dtype;
    const Expr flat = Flat(v, view, idx);
    if (vt == bt) return ir::Load(v.base, Unflatten(v, flat));
    const int vb = ir::DTypeBits(vt), bb = ir::DTypeBits(bt);
    auto of = [&](const Expr& e, int64_t k) { return ir::IntImm(k, e->dtype); };
    if (vb == bb) return BitCast(vt, ir::Load(v.base, Unflatten(v, flat)));
    if (vb < bb) {
      const int64_t k = bb / vb;
      Expr word = BitCast(
          Unsigned(bb),
          ir::Load(v.base, Unflatten(v, ir::Binary(BinaryOp::kFloorDiv, flat, of(flat, k)))));
      Expr shift = ir::Cast(Unsigned(bb),
                            Mul(ir::Binary(BinaryOp::kFloorMod, flat, of(flat, k)), of(flat, vb)));
      return BitCast(vt, ir::Cast(Unsigned(vb), ir::Binary(BinaryOp::kShr, word, shift)));
    }
    const int64_t k = vb / bb;
    Expr acc;
    for (int64_t j = 0; j < k; ++j) {
      Expr part = ir::Cast(
          Unsigned(vb),
          BitCast(Unsigned(bb),
                  ir::Load(v.base, Unflatten(v, Add(Mul(flat, of(flat, k)), of(flat, j))))));
      if (j > 0) {
        part = ir::Binary(BinaryOp::kShl, part, ir::Cast(Unsigned(vb), ir::IntImm(j * bb)));
      }
      acc = acc ? ir::Binary(BinaryOp::kBitOr, acc, part) : part;
    }
    return BitCast(vt, acc);
  }

  // A store of `value` (the view's dtype) into the view element at `idx`.
  // Through a view narrower than its base it would rewrite a part of a base
  // element, which other threads may write at the same time: UNIMPLEMENTED.
  ir::Stmt StoreThrough(const View& v, const ir::Buffer& view, const std::vector<Expr>& idx,
                        const Expr& value) {
    if (!v.axes.empty()) return ir::Store(v.base, Permuted(v, idx), value);
    const ir::DType vt = view->dtype, bt = v.base->dtype;
    const Expr flat = Flat(v, view, idx);
    if (vt == bt) return ir::Store(v.base, Unflatten(v, flat), value);
    const int vb = ir::DTypeBits(vt), bb = ir::DTypeBits(bt);
    if (vb == bb) return ir::Store(v.base, Unflatten(v, flat), BitCast(bt, value));
    if (vb < bb) {
      status_ = absl::UnimplementedError(absl::StrCat(
          "a store through `", view->name, "` (", Sv(ir::DTypeName(vt)), "), a view of `",
          v.base->name, "` (", Sv(ir::DTypeName(bt)), "), would write part of an element of `",
          v.base->name, "`; tilec reads such views only"));
      return ir::Seq({});
    }
    const int64_t k = vb / bb;
    const Expr bits = BitCast(Unsigned(vb), value);
    std::vector<ir::Stmt> stores;
    for (int64_t j = 0; j < k; ++j) {
      Expr part =
          j == 0 ? bits
                 : ir::Binary(BinaryOp::kShr, bits, ir::Cast(Unsigned(vb), ir::IntImm(j * bb)));
      stores.push_back(ir::Store(
          v.base,
          Unflatten(v, Add(Mul(flat, ir::IntImm(k, flat->dtype)), ir::IntImm(j, flat->dtype))),
          BitCast(bt, ir::Cast(Unsigned(bb), part))));
    }
    return ir::Seq(std::move(stores));
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
      Expr value =
          it != views_.end() ? LoadThrough(it->second, src.buffer, si) : ir::Load(src.buffer, si);
      if (src.buffer->scope != ir::Scope::kGlobal) return value;
      return ir::Select(InBounds(src.buffer, si), value,
                        ir::Cast(src.buffer->dtype, ir::IntImm(0)));
    };
    Expr value = ir::Cast(dst.buffer->dtype, load());
    ir::Stmt body;
    auto dit = views_.find(dst.buffer.get());
    if (dit != views_.end()) {
      body = StoreThrough(dit->second, dst.buffer, di, value);
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
        if (!view.axes.empty()) {
          status_ = absl::UnimplementedError(
              absl::StrCat("`", v->name,
                           "` is a strided tensor (T.StridedTensor); tilec supports strided "
                           "tensors in element accesses and T.copy only"));
          return s;
        }
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
        return ir::Store(temp, idx, LoadThrough(view, vb, idx));
      }));
      if (!writes || std::find(writes->begin(), writes->end(), v) != writes->end()) {
        after.push_back(ParallelNest(temp->shape, [&](const std::vector<Expr>& idx) {
          return StoreThrough(view, vb, idx, ir::Load(temp, idx));
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

std::optional<std::string> UnsupportedViewUse(const ir::Stmt& s, const ViewMap& views) {
  if (views.empty() || !s) return std::nullopt;
  // The rewriter on a copy of the map: its status says what it refuses.
  ViewRewriter r(views);
  r.Mutate(s);
  if (r.status().ok()) return std::nullopt;
  return std::string(r.status().message());
}

absl::StatusOr<ir::Stmt> LowerViews(const ir::Stmt& body, const ViewMap& views) {
  if (views.empty()) return body;
  ViewRewriter r(views);
  ir::Stmt out = r.Mutate(body);
  if (!r.status().ok()) return r.status();
  return out;
}

}  // namespace tilec::frontend
