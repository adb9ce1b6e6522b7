#include "compiler/inference/fragment_staging.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/loop_partition.h"
#include "compiler/ir/visitor.h"

namespace tilec::inference {
namespace {

using ir::Expr;
using ir::Stmt;

// Iteration spaces larger than this are not enumerated to prove coverage (the
// staging buffer is then filled from the fragment first).
constexpr int64_t kMaxEnumerated = int64_t{1} << 16;

std::optional<std::vector<int64_t>> ConstShape(const ir::Buffer& b) {
  std::vector<int64_t> shape;
  for (const Expr& e : b->shape) {
    std::optional<int64_t> v = EvalInt(e);
    if (!v || *v < 1) return std::nullopt;
    shape.push_back(*v);
  }
  return shape;
}

// One fragment a nest accesses through its staging buffer.
struct Staged {
  ir::Buffer fragment;
  bool fill_first = true;  // T.copy(F, F_stage) before the nest
  bool write_back = true;  // T.copy(F_stage, F) after it
};

// The fragment accesses of one nest body (nested T.Parallel loops excluded:
// layout inference refuses them).
class NestScan : public ir::IRVisitor {
 public:
  NestScan(const ParallelNest& nest, const std::set<const ir::BufferNode*>& pinned)
      : nest_(nest), pinned_(pinned) {}

  void Visit(const Expr& e) override {
    if (e == nullptr) return;
    if (const auto* l = e->as<ir::LoadNode>()) {
      if (l->buffer->scope == ir::Scope::kFragment) Load(*l);
    }
    ir::IRVisitor::Visit(e);
  }

  void Visit(const Stmt& s) override {
    if (s == nullptr) return;
    switch (s->kind) {
      case ir::StmtKind::kStore: {
        const auto* n = s->as<ir::StoreNode>();
        if (n->buffer->scope == ir::Scope::kFragment) Store(*n);
        break;
      }
      case ir::StmtKind::kFor:
        if (s->as<ir::ForNode>()->kind == ir::ForKind::kParallel) return;
        [[fallthrough]];
      case ir::StmtKind::kIf:
      case ir::StmtKind::kWhile: {
        ++nested_;
        ir::IRVisitor::Visit(s);
        --nested_;
        return;
      }
      default: break;
    }
    ir::IRVisitor::Visit(s);
  }

  // The fragments to stage, in first-access order: those stored at an index
  // the nest does not own, and pinned ones loaded at such an index.
  std::vector<Staged> Result() const {
    std::vector<Staged> out;
    for (const ir::Buffer& b : order_) {
      if (!unowned_.count(b.get())) continue;
      Staged s;
      s.fragment = b;
      s.write_back = stores_.count(b.get()) > 0;
      s.fill_first = loaded_.count(b.get()) || !s.write_back || !Covers(b);
      out.push_back(s);
    }
    return out;
  }

  // The fragment `node` as the nest accesses it; null when it does not.
  ir::Buffer BufferOf(const ir::BufferNode* node) const {
    for (const ir::Buffer& b : order_) {
      if (b.get() == node) return b;
    }
    return nullptr;
  }

 private:
  bool Owned(const ir::Buffer& b, const std::vector<Expr>& indices) const {
    std::optional<std::vector<int64_t>> shape = ConstShape(b);
    return shape && !OwnedDims(nest_, indices, *shape).empty();
  }

  void Note(const ir::Buffer& b) {
    if (std::find(order_.begin(), order_.end(), b) == order_.end()) order_.push_back(b);
  }

  void Load(const ir::LoadNode& n) {
    loaded_.insert(n.buffer.get());
    Note(n.buffer);
    if (pinned_.count(n.buffer.get()) && !Owned(n.buffer, n.indices)) {
      unowned_.insert(n.buffer.get());
    }
  }

  void Store(const ir::StoreNode& n) {
    const ir::BufferNode* b = n.buffer.get();
    Note(n.buffer);
    stores_[b].push_back({nested_ == 0 ? n.indices : std::vector<Expr>{}});
    if (!Owned(n.buffer, n.indices)) unowned_.insert(b);
  }

