// T.copy and T.fill.
//
// T.copy walks the slots of its loop partition (plan.loops): the followed
// fragment's layout when one side is a fragment, else a blocked layout over
// the destination region. Between global and shared memory, runs of
// `vector` consecutive elements move as one 4/8/16-byte access (cp.async in a
// T.Pipelined body) when the run lies inside the tensor and is aligned; runs
// at a tensor border, or misaligned, take the scalar path, which reads zeros
// outside the source tensor and drops writes outside the destination. A copy
// between two fragments of different layouts goes through the scratch area
// (write own slots, barrier, read own slots). A copy with a per-thread side
// (T.alloc_local / T.alloc_var) is done whole by every thread.
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/tma_plan.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

using ir::Scope;

bool PerThread(Scope s) { return s == Scope::kLocal || s == Scope::kVar; }

std::vector<ir::Expr> VarExprs(const std::vector<ir::Var>& vars) {
  return std::vector<ir::Expr>(vars.begin(), vars.end());
}

// Declares the iteration variables of a slot loop from its logical index;
// unit dims (logical "0") stay the literal.
void BindIterVars(EmitContext& ctx, const std::vector<ir::Var>& vars,
                  const std::vector<std::string>& logical, const std::vector<int64_t>& shape) {
  for (size_t d = 0; d < vars.size(); ++d) {
    ctx.MarkNonNegative(vars[d]);
    if (d < shape.size()) ctx.SetRange(vars[d], 0, shape[d] - 1);
    if (logical[d] == "0") {
      ctx.BindVarText(vars[d], "0");
      continue;
    }
    std::string name = ctx.DeclareVar(vars[d]);
    ctx.w().Line(absl::StrCat("const int ", name, " = ", logical[d], ";"));
  }
}

std::vector<ir::Var> MakeIterVars(size_t rank, absl::string_view prefix = "i") {
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < rank; ++d) vars.push_back(ir::MakeVar(absl::StrCat(prefix, d)));
  return vars;
}

// `dst[di] = src[si]` with the copy's bounds rules and conversion.
void ScalarElement(EmitContext& ctx, const ir::Region& src, const ir::Region& dst,
                   const std::vector<ir::Expr>& si, const std::vector<ir::Expr>& di,
                   const std::string& guard) {
  const ir::Buffer& sb = src.buffer;
  const ir::Buffer& db = dst.buffer;
  std::string value = ctx.Expr(ir::Load(sb, si));
  if (sb->scope == Scope::kGlobal) {
    std::string in = InBounds(ctx, sb, si);
    std::string zero = EmitContext::Literal(0, sb->dtype);
    if (in == "false") {
      value = zero;
    } else if (!in.empty()) {
      value = absl::StrCat(in, " ? ", value, " : ", zero);
    }
  }
  value = ctx.Convert({value, 13}, sb->dtype, db->dtype).text;
  std::vector<std::string> conds = {guard};
  if (db->scope == Scope::kGlobal) conds.push_back(InBounds(ctx, db, di));
  std::string cond = JoinConds(conds);
  if (cond == "false" || absl::StrContains(cond, "&& false")) return;
  std::string line = absl::StrCat(ctx.Access(db, di), " = ", value, ";");
  if (!cond.empty()) line = absl::StrCat("if (", cond, ") ", line);
  ctx.w().Line(line);
}

// Every thread copies the whole region (a per-thread side).
absl::Status SerialCopy(EmitContext& ctx, const ir::CopyNode* c) {
  const ir::Region& iter_region = PerThread(c->dst.buffer->scope) ? c->dst : c->src;
  std::vector<int64_t> shape;
  for (const ir::Expr& e : iter_region.extents) {
    auto v = ConstValue(e);
    if (!v) return ctx.Unimplemented("T.copy of a symbolic extent to or from a local buffer");
    shape.push_back(*v);
  }
  std::vector<ir::Var> vars = MakeIterVars(shape.size(), "j");
  int open = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    ctx.MarkNonNegative(vars[d]);
    if (shape[d] == 1) {
      ctx.BindVarText(vars[d], "0");
      continue;
    }
    std::string n = ctx.DeclareVar(vars[d]);
    ctx.w().Open(absl::StrCat("for (int ", n, " = 0; ", n, " < ", shape[d], "; ++", n, ")"));
    ++open;
  }
  std::vector<ir::Expr> iter = VarExprs(vars);
  std::vector<ir::Expr> si = RegionIndex(c->src, iter, shape);
  std::vector<ir::Expr> di = RegionIndex(c->dst, iter, shape);
  if (si.empty() || di.empty()) return ctx.Internal("T.copy regions do not align");
  ScalarElement(ctx, c->src, c->dst, si, di, "");
  while (open-- > 0) ctx.w().Close();
  return ctx.status();
}

