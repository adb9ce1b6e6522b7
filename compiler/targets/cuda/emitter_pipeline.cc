// Multi-stage T.Pipelined loops.
//
// `for k in T.Pipelined(n, num_stages=S)` with S >= 2 on a target with
// cp.async keeps S copies of every shared buffer that the loop body fills
// from global memory with a top-level T.copy (a "producer"), and runs the
// producers D = S - 1 iterations ahead:
//
//   for (p = 0; p < D; ++p) { if (p < n) producers(k = p, stage p); commit; }
//   for (k = 0; k < n; ++k) {
//     cp_async_wait<D - 1>(); syncthreads();   // stage k % S has landed, and
//                                              // every thread is done with the
//                                              // stage about to be refilled
//     if (k + D < n) producers(k + D, stage (k + D) % S);
//     commit;
//     the rest of the body, reading stage k % S
//   }
//   cp_async_wait<0>();
//
// When the rest of the body is T.gemms that run as wgmma (S >= 4, no
// clear_accum, float32 accumulators), they run asynchronously: each issues
// its group and retires the previous one (wgmma_wait<1>), so the tensor
// cores work on iteration k while the threads wait for, and issue, the copies
// of later ones; the group of iteration k - 1 may still read its stage during
// iteration k, so D = S - 2, and the loop ends with wgmma_wait<0>.
//
// A copy is a producer when it copies global memory into a shared buffer
// that nothing else in the kernel writes and nothing outside the loop reads,
// and its source region depends only on k, values fixed before the loop and
// lets of the body (without loads) that precede it. Loops with no producer,
// or with S < 2, use the one-stage scheme of emitter_stmt.cc (cp.async, then
// wait for all before the first reader).
#include <algorithm>
#include <set>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/tma_plan.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {

void FlattenBody(const ir::Stmt& s, std::vector<ir::Stmt>& out) {
  if (const auto* q = s->as<ir::SeqNode>()) {
    for (const ir::Stmt& x : q->stmts) FlattenBody(x, out);
  } else {
    out.push_back(s);
  }
}

void ExprUses::Visit(const ir::Expr& e) {
  if (!e) return;
  if (const auto* v = e->as<ir::VarNode>()) vars.insert(v);
  if (e->kind == ir::ExprKind::kLoad) loads = true;
  IRVisitor::Visit(e);
}

namespace {

// Every statement that writes a buffer, and every statement that mentions it
// at all, keyed by buffer.
struct BufferUses : ir::IRVisitor {
  std::map<const ir::BufferNode*, std::set<const ir::StmtNode*>> writers, users;
  const ir::StmtNode* current = nullptr;
  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    const ir::StmtNode* saved = current;
    if (s->kind != ir::StmtKind::kSeq) current = s.get();
    switch (s->kind) {
      case ir::StmtKind::kStore: Write(s->as<ir::StoreNode>()->buffer); break;
      case ir::StmtKind::kCopy: Write(s->as<ir::CopyNode>()->dst.buffer); break;
      case ir::StmtKind::kFill: Write(s->as<ir::FillNode>()->dst.buffer); break;
      case ir::StmtKind::kGemm: Write(s->as<ir::GemmNode>()->c.buffer); break;
      case ir::StmtKind::kReduce: Write(s->as<ir::ReduceNode>()->dst); break;
      case ir::StmtKind::kCumsum: Write(s->as<ir::CumsumNode>()->dst); break;
      case ir::StmtKind::kAtomicAdd: Write(s->as<ir::AtomicAddNode>()->dst.buffer); break;
      default: break;
    }
    IRVisitor::Visit(s);
    current = saved;
  }
  void VisitBuffer(const ir::Buffer& b) override {
    // Declarations and layout annotations do not touch the data.
    if (b && current && current->kind != ir::StmtKind::kAllocate &&
        current->kind != ir::StmtKind::kAnnotateLayout) {
      users[b.get()].insert(current);
    }
    IRVisitor::VisitBuffer(b);
  }
  void Visit(const ir::Expr& e) override {
    if (!e) return;
    if (const auto* l = e->as<ir::LoadNode>()) {
      if (current) users[l->buffer.get()].insert(current);
    }
    IRVisitor::Visit(e);
  }
  void Write(const ir::Buffer& b) {
    if (current) writers[b.get()].insert(current);
  }
};

