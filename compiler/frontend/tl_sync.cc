// The explicit synchronisation and hints kernels spell out by hand, for the
// Hopper producer/consumer style (docs/language.md, "Explicit
// synchronisation"):
//
// - T.alloc_barrier(arrive_count) makes barrier values; T.barrier_arrive,
//   T.barrier_wait, T.mbarrier_arrive, T.mbarrier_wait_parity,
//   T.mbarrier_expect_tx (and _arrive_expect_tx), T.sync_threads and
//   T.sync_warp order the block's statements. In tilec every statement
//   finishes for the whole block before the next starts (the CUDA code
//   places the barriers that takes), so these add nothing and lower to no
//   statement.
// - `with T.ws(*groups):` (a warp-specialised region) runs its body as
//   ordinary block code, in program order: the producer's copies before the
//   consumer's gemm of the same iteration, which is the order its barriers
//   enforce. Inside it the thread index is refused: there it would count
//   the region's warp groups only.
// - The register-budget, launch and cache hints (T.set_max_nreg,
//   T.inc_max_nreg, T.dec_max_nreg, T.no_set_max_nreg,
//   T.annotate_producer_reg_dealloc, T.annotate_consumer_reg_alloc,
//   T.pdl_trigger, T.pdl_sync, T.annotate_l2_hit_ratio,
//   T.annotate_restrict_buffers, T.annotate_min_blocks_per_sm) change no
//   value and are accepted; so is T.func_attr (function attributes such as
//   global_symbol and tir.noalias), also outside the kernel.
// - T.print prints nothing (there is no device printf on the emulator or in
//   the interpreter); its arguments are evaluated as written. So does
//   T.device_assert (a check, not a value), and T.assume(cond) (a fact the
//   compiler may use: tilec keeps its bounds checks, which change nothing
//   where the fact holds).
// - The older barrier API (T.create_list_of_mbarrier, T.get_mbarrier) makes
//   barrier values as T.alloc_barrier does; T.cp_async_barrier_noinc and
//   the wgmma / TMA-store fences and waits (T.warpgroup_arrive,
//   T.warpgroup_commit_batch, T.warpgroup_wait, T.wait_wgmma,
//   T.warpgroup_fence_operand, T.fence_proxy_async, T.tma_store_arrive,
//   T.tma_store_wait, T.sync_thread_partial, and the cp.async groups
//   T.ptx_commit_group / T.ptx_wait_group) order what already runs in
//   order, and lower to nothing.
// - T.loop_break() is `break` of the innermost kernel loop.
// - T.sync_grid / T.sync_global (a grid-wide barrier) at the top level of
//   T.Kernel cut the kernel there into kernels that run in order
//   (grid_sync.h); elsewhere they are refused.
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

constexpr std::string_view kBarrierTag = "<barrier>";
constexpr std::string_view kWarpGroupsTag = "<ws>";

Value Tag(std::string_view tag) { return Value::Tuple({Value::Str(std::string(tag))}); }

bool IsTagged(const Value& v, std::string_view tag) {
  return v.kind == ValueKind::kTuple && !v.Items().empty() &&
         v.Items()[0].kind == ValueKind::kStr && v.Items()[0].s == tag;
}

bool IsBarrier(const Value& v) {
  if (IsTagged(v, kBarrierTag)) return true;
  return v.kind == ValueKind::kList && !v.Items().empty() && IsTagged(v.Items()[0], kBarrierTag);
}

// T.alloc_barrier(arrive_count): one barrier, or a list of them for a list
// of counts (indexed bar[i], also by a runtime index: barriers lower to no
// statement, so any of them stands for the one chosen).
absl::StatusOr<Value> AllocBarrier(Builder& b, CallArgs& args) {
  absl::StatusOr<std::vector<std::optional<Arg>>> a =
      BindArgs(b, args, "T.alloc_barrier", {"arrive_count"}, 1);
  if (!a.ok()) return a.status();
  if (!b.InKernel()) return b.Err(args.loc, "T.alloc_barrier outside a T.Kernel");
  const Value& count = (*a)[0]->value;
  if (!count.IsSequence()) {
    absl::StatusOr<int64_t> n = b.StaticInt(count, (*a)[0]->loc, "the arrive count");
    if (!n.ok()) return n.status();
    return Tag(kBarrierTag);
  }
  ValueList list;
  for (const Value& c : count.Items()) {
    absl::StatusOr<int64_t> n = b.StaticInt(c, (*a)[0]->loc, "an arrive count");
    if (!n.ok()) return n.status();
    list.push_back(Tag(kBarrierTag));
  }
  return Value::List(std::move(list));
}

