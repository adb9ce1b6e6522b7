// Warp specialisation on sm_90a (docs/cuda_backend.md "Warp specialisation").
//
// A kernel whose one T.Pipelined loop (at the kernel's top level) loads every
// producer with TMA, whose threads are whole warpgroups, and whose loads
// depend on nothing but the loop index, the block indices, the dynamic dims
// and scalar parameters (so a thread that runs none of the kernel's other
// statements can compute them) runs with one more warpgroup, the producer:
//
//   if (tx == 0) { init full[s] (1 arrival), empty[s] (T arrivals) }
//   syncthreads();
//   if (tx >= T) {                         // the producer warpgroup
//     setmaxnreg_dec<40>();
//     if (tx == T) for k: { if (k >= S) wait empty[k % S], phase k / S - 1;
//                           arrive_expect_tx(full[k % S]); TMA loads of k }
//   } else {                               // the consumers: the kernel body
//     setmaxnreg_inc<R>();
//     ... for k: { wait full[k % S], phase k / S; body on stage k % S;
//                  arrive empty[stage read last] } ...
//   }
//
// The consumers release a stage when they are done with it: after the body,
// or, when the body's gemms run as asynchronous wgmma (one group in flight),
// the stage of iteration k - 1 once iteration k's wait retires its group.
// Every block barrier among the consumers is `bar.sync 1, T`, so the
// producer warpgroup never takes part.
//
// Registers: the kernel is launched with __launch_bounds__(T + 128, B), B
// blocks per SM, and setmaxnreg moves registers from the producer (40) to
// the consumers. One consumer warpgroup alone on an SM cannot keep the tensor
// cores busy (each k-step waits on its wgmma group and its stage's barrier),
// so B = 2 where the shared memory and the consumers' fragments allow it: at
// launch 128 registers a thread, the consumer warpgroup then 216. Otherwise
// B = 1: two or more consumer warpgroups share what the producer gives up
// (no setmaxnreg from six on: their share would not exceed the launch
// count), and one keeps what ptxas gives it (up to 255). The consumers never
// ask for more than the block's pool holds (WarpSpecializedRegisters): a
// setmaxnreg.inc beyond it waits forever, a hang no emulator run shows.
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

constexpr int64_t kWarpgroup = 128;
constexpr int64_t kProducerRegs = 40;
// An SM of sm_90: 228 KiB of shared memory, of which each resident block
// reserves 1 KiB.
constexpr int64_t kSmemPerSm = 228 * 1024;
constexpr int64_t kSmemReservedPerBlock = 1024;
// Registers a consumer thread needs beyond its fragments (addresses, loop
// state, wgmma descriptors): the 128x128 GEMM's consumer uses 24.
constexpr int64_t kConsumerHeadroomRegs = 64;

// 32-bit registers a thread holds for the kernel's fragments (all of them,
// live or not: an upper bound).
struct FragmentRegs : ir::IRVisitor {
  EmitContext& ctx;
  int64_t regs = 0;
  explicit FragmentRegs(EmitContext& c) : ctx(c) {}
  using IRVisitor::Visit;
  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    if (const auto* a = s->as<ir::AllocateNode>(); a && a->buffer->scope == ir::Scope::kFragment) {
      if (const inference::FragmentLayout* l = ctx.FragmentOf(a->buffer.get())) {
        regs += (l->local_size * ElemBytes(a->buffer->dtype) + 3) / 4;
      }
    }
    IRVisitor::Visit(s);
  }
};

struct VarUses : ir::IRVisitor {
  std::set<const ir::VarNode*> vars;
  int pipelined = 0;
  void Visit(const ir::Expr& e) override {
    if (!e) return;
    if (const auto* v = e->as<ir::VarNode>()) vars.insert(v);
    IRVisitor::Visit(e);
  }
  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    if (const auto* f = s->as<ir::ForNode>(); f && f->kind == ir::ForKind::kPipelined) ++pipelined;
    IRVisitor::Visit(s);
  }
};

}  // namespace

