#include "compiler/inference/fragment_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/loop_partition.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::inference {
namespace {

using ir::Expr;
using ir::Stmt;

bool AllReplicated(const FragmentLayout& l) { return l.replicate == l.threads; }

class Checker : public ir::IRVisitor {
 public:
  explicit Checker(const LayoutPlan& plan) : plan_(plan) {}

  void Visit(const Expr& e) override {
    if (e == nullptr || !status_.ok()) return;
    if (const auto* l = e->as<ir::LoadNode>()) {
      if (l->buffer->scope == ir::Scope::kFragment) Access(l->buffer, l->indices, false);
    }
    ir::IRVisitor::Visit(e);
  }

  void Visit(const Stmt& s) override {
    if (s == nullptr || !status_.ok()) return;
    if (s->kind == ir::StmtKind::kKernel) {
      where_ = absl::StrCat("kernel ", kernels_++);
    } else if (const auto* st = s->as<ir::StoreNode>()) {
      if (st->buffer->scope == ir::Scope::kFragment) Access(st->buffer, st->indices, true);
    } else if (const auto* f = s->as<ir::ForNode>();
               f != nullptr && f->kind == ir::ForKind::kParallel && nest_ == nullptr) {
      EnterNest(*f);
      return;
    }
    ir::IRVisitor::Visit(s);
  }

  absl::Status status() const { return status_; }

 private:
  void EnterNest(const ir::ForNode& f) {
    auto it = plan_.loops.find(&f);
    std::optional<ParallelNest> nest = NestAt(f);
    if (it == plan_.loops.end() || !nest) {
      status_ = absl::InternalError(absl::StrCat("compiler bug: ", where_,
                                                 ": the T.Parallel nest over ", f.var->name,
                                                 " has no loop partition in the layout plan"));
      return;
    }
    nest_ = &*nest;
    nest_layout_ = &it->second.layout;
    ir::IRVisitor::Visit(nest->body);
    nest_ = nullptr;
    nest_layout_ = nullptr;
  }

  void Access(const ir::Buffer& b, const std::vector<Expr>& indices, bool store) {
    auto it = plan_.fragments.find(b.get());
    if (it == plan_.fragments.end()) {
      status_ = absl::InternalError(absl::StrCat("compiler bug: ", where_, ": fragment ", b->name,
                                                 " has no layout in the layout plan"));
      return;
    }
    const FragmentLayout& frag = it->second;
    std::vector<std::string> idx;
    for (const Expr& e : indices) idx.push_back(ir::PrintExpr(e));
    const std::string access =
        absl::StrCat(store ? "store to " : "load of ", b->name, "[", absl::StrJoin(idx, ", "), "]");
    if (nest_ == nullptr) {
      if (!AllReplicated(frag)) {
        Fail(access, "outside a T.Parallel nest, where every thread runs it", frag, nullptr);
      }
      return;
    }
    std::vector<int> dims = OwnedDims(*nest_, indices, frag.shape);
    if (dims.empty()) {
      if (!AllReplicated(frag)) {
        Fail(access, "at an index the nest does not own", frag, nest_layout_);
      } else if (store && !AllReplicated(*nest_layout_)) {
        Fail(access,
             "at an index the nest does not own, by a nest that not every thread runs whole", frag,
             nest_layout_);
      }
      return;
    }
    FragmentLayout expect = *nest_layout_;
    for (int d = static_cast<int>(nest_->vars.size()); d-- > 0;) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) expect = Projected(expect, d);
    }
    if (!SameLayout(expect, frag)) {
      Fail(access,
           dims.size() == nest_->vars.size()
               ? "whose layout is not the nest's"
               : "whose layout is not the nest's projected onto the loop variables it uses",
           frag, nest_layout_);
    }
  }

  void Fail(const std::string& access, const std::string& why, const FragmentLayout& frag,
            const FragmentLayout* nest) {
    std::string nest_vars;
    if (nest_ != nullptr) {
      std::vector<std::string> vars;
      for (const ir::Var& v : nest_->vars) vars.push_back(v->name);
      nest_vars = absl::StrCat(" > T.Parallel over ", absl::StrJoin(vars, ", "));
    }
    status_ = absl::InternalError(absl::StrCat(
        "compiler bug: ", where_, nest_vars, ": the ", access, " ", why,
        "; the generated code would read or write the wrong registers (fragment layout ",
        frag.ToString(), nest != nullptr ? absl::StrCat(", nest layout ", nest->ToString()) : "",
        ")"));
  }

  const LayoutPlan& plan_;
  absl::Status status_;
  std::string where_;
  int kernels_ = 0;
  const ParallelNest* nest_ = nullptr;
  const FragmentLayout* nest_layout_ = nullptr;
};