// A barrier operation: the first argument (or `mbarrier=` / `barrier_id=`)
// must be a barrier, or an integer index into the kernel's barriers as the
// older API writes it (`T.mbarrier_wait_parity(mbarrier=ko % 2, parity=p)`
// after T.create_list_of_mbarrier); the others (parity, byte counts, CTA
// ids) are evaluated and unused.
absl::StatusOr<Value> BarrierOp(Builder& b, std::string_view name, CallArgs& args) {
  if (!b.InKernel()) return b.Err(args.loc, Cat(name, " outside a T.Kernel"));
  const Value* first = args.positional.empty() ? nullptr : &args.positional[0].value;
  for (const auto& [key, arg] : args.keywords) {
    if (!first && (key == "mbarrier" || key == "barrier_id" || key == "barrier")) {
      first = &arg.value;
    }
  }
  const bool index = first && (first->IsIntLike() || (IsRuntimeScalar(*first) &&
                                                      first->kind == ValueKind::kExpr &&
                                                      ir::IsInt(first->expr->dtype)));
  if (!first || !(IsBarrier(*first) || index)) {
    return b.Err(args.loc, Cat(name, " takes a barrier from T.alloc_barrier first, got ",
                               first ? DescribeValue(*first) : std::string("no argument")));
  }
  return Value::None();
}

}  // namespace

bool IsWarpGroupScope(const Value& ctx) { return IsTagged(ctx, kWarpGroupsTag); }
bool IsOneBarrier(const Value& v) { return IsTagged(v, kBarrierTag); }

std::optional<absl::StatusOr<Value>> CallTlSync(Builder& b, std::string_view name, CallArgs& args) {
  if (name == "T.alloc_barrier") return AllocBarrier(b, args);
  if (name == "T.create_list_of_mbarrier" || name == "T.get_mbarrier") {
    if (!b.InKernel()) return b.Err(args.loc, Cat(name, " outside a T.Kernel"));
    if (name == "T.get_mbarrier") return Tag(kBarrierTag);
    std::vector<Arg> counts = args.positional;
    if (counts.size() == 1 && counts[0].value.IsSequence()) {
      Arg seq = counts[0];
      counts.clear();
      for (const Value& v : seq.value.Items()) counts.push_back(Arg{v, seq.loc});
    }
    ValueList list;
    for (const Arg& c : counts) {
      absl::StatusOr<int64_t> n = b.StaticInt(c.value, c.loc, "an arrive count");
      if (!n.ok()) return n.status();
      list.push_back(Tag(kBarrierTag));
    }
    return Value::List(std::move(list));
  }
  if (name == "T.cp_async_barrier_noinc") return BarrierOp(b, name, args);
  if (name == "T.sync_grid" || name == "T.sync_global") {
    if (!args.positional.empty() || !args.keywords.empty()) {
      return b.Err(args.loc, Cat(name, "() takes no arguments"));
    }
    absl::Status st = b.GridSync(args.loc);
    if (!st.ok()) return st;
    return Value::None();
  }
  if (name == "T.loop_break") {
    if (!args.positional.empty() || !args.keywords.empty()) {
      return b.Err(args.loc, "T.loop_break() takes no arguments");
    }
    absl::StatusOr<Flow> flow = b.ExecLoopControl(/*is_break=*/true, /*call=*/true, args.loc);
    if (!flow.ok()) return flow.status();
    return Value::None();
  }
  if (name == "T.barrier_arrive" || name == "T.barrier_wait" || name == "T.mbarrier_arrive" ||
      name == "T.mbarrier_wait_parity" || name == "T.mbarrier_expect_tx" ||
      name == "T.mbarrier_arrive_expect_tx") {
    return BarrierOp(b, name, args);
  }
  if (name == "T.ws") {
    if (!b.InKernel()) return b.Err(args.loc, "T.ws outside a T.Kernel");
    if (args.positional.empty()) return b.Err(args.loc, "T.ws needs the warp groups it runs on");
    for (const Arg& g : args.positional) {
      absl::StatusOr<int64_t> n = b.StaticInt(g.value, g.loc, "a warp group");
      if (!n.ok()) return n.status();
    }
    return Tag(kWarpGroupsTag);
  }
  static constexpr std::string_view kNoOps[] = {"T.sync_threads",
                                                "T.sync_warp",
                                                "T.set_max_nreg",
                                                "T.inc_max_nreg",
                                                "T.dec_max_nreg",
                                                "T.no_set_max_nreg",
                                                "T.pdl_trigger",
                                                "T.pdl_sync",
                                                "T.annotate_l2_hit_ratio",
                                                "T.annotate_restrict_buffers",
                                                "T.annotate_min_blocks_per_sm",
                                                "T.annotate_producer_reg_dealloc",
                                                "T.annotate_consumer_reg_alloc",
                                                "T.print",
                                                "T.device_assert",
                                                "T.assume",
                                                "T.warpgroup_arrive",
                                                "T.warpgroup_commit_batch",
                                                "T.warpgroup_wait",
                                                "T.wait_wgmma",
                                                "T.warpgroup_fence_operand",
                                                "T.fence_proxy_async",
                                                "T.tma_store_arrive",
                                                "T.tma_store_wait",
                                                "T.sync_thread_partial",
                                                "T.ptx_commit_group",
                                                "T.ptx_wait_group",
                                                "T.func_attr"};
  for (std::string_view n : kNoOps) {
    if (name != n) continue;
    if (!b.InKernel() && name != "T.print" && name != "T.func_attr")
      return b.Err(args.loc, Cat(name, " outside a T.Kernel"));
    return Value::None();
  }
  return std::nullopt;
}

}  // namespace tilec::frontend