  // Whether the unconditional stores of `b` reach every element of it over
  // the nest's whole iteration space.
  bool Covers(const ir::Buffer& b) const {
    std::optional<std::vector<int64_t>> shape = ConstShape(b);
    if (!shape) return false;
    int64_t elems = 1, iters = 1;
    for (int64_t s : *shape) elems *= s;
    for (int64_t e : nest_.extents) iters *= e;
    if (iters > kMaxEnumerated || elems > kMaxEnumerated) return false;
    std::vector<bool> hit(static_cast<size_t>(elems), false);
    int64_t count = 0;
    std::map<const ir::VarNode*, int64_t> values;
    std::vector<int64_t> it(nest_.extents.size(), 0);
    for (int64_t n = 0; n < iters; ++n) {
      int64_t rest = n;
      for (size_t d = nest_.extents.size(); d-- > 0;) {
        values[nest_.vars[d].get()] = rest % nest_.extents[d];
        rest /= nest_.extents[d];
      }
      for (const std::vector<Expr>& idx : stores_.at(b.get())) {
        if (idx.size() != shape->size()) continue;  // conditional or nested
        int64_t flat = 0;
        bool ok = true;
        for (size_t d = 0; ok && d < idx.size(); ++d) {
          std::optional<int64_t> v = EvalInt(idx[d], values);
          ok = v && *v >= 0 && *v < (*shape)[d];
          if (ok) flat = flat * (*shape)[d] + *v;
        }
        if (ok && !hit[flat]) {
          hit[flat] = true;
          ++count;
        }
      }
    }
    return count == elems;
  }

  const ParallelNest& nest_;
  const std::set<const ir::BufferNode*>& pinned_;
  int nested_ = 0;
  std::vector<ir::Buffer> order_;
  // Index lists of each store; empty for stores under a condition or loop.
  std::map<const ir::BufferNode*, std::vector<std::vector<Expr>>> stores_;
  std::set<const ir::BufferNode*> unowned_, loaded_;
};

// Every buffer name of the program, so staging buffers get fresh ones.
class NameScan : public ir::IRVisitor {
 public:
  void VisitBuffer(const ir::Buffer& b) override {
    if (b) names.insert(b->name);
    ir::IRVisitor::VisitBuffer(b);
  }
  std::set<std::string> names;
};

// Finds the nests that need staging, per kernel.
class Planner : public ir::IRVisitor {
 public:
  Planner(std::set<std::string> names,
          std::set<std::pair<const ir::ForNode*, const ir::BufferNode*>> read_copies)
      : names_(std::move(names)), read_copies_(std::move(read_copies)) {}

  void Visit(const Stmt& s) override {
    if (s == nullptr || !status_.ok()) return;
    if (const auto* k = s->as<ir::KernelNode>()) {
      kernel_ = k;
      where_ = absl::StrCat("kernel ", kernel_index_++);
      pinned_ = GemmFragments(k->body);
      ir::IRVisitor::Visit(s);
      return;
    }
    const auto* f = s->as<ir::ForNode>();
    if (f == nullptr) {
      ir::IRVisitor::Visit(s);
      return;
    }
    if (f->kind != ir::ForKind::kParallel) {
      const bool listed =
          f->kind == ir::ForKind::kPipelined && (!f->order.empty() || !f->stage.empty());
      const ir::ForNode* saved = pipelined_with_lists_;
      pipelined_with_lists_ = listed ? f : nullptr;
      ir::IRVisitor::Visit(s);
      pipelined_with_lists_ = saved;
      return;
    }
    std::optional<ParallelNest> nest = NestAt(*f);
    if (!nest) return;  // layout inference reports it
    NestScan scan(*nest, pinned_);
    scan.Visit(nest->body);
    std::vector<Staged> staged = scan.Result();
    for (const auto& [loop, fragment] : read_copies_) {
      if (loop != f) continue;
      bool already = false;
      for (const Staged& st : staged) already |= st.fragment.get() == fragment;
      if (already) continue;
      ir::Buffer buffer = scan.BufferOf(fragment);
      if (buffer == nullptr) continue;
      staged.push_back(Staged{buffer, /*fill_first=*/true, /*write_back=*/false});
    }
    if (staged.empty()) return;
    std::vector<std::string> vars;
    for (const ir::Var& v : nest->vars) vars.push_back(v->name);
    const std::string where =
        absl::StrCat(where_, " > T.Parallel over ", absl::StrJoin(vars, ", "));
    if (pipelined_with_lists_ != nullptr && InBody(*pipelined_with_lists_, s)) {
      status_ = absl::UnimplementedError(absl::StrCat(
          where, ": the nest accesses fragment ", staged[0].fragment->name,
          " at an index other than its loop variables, which needs staging through shared "
          "memory; that is not supported for a statement of a T.Pipelined loop with order=/"
          "stage= lists"));
      return;
    }
    for (const Staged& st : staged) {
      const std::optional<std::vector<int64_t>> dims = ConstShape(st.fragment);
      if (!dims) {
        status_ = absl::UnimplementedError(
            absl::StrCat(where, ": fragment ", st.fragment->name,
                         " has a non-constant shape; fragment shapes must be constants"));
        return;
      }
      ir::Buffer& stage = stage_of_[kernel_][st.fragment.get()];
      if (stage == nullptr) {
        std::string name = absl::StrCat(st.fragment->name, "_stage");
        for (int k = 2; names_.count(name); ++k) {
          name = absl::StrCat(st.fragment->name, "_stage", k);
        }
        names_.insert(name);
        std::vector<Expr> shape;
        for (int64_t d : *dims) shape.push_back(ir::IntImm(d));
        stage = ir::MakeBuffer(name, st.fragment->dtype, std::move(shape), ir::Scope::kShared);
      }
    }
    nests_[f] = std::move(staged);
  }

