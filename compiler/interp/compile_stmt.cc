// Statements other than tile operators: sequencing, kernels and their blocks,
// allocation, loops, branches, stores and lets.
#include <algorithm>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/interp/exec.h"

namespace tilec::interp::internal {
namespace {

using ir::DType;

class SeqStmt final : public CStmt {
 public:
  explicit SeqStmt(std::vector<CStmtPtr> stmts) : stmts_(std::move(stmts)) {}
  absl::Status Exec(Env& env) const override {
    for (const CStmtPtr& s : stmts_) {
      absl::Status st = s->Exec(env);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  std::vector<CStmtPtr> stmts_;
};

// A statement every thread of the block runs in turn (kernels that read the
// thread index): each with its own thread index, its own values of the
// thread-dependent variables and its own thread-private buffers, swapped in
// and out of the slots the compiled statement uses.
class PerThreadStmt final : public CStmt {
 public:
  PerThreadStmt(std::vector<int> var_slots, std::vector<int> buffer_slots, CStmtPtr body)
      : var_slots_(std::move(var_slots)),
        buffer_slots_(std::move(buffer_slots)),
        body_(std::move(body)) {}

  absl::Status Exec(Env& env) const override {
    const int64_t threads = static_cast<int64_t>(env.thread_vars.size());
    for (int64_t t = 0; t < threads; ++t) {
      std::vector<Scalar>& vars = env.thread_vars[t];
      std::vector<Tensor>& buffers = env.thread_buffers[t];
      for (int s : var_slots_) env.vars[s] = vars[s];
      for (int b : buffer_slots_) std::swap(env.owned[b], buffers[b]);
      env.thread = t;
      absl::Status st = body_->Exec(env);
      env.thread = -1;
      for (int s : var_slots_) vars[s] = env.vars[s];
      for (int b : buffer_slots_) std::swap(env.owned[b], buffers[b]);
      if (!st.ok()) {
        return absl::Status(st.code(), absl::StrCat("in thread ", t, ": ", st.message()));
      }
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int> var_slots_, buffer_slots_;
  CStmtPtr body_;
};

// A value the analysis found the same in every thread, read from per-thread
// storage: evaluated with each thread's variables and private buffers in
// turn; a thread that disagrees with thread 0 read racing memory (or the
// analysis is wrong).
class InEveryThreadExpr final : public CExpr {
 public:
  InEveryThreadExpr(std::vector<int> var_slots, std::vector<int> buffer_slots, CExprPtr e)
      : CExpr(e->dtype),
        var_slots_(std::move(var_slots)),
        buffer_slots_(std::move(buffer_slots)),
        e_(std::move(e)) {}

  Scalar Eval(Env& env) const override {
    const int64_t threads = static_cast<int64_t>(env.thread_vars.size());
    Scalar first = IntScalar(0);
    for (int64_t t = 0; t < threads; ++t) {
      for (int s : var_slots_) env.vars[s] = env.thread_vars[t][s];
      for (int b : buffer_slots_) std::swap(env.owned[b], env.thread_buffers[t][b]);
      const Scalar v = e_->Eval(env);
      for (int b : buffer_slots_) std::swap(env.owned[b], env.thread_buffers[t][b]);
      if (env.failed()) return v;
      if (t == 0) {
        first = v;
      } else if (ir::IsFloat(dtype) ? v.f != first.f : v.i != first.i) {
        env.Fail(absl::FailedPreconditionError(absl::StrCat(
            "a loop bound or condition that steers the whole block, found the same in every "
            "thread, is ",
            ScalarString(first, dtype), " in thread 0 and ", ScalarString(v, dtype), " in thread ",
            t,
            ": the threads read memory they change with no barrier between (a race), or this is "
            "a compiler bug")));
        return first;
      }
    }
    return first;
  }

 private:
  std::vector<int> var_slots_, buffer_slots_;
  CExprPtr e_;
};

class NopStmt final : public CStmt {
 public:
  absl::Status Exec(Env&) const override { return absl::OkStatus(); }
};

class KernelStmt final : public CStmt {
 public:
  KernelStmt(int index, std::vector<CExprPtr> grid, std::vector<int> slots,
             std::vector<std::string> names, int64_t simt_threads, CStmtPtr body)
      : index_(index),
        grid_(std::move(grid)),
        slots_(std::move(slots)),
        names_(std::move(names)),
        simt_threads_(simt_threads),
        body_(std::move(body)) {}

  absl::Status Exec(Env& env) const override {
    std::vector<int64_t> extents;
    int64_t total = 1;
    for (const CExprPtr& g : grid_) {
      extents.push_back(g->Eval(env).i);
      if (extents.back() < 0 && !env.failed()) {
        env.Fail(absl::InvalidArgumentError(
            absl::StrCat("kernel ", index_, " has a negative grid extent ", extents.back())));
      }
      total *= std::max<int64_t>(extents.back(), 0);
    }
    if (env.failed()) return env.TakeError();

    std::vector<int64_t> order(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) order[i] = i;
    if (env.options.shuffle_blocks) {
      // Fisher-Yates on a fixed generator, so an order is reproducible
      // everywhere from its seed.
      std::mt19937_64 rng(env.options.shuffle_seed ^ (0x9E3779B97F4A7C15ULL * (index_ + 1)));
      for (int64_t i = total - 1; i > 0; --i) {
        std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
      }
    }
    for (int64_t id : order) {
      for (size_t d = 0; d < slots_.size(); ++d) {
        env.vars[slots_[d]].i = id % extents[d];
        id /= extents[d];
      }
      // Per-thread state starts afresh in every block.
      env.thread_vars.assign(static_cast<size_t>(simt_threads_), env.vars);
      env.thread_buffers.clear();
      env.thread_buffers.resize(static_cast<size_t>(simt_threads_));
      for (std::vector<Tensor>& b : env.thread_buffers) b.resize(env.owned.size());
      absl::Status st = body_->Exec(env);
      if (!st.ok()) {
        std::vector<std::string> coords;
        for (size_t d = 0; d < slots_.size(); ++d) {
          coords.push_back(absl::StrCat(names_[d], "=", env.vars[slots_[d]].i));
        }
        return absl::Status(st.code(),
                            absl::StrCat("in kernel ", index_, " at block (",
                                         absl::StrJoin(coords, ", "), "): ", st.message()));
      }
    }
    return absl::OkStatus();
  }

 private:
  int index_;
  std::vector<CExprPtr> grid_;
  std::vector<int> slots_;
  std::vector<std::string> names_;
  int64_t simt_threads_;  // 0 unless the kernel reads the thread index
  CStmtPtr body_;
};

class AllocateStmt final : public CStmt {
 public:
  AllocateStmt(int slot, DType dtype, std::vector<CExprPtr> shape, CExprPtr init)
      : slot_(slot), dtype_(dtype), shape_(std::move(shape)), init_(std::move(init)) {}

  absl::Status Exec(Env& env) const override {
    std::vector<int64_t> shape;
    for (const CExprPtr& e : shape_) shape.push_back(e->Eval(env).i);
    if (env.failed()) return env.TakeError();
    for (int64_t d : shape) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer ", env.buffer_names[slot_], " has a negative shape ", ShapeString(shape)));
      }
    }
    Tensor& t = env.owned[slot_] = Tensor(dtype_, std::move(shape));
    env.buffers[slot_] = &t;
    if (init_ != nullptr) {
      const Scalar v = init_->Eval(env);
      if (env.failed()) return env.TakeError();
      for (int64_t i = 0; i < t.num_elements(); ++i) WriteElement(t, i, v);
    }
    return absl::OkStatus();
  }

 private:
  int slot_;
  DType dtype_;
  std::vector<CExprPtr> shape_;
  CExprPtr init_;  // already in dtype_, may be null
};

class ForStmt final : public CStmt {
 public:
  ForStmt(int slot, CExprPtr min, CExprPtr extent, CStmtPtr body)
      : slot_(slot), min_(std::move(min)), extent_(std::move(extent)), body_(std::move(body)) {}

  absl::Status Exec(Env& env) const override {
    const int64_t min = min_->Eval(env).i;
    const int64_t extent = extent_->Eval(env).i;
    if (env.failed()) return env.TakeError();
    for (int64_t i = 0; i < extent; ++i) {
      env.vars[slot_].i = min + i;
      absl::Status st = body_->Exec(env);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  int slot_;
  CExprPtr min_, extent_;
  CStmtPtr body_;
};

class IfStmt final : public CStmt {
 public:
  IfStmt(CExprPtr cond, CStmtPtr then_case, CStmtPtr else_case)
      : cond_(std::move(cond)), then_(std::move(then_case)), else_(std::move(else_case)) {}

  absl::Status Exec(Env& env) const override {
    const bool c = cond_->Eval(env).i != 0;
    if (env.failed()) return env.TakeError();
    if (c) return then_->Exec(env);
    return else_ != nullptr ? else_->Exec(env) : absl::OkStatus();
  }

 private:
  CExprPtr cond_;
  CStmtPtr then_, else_;
};

// Runs while the condition holds. A loop that runs kMaxIterations times in
// one execution is reported instead of hanging the caller.
class WhileStmt final : public CStmt {
 public:
  static constexpr int64_t kMaxIterations = int64_t{1} << 26;
  WhileStmt(CExprPtr cond, CStmtPtr body) : cond_(std::move(cond)), body_(std::move(body)) {}

  absl::Status Exec(Env& env) const override {
    for (int64_t n = 0;; ++n) {
      const bool c = cond_->Eval(env).i != 0;
      if (env.failed()) return env.TakeError();
      if (!c) return absl::OkStatus();
      if (n == kMaxIterations) {
        return absl::FailedPreconditionError(
            absl::StrCat("a `while` loop ran ", kMaxIterations,
                         " iterations without its condition becoming false"));
      }
      absl::Status st = body_->Exec(env);
      if (!st.ok()) return st;
    }
  }

 private:
  CExprPtr cond_;
  CStmtPtr body_;
};

class StoreStmt final : public CStmt {
 public:
  StoreStmt(int slot, std::vector<CExprPtr> indices, CExprPtr value)
      : slot_(slot), indices_(std::move(indices)), value_(std::move(value)) {}

  absl::Status Exec(Env& env) const override {
    Tensor* t = env.Buffer(slot_);
    if (t == nullptr) return env.TakeError();
    std::vector<int64_t> index(indices_.size());
    for (size_t d = 0; d < indices_.size(); ++d) index[d] = indices_[d]->Eval(env).i;
    const Scalar v = value_->Eval(env);
    if (env.failed()) return env.TakeError();
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      if (index[d] < 0 || index[d] >= t->shape()[d]) {
        return absl::OutOfRangeError(absl::StrCat("store ", env.buffer_names[slot_],
                                                  ShapeString(index), " is out of bounds of shape ",
                                                  ShapeString(t->shape())));
      }
      flat = flat * t->shape()[d] + index[d];
    }
    WriteElement(*t, flat, v);
    return absl::OkStatus();
  }

 private:
  int slot_;
  std::vector<CExprPtr> indices_;
  CExprPtr value_;  // already in the buffer's dtype
};

class LetStmt final : public CStmt {
 public:
  LetStmt(int slot, CExprPtr value) : slot_(slot), value_(std::move(value)) {}
  absl::Status Exec(Env& env) const override {
    const Scalar v = value_->Eval(env);
    if (env.failed()) return env.TakeError();
    env.vars[slot_] = v;
    return absl::OkStatus();
  }

 private:
  int slot_;
  CExprPtr value_;  // already in the variable's dtype
};

}  // namespace

absl::StatusOr<CStmtPtr> Compiler::CompilePerThread(const ir::Stmt& s) {
  in_per_thread_ = true;
  absl::StatusOr<CStmtPtr> body = CompileStmt(s);
  in_per_thread_ = false;
  if (!body.ok()) return body.status();
  // Every thread-dependent variable and thread-private buffer known so far:
  // those bound inside `s` and those it reads from earlier statements.
  return CStmtPtr(
      std::make_unique<PerThreadStmt>(ThreadVarSlots(), private_buffer_slots_, std::move(*body)));
}

CExprPtr Compiler::InEveryThread(const ir::Expr& e, CExprPtr c) {
  if (simt_ == nullptr || in_per_thread_ || !simt_->Expr(e)) return c;
  return std::make_unique<InEveryThreadExpr>(ThreadVarSlots(), private_buffer_slots_, std::move(c));
}

std::vector<int> Compiler::ThreadVarSlots() const {
  std::vector<int> vars;
  for (const auto& [v, slot] : var_slots_) {
    if (simt_->Var(v)) vars.push_back(slot);
  }
  std::sort(vars.begin(), vars.end());
  return vars;
}

absl::StatusOr<CStmtPtr> Compiler::CompileStmt(const ir::Stmt& s) {
  if (s == nullptr) return Unverified("a statement is missing");
  if (simt_ != nullptr && !in_per_thread_ && s->kind != ir::StmtKind::kSeq) {
    const ir::ThreadDependence::Role role = simt_->RoleOf(s);
    if (role == ir::ThreadDependence::Role::kPerThread) return CompilePerThread(s);
    if (role == ir::ThreadDependence::Role::kMasked) {
      // Each branch some thread takes runs once, for the whole block.
      const auto* i = s->as<ir::IfNode>();
      auto [then_taken, else_taken] = simt_->MaskedBranches(*i, simt_threads_);
      std::vector<CStmtPtr> stmts;
      for (const auto& [taken, branch] :
           {std::pair{then_taken, i->then_case}, std::pair{else_taken, i->else_case}}) {
        if (!taken || branch == nullptr) continue;
        const size_t mark = Mark();
        auto c = CompileStmt(branch);
        PopTo(mark);
        if (!c.ok()) return c.status();
        stmts.push_back(std::move(*c));
      }
      return CStmtPtr(std::make_unique<SeqStmt>(std::move(stmts)));
    }
  }
  switch (s->kind) {
    case ir::StmtKind::kSeq: {
      // Declarations in a Seq stay in scope for the rest of it.
      const size_t mark = Mark();
      std::vector<CStmtPtr> stmts;
      for (const ir::Stmt& child : s->as<ir::SeqNode>()->stmts) {
        auto c = CompileStmt(child);
        if (!c.ok()) return c.status();
        stmts.push_back(std::move(*c));
      }
      PopTo(mark);
      return CStmtPtr(std::make_unique<SeqStmt>(std::move(stmts)));
    }
    case ir::StmtKind::kKernel: {
      const auto* k = s->as<ir::KernelNode>();
      if (k->grid.empty() || k->grid.size() > 3 || k->grid.size() != k->block_vars.size()) {
        return Unverified(absl::StrCat("a kernel has ", k->grid.size(), " grid extents and ",
                                       k->block_vars.size(), " block variables"));
      }
      std::vector<CExprPtr> grid;
      for (const ir::Expr& g : k->grid) {
        auto c = CompileIndex(g);
        if (!c.ok()) return c.status();
        grid.push_back(std::move(*c));
      }
      const int index = num_kernels_++;
      const size_t mark = Mark();
      std::vector<int> slots;
      std::vector<std::string> names;
      for (const ir::Var& v : k->block_vars) {
        slots.push_back(BindVar(v));
        names.push_back(v->name);
      }
      // A kernel that reads the thread index runs per-thread code.
      std::optional<ir::ThreadDependence> dependence;
      int64_t threads = 0;
      if (ir::UsesThreadIndex(k->body)) {
        std::optional<int64_t> n = ir::AsConstInt(k->threads);
        if (!n || *n < 1) {
          PopTo(mark);
          return absl::InvalidArgumentError(
              absl::StrCat("kernel ", index,
                           " reads the thread index but its thread count is not a "
                           "positive constant"));
        }
        threads = *n;
        dependence.emplace(k->body);
        if (absl::Status st = dependence->Check(k->body); !st.ok()) {
          PopTo(mark);
          return absl::Status(st.code(), absl::StrCat("kernel ", index, ": ", st.message()));
        }
        simt_ = &*dependence;
      }
      simt_threads_ = threads;
      auto body = CompileStmt(k->body);
      simt_ = nullptr;
      simt_threads_ = 0;
      PopTo(mark);
      if (!body.ok()) return body.status();
      return CStmtPtr(std::make_unique<KernelStmt>(index, std::move(grid), std::move(slots),
                                                   std::move(names), threads, std::move(*body)));
    }
    case ir::StmtKind::kAllocate: {
      const auto* a = s->as<ir::AllocateNode>();
      if (a->buffer == nullptr) return Unverified("an allocation has no buffer");
      std::vector<CExprPtr> shape;
      for (const ir::Expr& d : a->buffer->shape) {
        auto c = CompileIndex(d);
        if (!c.ok()) return c.status();
        shape.push_back(std::move(*c));
      }
      CExprPtr init;
      if (a->init != nullptr) {
        auto c = CompileExprAs(a->init, a->buffer->dtype);
        if (!c.ok()) return c.status();
        init = std::move(*c);
      }
      const int slot = BindBuffer(a->buffer);
      if (simt_ != nullptr && ir::ThreadPrivate(a->buffer)) private_buffer_slots_.push_back(slot);
      return CStmtPtr(std::make_unique<AllocateStmt>(slot, a->buffer->dtype, std::move(shape),
                                                     std::move(init)));
    }
    case ir::StmtKind::kFor: {
      const auto* f = s->as<ir::ForNode>();
      if (f->var == nullptr) return Unverified("a loop has no variable");
      auto min = CompileIndex(f->min);
      if (!min.ok()) return min.status();
      auto extent = CompileIndex(f->extent);
      if (!extent.ok()) return extent.status();
      CExprPtr min_c = InEveryThread(f->min, std::move(*min));
      CExprPtr extent_c = InEveryThread(f->extent, std::move(*extent));
      const size_t mark = Mark();
      const int slot = BindVar(f->var);
      auto body = CompileStmt(f->body);
      PopTo(mark);
      if (!body.ok()) return body.status();
      return CStmtPtr(
          std::make_unique<ForStmt>(slot, std::move(min_c), std::move(extent_c), std::move(*body)));
    }
    case ir::StmtKind::kIf: {
      const auto* i = s->as<ir::IfNode>();
      auto cond = CompileExprAs(i->cond, DType::kBool);
      if (!cond.ok()) return cond.status();
      *cond = InEveryThread(i->cond, std::move(*cond));
      const size_t mark = Mark();
      auto then_case = CompileStmt(i->then_case);
      PopTo(mark);
      if (!then_case.ok()) return then_case.status();
      CStmtPtr else_case;
      if (i->else_case != nullptr) {
        auto e = CompileStmt(i->else_case);
        PopTo(mark);
        if (!e.ok()) return e.status();
        else_case = std::move(*e);
      }
      return CStmtPtr(
          std::make_unique<IfStmt>(std::move(*cond), std::move(*then_case), std::move(else_case)));
    }
    case ir::StmtKind::kWhile: {
      const auto* w = s->as<ir::WhileNode>();
      auto cond = CompileExprAs(w->cond, DType::kBool);
      if (!cond.ok()) return cond.status();
      *cond = InEveryThread(w->cond, std::move(*cond));
      const size_t mark = Mark();
      auto body = CompileStmt(w->body);
      PopTo(mark);
      if (!body.ok()) return body.status();
      return CStmtPtr(std::make_unique<WhileStmt>(std::move(*cond), std::move(*body)));
    }
    case ir::StmtKind::kStore: {
      const auto* st = s->as<ir::StoreNode>();
      auto slot = BufferSlot(st->buffer);
      if (!slot.ok()) return slot.status();
      if (st->indices.size() != st->buffer->shape.size()) {
        return Unverified(absl::StrCat("store to ", st->buffer->name, " has ", st->indices.size(),
                                       " indices for rank ", st->buffer->shape.size()));
      }
      std::vector<CExprPtr> indices;
      for (const ir::Expr& i : st->indices) {
        auto c = CompileIndex(i);
        if (!c.ok()) return c.status();
        indices.push_back(std::move(*c));
      }
      auto value = CompileExprAs(st->value, st->buffer->dtype);
      if (!value.ok()) return value.status();
      return CStmtPtr(std::make_unique<StoreStmt>(*slot, std::move(indices), std::move(*value)));
    }
    case ir::StmtKind::kLet: {
      const auto* l = s->as<ir::LetNode>();
      if (l->var == nullptr) return Unverified("a let has no variable");
      // The value is compiled before the variable comes into scope.
      auto value = CompileExprAs(l->value, l->var->dtype);
      if (!value.ok()) return value.status();
      const int slot = BindVar(l->var);
      return CStmtPtr(std::make_unique<LetStmt>(slot, std::move(*value)));
    }
    case ir::StmtKind::kCopy: return CompileCopy(*this, *s->as<ir::CopyNode>());
    case ir::StmtKind::kGemm: return CompileGemm(*this, *s->as<ir::GemmNode>());
    case ir::StmtKind::kFill: return CompileFill(*this, *s->as<ir::FillNode>());
    case ir::StmtKind::kReduce: return CompileReduce(*this, *s->as<ir::ReduceNode>());
    case ir::StmtKind::kCumsum: return CompileCumsum(*this, *s->as<ir::CumsumNode>());
    case ir::StmtKind::kAtomicAdd: return CompileAtomicAdd(*this, *s->as<ir::AtomicAddNode>());
    case ir::StmtKind::kAnnotateLayout:
    case ir::StmtKind::kUseSwizzle: return CStmtPtr(std::make_unique<NopStmt>());
  }
  return Unverified("unknown statement kind");
}

}  // namespace tilec::interp::internal
