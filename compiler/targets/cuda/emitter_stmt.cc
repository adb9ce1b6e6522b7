// Statements of generated CUDA C++: declarations, loops, branches, stores,
// T.Parallel nests, and the block barriers between statements that pass
// shared memory from one set of threads to another.
//
// Barriers (correct first): the emitter tracks which shared buffers (and the
// operators' scratch area) were read and written since the last barrier.
// Before a statement reads something written since then, or writes something
// read or written since then, it places `tl::syncthreads()` (after retiring
// pending cp.async groups). A loop's body starts from the state on entry
// joined with everything the body itself touches (a previous iteration may
// have left it), the scratch areas included when an operator in the body
// uses them, so loop-carried hazards get their barrier too. Buffers that the
// shared-memory plan places on the same bytes (inference/shared_plan.h)
// count as one. Barriers are only placed in block-uniform code: never inside
// a per-thread slot loop.
#include "absl/strings/str_cat.h"
#include "compiler/inference/index_expr.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

class SharedAccessCollector : public ir::IRVisitor {
 public:
  explicit SharedAccessCollector(EmitContext::Access2& out) : out_(out) {}

  void Visit(const ir::Expr& e) override {
    if (!e) return;
    if (const auto* l = e->as<ir::LoadNode>()) Read(l->buffer);
    IRVisitor::Visit(e);
  }
  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    switch (s->kind) {
      case ir::StmtKind::kStore: Write(s->as<ir::StoreNode>()->buffer); break;
      case ir::StmtKind::kCopy: {
        const auto* c = s->as<ir::CopyNode>();
        Read(c->src.buffer);
        Write(c->dst.buffer);
        break;
      }
      case ir::StmtKind::kGemm: {
        const auto* g = s->as<ir::GemmNode>();
        Read(g->a.buffer);
        Read(g->b.buffer);
        Read(g->c.buffer);
        Write(g->c.buffer);
        break;
      }
      case ir::StmtKind::kFill: Write(s->as<ir::FillNode>()->dst.buffer); break;
      case ir::StmtKind::kReduce: {
        const auto* r = s->as<ir::ReduceNode>();
        Read(r->src);
        Read(r->dst);
        Write(r->dst);
        break;
      }
      case ir::StmtKind::kCumsum: {
        const auto* c = s->as<ir::CumsumNode>();
        Read(c->src);
        Write(c->dst);
        break;
      }
      case ir::StmtKind::kAtomicAdd: {
        const auto* a = s->as<ir::AtomicAddNode>();
        if (a->src) Read(a->src->buffer);
        Read(a->dst.buffer);
        Write(a->dst.buffer);
        break;
      }
      default: break;
    }
    IRVisitor::Visit(s);
  }

 private:
  void Read(const ir::Buffer& b) {
    if (b && b->scope == ir::Scope::kShared) out_.reads.insert(b.get());
  }
  void Write(const ir::Buffer& b) {
    if (b && b->scope == ir::Scope::kShared) out_.writes.insert(b.get());
  }
  EmitContext::Access2& out_;
};

bool Intersects(const std::set<const void*>& a, const std::set<const void*>& b) {
  for (const void* x : a) {
    if (b.count(x)) return true;
  }
  return false;
}

bool IsTileOp(ir::StmtKind k) {
  switch (k) {
    case ir::StmtKind::kCopy:
    case ir::StmtKind::kGemm:
    case ir::StmtKind::kFill:
    case ir::StmtKind::kReduce:
    case ir::StmtKind::kCumsum:
    case ir::StmtKind::kAtomicAdd: return true;
    default: return false;
  }
}

// Whether a loop body issues global->shared copies (cp.async candidates).
bool HasAsyncCopy(const ir::Stmt& s) {
  struct V : ir::IRVisitor {
    bool found = false;
    void Visit(const ir::Stmt& s) override {
      if (!s) return;
      if (const auto* c = s->as<ir::CopyNode>()) {
        if (c->src.buffer->scope == ir::Scope::kGlobal &&
            c->dst.buffer->scope == ir::Scope::kShared) {
          found = true;
        }
      }
      IRVisitor::Visit(s);
    }
  } v;
  v.Visit(s);
  return v.found;
}