// Statements inside `s` (itself included).
std::set<const ir::StmtNode*> StmtsIn(const ir::Stmt& s) {
  struct V : ir::IRVisitor {
    std::set<const ir::StmtNode*> all;
    void Visit(const ir::Stmt& x) override {
      if (!x) return;
      all.insert(x.get());
      IRVisitor::Visit(x);
    }
  } v;
  v.Visit(s);
  return v.all;
}

}  // namespace

// The gemms of a pipelined loop that run as asynchronous wgmma, or none:
// with at least `min_stages` stages on a target with wgmma, when every
// statement of the body but its producers and lets is a T.gemm the plan runs
// as wgmma, accumulating (no clear_accum) into a float32 fragment.
std::vector<const ir::GemmNode*> AsyncWgmmaGemms(EmitContext& ctx,
                                                 const std::vector<ir::Stmt>& body,
                                                 const PipelineInfo& info, int64_t min_stages) {
  std::vector<const ir::GemmNode*> gemms;
  if (!ctx.target().info.supports_wgmma || info.stages < min_stages) return {};
  for (const ir::Stmt& s : body) {
    if (info.producers.count(s.get()) || s->kind == ir::StmtKind::kLet) continue;
    const auto* g = s->as<ir::GemmNode>();
    if (!g || g->clear_accum || g->c.buffer->dtype != ir::DType::kFloat32 ||
        g->a.buffer->scope != ir::Scope::kShared) {
      return {};
    }
    auto it = ctx.plan().gemms.find(g);
    if (it == ctx.plan().gemms.end() || !it->second.wgmma) return {};
    gemms.push_back(g);
  }
  return gemms;
}

void DeclareStagePointers(EmitContext& ctx, const std::vector<const ir::BufferNode*>& staged,
                          const std::string& stage, absl::string_view suffix) {
  for (const ir::BufferNode* b : staged) {
    BufferInfo* bi = ctx.Info(b);
    if (!bi) continue;
    std::string name = ctx.Fresh(absl::StrCat(bi->name, suffix));
    ctx.w().Line(absl::StrCat("auto ", name, " = ", bi->name, " + ", stage, " * ",
                              bi->bytes / ElemBytes(b->dtype), ";"));
    ctx.stage_index()[b] = name;
  }
}

void FinishAsyncWgmma(EmitContext& ctx, const std::vector<const ir::GemmNode*>& async_gemms) {
  if (async_gemms.empty()) return;
  // The last group lands before anything reads the accumulators.
  ctx.w().Line(absl::StrCat("tl::wgmma_wait<0>(", ctx.wgmma_group(), ");"));
  std::set<const ir::BufferNode*> done;
  for (const ir::GemmNode* g : async_gemms) {
    BufferInfo* ci = ctx.Info(g->c.buffer.get());
    const inference::FragmentLayout* cl = ctx.FragmentOf(g->c.buffer.get());
    if (!ci || !cl || !done.insert(g->c.buffer.get()).second) continue;
    ctx.w().Line(absl::StrCat("tl::wgmma_fence_operand<", cl->local_size, ">(", ci->name, ");"));
  }
  ctx.wgmma_group().clear();
}

