#include "compiler/frontend/grid_sync.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/visitor.h"

namespace tilec::frontend {
namespace {

bool BlockLocal(const ir::Buffer& b) { return b->scope != ir::Scope::kGlobal; }

// The block-local buffers a statement or expression refers to and the
// variables it reads.
class Uses : public ir::IRVisitor {
 public:
  using ir::IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (e && e->kind == ir::ExprKind::kVar) vars.insert(static_cast<const ir::VarNode*>(e.get()));
    ir::IRVisitor::Visit(e);
  }
  void VisitBuffer(const ir::Buffer& b) override {
    if (BlockLocal(b)) buffers.insert(b.get());
    ir::IRVisitor::VisitBuffer(b);
  }
  std::set<const ir::BufferNode*> buffers;
  std::set<const ir::VarNode*> vars;
};

class Renamer : public ir::IRMutator {
 public:
  explicit Renamer(const std::map<const ir::VarNode*, ir::Expr>& to) : to_(to) {}
  using ir::IRMutator::Mutate;
  ir::Expr Mutate(const ir::Expr& e) override {
    if (e && e->kind == ir::ExprKind::kVar) {
      auto it = to_.find(static_cast<const ir::VarNode*>(e.get()));
      if (it != to_.end()) return it->second;
    }
    return ir::IRMutator::Mutate(e);
  }

 private:
  const std::map<const ir::VarNode*, ir::Expr>& to_;
};

// A buffer's declaration and layout annotations, which go with the part that
// uses it.
struct Declared {
  size_t part = 0;              // where it is allocated
  std::vector<ir::Stmt> stmts;  // its Allocate, then its annotations
  std::set<size_t> used_in;     // parts that access it
  std::string name;
};

}  // namespace

absl::StatusOr<std::vector<std::shared_ptr<ir::KernelNode>>> SplitAtGridSyncs(
    const ir::KernelNode& kernel, const std::vector<ir::Stmt>& stmts,
    const std::vector<size_t>& cuts) {
  std::vector<std::vector<ir::Stmt>> parts(1);
  for (size_t i = 0, c = 0; i < stmts.size(); ++i) {
    while (c < cuts.size() && cuts[c] <= i) {
      parts.emplace_back();
      ++c;
    }
    parts.back().push_back(stmts[i]);
  }

  // Sort the top-level statements: declarations, swizzles, lets, the rest.
  std::map<const ir::BufferNode*, Declared> declared;
  std::vector<const ir::BufferNode*> order;  // declaration order
  std::vector<ir::Stmt> swizzles;
  struct Let {
    size_t part;
    const ir::LetNode* let;
    Uses uses;
  };
  std::vector<Let> lets;
  std::vector<std::vector<ir::Stmt>> bodies(parts.size());
  std::vector<Uses> uses(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    for (const ir::Stmt& s : parts[p]) {
      if (const auto* a = s->as<ir::AllocateNode>(); a && BlockLocal(a->buffer)) {
        Declared& d = declared[a->buffer.get()];
        d.part = p;
        d.name = a->buffer->name;
        d.stmts.insert(d.stmts.begin(), s);
        order.push_back(a->buffer.get());
        if (a->init) uses[p].Visit(a->init);
        continue;
      }
      if (const auto* l = s->as<ir::AnnotateLayoutNode>(); l && BlockLocal(l->buffer)) {
        declared[l->buffer.get()].stmts.push_back(s);
        continue;
      }
      if (s->as<ir::UseSwizzleNode>()) {
        swizzles.push_back(s);
        continue;
      }
      if (const auto* l = s->as<ir::LetNode>()) {
        Let let{p, l, {}};
        let.uses.Visit(l->value);
        for (const ir::BufferNode* b : let.uses.buffers) declared[b].used_in.insert(p);
        lets.push_back(std::move(let));
      }
      Uses u;
      u.Visit(s);
      for (const ir::BufferNode* b : u.buffers) declared[b].used_in.insert(p);
      uses[p].vars.insert(u.vars.begin(), u.vars.end());
      bodies[p].push_back(s);
    }
  }
  for (const ir::BufferNode* b : order) {
    const Declared& d = declared[b];
    if (d.used_in.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "`", d.name,
          "` is used on both sides of T.sync_grid(); tilec cuts the kernel at the barrier into "
          "kernels that run in order, and a block's shared, fragment and local buffers do not "
          "survive the cut: pass the values through a global tensor"));
    }
  }

  std::vector<std::shared_ptr<ir::KernelNode>> out;
  for (size_t p = 0; p < parts.size(); ++p) {
    if (bodies[p].empty()) continue;  // T.sync_grid() first, last or twice in a row
    const bool first = out.empty();
    std::vector<ir::Stmt> body;
    for (const ir::BufferNode* b : order) {
      const Declared& d = declared[b];
      const size_t home = d.used_in.empty() ? d.part : *d.used_in.begin();
      if (home == p) body.insert(body.end(), d.stmts.begin(), d.stmts.end());
    }
    // Names bound by earlier parts that this one reads, with the names their
    // values read in turn, bound again here under fresh variables.
    std::map<const ir::VarNode*, ir::Expr> renamed;
    std::set<const ir::VarNode*> needed = uses[p].vars;
    std::vector<const Let*> rebound;
    for (size_t i = lets.size(); i-- > 0;) {
      const Let& l = lets[i];
      if (l.part >= p || !needed.count(l.let->var.get())) continue;
      if (!l.uses.buffers.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("`", l.let->var->name,
                         "` is computed before T.sync_grid() from a block's own buffers and read "
                         "after it; tilec cuts the kernel at the barrier, and those buffers do "
                         "not survive the cut: compute it again after the barrier"));
      }
      rebound.insert(rebound.begin(), &l);
      needed.insert(l.uses.vars.begin(), l.uses.vars.end());
    }
    auto fresh = std::make_shared<ir::KernelNode>();
    fresh->grid = kernel.grid;
    fresh->threads = kernel.threads;
    fresh->prelude = first ? kernel.prelude : "";
    for (const ir::Var& v : kernel.block_vars) {
      if (first) {
        fresh->block_vars.push_back(v);
        continue;
      }
      ir::Var w = ir::MakeVar(v->name, v->dtype);
      fresh->block_vars.push_back(w);
      renamed[v.get()] = w;
    }
    Renamer rename(renamed);
    std::vector<ir::Stmt> prologue;
    for (const Let* l : rebound) {
      ir::Var w = ir::MakeVar(l->let->var->name, l->let->var->dtype);
      prologue.push_back(std::make_shared<ir::LetNode>(w, rename.Mutate(l->let->value)));
      renamed[l->let->var.get()] = w;
    }
    for (const ir::Stmt& s : swizzles) prologue.push_back(rename.Mutate(s));
    body.insert(body.end(), bodies[p].begin(), bodies[p].end());
    for (ir::Stmt& s : body) s = rename.Mutate(s);
    prologue.insert(prologue.end(), body.begin(), body.end());
    fresh->body = ir::Seq(std::move(prologue));
    out.push_back(std::move(fresh));
  }
  return out;
}

}  // namespace tilec::frontend