// Whether a statement may use the operators' scratch area: reductions,
// prefix sums and exchanges between fragments do (emitter_reduce.cc,
// emitter_copy.cc). Which of the two areas each takes is decided as it is
// emitted, so a loop whose body uses scratch has touched both by the time an
// iteration begins again.
bool UsesScratch(const ir::Stmt& s) {
  struct V : ir::IRVisitor {
    bool found = false;
    void Visit(const ir::Stmt& s) override {
      if (!s || found) return;
      if (s->kind == ir::StmtKind::kReduce || s->kind == ir::StmtKind::kCumsum) found = true;
      if (const auto* c = s->as<ir::CopyNode>()) {
        found = c->src.buffer->scope == ir::Scope::kFragment &&
                c->dst.buffer->scope == ir::Scope::kFragment;
      }
      IRVisitor::Visit(s);
    }
  } v;
  v.Visit(s);
  return v.found;
}

}  // namespace

const void* EmitContext::ScratchKey(int area) {
  static const char keys[2] = {0, 0};
  return &keys[area & 1];
}

EmitContext::Access2 EmitContext::SharedAccesses(const ir::Stmt& s) {
  Access2 a;
  SharedAccessCollector c(a);
  c.Visit(s);
  return a;
}

namespace {

class LoadCollector : public ir::IRVisitor {
 public:
  explicit LoadCollector(std::set<const ir::BufferNode*>& out) : out_(out) {}
  using ir::IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (e && e->kind == ir::ExprKind::kLoad) out_.insert(e->as<ir::LoadNode>()->buffer.get());
    ir::IRVisitor::Visit(e);
  }

 private:
  std::set<const ir::BufferNode*>& out_;
};

}  // namespace

void EmitContext::NoteLoadsIn(const ir::Stmt& s) {
  LoadCollector c(loaded_since_barrier_);
  c.Visit(s);
}

void EmitContext::Barrier() {
  if (pending_async_) {
    w().Line("tl::cp_async_commit();");
    w().Line("tl::cp_async_wait<0>();");
    pending_async_ = false;
  }
  WriteBarrier();
  written_.clear();
  read_.clear();
  loaded_since_barrier_.clear();
}

std::set<const void*> EmitContext::SharingBytes(const std::set<const void*>& keys) const {
  std::set<const void*> out = keys;
  for (const void* k : keys) {
    auto it = aliases_.find(k);
    if (it != aliases_.end()) out.insert(it->second.begin(), it->second.end());
  }
  return out;
}

void EmitContext::BeforeShared(const Access2& a) {
  // Inside a per-thread loop or a per-thread statement: never a barrier.
  if (!slot_loops_.empty() || per_thread_depth_ > 0) return;
  // Buffers placed on the same bytes conflict as if they were one.
  const std::set<const void*> reads = SharingBytes(a.reads), writes = SharingBytes(a.writes);
  if (Intersects(reads, written_) || Intersects(writes, written_) || Intersects(writes, read_)) {
    Barrier();
  }
}

void EmitContext::AfterShared(const Access2& a) {
  written_.insert(a.writes.begin(), a.writes.end());
  read_.insert(a.reads.begin(), a.reads.end());
}

namespace {

// A T.Parallel nest at block level: the slots of its partition in this
// thread.
absl::Status EmitParallelNest(EmitContext& ctx, const ir::ForNode* f) {
  auto it = ctx.plan().loops.find(f);
  if (it == ctx.plan().loops.end()) {
    return ctx.Internal(absl::StrCat("T.Parallel loop over ", f->var->name,
                                     " has no loop partition in the layout plan"));
  }
  const inference::LoopPartition& p = it->second;
  if (p.loop_vars.size() != p.layout.shape.size()) {
    return ctx.Internal(absl::StrCat("the partition of the T.Parallel nest over ", f->var->name,
                                     " has rank ", p.layout.shape.size(), " for ",
                                     p.loop_vars.size(), " loop variables"));
  }
  // Constant mins of the nest's loops, outermost first.
  std::vector<int64_t> mins;
  const ir::StmtNode* cur = f;
  for (size_t d = 0; d < p.loop_vars.size(); ++d) {
    const auto* loop = cur ? cur->as<ir::ForNode>() : nullptr;
    if (!loop || loop->var != p.loop_vars[d]) {
      return ctx.Internal("the T.Parallel nest does not match its loop partition");
    }
    auto m = ConstValue(loop->min);
    if (!m) {
      return ctx.Unimplemented(
          absl::StrCat("a T.Parallel loop over ", loop->var->name, " with a non-constant start"));
    }
    mins.push_back(*m);
    cur = loop->body.get();
    while (cur && cur->kind == ir::StmtKind::kSeq && cur->as<ir::SeqNode>()->stmts.size() == 1) {
      cur = cur->as<ir::SeqNode>()->stmts[0].get();
    }
  }
  absl::Status st;
  if (VectorParallelNest(ctx, p, mins, &st)) return st.ok() ? ctx.status() : st;
  SlotLoop loop;
  for (const ir::Var& v : p.loop_vars) loop.vars.push_back(v.get());
  loop.mins = mins;
  ctx.SlotLoopOver(p.layout, loop, [&](const std::vector<std::string>& logical) {
    for (size_t d = 0; d < p.loop_vars.size(); ++d) {
      std::string name = ctx.DeclareVar(p.loop_vars[d]);
      ctx.MarkNonNegative(p.loop_vars[d]);
      ctx.SetRange(p.loop_vars[d], mins[d], mins[d] + p.layout.shape[d] - 1);
      std::string value = logical[d];
      if (mins[d] != 0) value = absl::StrCat(value, " + ", mins[d]);
      ctx.w().Line(absl::StrCat("const int ", name, " = ", value, ";"));
    }
    st = ctx.EmitStmt(p.body);
  });
  return st;
}

std::string LoopHeader(EmitContext& ctx, const ir::ForNode* f, const std::string& name) {
  std::string type = CType(f->var->dtype);
  std::string min = ctx.Expr(f->min);
  ir::Expr end = AddI(f->min, f->extent);
  return absl::StrCat("for (", type, " ", name, " = ", min, "; ", name, " < ", ctx.RelOperand(end),
                      "; ++", name, ")");
}

}  // namespace