bool ThreadPrivate(const ir::Buffer& b) {
  return b->scope == ir::Scope::kLocal || b->scope == ir::Scope::kVar;
}

std::string NestName(const ir::ForNode& f) {
  std::optional<ParallelNest> nest = NestAt(f);
  std::vector<std::string> vars;
  if (nest) {
    for (const ir::Var& v : nest->vars) vars.push_back(v->name);
  } else {
    vars.push_back(f.var->name);
  }
  return absl::StrCat("T.Parallel over ", absl::StrJoin(vars, ", "));
}

// Walks kernels keeping the outermost T.Parallel loop around each statement
// and reports every reference to a thread-private buffer.
class PrivateWalk : public ir::IRVisitor {
 public:
  void Visit(const Expr& e) override {
    if (e == nullptr) return;
    if (const auto* l = e->as<ir::LoadNode>()) Use(l->buffer, false);
    ir::IRVisitor::Visit(e);
  }
  void Visit(const Stmt& s) override {
    if (s == nullptr) return;
    if (s->kind == ir::StmtKind::kKernel) where_ = absl::StrCat("kernel ", kernels_++);
    if (const auto* a = s->as<ir::AllocateNode>()) {
      Visit(a->init);  // the declaration is no use
      return;
    }
    if (const auto* st = s->as<ir::StoreNode>()) Use(st->buffer, true);
    const auto* f = s->as<ir::ForNode>();
    if (f != nullptr && f->kind == ir::ForKind::kParallel && nest_ == nullptr) {
      nest_ = f;
      ir::IRVisitor::Visit(s);
      nest_ = nullptr;
      return;
    }
    ir::IRVisitor::Visit(s);
  }
  void VisitRegion(const ir::Region& r) override {
    Use(r.buffer, true);
    ir::IRVisitor::VisitRegion(r);
  }

 protected:
  virtual void Use(const ir::Buffer& b, bool store) = 0;
  std::string where_;
  int kernels_ = 0;
  const ir::ForNode* nest_ = nullptr;
};

}  // namespace

absl::Status CheckThreadPrivateBuffers(const ir::Program& program) {
  // The nest that stores each thread-private buffer (the first one).
  struct Stores : PrivateWalk {
    std::map<const ir::BufferNode*, std::pair<const ir::ForNode*, std::string>> owner;
    void Use(const ir::Buffer& b, bool store) override {
      if (store && nest_ != nullptr && ThreadPrivate(b) && !owner.count(b.get())) {
        owner[b.get()] = {nest_, where_};
      }
    }
  } stores;
  stores.Visit(program.body);
  if (stores.owner.empty()) return absl::OkStatus();
  struct Uses : PrivateWalk {
    const std::map<const ir::BufferNode*, std::pair<const ir::ForNode*, std::string>>* owner;
    absl::Status status;
    void Use(const ir::Buffer& b, bool store) override {
      auto it = owner->find(b.get());
      if (!status.ok() || it == owner->end() || it->second.first == nest_) return;
      status = absl::InvalidArgumentError(absl::StrCat(
          it->second.second, " > ", NestName(*it->second.first), ": ", b->name, " is a ",
          b->scope == ir::Scope::kVar ? "T.alloc_var" : "T.alloc_local",
          " buffer (one per thread) stored in this T.Parallel loop, so each thread holds only "
          "the iterations it ran; it is also ",
          store ? "written or copied" : "read", " at ", where_,
          nest_ != nullptr ? absl::StrCat(" > ", NestName(*nest_)) : " outside that loop",
          ". Use T.alloc_fragment for a tile shared by the loop's iterations"));
    }
  } uses;
  uses.owner = &stores.owner;
  uses.Visit(program.body);
  return uses.status;
}