WsRegisters WarpSpecializedRegisters(int64_t consumer_groups, int64_t blocks_per_sm) {
  // 64K registers an SM, allocated 8 a thread at a time, at most 255.
  constexpr int64_t kRegsPerSm = 65536;
  const int64_t threads = (consumer_groups + 1) * kWarpgroup;
  WsRegisters r;
  r.launch = std::min<int64_t>(248, kRegsPerSm / (blocks_per_sm * threads) / 8 * 8);
  // What the producer gives up is all the consumers can take: a larger
  // setmaxnreg.inc would wait for registers forever.
  r.consumer = std::min<int64_t>(
      256, ((consumer_groups + 1) * r.launch - kProducerRegs) / consumer_groups / 8 * 8);
  return r;
}

std::optional<WarpSpecialization> PlanWarpSpecialization(EmitContext& ctx,
                                                         const ir::KernelNode& k,
                                                         int64_t threads,
                                                         int64_t shared_bytes) {
  const inference::TargetInfo& target = ctx.target().info;
  if (!target.supports_tma || !target.supports_wgmma) return std::nullopt;
  if (threads % kWarpgroup != 0 || threads + kWarpgroup > target.max_threads_per_block) {
    return std::nullopt;
  }
  VarUses all;
  all.Visit(k.body);
  if (all.pipelined != 1) return std::nullopt;
  std::vector<ir::Stmt> top;
  FlattenBody(k.body, top);
  const ir::ForNode* loop = nullptr;
  for (const ir::Stmt& s : top) {
    if (const auto* f = s->as<ir::ForNode>(); f && f->kind == ir::ForKind::kPipelined) loop = f;
  }
  if (!loop) return std::nullopt;  // inside a branch or another loop
  std::optional<PipelineInfo> info = AnalyzePipeline(*loop, k.body, ctx.target());
  if (!info) return std::nullopt;
  std::vector<ir::Stmt> body;
  FlattenBody(loop->body, body);
  WarpSpecialization ws;
  ws.tma = PlanTmaProducers(ctx, body, *info, /*explain=*/false);
  if (ws.tma.empty() || ws.tma.size() != info->producers.size()) return std::nullopt;
  // What the producer thread computes may use only what it has.
  std::set<const ir::VarNode*> allowed = {loop->var.get()};
  for (const ir::Var& v : k.block_vars) allowed.insert(v.get());
  for (const ir::Var& v : ctx.program().dyn_dims) allowed.insert(v.get());
  for (const ir::Param& p : ctx.program().params) {
    if (p.scalar) allowed.insert(p.scalar.get());
  }
  for (const auto& [var, value] : info->lets) allowed.insert(var);
  VarUses used;
  used.Visit(loop->min);
  used.Visit(loop->extent);
  for (const auto& [var, value] : info->lets) used.Visit(value);
  for (const auto& [c, plan] : ws.tma) {
    for (const ir::Expr& e : c->as<ir::CopyNode>()->src.mins) used.Visit(e);
  }
  for (const ir::VarNode* v : used.vars) {
    if (!allowed.count(v)) return std::nullopt;
  }
  ws.loop = loop;
  ws.info = *std::move(info);
  ws.consumers = threads;
  const int64_t consumer_groups = threads / kWarpgroup;
  if (consumer_groups == 1) {
    // Two blocks an SM when both fit: shared memory (the plan's and the
    // stages' two mbarriers) and the consumers' fragments.
    const int64_t smem = shared_bytes + 16 * ws.info.stages + kSmemReservedPerBlock;
    const WsRegisters two_blocks = WarpSpecializedRegisters(1, 2);
    FragmentRegs fragments(ctx);
    if (2 * smem <= kSmemPerSm) {
      fragments.Visit(k.body);
      if (fragments.regs + kConsumerHeadroomRegs <= two_blocks.consumer) {
        ws.blocks_per_sm = 2;
        ws.producer_regs = kProducerRegs;
        ws.consumer_regs = two_blocks.consumer;
      }
    }
  } else {
    const WsRegisters r = WarpSpecializedRegisters(consumer_groups, 1);
    if (r.consumer > r.launch) {
      ws.producer_regs = kProducerRegs;
      ws.consumer_regs = r.consumer;
    }
  }
  return ws;
}