std::optional<PipelineInfo> AnalyzePipeline(const ir::ForNode& loop, const ir::Stmt& kernel_body,
                                            const CudaTarget& target) {
  if (loop.kind != ir::ForKind::kPipelined || !target.info.supports_cp_async) return std::nullopt;
  std::optional<int64_t> stages = loop.num_stages ? ConstValue(loop.num_stages) : std::nullopt;
  if (!stages || *stages < 2) return std::nullopt;
  std::vector<ir::Stmt> body;
  FlattenBody(loop.body, body);
  BufferUses uses;
  uses.Visit(kernel_body);
  const std::set<const ir::StmtNode*> inside = StmtsIn(loop.body);
  // Variables fixed before the loop: everything not defined in its body.
  std::set<const ir::VarNode*> body_defined;
  struct Defs : ir::IRVisitor {
    std::set<const ir::VarNode*>* out;
    void Visit(const ir::Stmt& s) override {
      if (!s) return;
      if (const auto* l = s->as<ir::LetNode>()) out->insert(l->var.get());
      if (const auto* f = s->as<ir::ForNode>()) out->insert(f->var.get());
      IRVisitor::Visit(s);
    }
  } defs;
  defs.out = &body_defined;
  defs.Visit(loop.body);

  PipelineInfo info;
  info.stages = *stages;
  std::set<const ir::VarNode*> pure_lets;  // body lets usable in a producer
  for (size_t i = 0; i < body.size(); ++i) {
    const ir::Stmt& s = body[i];
    if (const auto* l = s->as<ir::LetNode>()) {
      ExprUses u;
      u.Visit(l->value);
      bool pure = !u.loads;
      for (const ir::VarNode* v : u.vars) {
        if (body_defined.count(v) && !pure_lets.count(v) && v != loop.var.get()) pure = false;
      }
      if (pure) {
        pure_lets.insert(l->var.get());
        info.lets.emplace_back(l->var.get(), l->value);
      }
      continue;
    }
    const auto* c = s->as<ir::CopyNode>();
    if (!c || c->src.buffer->scope != ir::Scope::kGlobal ||
        c->dst.buffer->scope != ir::Scope::kShared) {
      continue;
    }
    const ir::BufferNode* dst = c->dst.buffer.get();
    if (uses.writers[dst] != std::set<const ir::StmtNode*>{c}) continue;
    bool local_use = true;
    for (const ir::StmtNode* u : uses.users[dst]) local_use = local_use && inside.count(u);
    if (!local_use) continue;
    ExprUses u;
    for (const ir::Expr& e : c->src.mins) u.Visit(e);
    for (const ir::Expr& e : c->src.extents) u.Visit(e);
    for (const ir::Expr& e : c->dst.mins) u.Visit(e);
    bool pure = !u.loads;
    for (const ir::VarNode* v : u.vars) {
      if (body_defined.count(v) && !pure_lets.count(v) && v != loop.var.get()) pure = false;
    }
    if (!pure || absl::c_linear_search(info.staged, dst)) continue;
    info.producers.insert(c);
    info.staged.push_back(dst);
  }
  if (info.producers.empty()) return std::nullopt;
  return info;
}

std::map<const ir::StmtNode*, inference::TmaCopyPlan> PlanTmaProducers(
    EmitContext& ctx, const std::vector<ir::Stmt>& body, const PipelineInfo& info, bool explain) {
  std::map<const ir::StmtNode*, inference::TmaCopyPlan> plans;
  if (!ctx.target().info.supports_tma) return plans;
  int64_t bytes = 0;
  for (const ir::Stmt& s : body) {
    const auto* c = s->as<ir::CopyNode>();
    if (!c || !info.producers.count(c)) continue;
    const BufferInfo* bi = ctx.Info(c->dst.buffer.get());
    if (!bi || !bi->shared) continue;
    absl::StatusOr<inference::TmaCopyPlan> p = inference::PlanTmaCopy(
        ctx.program(), *c, *bi->shared, bi->rows, bi->smem_offset, bi->bytes);
    if (!p.ok()) {
      if (explain) {
        ctx.w().Line(absl::StrCat("// ", bi->name, ": cp.async, not TMA: ", p.status().message()));
      }
      continue;
    }
    bytes += p->bytes;
    plans.emplace(c, *std::move(p));
  }
  // An mbarrier's tx-count holds at most 2^20 - 1 bytes.
  if (bytes >= (int64_t{1} << 20)) {
    if (explain) {
      ctx.w().Line(absl::StrCat("// cp.async, not TMA: a stage of ", bytes,
                                " bytes is more than an mbarrier counts"));
    }
    plans.clear();
  }
  return plans;
}

std::string TmaCoords(EmitContext& ctx, const std::vector<ir::Expr>& mins,
                      const inference::TmaCopyPlan::Load& load) {
  std::vector<std::string> coords;
  for (size_t j = mins.size(); j-- > 0;) {
    ir::Expr m = mins[j];
    if (j + 1 == mins.size() && load.last_dim_offset != 0) {
      m = AddI(m, ir::IntImm(load.last_dim_offset, m->dtype));
    }
    coords.push_back(ctx.Expr(m));
  }
  return absl::StrJoin(coords, ", ");
}