  absl::Status status() const { return status_; }
  const std::map<const ir::ForNode*, std::vector<Staged>>& nests() const { return nests_; }
  // Per kernel: fragment -> its staging buffer.
  const std::map<const ir::KernelNode*, std::map<const ir::BufferNode*, ir::Buffer>>& stages()
      const {
    return stage_of_;
  }

 private:
  static bool InBody(const ir::ForNode& loop, const Stmt& s) {
    if (loop.body == s) return true;
    const auto* seq = loop.body->as<ir::SeqNode>();
    if (seq == nullptr) return false;
    for (const Stmt& c : seq->stmts) {
      if (c == s) return true;
    }
    return false;
  }

  // Fragments that are a T.gemm's C or A operand: their layout is the mma's.
  static std::set<const ir::BufferNode*> GemmFragments(const Stmt& body) {
    struct V : ir::IRVisitor {
      std::set<const ir::BufferNode*> out;
      void Visit(const Stmt& s) override {
        if (s == nullptr) return;
        if (const auto* g = s->as<ir::GemmNode>()) {
          for (const ir::Region* r : {&g->a, &g->c}) {
            if (r->buffer->scope == ir::Scope::kFragment) out.insert(r->buffer.get());
          }
        }
        ir::IRVisitor::Visit(s);
      }
    } v;
    v.Visit(body);
    return v.out;
  }

  std::set<const ir::BufferNode*> pinned_;
  std::set<std::string> names_;
  std::set<std::pair<const ir::ForNode*, const ir::BufferNode*>> read_copies_;
  absl::Status status_;
  const ir::KernelNode* kernel_ = nullptr;
  int kernel_index_ = 0;
  std::string where_;
  const ir::ForNode* pipelined_with_lists_ = nullptr;
  std::map<const ir::ForNode*, std::vector<Staged>> nests_;
  std::map<const ir::KernelNode*, std::map<const ir::BufferNode*, ir::Buffer>> stage_of_;
};

// Replaces a fragment by its staging buffer inside one nest.
class Redirect : public ir::IRMutator {
 public:
  explicit Redirect(std::map<const ir::BufferNode*, ir::Buffer> to) : to_(std::move(to)) {}
  ir::Buffer MutateBuffer(const ir::Buffer& b) override {
    auto it = to_.find(b.get());
    return it == to_.end() ? b : it->second;
  }

 private:
  std::map<const ir::BufferNode*, ir::Buffer> to_;
};

// Applies the plan: staged nests become [fill copies, nest, copies back];
// staging buffers are allocated at the top of their kernel.
class Rewriter : public ir::IRMutator {
 public:
  explicit Rewriter(const Planner& plan) : plan_(plan) {}

  Stmt Mutate(const Stmt& s) override {
    if (s == nullptr) return s;
    if (const auto* k = s->as<ir::KernelNode>()) return MutateKernel(*k, s);
    if (const auto* seq = s->as<ir::SeqNode>()) {
      std::vector<Stmt> out;
      bool changed = false;
      for (const Stmt& c : seq->stmts) {
        Stmt m = Mutate(c);
        changed |= m != c;
        const auto* ms = m->as<ir::SeqNode>();
        if (m != c && ms != nullptr && c->kind == ir::StmtKind::kFor) {
          out.insert(out.end(), ms->stmts.begin(), ms->stmts.end());  // a staged nest
        } else {
          out.push_back(std::move(m));
        }
      }
      return changed ? ir::Seq(std::move(out)) : s;
    }
    if (const auto* f = s->as<ir::ForNode>(); f != nullptr && f->kind == ir::ForKind::kParallel) {
      auto it = plan_.nests().find(f);
      if (it == plan_.nests().end()) return s;
      std::map<const ir::BufferNode*, ir::Buffer> to;
      std::vector<Stmt> out;
      for (const Staged& st : it->second) {
        const ir::Buffer& stage = stages_->at(st.fragment.get());
        to[st.fragment.get()] = stage;
        if (st.fill_first) {
          out.push_back(ir::Copy(ir::FullRegion(st.fragment), ir::FullRegion(stage)));
        }
      }
      Redirect redirect(to);
      out.push_back(redirect.Mutate(s));
      for (const Staged& st : it->second) {
        if (!st.write_back) continue;
        out.push_back(
            ir::Copy(ir::FullRegion(stages_->at(st.fragment.get())), ir::FullRegion(st.fragment)));
      }
      return ir::Seq(std::move(out));
    }
    return ir::IRMutator::Mutate(s);
  }

