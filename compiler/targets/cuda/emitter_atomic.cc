// T.atomic_max / T.atomic_min: tl::atomic_max / atomic_min per element, in
// either form, guarded as the add is (no vector form).
//
// T.atomic_add: tl::red_add per element of a global destination (its old
// value is never used: PTX red, no shared-memory path), tl::atomic_add for
// a shared one, or tl::red_add_vec per run. With return_prev=True (one
// element, in per-thread code or an unreplicated T.Parallel nest) the
// atomic's old value is stored into the result variable.
//
// A whole fragment added into a global tensor, where the fragment's layout
// gives each thread runs of consecutive elements, goes one vector reduction
// per run (red.global.add.v{2,4}.f32 on sm_90a; red.global.add.noftz.f16x2
// per pair of float16 on every target) when the run lies inside the tensor
// and is aligned, element by element at the tensor's border. Otherwise the
// tile form walks the slots of its loop partition (the source
// fragment's layout, or a blocked layout over the destination region); each
// element is added once (replica 0 of a replicated partition), elements
// outside the destination tensor are dropped and elements outside the source
// tensor read as zero. The scalar form adds once per block (thread 0) at
// block level, once per iteration inside a T.Parallel nest, and once per
// thread in per-thread code (kernels that read the thread index).
#include "absl/strings/str_cat.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

// Elements per vector atomic for a fragment run of `run` slots into `dst`
// elements on `target`; 1 when there is no vector atomic.
int64_t VectorAtomicWidth(const CudaTarget& target, ir::DType dst, int64_t run) {
  int64_t max = 1;
  if (dst == ir::DType::kFloat32 && target.arch != CudaArch::kSm80) max = 4;
  if (dst == ir::DType::kFloat16) max = 8;
  int64_t v = max;
  while (v > 1 && run % v != 0) v /= 2;
  return v;
}

// The device function combining one element into `dst`: an add into global
// memory is a reduction (its old value is never used); max and min go through
// tl::atomic_max / tl::atomic_min on either memory.
const char* AtomicFunction(const ir::Buffer& dst, ir::AtomicOp op) {
  switch (op) {
    case ir::AtomicOp::kAdd:
      return dst->scope == ir::Scope::kGlobal ? "tl::red_add" : "tl::atomic_add";
    case ir::AtomicOp::kMax: return "tl::atomic_max";
    case ir::AtomicOp::kMin: return "tl::atomic_min";
  }
  return "tl::atomic_add";
}

}  // namespace