absl::Status EmitTmaLoads(EmitContext& ctx, const std::vector<ir::Stmt>& body,
                          const std::map<const ir::StmtNode*, inference::TmaCopyPlan>& plans,
                          const std::map<const ir::VarNode*, ir::Expr>& map, const std::string& bar,
                          const std::string& guard) {
  int64_t bytes = 0;
  for (const auto& [c, p] : plans) bytes += p.bytes;
  if (!guard.empty()) ctx.w().Open(absl::StrCat("if (", guard, ")"));
  ctx.w().Line(absl::StrCat("tl::mbarrier_arrive_expect_tx(", bar, ", ", bytes, ");"));
  for (const ir::Stmt& s : body) {
    auto it = plans.find(s.get());
    if (it == plans.end()) continue;
    const auto* c = s->as<ir::CopyNode>();
    const inference::TmaCopyPlan& p = it->second;
    const std::string tmap = ctx.TensorMap(p);
    auto stage = ctx.stage_index().find(c->dst.buffer.get());
    if (stage == ctx.stage_index().end()) {
      return ctx.Internal(absl::StrCat("TMA load into ", c->dst.buffer->name, " without a stage"));
    }
    std::vector<ir::Expr> mins;
    for (const ir::Expr& e : c->src.mins) mins.push_back(Substitute(e, map));
    for (const inference::TmaCopyPlan::Load& l : p.loads) {
      ctx.w().Line(absl::StrCat("tl::tma_load(&", stage->second, "[", l.smem_elements, "], ", tmap,
                                ", ", bar, ", ", TmaCoords(ctx, mins, l), ");"));
    }
  }
  if (!guard.empty()) ctx.w().Close();
  return ctx.status();
}