absl::Status EmitProducerBranch(EmitContext& ctx, WarpSpecialization& ws) {
  const ir::ForNode* f = ws.loop;
  const int64_t S = ws.info.stages;
  const int64_t T = ws.consumers;
  const std::string full = ctx.Mbarriers(S), empty = ctx.Mbarriers(S);
  ws.full = ctx.Fresh("full");
  ws.empty = ctx.Fresh("empty");
  ctx.w().Line(absl::StrCat("uint64_t* const ", ws.full, " = ", full, ";  // loaded: 1 arrival + bytes"));
  ctx.w().Line(absl::StrCat("uint64_t* const ", ws.empty, " = ", empty, ";  // read: ", T,
                            " arrivals"));
  ctx.w().Line(absl::StrCat("// Warp-specialised: threads ", T, "..", T + kWarpgroup - 1,
                            " load the stages of the T.Pipelined loop over ", f->var->name,
                            " with TMA; threads 0..", T - 1, " compute"));
  ctx.w().Open("if (tx == 0)");
  ctx.w().Open(absl::StrCat("for (int s = 0; s < ", S, "; ++s)"));
  ctx.w().Line(absl::StrCat("tl::mbarrier_init(&", ws.full, "[s], 1);"));
  ctx.w().Line(absl::StrCat("tl::mbarrier_init(&", ws.empty, "[s], ", T, ");"));
  ctx.w().Close();
  ctx.w().Line("tl::fence_barrier_init();");
  ctx.w().Close();
  ctx.w().Line("tl::syncthreads();");
  ctx.w().Open(absl::StrCat("if (tx >= ", T, ")"));
  if (ws.producer_regs > 0) {
    ctx.w().Line(absl::StrCat("tl::setmaxnreg_dec<", ws.producer_regs, ">();"));
  }
  ctx.w().Open(absl::StrCat("if (tx == ", T, ")"));
  std::vector<ir::Stmt> body;
  FlattenBody(f->body, body);
  // The producer's own loop variable (the consumers declare f->var).
  ir::Var kp = ir::MakeVar(absl::StrCat(f->var->name, "_load"));
  ctx.KeepAlive(kp);
  const std::string k = ctx.DeclareVar(kp);
  const std::string min = ctx.Operand(f->min, 4);
  const bool zero_min = ConstValue(f->min) == 0;
  const std::string n = ctx.Expr(f->extent);
  if (ctx.NonNegative(f->min)) ctx.MarkNonNegative(kp);
  const std::string rel = zero_min ? k : absl::StrCat("(", k, " - ", min, ")");
  ctx.w().Open(absl::StrCat("for (int ", k, " = ", min, "; ", k, " < ",
                            zero_min ? n : absl::StrCat(min, " + ", n), "; ++", k, ")"));
  const std::string stage = absl::StrCat("(", rel, " % ", S, ")");
  ctx.w().Line(absl::StrCat("if (", rel, " >= ", S, ") tl::mbarrier_wait_parity(&", ws.empty, "[",
                            stage, "], (", rel, " / ", S, " + 1) & 1);  // its last readers"));
  std::map<const ir::VarNode*, ir::Expr> map;
  map[f->var.get()] = kp;
  for (const auto& [var, value] : ws.info.lets) map[var] = Substitute(value, map);
  DeclareStagePointers(ctx, ws.info.staged, stage, "_fill");
  absl::Status st = EmitTmaLoads(ctx, body, ws.tma, map,
                                 absl::StrCat("&", ws.full, "[", stage, "]"), /*guard=*/"");
  for (const ir::BufferNode* b : ws.info.staged) ctx.stage_index().erase(b);
  if (!st.ok()) return st;
  ctx.w().Close();  // for
  ctx.w().Close();  // if (tx == T)
  ctx.w().Close();  // if (tx >= T)
  ctx.w().Open("else");
  if (ws.consumer_regs > 0) {
    ctx.w().Line(absl::StrCat("tl::setmaxnreg_inc<", ws.consumer_regs, ">();"));
  }
  return ctx.status();
}