// Fragment -> fragment between different layouts, through the scratch area.
absl::Status ExchangeCopy(EmitContext& ctx, const ir::CopyNode* c) {
  const ir::Buffer& sb = c->src.buffer;
  const ir::Buffer& db = c->dst.buffer;
  const inference::FragmentLayout* ls = ctx.FragmentOf(sb.get());
  const inference::FragmentLayout* ld = ctx.FragmentOf(db.get());
  if (!ls || !ld || ls->shape != ld->shape) {
    return ctx.Internal(absl::StrCat("exchange copy ", sb->name, " -> ", db->name,
                                     " without two fragment layouts of one shape"));
  }
  for (const ir::Region* r : {&c->src, &c->dst}) {
    for (size_t d = 0; d < r->mins.size(); ++d) {
      auto m = ConstValue(r->mins[d]);
      auto e = ConstValue(r->extents[d]);
      if (!m || *m != 0 || !e || *e != ls->shape[d]) {
        return ctx.Unimplemented(absl::StrCat("T.copy between parts of fragments ", sb->name,
                                              " and ", db->name, " with different layouts"));
      }
    }
  }
  int64_t n = 1;
  for (int64_t x : ls->shape) n *= x;
  const std::string ct = CType(db->dtype);
  const EmitContext::ScratchArea area = ctx.Scratch(n * ElemBytes(db->dtype), ct);
  EmitContext::Access2 w, r;
  w.writes.insert(area.key);
  r.reads.insert(area.key);
  ctx.BeforeShared(w);
  std::string buf = ctx.Fresh(absl::StrCat(db->name, "_exchange"));
  ctx.w().Line(absl::StrCat("// ", sb->name, " (", ls->kind, ") -> ", db->name, " (", ld->kind,
                            ") through shared memory"));
  ctx.w().Line(absl::StrCat(ct, "* ", buf, " = ", area.pointer, ";"));
  auto flat = [&](const std::vector<ir::Var>& vars) {
    ir::Expr f = vars[0];
    for (size_t d = 1; d < vars.size(); ++d) {
      f = AddI(MulI(f, ir::IntImm(ls->shape[d])), vars[d]);
    }
    return ctx.Expr(f);
  };
  {
    std::vector<ir::Var> vars = MakeIterVars(ls->shape.size());
    SlotLoop loop;
    for (const ir::Var& v : vars) loop.vars.push_back(v.get());
    ctx.SlotLoopOver(*ls, loop, [&](const std::vector<std::string>& logical) {
      BindIterVars(ctx, vars, logical, ls->shape);
      std::string value =
          ctx.Convert({ctx.Access(sb, VarExprs(vars)), 0}, sb->dtype, db->dtype).text;
      std::string line = absl::StrCat(buf, "[", flat(vars), "] = ", value, ";");
      if (!loop.replica_guard.empty()) line = absl::StrCat("if (", loop.replica_guard, ") ", line);
      ctx.w().Line(line);
    });
  }
  ctx.AfterShared(w);
  ctx.BeforeShared(r);
  {
    std::vector<ir::Var> vars = MakeIterVars(ld->shape.size());
    SlotLoop loop;
    for (const ir::Var& v : vars) loop.vars.push_back(v.get());
    ctx.SlotLoopOver(*ld, loop, [&](const std::vector<std::string>& logical) {
      BindIterVars(ctx, vars, logical, ld->shape);
      ctx.w().Line(absl::StrCat(ctx.Access(db, VarExprs(vars)), " = ", buf, "[", flat(vars), "];"));
    });
  }
  ctx.AfterShared(r);
  return ctx.status();
}