absl::Status EmitPipelinedLoop(EmitContext& ctx, const ir::ForNode* f, const PipelineInfo& info) {
  const int64_t S = info.stages;
  std::vector<ir::Stmt> body;
  FlattenBody(f->body, body);
  if (ctx.ws() && ctx.ws()->loop == f) return EmitConsumerLoop(ctx, f, *ctx.ws());
  const std::map<const ir::StmtNode*, inference::TmaCopyPlan> tma =
      PlanTmaProducers(ctx, body, info, /*explain=*/true);
  // Producers that stay on cp.async.
  const bool cp_async = tma.size() < info.producers.size();
  // With asynchronous wgmma the group of iteration k - 1 may still read its
  // stage during iteration k: copies run S - 2 iterations ahead instead.
  // Without warp specialisation, with 4 stages or more (with 3, copies one
  // iteration ahead hide less than the one group in flight gains: measured
  // on an H200).
  const std::vector<const ir::GemmNode*> async_gemms = AsyncWgmmaGemms(ctx, body, info, 4);
  const int64_t D = async_gemms.empty() ? S - 1 : S - 2;
  EmitContext::Access2 staged;
  for (const ir::BufferNode* b : info.staged) {
    staged.writes.insert(b);
    staged.reads.insert(b);
  }
  // The prologue overwrites stages a previous run of this loop may have left
  // being read.
  ctx.BeforeShared(staged);
  // TMA loads complete on one mbarrier per stage; the phase of iteration k's
  // barrier (stage k % S) has parity (k / S) % 2.
  std::string bars;
  if (!tma.empty()) {
    bars = ctx.Mbarriers(S);
    ctx.w().Open("if (tx == 0)");
    ctx.w().Line(absl::StrCat("for (int s = 0; s < ", S, "; ++s) tl::mbarrier_init(&", bars,
                              "[s], 1);"));
    ctx.w().Line("tl::fence_barrier_init();");
    ctx.w().Close();
    ctx.w().Line("tl::syncthreads();");
  }
  const std::string n = Hoist(ctx, absl::StrCat(f->var->name, "_iters"), ctx.Expr(f->extent));
  ctx.w().Line(absl::StrCat("// T.Pipelined over ", f->var->name, ", ", S, " stages: copies run ",
                            D, " iterations ahead",
                            async_gemms.empty() ? "" : ", wgmma one group behind"));
  auto DeclareStages = [&](const std::string& stage, absl::string_view suffix) {
    DeclareStagePointers(ctx, info.staged, stage, suffix);
  };
  // Producers for iteration `iter` (an IR expression of the loop index) into
  // stage `stage` (C++ text).
  auto producers = [&](const ir::Expr& iter, const std::string& stage) -> absl::Status {
    std::map<const ir::VarNode*, ir::Expr> map;
    map[f->var.get()] = iter;
    for (const auto& [var, value] : info.lets) map[var] = Substitute(value, map);
    DeclareStages(stage, "_fill");
    ctx.staged_copy() = true;
    if (!tma.empty()) {
      if (absl::Status st =
              EmitTmaLoads(ctx, body, tma, map, absl::StrCat("&", bars, "[", stage, "]"), "tx == 0");
          !st.ok()) {
        return st;
      }
    }
    for (const ir::Stmt& s : body) {
      const auto* c = s->as<ir::CopyNode>();
      if (!c || !info.producers.count(c) || tma.count(c)) continue;
      ir::Region src = c->src;
      for (ir::Expr& e : src.mins) e = Substitute(e, map);
      for (ir::Expr& e : src.extents) e = Substitute(e, map);
      ir::Region dst = c->dst;
      for (ir::Expr& e : dst.mins) e = Substitute(e, map);
      ir::CopyNode shifted(src, dst, c->disable_tma);
      if (absl::Status st = LowerCopyAs(ctx, shifted, c); !st.ok()) return st;
    }
    ctx.staged_copy() = false;
    for (const ir::BufferNode* b : info.staged) ctx.stage_index().erase(b);
    return ctx.status();
  };
  const std::string min = ctx.Operand(f->min, 4);  // an operand of + and -
  const bool zero_min = ConstValue(f->min) == 0;
  // Prologue.
  ir::Var p = ir::MakeVar("stage");
  const std::string pn = ctx.DeclareVar(p);
  ctx.MarkNonNegative(p);
  const std::optional<int64_t> cn = ConstValue(f->extent);
  if (cn && *cn > 0) ctx.SetRange(p, 0, std::min(D - 1, *cn - 1));
  ctx.w().Line("#pragma unroll");
  ctx.w().Open(absl::StrCat("for (int ", pn, " = 0; ", pn, " < ", D, "; ++", pn, ")"));
  ctx.w().Open(absl::StrCat("if (", pn, " < ", n, ")"));
  if (absl::Status st = producers(AddI(f->min, p), pn); !st.ok()) return st;
  ctx.w().Close();
  if (cp_async) ctx.w().Line("tl::cp_async_commit();");
  ctx.w().Close();
  if (!async_gemms.empty()) {
    ctx.wgmma_group() = ctx.Fresh("wgmma_group");
    ctx.w().Line(absl::StrCat("tl::WgmmaGroup ", ctx.wgmma_group(), ";"));
  }
  // Main loop.
  const std::string k = ctx.DeclareVar(f->var);
  if (ctx.NonNegative(f->min)) ctx.MarkNonNegative(f->var);
  ctx.SetLoopRange(f->var, f->min, f->extent);
  const std::string rel = zero_min ? k : absl::StrCat("(", k, " - ", min, ")");
  ctx.w().Open(absl::StrCat("for (int ", k, " = ", min, "; ", k, " < ",
                            zero_min ? n : absl::StrCat(min, " + ", n), "; ++", k, ")"));
  if (cp_async) ctx.w().Line(absl::StrCat("tl::cp_async_wait<", D - 1, ">();"));
  ctx.WriteBarrier();
  ctx.written().clear();
  ctx.read().clear();
  ctx.w().Open(absl::StrCat("if (", rel, " + ", D, " < ", n, ")"));
  ir::Var ahead = ir::MakeVar("ahead");
  ctx.BindVarText(ahead, absl::StrCat("(", k, " + ", D, ")"));
  ctx.MarkNonNegative(ahead);
  // Guarded by k - min + D < n: the iteration fetched ahead is in range.
  ctx.SetLoopRange(ahead, f->min, f->extent);
  if (absl::Status st = producers(ahead, absl::StrCat("((", rel, " + ", D, ") % ", S, ")"));
      !st.ok()) {
    return st;
  }
  ctx.w().Close();
  if (cp_async) ctx.w().Line("tl::cp_async_commit();");
  if (!tma.empty()) {
    ctx.w().Line(absl::StrCat("tl::mbarrier_wait_parity(&", bars, "[", rel, " % ", S, "], (", rel,
                              " / ", S, ") & 1);"));
  }
  DeclareStages(absl::StrCat("(", rel, " % ", S, ")"), "_stage");
  for (const ir::Stmt& s : body) {
    const auto* c = s->as<ir::CopyNode>();
    if (c && info.producers.count(c)) continue;
    if (absl::Status st = ctx.EmitStmt(s); !st.ok()) return st;
  }
  for (const ir::BufferNode* b : info.staged) ctx.stage_index().erase(b);
  ctx.w().Close();
  FinishAsyncWgmma(ctx, async_gemms);
  if (cp_async) ctx.w().Line("tl::cp_async_wait<0>();");
  // The last iterations' readers may still be reading the stages.
  ctx.AfterShared(staged);
  return ctx.status();
}

}  // namespace tilec::cuda