absl::Status EmitConsumerLoop(EmitContext& ctx, const ir::ForNode* f,
                              const WarpSpecialization& ws) {
  const int64_t S = ws.info.stages;
  std::vector<ir::Stmt> body;
  FlattenBody(f->body, body);
  const std::vector<const ir::GemmNode*> async_gemms = AsyncWgmmaGemms(ctx, body, ws.info, 2);
  // A body of gemms alone has no hazard among the consumers; anything else
  // (shared scratch of reductions, shared buffers it writes) keeps the
  // barrier at the top of each iteration.
  bool gemms_only = true;
  for (const ir::Stmt& s : body) {
    if (ws.info.producers.count(s.get()) || s->kind == ir::StmtKind::kLet) continue;
    gemms_only = gemms_only && s->kind == ir::StmtKind::kGemm;
  }
  EmitContext::Access2 staged;
  for (const ir::BufferNode* b : ws.info.staged) staged.reads.insert(b);
  ctx.BeforeShared(staged);
  const std::string n = Hoist(ctx, absl::StrCat(f->var->name, "_iters"), ctx.Expr(f->extent));
  ctx.w().Line(absl::StrCat("// T.Pipelined over ", f->var->name, ", ", S,
                            " stages loaded by the producer warpgroup",
                            async_gemms.empty() ? "" : ", wgmma one group behind"));
  if (!async_gemms.empty()) {
    ctx.wgmma_group() = ctx.Fresh("wgmma_group");
    ctx.w().Line(absl::StrCat("tl::WgmmaGroup ", ctx.wgmma_group(), ";"));
  }
  const std::string min = ctx.Operand(f->min, 4);
  const bool zero_min = ConstValue(f->min) == 0;
  const std::string k = ctx.DeclareVar(f->var);
  if (ctx.NonNegative(f->min)) ctx.MarkNonNegative(f->var);
  const std::optional<int64_t> cmin = ConstValue(f->min), cn = ConstValue(f->extent);
  if (cmin && cn && *cn > 0) ctx.SetRange(f->var, *cmin, *cmin + *cn - 1);
  const std::string rel = zero_min ? k : absl::StrCat("(", k, " - ", min, ")");
  ctx.w().Open(absl::StrCat("for (int ", k, " = ", min, "; ", k, " < ",
                            zero_min ? n : absl::StrCat(min, " + ", n), "; ++", k, ")"));
  if (!gemms_only) {
    ctx.WriteBarrier();
    ctx.written().clear();
    ctx.read().clear();
  }
  ctx.w().Line(absl::StrCat("tl::mbarrier_wait_parity(&", ws.full, "[", rel, " % ", S, "], (", rel,
                            " / ", S, ") & 1);"));
  DeclareStagePointers(ctx, ws.info.staged, absl::StrCat("(", rel, " % ", S, ")"), "_stage");
  for (const ir::Stmt& s : body) {
    if (ws.info.producers.count(s.get())) continue;
    if (absl::Status st = ctx.EmitStmt(s); !st.ok()) return st;
  }
  for (const ir::BufferNode* b : ws.info.staged) ctx.stage_index().erase(b);
  if (async_gemms.empty()) {
    ctx.w().Line(absl::StrCat("tl::mbarrier_arrive(&", ws.empty, "[", rel, " % ", S,
                              "]);  // this stage is free"));
  } else {
    // The wait above retired the previous iteration's group.
    ctx.w().Line(absl::StrCat("if (", rel, " > 0) tl::mbarrier_arrive(&", ws.empty, "[(", rel,
                              " - 1) % ", S, "]);  // the previous stage is free"));
  }
  ctx.w().Close();
  FinishAsyncWgmma(ctx, async_gemms);
  ctx.AfterShared(staged);
  return ctx.status();
}

}  // namespace tilec::cuda
