// Warp specialisation on sm_90a (docs/cuda_backend.md "Warp specialisation").
//
// A kernel whose one T.Pipelined loop (at the kernel's top level) loads a
// producer with TMA (the others, which TMA cannot do, with cp.async by the
// producer warpgroup), whose threads are whole warpgroups, and whose loads
// depend on nothing but the loop index, the block indices, the dynamic dims,
// scalar parameters and the kernel's lets of those before the loop (so a
// thread that runs none of the kernel's other statements can compute them;
// causal attention's min(n, ceildiv((bx + 1) * M, N)) is one) runs with one
// more warpgroup, the producer. Each producer copy c has its own barrier
// array full_c (QK^T need not wait for V to land):
//
//   if (tx == 0) { init full_c[s] (1 arrival), empty[s] (T arrivals) }
//   syncthreads();
//   if (tx >= T) {                         // the producer warpgroup
//     setmaxnreg_dec<40>();
//     if (tx == T) for k: { if (k >= S) wait empty[k % S], phase k / S - 1;
//                           for each c: arrive_expect_tx(full_c[k % S]);
//                                       TMA loads of c at k }
//   } else {                               // the consumers: the kernel body
//     setmaxnreg_inc<R>();
//     ... for k: { body on stage k % S, waiting for full_c[k % S], phase
//                  k / S, before the first statement that touches c's
//                  buffer; arrive empty[stage read last] } ...
//   }
//
// A copy TMA cannot do (a group's scales, 2 bytes a row) has 128 arrivals
// instead: the whole producer warpgroup runs the loop, each thread copies
// its part with cp.async, waits for it and arrives.
//
// When the kernel is not specialised, `tilec compile --explain` (and a
// comment in the generated code) says which condition failed.
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
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// Whether a statement writes global memory.
struct WritesGlobal : ir::IRVisitor {
  bool found = false;
  using IRVisitor::Visit;
  void Visit(const ir::Stmt& s) override {
    if (!s || found) return;
    const ir::BufferNode* dst = nullptr;
    if (const auto* st = s->as<ir::StoreNode>()) dst = st->buffer.get();
    if (const auto* c = s->as<ir::CopyNode>()) dst = c->dst.buffer.get();
    if (const auto* a = s->as<ir::AtomicAddNode>()) dst = a->dst.buffer.get();
    if (dst && dst->scope == ir::Scope::kGlobal) found = true;
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

std::optional<WarpSpecialization> PlanWarpSpecialization(EmitContext& ctx, const ir::KernelNode& k,
                                                         int64_t threads, int64_t shared_bytes,
                                                         std::string& why) {
  const inference::TargetInfo& target = ctx.target().info;
  if (ctx.program().disable_warp_specialized) {
    why = "the kernel's pass_configs turn it off (TL_DISABLE_WARP_SPECIALIZED)";
    return std::nullopt;
  }
  if (!target.supports_tma || !target.supports_wgmma) {
    why = absl::StrCat(Sv(ctx.target().name()), " has no TMA and wgmma");
    return std::nullopt;
  }
  if (threads % kWarpgroup != 0 || threads + kWarpgroup > target.max_threads_per_block) {
    why =
        absl::StrCat("threads=", threads, " is not whole warpgroups (128) with room for one more");
    return std::nullopt;
  }
  VarUses all;
  all.Visit(k.body);
  if (all.pipelined != 1) {
    why = absl::StrCat("the kernel has ", all.pipelined, " T.Pipelined loops (one is needed)");
    return std::nullopt;
  }
  std::vector<ir::Stmt> top;
  FlattenBody(k.body, top);
  const ir::ForNode* loop = nullptr;
  // Lets of the kernel's top level before the loop whose values the
  // producer thread can compute too (no loads, only what it has).
  std::vector<std::pair<const ir::VarNode*, ir::Expr>> top_lets;
  std::set<const ir::VarNode*> allowed;
  for (const ir::Var& v : k.block_vars) allowed.insert(v.get());
  for (const ir::Var& v : ctx.program().dyn_dims) allowed.insert(v.get());
  for (const ir::Param& p : ctx.program().params) {
    if (p.scalar) allowed.insert(p.scalar.get());
  }
  // Copies before the loop the producer loads with TMA too (attention's Q):
  // global to shared, from what the producer has, until a statement touches
  // shared memory (so no buffer sharing their bytes is in use when the loads
  // land; no statement before the loop writes global memory, see below).
  std::map<const ir::StmtNode*, inference::TmaCopyPlan> prologue;
  bool prologue_open = true;
  // Shared buffers (and the buffers sharing their bytes) that statements
  // before the loop touch, prologue copies included: no stage may share
  // bytes with them, as the producer fills stages from the kernel's start.
  std::set<const void*> before;
  auto with_aliases = [&](const void* b) { return ctx.SharingBytes({b}); };
  for (const ir::Stmt& s : top) {
    if (const auto* f = s->as<ir::ForNode>(); f && f->kind == ir::ForKind::kPipelined) {
      loop = f;
      break;
    }
    const EmitContext::Access2 access = ctx.SharedAccesses(s);
    WritesGlobal writes;
    writes.Visit(s);
    if (writes.found) {
      why =
          "a statement before the T.Pipelined loop writes global memory, which the producer's "
          "loads (issued from the kernel's start) could read before it is written";
      return std::nullopt;
    }
    if (const auto* c = s->as<ir::CopyNode>(); c && prologue_open) {
      const BufferInfo* bi = ctx.Info(c->dst.buffer.get());
      ExprUses uses;
      for (const ir::Expr& e : c->src.mins) uses.Visit(e);
      for (const ir::Expr& e : c->src.extents) uses.Visit(e);
      bool ok = bi && bi->shared && bi->stages <= 1;
      for (const ir::VarNode* v : uses.vars) ok = ok && allowed.count(v);
      // Two loads into the same bytes would race.
      for (const void* key : with_aliases(c->dst.buffer.get())) ok = ok && !before.count(key);
      absl::StatusOr<inference::TmaCopyPlan> plan =
          ok ? inference::PlanTmaCopy(ctx.program(), *c, *bi->shared, bi->rows, bi->smem_offset,
                                      bi->bytes)
             : absl::StatusOr<inference::TmaCopyPlan>(absl::CancelledError());
      if (plan.ok()) {
        prologue.emplace(c, *std::move(plan));
        for (const void* key : with_aliases(c->dst.buffer.get())) before.insert(key);
        continue;
      }
    }
    for (const std::set<const void*>* keys : {&access.reads, &access.writes}) {
      for (const void* key : ctx.SharingBytes(*keys)) before.insert(key);
    }
    if (!access.reads.empty() || !access.writes.empty()) prologue_open = false;
    const auto* let = s->as<ir::LetNode>();
    if (!let) continue;
    ExprUses uses;
    uses.Visit(let->value);
    bool ok = !uses.loads;
    for (const ir::VarNode* v : uses.vars) ok = ok && allowed.count(v);
    if (!ok) continue;
    allowed.insert(let->var.get());
    top_lets.emplace_back(let->var.get(), let->value);
  }
  if (!loop) {
    why =
        "the T.Pipelined loop is not at the kernel's top level (it is inside a branch or "
        "another loop)";
    return std::nullopt;
  }
  std::optional<PipelineInfo> info = AnalyzePipeline(*loop, k.body, ctx.target());
  if (!info) {
    why = absl::StrCat("the T.Pipelined loop over ", loop->var->name,
                       " runs with one stage or has no copy to run ahead");
    return std::nullopt;
  }
  for (const ir::BufferNode* b : info->staged) {
    for (const void* key : with_aliases(b)) {
      if (!before.count(key)) continue;
      why = absl::StrCat("the stages of ", b->name,
                         " share bytes with a buffer used before the loop, which the producer "
                         "would overwrite while it is in use");
      return std::nullopt;
    }
  }
  std::vector<ir::Stmt> body;
  FlattenBody(loop->body, body);
  WarpSpecialization ws;
  ws.tma = PlanTmaProducers(ctx, body, *info, /*explain=*/false);
  // Copies TMA cannot do (rows narrower than 16 bytes: a group's scales)
  // the producer warpgroup does with cp.async, as long as TMA does one.
  if (ws.tma.empty()) {
    why = "no copy in the T.Pipelined loop can be a TMA load";
    return std::nullopt;
  }
  // What the producer thread computes may use only what it has.
  allowed.insert(loop->var.get());
  for (const auto& [var, value] : info->lets) allowed.insert(var);
  VarUses used;
  used.Visit(loop->min);
  used.Visit(loop->extent);
  for (const auto& [var, value] : info->lets) used.Visit(value);
  for (const ir::StmtNode* c : info->producers) {
    const auto* copy = c->as<ir::CopyNode>();
    for (const ir::Expr& e : copy->src.mins) used.Visit(e);
    for (const ir::Expr& e : copy->src.extents) used.Visit(e);
    for (const ir::Expr& e : copy->dst.mins) used.Visit(e);
  }
  for (const ir::VarNode* v : used.vars) {
    if (!allowed.count(v)) {
      why = absl::StrCat("the loop's bounds or loads use ", v->name,
                         ", which a producer thread does not compute (it has the loop index, "
                         "block indices, dynamic dims, scalar parameters and lets of those)");
      return std::nullopt;
    }
  }
  ws.top_lets = std::move(top_lets);
  int64_t prologue_bytes = 0;
  for (const auto& [c, plan] : prologue) prologue_bytes += plan.bytes;
  // An mbarrier's tx-count holds at most 2^20 - 1 bytes.
  if (prologue_bytes < (int64_t{1} << 20)) ws.prologue = std::move(prologue);
  ws.loop = loop;
  ws.info = *std::move(info);
  ws.consumers = threads;
  const int64_t consumer_groups = threads / kWarpgroup;
  if (consumer_groups == 1) {
    // Two blocks an SM when both fit: shared memory (the plan's and the
    // stages' two mbarriers) and the consumers' fragments.
    const int64_t mbarriers =
        8 * (static_cast<int64_t>(ws.info.producers.size() + 1) * ws.info.stages + 1);
    const int64_t smem = shared_bytes + mbarriers + kSmemReservedPerBlock;
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

std::string DescribeWarpSpecialization(const WarpSpecialization& ws) {
  std::vector<std::string> tma, cp_async, before;
  for (const ir::StmtNode* s : ws.info.producers) {
    const std::string& name = s->as<ir::CopyNode>()->dst.buffer->name;
    (ws.tma.count(s) ? tma : cp_async).push_back(name);
  }
  for (const auto& [s, plan] : ws.prologue) {
    before.push_back(s->as<ir::CopyNode>()->dst.buffer->name);
  }
  std::sort(tma.begin(), tma.end());
  std::sort(cp_async.begin(), cp_async.end());
  std::sort(before.begin(), before.end());
  return absl::StrCat(
      "warp-specialised: a producer warpgroup loads the ", ws.info.stages,
      " stages of the T.Pipelined loop over ", ws.loop->var->name,
      " (TMA: ", absl::StrJoin(tma, ", "),
      cp_async.empty() ? "" : absl::StrCat("; cp.async: ", absl::StrJoin(cp_async, ", ")), ")",
      before.empty() ? ""
                     : absl::StrCat(" and, before it, ", absl::StrJoin(before, ", "), " (TMA)"));
}

absl::Status EmitProducerBranch(EmitContext& ctx, WarpSpecialization& ws) {
  const ir::ForNode* f = ws.loop;
  const int64_t S = ws.info.stages;
  const int64_t T = ws.consumers;
  std::vector<ir::Stmt> body;
  FlattenBody(f->body, body);
  for (const ir::Stmt& s : body) {
    if (!ws.info.producers.count(s.get())) continue;
    const auto* c = s->as<ir::CopyNode>();
    const bool tma = ws.tma.count(c) > 0;
    const std::string array = ctx.Mbarriers(S);
    WarpSpecialization::Full full{c, ctx.Fresh(absl::StrCat(c->dst.buffer->name, "_full")), !tma};
    ctx.w().Line(absl::StrCat(
        "uint64_t* const ", full.name, " = ", array, ";  // ", c->dst.buffer->name, " loaded: ",
        tma ? "1 arrival + bytes (TMA)"
            : absl::StrCat(kWarpgroup, " arrivals, each after its part of the copy")));
    ws.full.push_back(std::move(full));
  }
  bool any_cp_async = false;
  for (const WarpSpecialization::Full& full : ws.full) any_cp_async |= full.cp_async;
  if (!ws.prologue.empty()) {
    const std::string bar = ctx.Mbarriers(1);
    ws.prologue_full = ctx.Fresh("prologue_full");
    ctx.w().Line(absl::StrCat("uint64_t* const ", ws.prologue_full, " = ", bar,
                              ";  // the copies before the loop loaded (TMA)"));
  }
  const std::string empty = ctx.Mbarriers(S);
  ws.empty = ctx.Fresh("empty");
  ctx.w().Line(absl::StrCat("uint64_t* const ", ws.empty, " = ", empty, ";  // read: ", T,
                            " arrivals"));
  ctx.w().Line(absl::StrCat("// Warp-specialised: threads ", T, "..", T + kWarpgroup - 1,
                            " load the stages of the T.Pipelined loop over ", f->var->name,
                            any_cp_async ? " (TMA and cp.async)" : " with TMA", "; threads 0..",
                            T - 1, " compute"));
  ctx.w().Open("if (tx == 0)");
  ctx.w().Open(absl::StrCat("for (int s = 0; s < ", S, "; ++s)"));
  for (const WarpSpecialization::Full& full : ws.full) {
    ctx.w().Line(absl::StrCat("tl::mbarrier_init(&", full.name, "[s], ",
                              full.cp_async ? kWarpgroup : 1, ");"));
  }
  ctx.w().Line(absl::StrCat("tl::mbarrier_init(&", ws.empty, "[s], ", T, ");"));
  ctx.w().Close();
  if (!ws.prologue.empty())
    ctx.w().Line(absl::StrCat("tl::mbarrier_init(", ws.prologue_full, ", 1);"));
  ctx.w().Line("tl::fence_barrier_init();");
  ctx.w().Close();
  ctx.w().Line("tl::syncthreads();");
  ctx.w().Open(absl::StrCat("if (tx >= ", T, ")"));
  if (ws.producer_regs > 0) {
    ctx.w().Line(absl::StrCat("tl::setmaxnreg_dec<", ws.producer_regs, ">();"));
  }
  // The kernel's lets the consumers declare later, inlined.
  std::map<const ir::VarNode*, ir::Expr> map;
  for (const auto& [var, value] : ws.top_lets) map[var] = Substitute(value, map);
  absl::Status st;
  if (!ws.prologue.empty()) {
    // The copies before the loop, at once: the consumers wait for them where
    // the copies stood.
    ctx.w().Open(absl::StrCat("if (tx == ", T, ")"));
    std::vector<ir::Stmt> top;
    FlattenBody(ctx.kernel_body(), top);
    for (const auto& [c, plan] : ws.prologue) {
      const ir::BufferNode* b = c->as<ir::CopyNode>()->dst.buffer.get();
      ctx.stage_index()[b] = ctx.Info(b)->name;
    }
    st = EmitTmaLoads(ctx, top, ws.prologue, map, ws.prologue_full, /*guard=*/"");
    for (const auto& [c, plan] : ws.prologue) {
      ctx.stage_index().erase(c->as<ir::CopyNode>()->dst.buffer.get());
    }
    ctx.w().Close();
    if (!st.ok()) return st;
  }
  // One thread issues the TMA loads; with cp.async copies the whole
  // warpgroup runs the loop.
  if (!any_cp_async) ctx.w().Open(absl::StrCat("if (tx == ", T, ")"));
  // The producer's own loop variable (the consumers declare f->var).
  ir::Var kp = ir::MakeVar(absl::StrCat(f->var->name, "_load"));
  ctx.KeepAlive(kp);
  const std::string k = ctx.DeclareVar(kp);
  const ir::Expr min_expr = Substitute(f->min, map);
  const std::string min = ctx.Operand(min_expr, 4);
  const bool zero_min = ConstValue(min_expr) == 0;
  const ir::Expr extent_expr = Substitute(f->extent, map);
  // An operand of `min + n` and `k < n`: a shift (K // 64) keeps its
  // parentheses.
  const std::string n = ctx.Operand(extent_expr, 4);
  if (ctx.NonNegative(min_expr)) ctx.MarkNonNegative(kp);
  ctx.SetLoopRange(kp, min_expr, extent_expr);
  const std::string rel = zero_min ? k : absl::StrCat("(", k, " - ", min, ")");
  ctx.w().Open(absl::StrCat("for (int ", k, " = ", min, "; ", k, " < ",
                            zero_min ? n : absl::StrCat(min, " + ", n), "; ++", k, ")"));
  const std::string stage = absl::StrCat("(", rel, " % ", S, ")");
  ctx.w().Line(absl::StrCat("if (", rel, " >= ", S, ") tl::mbarrier_wait_parity(&", ws.empty, "[",
                            stage, "], (", rel, " / ", S, " + 1) & 1);  // its last readers"));
  map[f->var.get()] = kp;
  for (const auto& [var, value] : ws.info.lets) map[var] = Substitute(value, map);
  DeclareStagePointers(ctx, ws.info.staged, stage, "_fill");
  if (any_cp_async) ctx.w().Open(absl::StrCat("if (tx == ", T, ")"));
  for (const WarpSpecialization::Full& full : ws.full) {
    if (!st.ok() || full.cp_async) continue;
    std::map<const ir::StmtNode*, inference::TmaCopyPlan> one = {{full.copy, ws.tma.at(full.copy)}};
    st = EmitTmaLoads(ctx, body, one, map, absl::StrCat("&", full.name, "[", stage, "]"),
                      /*guard=*/"");
  }
  if (any_cp_async) ctx.w().Close();
  // cp.async copies, partitioned over the consumers' T threads as planned:
  // each producer thread takes the parts of threads tx, tx + 128, ...; it
  // waits for its own copies, makes them visible to the async proxy
  // (wgmma may read them) and arrives.
  for (const WarpSpecialization::Full& full : ws.full) {
    if (!st.ok() || !full.cp_async) continue;
    ctx.w().Line(absl::StrCat("#pragma unroll"));
    ctx.w().Open(absl::StrCat("for (int part = 0; part < ", T / kWarpgroup, "; ++part)"));
    const std::string part_tx = ctx.Fresh("tx_part");
    ctx.w().Line(absl::StrCat("const int ", part_tx, " = tx - ", T, " + part * ", kWarpgroup,
                              ";  // the consumer thread whose part this is"));
    ctx.set_thread_index(part_tx);
    ir::Region src = full.copy->src;
    for (ir::Expr& e : src.mins) e = Substitute(e, map);
    for (ir::Expr& e : src.extents) e = Substitute(e, map);
    ir::Region dst = full.copy->dst;
    for (ir::Expr& e : dst.mins) e = Substitute(e, map);
    ir::CopyNode shifted(src, dst, full.copy->disable_tma);
    ctx.staged_copy() = true;
    st = LowerCopyAs(ctx, shifted, full.copy);
    ctx.staged_copy() = false;
    ctx.set_thread_index("tx");
    ctx.w().Close();
    ctx.w().Line("tl::cp_async_commit();");
    ctx.w().Line("tl::cp_async_wait<0>();");
    ctx.w().Line("tl::fence_proxy_async();");
    ctx.w().Line(absl::StrCat("tl::mbarrier_arrive(&", full.name, "[", stage, "]);"));
  }
  for (const ir::BufferNode* b : ws.info.staged) ctx.stage_index().erase(b);
  if (!st.ok()) return st;
  ctx.w().Close();                     // for
  if (!any_cp_async) ctx.w().Close();  // if (tx == T)
  ctx.w().Close();                     // if (tx >= T)
  ctx.w().Open("else");
  if (ws.consumer_regs > 0) {
    ctx.w().Line(absl::StrCat("tl::setmaxnreg_inc<", ws.consumer_regs, ">();"));
  }
  return ctx.status();
}

bool WaitForPrologueCopy(EmitContext& ctx, const ir::StmtNode* s) {
  const WarpSpecialization* ws = ctx.ws();
  if (!ws || !ws->prologue.count(s)) return false;
  ctx.w().Line(absl::StrCat("tl::mbarrier_wait_parity(", ws->prologue_full, ", 0);  // ",
                            s->as<ir::CopyNode>()->dst.buffer->name,
                            " loaded by the producer (TMA)"));
  return true;
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
  ctx.SetLoopRange(f->var, f->min, f->extent);
  const std::string rel = zero_min ? k : absl::StrCat("(", k, " - ", min, ")");
  // The stage (rel % S) and its phase ((rel / S) & 1): with S a power of two
  // a mask and a shift; otherwise counters advanced by the loop, not a
  // division every iteration.
  std::string stage = absl::StrCat("(", rel, " % ", S, ")");
  std::string phase = absl::StrCat("((", rel, " / ", S, ") & 1)");
  std::string previous = absl::StrCat("((", rel, " - 1) % ", S, ")");
  std::string advance;
  if ((S & (S - 1)) != 0) {
    stage = ctx.Fresh("stage");
    phase = ctx.Fresh("phase");
    previous = absl::StrCat("(", stage, " == 0 ? ", S - 1, " : ", stage, " - 1)");
    ctx.w().Line(absl::StrCat("int ", stage, " = 0, ", phase, " = 0;  // ", rel, " % ", S, " and (",
                              rel, " / ", S, ") & 1"));
    advance = absl::StrCat(", ", stage, " = ", stage, " + 1 == ", S, " ? 0 : ", stage, " + 1, ",
                           phase, " ^= ", stage, " == 0");
  }
  ctx.w().Open(absl::StrCat("for (int ", k, " = ", min, "; ", k, " < ",
                            zero_min ? n : absl::StrCat(min, " + ", n), "; ++", k, advance, ")"));
  if (!gemms_only) {
    ctx.WriteBarrier();
    ctx.written().clear();
    ctx.read().clear();
  }
  DeclareStagePointers(ctx, ws.info.staged, stage, "_stage");
  // Each copy's barrier, waited for before the first statement that
  // touches its buffer (or one sharing its bytes). Barriers first needed
  // by one run of consecutive gemms are waited for together before it:
  // splitting them gains no overlap and costs registers.
  std::vector<int> first_use(ws.full.size(), -1);
  std::vector<const ir::Stmt*> order;
  for (const ir::Stmt& s : body) {
    if (ws.info.producers.count(s.get())) continue;
    const EmitContext::Access2 a = ctx.SharedAccesses(s);
    for (size_t i = 0; i < ws.full.size(); ++i) {
      if (first_use[i] >= 0) continue;
      for (const void* key : ctx.SharingBytes({ws.full[i].copy->dst.buffer.get()})) {
        if (a.reads.count(key) || a.writes.count(key)) first_use[i] = order.size();
      }
    }
    order.push_back(&s);
  }
  // run[n]: the first statement of the run of gemms (lets between them
  // included) that statement n belongs to, or n itself.
  std::vector<size_t> run(order.size());
  for (size_t n = 0; n < order.size(); ++n) {
    const ir::StmtKind kind = (*order[n])->kind;
    const bool in_run = kind == ir::StmtKind::kGemm || kind == ir::StmtKind::kLet;
    run[n] = n > 0 && in_run &&
                     ((*order[n - 1])->kind == ir::StmtKind::kGemm ||
                      (*order[n - 1])->kind == ir::StmtKind::kLet)
                 ? run[n - 1]
                 : n;
  }
  std::vector<bool> waited(ws.full.size(), false);
  auto wait = [&](size_t i) {
    waited[i] = true;
    ctx.w().Line(absl::StrCat("tl::mbarrier_wait_parity(&", ws.full[i].name, "[", stage, "], ",
                              phase, ");  // ", ws.full[i].copy->dst.buffer->name, " landed"));
  };
  for (size_t n = 0; n < order.size(); ++n) {
    for (size_t i = 0; i < ws.full.size(); ++i) {
      if (!waited[i] && first_use[i] >= 0 && run[first_use[i]] == run[n]) wait(i);
    }
    if (absl::Status st = ctx.EmitStmt(*order[n]); !st.ok()) return st;
  }
  // A stage is released only once all of its loads have landed.
  for (size_t i = 0; i < ws.full.size(); ++i) {
    if (!waited[i]) wait(i);
  }
  for (const ir::BufferNode* b : ws.info.staged) ctx.stage_index().erase(b);
  if (async_gemms.empty()) {
    ctx.w().Line(
        absl::StrCat("tl::mbarrier_arrive(&", ws.empty, "[", stage, "]);  // this stage is free"));
  } else {
    // The wait above retired the previous iteration's group.
    ctx.w().Line(absl::StrCat("if (", rel, " > 0) tl::mbarrier_arrive(&", ws.empty, "[", previous,
                              "]);  // the previous stage is free"));
  }
  ctx.w().Close();
  FinishAsyncWgmma(ctx, async_gemms);
  ctx.AfterShared(staged);
  return ctx.status();
}

}  // namespace tilec::cuda