absl::Status CheckParallelAccumulation(const ir::Program& program) {
  struct Walk : ir::IRVisitor {
    using ir::IRVisitor::Visit;
    absl::Status status;
    int kernels = 0;
    std::string where;
    // The vars of the outermost nest around the statement, and the lets
    // bound inside it (whose values may use the nest's vars).
    std::vector<const ir::VarNode*> nest_vars;
    std::map<const ir::VarNode*, ir::Expr> lets;
    const ir::ForNode* nest = nullptr;

    bool Mentions(const ir::Expr& e, const ir::VarNode* v, int depth = 0) const {
      struct M : ir::IRVisitor {
        using ir::IRVisitor::Visit;
        const Walk* w;
        const ir::VarNode* v;
        int depth;
        bool found = false;
        void Visit(const ir::Expr& e) override {
          if (!e || found) return;
          if (const auto* x = e->as<ir::VarNode>()) {
            if (x == v) found = true;
            auto it = w->lets.find(x);
            if (!found && it != w->lets.end() && depth < 16) {
              found = w->Mentions(it->second, v, depth + 1);
            }
          }
          ir::IRVisitor::Visit(e);
        }
      } m;
      m.w = this;
      m.v = v;
      m.depth = depth;
      m.Visit(e);
      return m.found;
    }

    bool ReadsElement(const ir::Expr& e, const ir::StoreNode& st) const {
      struct R : ir::IRVisitor {
        using ir::IRVisitor::Visit;
        const ir::StoreNode* st;
        bool found = false;
        void Visit(const ir::Expr& e) override {
          if (!e || found) return;
          if (const auto* l = e->as<ir::LoadNode>(); l && l->buffer == st->buffer) {
            bool same = l->indices.size() == st->indices.size();
            for (size_t d = 0; same && d < l->indices.size(); ++d) {
              same = ir::PrintExpr(l->indices[d]) == ir::PrintExpr(st->indices[d]);
            }
            found = same;
          }
          ir::IRVisitor::Visit(e);
        }
      } r;
      r.st = &st;
      r.Visit(e);
      return r.found;
    }

    void Visit(const ir::Stmt& s) override {
      if (!s || !status.ok()) return;
      if (s->kind == ir::StmtKind::kKernel) where = absl::StrCat("kernel ", kernels++);
      const auto* f = s->as<ir::ForNode>();
      if (f && f->kind == ir::ForKind::kParallel && nest == nullptr) {
        nest = f;
        const ir::StmtNode* cur = f;
        while (const auto* loop = cur ? cur->as<ir::ForNode>() : nullptr) {
          if (loop->kind != ir::ForKind::kParallel) break;
          // A loop of one iteration gives no two iterations to race.
          if (ir::AsConstInt(loop->extent) != 1) nest_vars.push_back(loop->var.get());
          cur = loop->body.get();
          while (cur && cur->kind == ir::StmtKind::kSeq &&
                 cur->as<ir::SeqNode>()->stmts.size() == 1) {
            cur = cur->as<ir::SeqNode>()->stmts[0].get();
          }
        }
        ir::IRVisitor::Visit(s);
        nest = nullptr;
        nest_vars.clear();
        lets.clear();
        return;
      }
      if (nest != nullptr) {
        if (const auto* l = s->as<ir::LetNode>()) lets[l->var.get()] = l->value;
        if (const auto* st = s->as<ir::StoreNode>(); st && !ThreadPrivate(st->buffer)) {
          std::vector<std::string> missing;
          for (const ir::VarNode* v : nest_vars) {
            bool used = false;
            for (const ir::Expr& i : st->indices) used |= Mentions(i, v);
            if (!used) missing.push_back(v->name);
          }
          if (!missing.empty() && ReadsElement(st->value, *st)) {
            std::vector<std::string> idx;
            for (const ir::Expr& i : st->indices) idx.push_back(ir::PrintExpr(i));
            status = absl::InvalidArgumentError(absl::StrCat(
                where, " > ", NestName(*nest), ": every iteration reads and writes ",
                st->buffer->name, "[", absl::StrJoin(idx, ", "), "], whose index does not use ",
                absl::StrJoin(missing, ", "), ", so iterations that differ only in ",
                missing.size() == 1 ? "it" : "them",
                " update one element at the same time; T.Parallel iterations are independent. "
                "Reduce with T.reduce_sum / T.reduce_max / ... over a tile, or loop over ",
                absl::StrJoin(missing, ", "), " with T.serial inside the nest"));
            return;
          }
        }
      }
      ir::IRVisitor::Visit(s);
    }
  } walk;
  walk.Visit(program.body);
  return walk.status;
}

absl::Status CheckFragmentAccesses(const ir::Program& program, const LayoutPlan& plan) {
  Checker checker(plan);
  checker.Visit(program.body);
  return checker.status();
}

}  // namespace tilec::inference