 private:
  Stmt MutateKernel(const ir::KernelNode& k, const Stmt& s) {
    auto it = plan_.stages().find(&k);
    if (it == plan_.stages().end()) return s;
    stages_ = &it->second;
    std::vector<Stmt> body;
    for (const auto& [frag, stage] : it->second) body.push_back(ir::Allocate(stage));
    Stmt inner = Mutate(k.body);
    if (const auto* seq = inner->as<ir::SeqNode>()) {
      body.insert(body.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      body.push_back(inner);
    }
    auto out = std::make_shared<ir::KernelNode>(k);
    out->body = ir::Seq(std::move(body));
    stages_ = nullptr;
    return out;
  }

  const Planner& plan_;
  const std::map<const ir::BufferNode*, ir::Buffer>* stages_ = nullptr;
};

// Rewrites the listed reductions (ConvertReductions).
class ReductionRewriter : public ir::IRMutator {
 public:
  ReductionRewriter(const std::set<const ir::ReduceNode*>& reduces, std::set<std::string>& names)
      : reduces_(reduces), names_(names) {}

  Stmt Mutate(const Stmt& s) override {
    if (s == nullptr) return s;
    if (const auto* k = s->as<ir::KernelNode>()) {
      std::vector<ir::Buffer> saved = std::move(temps_);
      temps_.clear();
      Stmt inner = Mutate(k->body);
      std::vector<ir::Buffer> temps = std::move(temps_);
      temps_ = std::move(saved);
      if (temps.empty()) return inner == k->body ? s : WithBody(*k, inner);
      std::vector<Stmt> body;
      for (const ir::Buffer& t : temps) body.push_back(ir::Allocate(t));
      if (const auto* seq = inner->as<ir::SeqNode>()) {
        body.insert(body.end(), seq->stmts.begin(), seq->stmts.end());
      } else {
        body.push_back(inner);
      }
      return WithBody(*k, ir::Seq(std::move(body)));
    }
    if (const auto* r = s->as<ir::ReduceNode>(); r != nullptr && reduces_.count(r)) {
      std::string name = absl::StrCat(r->dst->name, "_red");
      for (int k = 2; names_.count(name); ++k) name = absl::StrCat(r->dst->name, "_red", k);
      names_.insert(name);
      ir::Buffer tmp = ir::MakeBuffer(name, r->dst->dtype, r->dst->shape, ir::Scope::kFragment);
      temps_.push_back(tmp);
      ++converted_;
      std::vector<Stmt> out;
      if (!r->clear) out.push_back(ir::Copy(ir::FullRegion(r->dst), ir::FullRegion(tmp)));
      out.push_back(
          std::make_shared<ir::ReduceNode>(r->reduce_kind, r->src, tmp, r->dim, r->clear));
      out.push_back(ir::Copy(ir::FullRegion(tmp), ir::FullRegion(r->dst)));
      return ir::Seq(std::move(out));
    }
    return ir::IRMutator::Mutate(s);
  }

  int converted() const { return converted_; }

 private:
  static Stmt WithBody(const ir::KernelNode& k, Stmt body) {
    auto out = std::make_shared<ir::KernelNode>(k);
    out->body = std::move(body);
    return out;
  }

  const std::set<const ir::ReduceNode*>& reduces_;
  std::set<std::string>& names_;
  std::vector<ir::Buffer> temps_;
  int converted_ = 0;
};

}  // namespace

absl::StatusOr<ir::Program> ConvertReductions(const ir::Program& program,
                                              const std::set<const ir::ReduceNode*>& reduces,
                                              bool* changed) {
  *changed = false;
  NameScan names;
  names.VisitProgram(program);
  ReductionRewriter rewriter(reduces, names.names);
  ir::Program out = program;
  out.body = rewriter.Mutate(program.body);
  *changed = rewriter.converted() > 0;
  return out;
}

absl::StatusOr<ir::Program> StageFragmentStores(
    const ir::Program& program, bool* changed,
    const std::set<std::pair<const ir::ForNode*, const ir::BufferNode*>>& read_copies) {
  *changed = false;
  NameScan names;
  names.VisitProgram(program);
  Planner planner(std::move(names.names), read_copies);
  planner.Visit(program.body);
  if (!planner.status().ok()) return planner.status();
  if (planner.nests().empty()) return program;
  Rewriter rewriter(planner);
  ir::Program out = program;
  out.body = rewriter.Mutate(program.body);
  *changed = true;
  return out;
}

}  // namespace tilec::inference
