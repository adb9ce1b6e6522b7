#include "compiler/frontend/reducers.h"

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::frontend {
namespace {

bool SameIndex(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d) {
    if (ir::PrintExpr(a[d]) != ir::PrintExpr(b[d])) return false;
  }
  return true;
}

bool IsElement(const ir::Expr& e, const ir::StoreNode& st) {
  const auto* l = e->as<ir::LoadNode>();
  return l && l->buffer == st.buffer && SameIndex(l->indices, st.indices);
}

// The contribution c of `r[idx] = r[idx] op c` (either operand order for
// sum, max and min); nullptr when the value is not of that form.
ir::Expr Contribution(const ir::StoreNode& st, ir::ReduceKind op) {
  const auto* b = st.value->as<ir::BinaryNode>();
  if (!b) return nullptr;
  const ir::BinaryOp want = op == ir::ReduceKind::kSum   ? ir::BinaryOp::kAdd
                            : op == ir::ReduceKind::kMax ? ir::BinaryOp::kMax
                                                         : ir::BinaryOp::kMin;
  if (b->op != want) return nullptr;
  if (IsElement(b->a, st)) return b->b;
  if (IsElement(b->b, st)) return b->a;
  return nullptr;
}

class ReducerRewriter : public ir::IRMutator {
 public:
  explicit ReducerRewriter(const ReducerMap& reducers) : reducers_(reducers) {}
  using ir::IRMutator::Mutate;

  ir::Stmt Mutate(const ir::Stmt& s) override {
    if (!s) return s;
    const auto* f = s->as<ir::ForNode>();
    if (f && f->kind == ir::ForKind::kParallel) {
      if (ir::Stmt r = Rewrite(*f)) return r;
      return s;  // other nests are left as they are
    }
    return IRMutator::Mutate(s);
  }

 private:
  // A nest whose body is lets and one store into a reducer at the nest's
  // variables but one (in order), accumulating with the reducer's op.
  ir::Stmt Rewrite(const ir::ForNode& f) {
    std::vector<const ir::ForNode*> loops;
    const ir::StmtNode* cur = &f;
    while (const auto* loop = cur ? cur->as<ir::ForNode>() : nullptr) {
      if (loop->kind != ir::ForKind::kParallel) break;
      std::optional<int64_t> m = ir::AsConstInt(loop->min), n = ir::AsConstInt(loop->extent);
      if (m != 0 || !n) return nullptr;
      loops.push_back(loop);
      cur = loop->body.get();
    }
    std::vector<ir::Stmt> body;
    if (const auto* seq = cur ? cur->as<ir::SeqNode>() : nullptr) {
      body = seq->stmts;
    } else if (cur) {
      body.push_back(loops.back()->body);
    }
    if (body.empty()) return nullptr;
    const auto* st = body.back()->as<ir::StoreNode>();
    if (!st) return nullptr;
    for (size_t k = 0; k + 1 < body.size(); ++k) {
      if (!body[k]->as<ir::LetNode>()) return nullptr;
    }
    auto it = reducers_.find(st->buffer.get());
    if (it == reducers_.end()) return nullptr;
    ir::Expr c = Contribution(*st, it->second);
    if (!c) return nullptr;
    // The store's index: the nest's variables in order, but one; or, for a
    // one-loop nest, element 0 of a reducer of shape [1] (`total[0] += x[i]`).
    std::vector<const ir::VarNode*> vars;
    for (const ir::ForNode* l : loops) vars.push_back(l->var.get());
    if (vars.size() == 1 && st->indices.size() == 1 && ir::AsConstInt(st->indices[0]) == 0 &&
        st->buffer->shape.size() == 1 && ir::AsConstInt(st->buffer->shape[0]) == 1) {
      return Reduced(loops, body, *st, c, it->second, 0);
    }
    if (st->indices.size() + 1 != vars.size()) return nullptr;
    int missing = -1;
    size_t k = 0;
    for (size_t d = 0; d < vars.size(); ++d) {
      const auto* v = k < st->indices.size() ? st->indices[k]->as<ir::VarNode>() : nullptr;
      if (v == vars[d]) {
        ++k;
      } else if (missing < 0) {
        missing = static_cast<int>(d);
      } else {
        return nullptr;
      }
    }
    if (missing < 0 || k != st->indices.size()) return nullptr;
    // The reducer's shape is the kept loops' extents.
    for (size_t d = 0, j = 0; d < loops.size(); ++d) {
      if (static_cast<int>(d) == missing) continue;
      if (ir::AsConstInt(st->buffer->shape[j++]) != ir::AsConstInt(loops[d]->extent)) {
        return nullptr;
      }
    }
    return Reduced(loops, body, *st, c, it->second, missing);
  }

  // The contributions c into a tile over the whole nest, then reduced along
  // the missing variable into the reducer.
  static ir::Stmt Reduced(const std::vector<const ir::ForNode*>& loops, std::vector<ir::Stmt> body,
                          const ir::StoreNode& st, const ir::Expr& c, ir::ReduceKind op,
                          int missing) {
    std::vector<ir::Expr> shape, index;
    for (const ir::ForNode* l : loops) {
      shape.push_back(l->extent);
      index.push_back(l->var);
    }
    ir::Buffer tile = ir::MakeBuffer(absl::StrCat(st.buffer->name, "_partials"), st.buffer->dtype,
                                     shape, ir::Scope::kFragment);
    body.back() = ir::Store(tile, index, c);
    ir::Stmt nest = ir::Seq(body);
    for (size_t d = loops.size(); d-- > 0;) {
      nest = ir::For(loops[d]->var, loops[d]->min, loops[d]->extent, ir::ForKind::kParallel, nest);
    }
    return ir::Seq({ir::Allocate(tile), nest,
                    std::make_shared<ir::ReduceNode>(op, tile, st.buffer, missing,
                                                     /*clear=*/false)});
  }

  const ReducerMap& reducers_;
};

}  // namespace

ir::Stmt LowerReducers(const ir::Stmt& body, const ReducerMap& reducers) {
  if (reducers.empty()) return body;
  ReducerRewriter r(reducers);
  return r.Mutate(body);
}

}  // namespace tilec::frontend