// Whether the run of `vector` elements along the iteration's last dim is
// contiguous in both regions' buffers.
bool VectorizableRegions(const ir::CopyNode* c, const std::vector<int64_t>& shape) {
  if (shape.empty() || shape.back() == 1) return false;
  for (const ir::Region* r : {&c->src, &c->dst}) {
    std::vector<int> dims = NonUnitDims(*r);
    if (dims.empty() || dims.back() != static_cast<int>(r->buffer->shape.size()) - 1) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool VectorFragmentCopy(EmitContext& ctx, const ir::CopyNode* c, const inference::LoopPartition& p,
                        bool atomic_add) {
  const bool load = c->dst.buffer->scope == Scope::kFragment;
  if (atomic_add && (load || c->dst.buffer->scope != Scope::kGlobal)) return false;
  const ir::Region& frag_region = load ? c->dst : c->src;
  const ir::Region& other = load ? c->src : c->dst;
  const ir::Buffer& fb = frag_region.buffer;
  const ir::Buffer& ob = other.buffer;
  const inference::FragmentLayout& layout = p.layout;
  const int64_t v = p.vector;
  const int64_t bytes = v * ElemBytes(ob->dtype);
  if (fb->scope != Scope::kFragment ||
      (ob->scope != Scope::kGlobal && ob->scope != Scope::kShared) || v <= 1 ||
      (bytes != 4 && bytes != 8 && bytes != 16) || layout.ContiguousRun() % v != 0 ||
      layout.local_size % v != 0 || !VectorizableRegions(c, layout.shape)) {
    return false;
  }
  const inference::FragmentLayout* fl = ctx.FragmentOf(fb.get());
  if (!fl || !inference::SameLayout(*fl, layout) || fl->shape.size() != fb->shape.size()) {
    return false;
  }
  for (size_t d = 0; d < fb->shape.size(); ++d) {
    auto m = ConstValue(frag_region.mins[d]);
    auto e = ConstValue(frag_region.extents[d]);
    if (!m || *m != 0 || !e || *e != fl->shape[d]) return false;
  }
  BufferInfo* fi = ctx.Info(fb.get());
  if (!fi) return false;
  const std::vector<int64_t>& shape = layout.shape;
  std::vector<ir::Var> vars = MakeIterVars(shape.size());
  std::vector<ir::Expr> iter = VarExprs(vars);
  const std::string g = ctx.Fresh("g"), s = ctx.Fresh("s");
  ctx.w().Line(UnrollPragma(layout.local_size / v));
  ctx.w().Open(
      absl::StrCat("for (int ", g, " = 0; ", g, " < ", layout.local_size / v, "; ++", g, ")"));
  ctx.w().Line(absl::StrCat("const int ", s, " = ", g, " * ", v, ";"));
  std::vector<std::string> conds;
  if (!load) conds.push_back(ctx.ReplicaGuard(layout));
  if (layout.valid) conds.push_back(ctx.LayoutExprText(layout, layout.valid, s));
  const std::string guard = JoinConds(conds);
  if (!guard.empty()) ctx.w().Open(absl::StrCat("if (", guard, ")"));
  BindIterVars(ctx, vars, ctx.LogicalText(layout, s), shape);
  ctx.SetRange(vars.back(), 0, shape.back() - v);
  std::vector<ir::Expr> oi = RegionIndex(other, iter, shape);
  if (oi.empty()) {
    ctx.Fail(ctx.Internal(absl::StrCat("T.copy ", c->src.buffer->name, " -> ", c->dst.buffer->name,
                                       ": regions do not align with the partition")));
    return true;
  }
  std::vector<std::string> fast;
  const std::string ptr = ctx.Address(ob, oi);
  if (ob->scope == Scope::kGlobal) {
    fast.push_back(InBounds(ctx, ob, oi, v - 1));
    const int64_t known =
        inference::KnownPow2Divisor(EmitContext::RowMajorIndex(ob, oi), {{vars.back().get(), v}});
    if ((known * ElemBytes(ob->dtype)) % bytes != 0) {
      fast.push_back(absl::StrCat("tl::is_aligned<", bytes, ">(", ptr, ")"));
    }
  }
  const std::string fast_cond = JoinConds(fast);
  const std::string vec = absl::StrCat("tl::Vec<", CType(ob->dtype), ", ", v, ">");
  const std::string tmp = ctx.Fresh(absl::StrCat(fb->name, "_vec"));
  const std::string e = ctx.Fresh("e");
  auto slot = [&]() { return absl::StrCat(fi->name, "[", s, " + ", e, "]"); };
  if (fast_cond != "false") {
    if (!fast_cond.empty()) ctx.w().Open(absl::StrCat("if (", fast_cond, ")"));
    if (load) {
      ctx.w().Line(absl::StrCat("const ", vec, " ", tmp, " = tl::load_vec<", CType(ob->dtype), ", ",
                                v, ">(", ptr, ");"));
    } else {
      ctx.w().Line(absl::StrCat(vec, " ", tmp, ";"));
    }
    ctx.w().Line("#pragma unroll");
    const std::string elem = absl::StrCat(tmp, ".v[", e, "]");
    ctx.w().Line(absl::StrCat(
        "for (int ", e, " = 0; ", e, " < ", v, "; ++", e, ") ",
        load ? absl::StrCat(slot(), " = ", ctx.Convert({elem, 0}, ob->dtype, fb->dtype).text)
             : absl::StrCat(elem, " = ", ctx.Convert({slot(), 0}, fb->dtype, ob->dtype).text),
        ";"));
    if (!load) {
      ctx.w().Line(absl::StrCat(atomic_add ? "tl::red_add_vec<" : "tl::store_vec<",
                                CType(ob->dtype), ", ", v, ">(", ptr, ", ", tmp, ");"));
    }
    if (!fast_cond.empty()) ctx.w().Else();
  }
  if (!fast_cond.empty()) {
    // A run at the tensor's border, or misaligned: element by element.
    ir::Var ev = ir::MakeVar(e);
    ctx.BindVarText(ev, e);
    ctx.MarkNonNegative(ev);
    ctx.SetRange(ev, 0, v - 1);
    std::vector<ir::Expr> oe = oi;
    oe.back() = AddI(oe.back(), ev);
    ctx.w().Line("#pragma unroll");
    ctx.w().Open(absl::StrCat("for (int ", e, " = 0; ", e, " < ", v, "; ++", e, ")"));
    const std::string in = ob->scope == Scope::kGlobal ? InBounds(ctx, ob, oe) : "";
    if (load) {
      std::string value = ctx.Expr(ir::Load(ob, oe));
      const std::string zero = EmitContext::Literal(0, ob->dtype);
      if (in == "false") value = zero;
      if (!in.empty() && in != "false") value = absl::StrCat(in, " ? ", value, " : ", zero);
      ctx.w().Line(
          absl::StrCat(slot(), " = ", ctx.Convert({value, 13}, ob->dtype, fb->dtype).text, ";"));
    } else if (in != "false") {
      const std::string value = ctx.Convert({slot(), 0}, fb->dtype, ob->dtype).text;
      std::string line = atomic_add
                             ? absl::StrCat("tl::red_add(", ctx.Address(ob, oe), ", ", value, ");")
                             : absl::StrCat(ctx.Access(ob, oe), " = ", value, ";");
      ctx.w().Line(in.empty() ? line : absl::StrCat("if (", in, ") ", line));
    }
    ctx.w().Close();
    if (fast_cond != "false") ctx.w().Close();
  }
  if (!guard.empty()) ctx.w().Close();
  ctx.w().Close();
  return true;
}

namespace {

absl::Status PartitionedCopy(EmitContext& ctx, const ir::CopyNode* c,
                             const inference::LoopPartition& p) {
  if (StmatrixFragmentCopy(ctx, c)) return ctx.status();
  if (VectorFragmentCopy(ctx, c, p, /*atomic_add=*/false)) return ctx.status();
  const inference::FragmentLayout& layout = p.layout;
  const std::vector<int64_t>& shape = layout.shape;
  const ir::Buffer& sb = c->src.buffer;
  const ir::Buffer& db = c->dst.buffer;
  std::vector<ir::Var> vars = MakeIterVars(shape.size());
  std::vector<ir::Expr> iter = VarExprs(vars);
  const int64_t v = p.vector;
  const int64_t bytes = v * ElemBytes(sb->dtype);
  const bool memory_sides = (sb->scope == Scope::kGlobal || sb->scope == Scope::kShared) &&
                            (db->scope == Scope::kGlobal || db->scope == Scope::kShared);
  const bool vectorize = v > 1 && memory_sides && sb->dtype == db->dtype &&
                         (bytes == 4 || bytes == 8 || bytes == 16) &&
                         layout.ContiguousRun() % v == 0 && layout.local_size % v == 0 &&
                         VectorizableRegions(c, shape);
  if (!vectorize) {
    SlotLoop loop;
    for (const ir::Var& x : vars) loop.vars.push_back(x.get());
    ctx.SlotLoopOver(layout, loop, [&](const std::vector<std::string>& logical) {
      BindIterVars(ctx, vars, logical, shape);
      std::vector<ir::Expr> si = RegionIndex(c->src, iter, shape);
      std::vector<ir::Expr> di = RegionIndex(c->dst, iter, shape);
      if (si.empty() || di.empty()) {
        ctx.Fail(ctx.Internal(absl::StrCat("T.copy ", sb->name, " -> ", db->name,
                                           ": regions do not align with the partition")));
        return;
      }
      const bool side_effect = db->scope == Scope::kGlobal || db->scope == Scope::kShared;
      ScalarElement(ctx, c->src, c->dst, si, di, side_effect ? loop.replica_guard : "");
    });
    return ctx.status();
  }
  // Vector runs: one group of v slots per iteration.
  const bool async = (ctx.in_pipeline() || ctx.staged_copy()) &&
                     ctx.target().info.supports_cp_async && sb->scope == Scope::kGlobal &&
                     db->scope == Scope::kShared;
  SlotLoop loop;
  for (const ir::Var& x : vars) loop.vars.push_back(x.get());
  loop.layout = &layout;
  loop.slot = ctx.Fresh("s");
  loop.replica_guard = ctx.ReplicaGuard(layout);
  const std::string g = ctx.Fresh("g");
  ctx.w().Line(UnrollPragma(layout.local_size / v));
  ctx.w().Open(
      absl::StrCat("for (int ", g, " = 0; ", g, " < ", layout.local_size / v, "; ++", g, ")"));
  ctx.slot_loops().push_back(&loop);
  ctx.w().Line(absl::StrCat("const int ", loop.slot, " = ", g, " * ", v, ";"));
  std::vector<std::string> conds;
  if (!loop.replica_guard.empty()) conds.push_back(loop.replica_guard);
  if (layout.valid) conds.push_back(ctx.LayoutExprText(layout, layout.valid, loop.slot));
  if (!conds.empty()) ctx.w().Open(absl::StrCat("if (", JoinConds(conds), ")"));
  BindIterVars(ctx, vars, ctx.LogicalText(layout, loop.slot), shape);
  // Runs start at multiples of the vector.
  ctx.SetRange(vars.back(), 0, shape.back() - v);
  std::vector<ir::Expr> si = RegionIndex(c->src, iter, shape);
  std::vector<ir::Expr> di = RegionIndex(c->dst, iter, shape);
  if (si.empty() || di.empty()) {
    ctx.slot_loops().pop_back();
    return ctx.Internal(absl::StrCat("T.copy ", sb->name, " -> ", db->name,
                                     ": regions do not align with the partition"));
  }
  std::string src_ptr = ctx.Address(sb, si);
  std::string dst_ptr = ctx.Address(db, di);
  std::vector<std::string> fast;
  for (const auto& [b, idx, ptr] : {std::tuple{sb, si, src_ptr}, std::tuple{db, di, dst_ptr}}) {
    if (b->scope != Scope::kGlobal) continue;
    fast.push_back(InBounds(ctx, b, idx, v - 1));
    // Tensors are 16-byte aligned (artifact.h): the run is aligned when its
    // element offset is a known multiple of the vector.
    const int64_t known =
        inference::KnownPow2Divisor(EmitContext::RowMajorIndex(b, idx), {{vars.back().get(), v}});
    if ((known * ElemBytes(b->dtype)) % bytes != 0) {
      fast.push_back(absl::StrCat("tl::is_aligned<", bytes, ">(", ptr, ")"));
    }
  }
  std::string fast_cond = JoinConds(fast);
  std::string vec_stmt =
      async ? absl::StrCat("tl::cp_async_", bytes, "(", dst_ptr, ", ", src_ptr, ", true);")
            : absl::StrCat("tl::copy_vec<", bytes, ">(", dst_ptr, ", ", src_ptr, ");");
  if (async && !ctx.staged_copy()) ctx.set_pending_async();
  if (fast_cond.empty()) {
    ctx.w().Line(vec_stmt);
  } else {
    if (fast_cond != "false") {
      ctx.w().Open(absl::StrCat("if (", fast_cond, ")"));
      ctx.w().Line(vec_stmt);
      ctx.w().Else();
    } else {
      ctx.w().Open("");
    }
    // Border or misaligned run: element by element.
    ir::Var e = ir::MakeVar("e");
    std::string en = ctx.DeclareVar(e);
    ctx.MarkNonNegative(e);
    ctx.SetRange(e, 0, v - 1);
    ctx.w().Line("#pragma unroll");
    ctx.w().Open(absl::StrCat("for (int ", en, " = 0; ", en, " < ", v, "; ++", en, ")"));
    std::vector<ir::Expr> se = si, de = di;
    se.back() = AddI(se.back(), e);
    de.back() = AddI(de.back(), e);
    ScalarElement(ctx, c->src, c->dst, se, de, "");
    ctx.w().Close();
    ctx.w().Close();
  }
  if (!conds.empty()) ctx.w().Close();
  ctx.slot_loops().pop_back();
  ctx.w().Close();
  return ctx.status();
}

// On sm_90a in a program whose barriers fence the async proxy (wgmma
// programs), a whole shared buffer copied to a box of a tensor parameter is
// one TMA store per column block, issued by thread 0, which waits for the
// writes before it reaches the next barrier (so the buffer may be reused
// after it). Returns false (nothing emitted) when the copy does not qualify.
bool TmaStoreCopy(EmitContext& ctx, const ir::CopyNode* c) {
  if (!ctx.target().info.supports_tma || !ctx.uses_wgmma() || ctx.staged_copy() ||
      ctx.in_per_thread() || !ctx.slot_loops().empty() ||
      c->src.buffer->scope != Scope::kShared || c->dst.buffer->scope != Scope::kGlobal ||
      ctx.stage_index().count(c->src.buffer.get())) {
    return false;
  }
  const BufferInfo* bi = ctx.Info(c->src.buffer.get());
  if (!bi || !bi->shared || bi->stages != 1) return false;
  absl::StatusOr<inference::TmaCopyPlan> p =
      inference::PlanTmaStore(ctx.program(), *c, *bi->shared, bi->rows, bi->smem_offset);
  if (!p.ok()) return false;
  const std::string tmap = ctx.TensorMap(*p);
  // (The comment names the map, not the tensor: a tensor only a map uses is
  // [[maybe_unused]], found by its name.)
  ctx.w().Line(absl::StrCat("// ", bi->name, " stored through ", tmap,
                            " by TMA (outside the tensor: dropped)"));
  ctx.w().Open("if (tx == 0)");
  for (const inference::TmaCopyPlan::Load& l : p->loads) {
    ctx.w().Line(absl::StrCat("tl::tma_store(", tmap, ", &", bi->name, "[", l.smem_elements, "], ",
                              TmaCoords(ctx, c->dst.mins, l), ");"));
  }
  ctx.w().Line("tl::tma_store_commit();");
  ctx.w().Line("tl::tma_store_wait<0>();");
  ctx.w().Close();
  return true;
}

}  // namespace

absl::Status LowerCopy(EmitContext& ctx, const ir::Stmt& s) {
  if (WaitForPrologueCopy(ctx, s.get())) return ctx.status();
  return LowerCopyAs(ctx, *s->as<ir::CopyNode>(), s.get());
}

absl::Status LowerCopyAs(EmitContext& ctx, const ir::CopyNode& copy, const ir::StmtNode* plan_key) {
  const ir::CopyNode* c = &copy;
  if (PerThread(c->src.buffer->scope) || PerThread(c->dst.buffer->scope)) {
    return SerialCopy(ctx, c);
  }
  auto it = ctx.plan().loops.find(plan_key);
  if (it == ctx.plan().loops.end()) {
    return ctx.Internal(absl::StrCat("T.copy ", c->src.buffer->name, " -> ", c->dst.buffer->name,
                                     " has no loop partition in the plan"));
  }
  if (it->second.exchange) return ExchangeCopy(ctx, c);
  if (TmaStoreCopy(ctx, c)) return ctx.status();
  return PartitionedCopy(ctx, c, it->second);
}

absl::Status LowerFill(EmitContext& ctx, const ir::Stmt& s) {
  const auto* f = s->as<ir::FillNode>();
  const ir::Region& r = f->dst;
  const ir::Buffer& b = r.buffer;
  std::string value = ctx.Convert(ctx.Emit(f->value), f->value->dtype, b->dtype).text;
  if (b->scope == Scope::kVar) {
    ctx.w().Line(absl::StrCat(ctx.Access(b, {ir::IntImm(0)}), " = ", value, ";"));
    return ctx.status();
  }
  std::vector<ir::Var> vars = MakeIterVars(r.extents.size());
  // Whether the iteration var of dim d is inside the region (fragments are
  // walked over the whole buffer).
  auto region_cond = [&]() {
    std::vector<std::string> conds;
    for (size_t d = 0; d < r.extents.size(); ++d) {
      auto m = ConstValue(r.mins[d]);
      auto e = ConstValue(r.extents[d]);
      auto n = ConstValue(b->shape[d]);
      if (m && e && n && *m == 0 && *e >= *n) continue;
      conds.push_back(absl::StrCat(ctx.Expr(vars[d]), " >= ", ctx.RelOperand(r.mins[d])));
      conds.push_back(
          absl::StrCat(ctx.Expr(vars[d]), " < ", ctx.RelOperand(AddI(r.mins[d], r.extents[d]))));
    }
    return JoinConds(conds);
  };
  if (b->scope == Scope::kFragment) {
    const inference::FragmentLayout* l = ctx.FragmentOf(b.get());
    if (!l) return ctx.Internal(absl::StrCat("fragment ", b->name, " has no layout"));
    SlotLoop loop;
    for (const ir::Var& v : vars) loop.vars.push_back(v.get());
    ctx.SlotLoopOver(*l, loop, [&](const std::vector<std::string>& logical) {
      BindIterVars(ctx, vars, logical, l->shape);
      std::string cond = region_cond();
      std::string line = absl::StrCat(ctx.Access(b, VarExprs(vars)), " = ", value, ";");
      if (!cond.empty()) line = absl::StrCat("if (", cond, ") ", line);
      ctx.w().Line(line);
    });
    return ctx.status();
  }
  // Shared, global and local: a flat loop over the region, strided over the
  // threads (local: the whole region in every thread).
  const bool per_thread = b->scope == Scope::kLocal;
  ir::Expr total = ir::IntImm(1);
  for (const ir::Expr& e : r.extents) total = MulI(total, e);
  std::string fv = ctx.Fresh("f");
  std::string fill = ctx.Fresh("fill");
  ctx.w().Line(absl::StrCat("const ", CType(b->dtype), " ", fill, " = ", value, ";"));
  if (per_thread) {
    ctx.w().Open(
        absl::StrCat("for (int ", fv, " = 0; ", fv, " < ", ctx.RelOperand(total), "; ++", fv, ")"));
  } else {
    ctx.w().Open(absl::StrCat("for (int ", fv, " = tx; ", fv, " < ", ctx.RelOperand(total), "; ",
                              fv, " += ", ctx.threads(), ")"));
  }
  // Unflatten f over the region's extents.
  ir::Var flat = ir::MakeVar(fv);
  ctx.BindVarText(flat, fv);
  ctx.MarkNonNegative(flat);
  std::vector<ir::Expr> idx(r.extents.size());
  ir::Expr rest = flat;
  for (size_t k = r.extents.size(); k-- > 0;) {
    ir::Expr i = k == 0 ? rest : ir::Binary(ir::BinaryOp::kMod, rest, r.extents[k]);
    if (auto e = ConstValue(r.extents[k]); e && *e == 1) i = ir::IntImm(0);
    idx[k] = AddI(r.mins[k], i);
    if (k > 0) rest = ir::Binary(ir::BinaryOp::kDiv, rest, r.extents[k]);
  }
  std::string cond = b->scope == Scope::kGlobal ? InBounds(ctx, b, idx) : "";
  std::string line = absl::StrCat(ctx.Access(b, idx), " = ", fill, ";");
  if (!cond.empty()) line = absl::StrCat("if (", cond, ") ", line);
  ctx.w().Line(line);
  ctx.w().Close();
  return ctx.status();
}

}  // namespace tilec::cuda