absl::Status EmitContext::EmitStmt(const ir::Stmt& s) {
  if (!ok()) return status();
  if (!s) return Internal("a null statement reached the emitter");
  if (thread_dependence_ != nullptr && per_thread_depth_ == 0 && slot_loops_.empty() &&
      s->kind != ir::StmtKind::kSeq &&
      thread_dependence_->RoleOf(s) == ir::ThreadDependence::Role::kMasked) {
    // A branch on the thread index around collective operators: each branch
    // some thread takes runs once, by the whole block (ir/thread_dependence.h).
    const auto* i = s->as<ir::IfNode>();
    auto [then_taken, else_taken] = thread_dependence_->MaskedBranches(*i, threads_);
    w().Line(absl::StrCat("// if ", ir::PrintExpr(i->cond), ": collective, run by the block"));
    if (then_taken) {
      if (absl::Status st = EmitStmt(i->then_case); !st.ok()) return st;
    }
    if (else_taken && i->else_case) {
      if (absl::Status st = EmitStmt(i->else_case); !st.ok()) return st;
    }
    return status();
  }
  if (thread_dependence_ != nullptr && per_thread_depth_ == 0 && slot_loops_.empty() &&
      s->kind != ir::StmtKind::kSeq &&
      thread_dependence_->RoleOf(s) == ir::ThreadDependence::Role::kPerThread) {
    // Every thread runs the statement as a unit (ir/thread_dependence.h):
    // the barrier, if any, goes before it.
    Access2 acc = SharedAccesses(s);
    BeforeShared(acc);
    ++per_thread_depth_;
    absl::Status st = EmitStmt(s);
    --per_thread_depth_;
    AfterShared(acc);
    return st;
  }
  const bool block_level = slot_loops_.empty();
  switch (s->kind) {
    case ir::StmtKind::kSeq:
      for (const ir::Stmt& x : s->as<ir::SeqNode>()->stmts) {
        if (absl::Status st = EmitStmt(x); !st.ok()) return st;
      }
      return status();
    case ir::StmtKind::kKernel: return Internal("a T.Kernel nested in another kernel");
    case ir::StmtKind::kAllocate: {
      const auto* a = s->as<ir::AllocateNode>();
      const ir::Buffer& b = a->buffer;
      switch (b->scope) {
        case ir::Scope::kShared: return status();  // planned with the kernel
        case ir::Scope::kGlobal:
          return Internal(absl::StrCat("global workspace ", b->name, " allocated in a kernel"));
        case ir::Scope::kFragment: {
          const inference::FragmentLayout* l = FragmentOf(b.get());
          if (!l) {
            return Internal(absl::StrCat("fragment ", b->name, " has no layout in the plan"));
          }
          BufferInfo& info = AddBuffer(b, Fresh(b->name));
          info.fragment = l;
          w().Line(
              absl::StrCat(info.ctype, " ", info.name, "[", l->local_size, "];  // ", l->kind));
          return status();
        }
        case ir::Scope::kLocal: {
          auto n = ConstProduct(b->shape);
          if (!n) {
            return Unimplemented(absl::StrCat("T.alloc_local ", b->name, " of symbolic shape"));
          }
          BufferInfo& info = AddBuffer(b, Fresh(b->name));
          w().Line(absl::StrCat(info.ctype, " ", info.name, "[", *n, "];"));
          return status();
        }
        case ir::Scope::kVar: {
          BufferInfo& info = AddBuffer(b, Fresh(b->name));
          if (a->init) {
            std::string init = Convert(Emit(a->init), a->init->dtype, b->dtype).text;
            w().Line(absl::StrCat(info.ctype, " ", info.name, " = ", init, ";"));
          } else {
            w().Line(absl::StrCat(info.ctype, " ", info.name, ";"));
          }
          return status();
        }
      }
      return status();
    }
    case ir::StmtKind::kLet: {
      const auto* l = s->as<ir::LetNode>();
      // A block-level local reads shared memory other threads may have
      // written (`v = S[100]` after a T.copy into S): a barrier first.
      Access2 acc = SharedAccesses(s);
      if (block_level) BeforeShared(acc);
      std::string value = Expr(l->value);
      if (block_level) AfterShared(acc);
      const bool nonneg = ir::IsInt(l->value->dtype) && NonNegative(l->value);
      std::string name = DeclareVar(l->var);
      if (nonneg) MarkNonNegative(l->var);
      if (auto r = Range(l->value)) SetRange(l->var, r->first, r->second);
      w().Line(absl::StrCat("const ", CType(l->var->dtype), " ", name, " = ", value, ";"));
      if (SlotLoop* loop = slot_loop()) loop->lets.emplace_back(l->var.get(), l->value);
      return status();
    }
    case ir::StmtKind::kStore: {
      const auto* st = s->as<ir::StoreNode>();
      Access2 acc = SharedAccesses(s);
      if (block_level) BeforeShared(acc);
      std::string value = Convert(Emit(st->value), st->value->dtype, st->buffer->dtype).text;
      SlotLoop* loop = slot_loop();
      const bool side_effect =
          st->buffer->scope == ir::Scope::kShared || st->buffer->scope == ir::Scope::kGlobal;
      // A block-level store runs once per block: every thread stores the
      // same value. When the buffer stored to was read since the last
      // barrier (`x[b] = x[b] + 1`; `A[0], A[1] = A[1], A[0]`), every
      // thread reads before any stores.
      if (block_level && per_thread_depth_ == 0 && side_effect &&
          loaded_since_barrier_.count(st->buffer.get()) != 0) {
        const std::string v = Fresh("stored");
        w().Line(absl::StrCat("const ", CType(st->buffer->dtype), " ", v, " = ", value, ";"));
        Barrier();
        value = v;
      }
      std::string line = absl::StrCat(Access(st->buffer, st->indices), " = ", value, ";");
      if (loop && side_effect && !loop->replica_guard.empty()) {
        line = absl::StrCat("if (", loop->replica_guard, ") ", line);
      }
      w().Line(line);
      if (block_level) AfterShared(acc);
      return status();
    }
    case ir::StmtKind::kIf: {
      const auto* i = s->as<ir::IfNode>();
      if (block_level) {  // the condition's shared reads, as for a store's
        Access2 cond = SharedAccesses(ir::If(i->cond, ir::Seq({})));
        BeforeShared(cond);
        AfterShared(cond);
      }
      w().Open(absl::StrCat("if (", Expr(i->cond), ")"));
      auto written0 = written_, read0 = read_;
      if (absl::Status st = EmitStmt(i->then_case); !st.ok()) return st;
      if (i->else_case) {
        auto written1 = written_, read1 = read_;
        written_ = written0;
        read_ = read0;
        w().Else();
        if (absl::Status st = EmitStmt(i->else_case); !st.ok()) return st;
        written_.insert(written1.begin(), written1.end());
        read_.insert(read1.begin(), read1.end());
      } else {
        written_.insert(written0.begin(), written0.end());
        read_.insert(read0.begin(), read0.end());
      }
      w().Close();
      return status();
    }
    case ir::StmtKind::kWhile: {
      const auto* wl = s->as<ir::WhileNode>();
      const std::string header = absl::StrCat("while (", Expr(wl->cond), ")");
      if (!block_level) {
        w().Open(header);
        absl::Status st = EmitStmt(wl->body);
        w().Close();
        return st.ok() ? status() : st;
      }
      // The condition runs before the first iteration and after each one:
      // it must see the body's shared writes, and the body what a previous
      // iteration left (as for a serial loop).
      Access2 cond = SharedAccesses(ir::If(wl->cond, ir::Seq({})));
      Access2 body = SharedAccesses(wl->body);
      if (UsesScratch(wl->body)) {
        for (int area : {0, 1}) {
          body.reads.insert(ScratchKey(area));
          body.writes.insert(ScratchKey(area));
        }
      }
      body.reads.insert(cond.reads.begin(), cond.reads.end());
      BeforeShared(cond);
      auto written0 = written_, read0 = read_;
      AfterShared(body);
      NoteLoadsIn(wl->body);
      NoteLoadsIn(ir::If(wl->cond, ir::Seq({})));
      w().Open(header);
      absl::Status st = EmitStmt(wl->body);
      if (st.ok()) BeforeShared(cond);
      w().Close();
      written_.insert(written0.begin(), written0.end());
      read_.insert(read0.begin(), read0.end());
      return st.ok() ? status() : st;
    }
    case ir::StmtKind::kFor: {
      const auto* f = s->as<ir::ForNode>();
      if (f->kind == ir::ForKind::kParallel && block_level) {
        Access2 acc = SharedAccesses(s);
        BeforeShared(acc);
        if (absl::Status st = EmitParallelNest(*this, f); !st.ok()) return st;
        AfterShared(acc);
        return status();
      }
      if (f->kind == ir::ForKind::kPipelined && block_level && kernel_body_) {
        if (std::optional<PipelineInfo> info = AnalyzePipeline(*f, kernel_body_, target_)) {
          return EmitPipelinedLoop(*this, f, *info);
        }
      }
      // A per-thread loop (inside a slot loop) or a block-uniform loop.
      std::string name = DeclareVar(f->var);
      if (NonNegative(f->min)) MarkNonNegative(f->var);
      SetLoopRange(f->var, f->min, f->extent);
      const bool pipelined = f->kind == ir::ForKind::kPipelined && block_level;
      if (f->kind == ir::ForKind::kUnrolled || f->kind == ir::ForKind::kVectorized) {
        w().Line("#pragma unroll");
      }
      std::string header = LoopHeader(*this, f, name);
      if (block_level) {
        Access2 body = SharedAccesses(f->body);
        if (UsesScratch(f->body)) {
          for (int area : {0, 1}) {
            body.reads.insert(ScratchKey(area));
            body.writes.insert(ScratchKey(area));
          }
        }
        auto written0 = written_, read0 = read_;
        AfterShared(body);  // what a previous iteration may have left
        NoteLoadsIn(f->body);
        const bool async = pipelined && target_.info.supports_cp_async && HasAsyncCopy(f->body);
        if (pipelined) ++pipeline_depth_;
        const bool pending0 = pending_async_;
        if (async) pending_async_ = true;
        w().Open(header);
        absl::Status st = EmitStmt(f->body);
        w().Close();
        if (pipelined) --pipeline_depth_;
        if (async && pending_async_) {
          // Copies issued after the body's last barrier: retire them before
          // anything else reuses shared memory.
          w().Line("tl::cp_async_commit();");
          w().Line("tl::cp_async_wait<0>();");
        }
        if (async) pending_async_ = pending0;
        written_.insert(written0.begin(), written0.end());
        read_.insert(read0.begin(), read0.end());
        return st.ok() ? status() : st;
      }
      w().Open(header);
      absl::Status st = EmitStmt(f->body);
      w().Close();
      return st.ok() ? status() : st;
    }
    case ir::StmtKind::kAnnotateLayout: {
      const auto* a = s->as<ir::AnnotateLayoutNode>();
      if (a->layout.kind == ir::Layout::Kind::kCustom) {
        return Unimplemented(absl::StrCat("a custom layout function in T.annotate_layout (for ",
                                          a->buffer->name, ")"));
      }
      return status();  // the swizzle is in the plan's shared layout
    }
    case ir::StmtKind::kUseSwizzle: return status();  // applied to the block indices
    default: break;
  }
  if (IsTileOp(s->kind)) {
    const auto* atomic = s->as<ir::AtomicAddNode>();
    if (!block_level && atomic && !atomic->src) return LowerAtomicAdd(*this, s);
    if (!block_level) {
      return Unimplemented(absl::StrCat(Sv(TileOpName(s->kind)), " inside a T.Parallel loop"));
    }
    auto fn = CudaLowerings().Find(s->kind, Sv(target_.name()));
    if (!fn.ok()) return fn.status();
    Access2 acc = SharedAccesses(s);
    BeforeShared(acc);
    if (absl::Status st = (*fn)(*this, s); !st.ok()) return st;
    AfterShared(acc);
    return status();
  }
  return Internal(absl::StrCat("statement kind ", static_cast<int>(s->kind),
                               " is not handled by the CUDA emitter"));
}

}  // namespace tilec::cuda