absl::Status LowerAtomicAdd(EmitContext& ctx, const ir::Stmt& s) {
  const auto* a = s->as<ir::AtomicAddNode>();
  const ir::Buffer& db = a->dst.buffer;
  const std::string op_name = absl::StrCat("T.atomic_", Sv(ir::AtomicOpName(a->op)));
  if (!ir::IsAtomicDType(db->dtype)) {
    return ctx.Unimplemented(
        absl::StrCat(op_name, " into ", Sv(ir::DTypeName(db->dtype)), " (", db->name, ")"));
  }
  if (db->scope != ir::Scope::kGlobal && db->scope != ir::Scope::kShared) {
    return ctx.Unimplemented(absl::StrCat(op_name, " into a ", Sv(ir::ScopeName(db->scope)),
                                          " buffer (", db->name, ")"));
  }
  if (!a->src) {
    // Scalar form: one element.
    std::string value = ctx.Convert(ctx.Emit(a->value), a->value->dtype, db->dtype).text;
    SlotLoop* loop = ctx.slot_loop();
    // Once per block at block level, except in per-thread code, where every
    // thread adds its own value.
    std::string guard = loop ? loop->replica_guard : ctx.in_per_thread() ? "" : "tx == 0";
    std::string cond =
        JoinConds({guard, db->scope == ir::Scope::kGlobal ? InBounds(ctx, db, a->dst.mins) : ""});
    std::string line = absl::StrCat(AtomicFunction(db, a->op), "(", ctx.Address(db, a->dst.mins),
                                    ", ", value, ");");
    if (a->result) {
      // return_prev=True: the thread that updates reads the old value, so
      // every thread that uses it must be the one updating.
      if (!guard.empty()) {
        return ctx.Unimplemented(absl::StrCat(
            op_name, "(return_prev=True) ",
            loop ? "in a T.Parallel nest whose iterations are replicated over threads (fewer "
                   "iterations than threads)"
                 : "at block level (once per block; use it in per-thread code or a T.Parallel "
                   "nest)"));
      }
      const char* fn = a->op == ir::AtomicOp::kAdd   ? "tl::atomic_add"
                       : a->op == ir::AtomicOp::kMax ? "tl::atomic_max"
                                                     : "tl::atomic_min";
      line = absl::StrCat(ctx.Access(a->result, {ir::IntImm(0)}), " = ", fn, "(",
                          ctx.Address(db, a->dst.mins), ", ", value, ");");
    }
    if (!cond.empty()) line = absl::StrCat("if (", cond, ") ", line);
    ctx.w().Line(line);
    return ctx.status();
  }
  auto it = ctx.plan().loops.find(a);
  if (it == ctx.plan().loops.end()) {
    return ctx.Internal("tile T.atomic_add has no loop partition in the plan");
  }
  const inference::FragmentLayout& layout = it->second.layout;
  const ir::Region& src = *a->src;
  const ir::Buffer& sb = src.buffer;
  if (a->op == ir::AtomicOp::kAdd && sb->scope == ir::Scope::kFragment &&
      db->scope == ir::Scope::kGlobal) {
    inference::LoopPartition vector = it->second;
    vector.vector = VectorAtomicWidth(ctx.target(), db->dtype, layout.ContiguousRun());
    const ir::CopyNode as_copy(src, a->dst);
    if (vector.vector > 1 && VectorFragmentCopy(ctx, &as_copy, vector, /*atomic_add=*/true)) {
      return ctx.status();
    }
  }
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < layout.shape.size(); ++d)
    vars.push_back(ir::MakeVar(absl::StrCat("i", d)));
  SlotLoop loop;
  for (const ir::Var& v : vars) loop.vars.push_back(v.get());
  ctx.SlotLoopOver(layout, loop, [&](const std::vector<std::string>& logical) {
    for (size_t d = 0; d < vars.size(); ++d) {
      ctx.MarkNonNegative(vars[d]);
      ctx.SetRange(vars[d], 0, layout.shape[d] - 1);
      if (logical[d] == "0") {
        ctx.BindVarText(vars[d], "0");
        continue;
      }
      std::string n = ctx.DeclareVar(vars[d]);
      ctx.w().Line(absl::StrCat("const int ", n, " = ", logical[d], ";"));
    }
    std::vector<ir::Expr> iter(vars.begin(), vars.end());
    std::vector<ir::Expr> si = RegionIndex(src, iter, layout.shape);
    std::vector<ir::Expr> di = RegionIndex(a->dst, iter, layout.shape);
    if (si.empty() || di.empty()) {
      ctx.Fail(ctx.Internal("T.atomic_add regions do not align with the partition"));
      return;
    }
    std::vector<std::string> conds = {loop.replica_guard};
    if (db->scope == ir::Scope::kGlobal) conds.push_back(InBounds(ctx, db, di));
    if (sb->scope == ir::Scope::kGlobal) conds.push_back(InBounds(ctx, sb, si));
    for (const std::string& c : conds) {
      if (c == "false") return;  // never inside the tensors
    }
    std::string cond = JoinConds(conds);
    std::string value = ctx.Convert(ctx.Emit(ir::Load(sb, si)), sb->dtype, db->dtype).text;
    std::string line =
        absl::StrCat(AtomicFunction(db, a->op), "(", ctx.Address(db, di), ", ", value, ");");
    if (!cond.empty()) line = absl::StrCat("if (", cond, ") ", line);
    ctx.w().Line(line);
  });
  return ctx.status();
}

}  // namespace tilec::cuda
