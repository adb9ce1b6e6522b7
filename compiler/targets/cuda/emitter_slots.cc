// Per-thread slot loops and fragment slot resolution.
//
// Every loop over elements that the block's threads share out (a T.Parallel
// nest, the element loop of a tile operator) walks the slots of its
// partition layout in this thread:
//
//   #pragma unroll
//   for (int s = 0; s < <local_size>; ++s) {
//     const int i = <logical index of slot s of thread tx>;
//     ...
//   }
//
// A fragment accessed inside such a loop is read at the slot that holds the
// accessed element in this thread. The emitter decides that slot at compile
// time by evaluating the access for every (thread, slot) pair: when the
// fragment has the loop's own layout the slot is `s`; when it differs (a
// projected row vector read inside a 2-D nest) the slot is a constant table
// indexed by `s`, which folds away once the loop is unrolled, so fragments
// stay in registers. An access whose element the thread does not hold is a
// layout-plan bug and is reported as such.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/index_expr.h"
#include "compiler/ir/printer.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

constexpr int64_t kDontCare = -1;

// Values of the loop's variables (and the lets evaluated so far) for one
// (thread, slot) pair.
bool BindSlot(const SlotLoop& loop, int64_t thread, int64_t slot,
              std::map<const ir::VarNode*, int64_t>& values) {
  values.clear();
  std::vector<int64_t> idx = loop.layout->LogicalAt(thread, slot);
  if (idx.size() != loop.vars.size()) return false;
  for (size_t d = 0; d < idx.size(); ++d) values[loop.vars[d]] = idx[d] + loop.Min(d);
  for (const auto& [var, value] : loop.lets) {
    if (auto v = inference::EvalInt(value, values)) values[var] = *v;
  }
  return true;
}

}  // namespace

std::string EmitContext::LayoutExprText(const inference::FragmentLayout& layout, const ir::Expr& e,
                                        const std::string& slot) {
  std::map<const ir::VarNode*, ir::Expr> map;
  ir::Var tx = ir::MakeVar("tx");
  ir::Var s = ir::MakeVar(slot);
  BindVarText(tx, thread_index_);
  BindVarText(s, slot);
  MarkNonNegative(tx);
  MarkNonNegative(s);
  map[layout.thread_var.get()] = tx;
  map[layout.local_var.get()] = s;
  // Callers put the text beside + and && (`i0 + min`, `valid && guard`):
  // a shift, a mask, an || or a ?: keeps its parentheses.
  const CExpr c = Emit(Substitute(e, map));
  const bool loose = c.prec == 5 || (c.prec >= 8 && c.prec <= 10) || c.prec >= 12;
  std::string text = loose ? absl::StrCat("(", c.text, ")") : c.text;
  var_names_.erase(tx.get());
  var_names_.erase(s.get());
  nonneg_vars().erase(tx.get());
  nonneg_vars().erase(s.get());
  return text;
}

std::vector<std::string> EmitContext::LogicalText(const inference::FragmentLayout& layout,
                                                  const std::string& slot) {
  std::vector<std::string> out;
  for (const ir::Expr& e : layout.logical) out.push_back(LayoutExprText(layout, e, slot));
  return out;
}

std::string EmitContext::ReplicaGuard(const inference::FragmentLayout& layout) {
  if (layout.replicate <= 1) return "";
  return LayoutExprText(layout, ir::Binary(ir::BinaryOp::kEq, layout.replica, ir::IntImm(0)), "0");
}

void EmitContext::SlotLoopOver(const inference::FragmentLayout& layout, SlotLoop& loop,
                               const std::function<void(const std::vector<std::string>&)>& body) {
  loop.layout = &layout;
  if (loop.slot.empty()) loop.slot = Fresh("s");
  if (loop.mins.size() < loop.vars.size()) loop.mins.resize(loop.vars.size(), 0);
  if (loop.replica_guard.empty()) loop.replica_guard = ReplicaGuard(layout);
  CodeWriter inner;
  CodeWriter* outer = SetWriter(&inner);
  slot_loops_.push_back(&loop);
  std::vector<std::string> logical = LogicalText(layout, loop.slot);
  if (layout.valid) {
    w().Open(absl::StrCat("if (", LayoutExprText(layout, layout.valid, loop.slot), ")"));
    body(logical);
    w().Close();
  } else {
    body(logical);
  }
  slot_loops_.pop_back();
  SetWriter(outer);
  inner.DropUnusedConstLets();
  for (const std::string& d : loop.decls) w().Line(d);
  w().Line(UnrollPragma(layout.local_size));
  w().Open(absl::StrCat("for (int ", loop.slot, " = 0; ", loop.slot, " < ", layout.local_size,
                        "; ++", loop.slot, ")"));
  w().Splice(inner);
  w().Close();
}

std::string EmitContext::FragmentSlot(const ir::Buffer& frag,
                                      const std::vector<ir::Expr>& indices) {
  const inference::FragmentLayout* g = FragmentOf(frag.get());
  if (!g) {
    Fail(Internal(absl::StrCat("fragment ", frag->name, " has no layout in the plan")));
    return "0";
  }
  auto dynamic = [&]() -> std::string {
    std::map<const ir::VarNode*, ir::Expr> map;
    for (size_t d = 0; d < g->index_vars.size() && d < indices.size(); ++d) {
      map[g->index_vars[d].get()] = indices[d];
    }
    return Expr(Substitute(g->local, map));
  };
  const bool everywhere = g->replicate == g->threads;
  SlotLoop* loop = slot_loop();
  if (!loop) {
    if (everywhere) return dynamic();
    Fail(Internal(absl::StrCat("fragment ", frag->name, " (", g->ToString(),
                               ") is accessed outside a partitioned loop but is not held by "
                               "every thread")));
    return "0";
  }
  // The loop's own layout, indexed by the loop variables in order.
  if (inference::SameLayout(*g, *loop->layout) && indices.size() == loop->vars.size()) {
    bool direct = true;
    for (size_t d = 0; d < indices.size(); ++d) {
      const auto* v = indices[d]->as<ir::VarNode>();
      if (v != loop->vars[d] || loop->Min(d) != 0) direct = false;
    }
    if (direct) return loop->slot;
  }
  // Evaluate the access for every (thread, slot) of the loop.
  const inference::FragmentLayout& l = *loop->layout;
  std::vector<int64_t> table(l.local_size, kDontCare);
  bool evaluable = true, thread_invariant = true;
  std::map<const ir::VarNode*, int64_t> values;
  std::vector<int64_t> idx(indices.size());
  for (int64_t t = 0; t < l.threads && evaluable; ++t) {
    for (int64_t s = 0; s < l.local_size && evaluable; ++s) {
      if (l.valid && !l.ValidAt(t, s)) continue;
      if (!BindSlot(*loop, t, s, values)) {
        evaluable = false;
        break;
      }
      bool inside = true;
      for (size_t d = 0; d < indices.size(); ++d) {
        auto v = inference::EvalInt(indices[d], values);
        if (!v) {
          evaluable = false;
          break;
        }
        idx[d] = *v;
        if (*v < 0 || *v >= g->shape[d]) inside = false;
      }
      if (!evaluable || !inside) continue;  // a guarded access past the edge
      const int64_t k = g->LocalOf(idx);
      if (!everywhere && g->ThreadOf(idx, g->ReplicaOf(t)) != t) {
        std::vector<std::string> parts;
        for (int64_t x : idx) parts.push_back(absl::StrCat(x));
        Fail(Internal(absl::StrCat("the layout plan makes thread ", t, " read ", frag->name, "[",
                                   absl::StrJoin(parts, ", "), "] in a loop partitioned as ",
                                   l.ToString(), ", but ", frag->name, " is laid out as ",
                                   g->ToString(), ", where another thread holds it")));
        return "0";
      }
      if (table[s] == kDontCare) {
        table[s] = k;
      } else if (table[s] != k) {
        thread_invariant = false;
      }
    }
  }
  if (!evaluable || !thread_invariant) {
    if (everywhere || evaluable) return dynamic();
    Fail(Internal(absl::StrCat("cannot tell which slot of fragment ", frag->name,
                               " an access with indices depending on values unknown at compile "
                               "time reads (",
                               g->ToString(), ")")));
    return "0";
  }
  bool identity = true;
  for (int64_t s = 0; s < l.local_size; ++s) {
    if (table[s] != kDontCare && table[s] != s) identity = false;
    if (table[s] == kDontCare) table[s] = 0;
  }
  if (identity) return loop->slot;
  if (std::all_of(table.begin(), table.end(), [&](int64_t k) { return k == table[0]; })) {
    return absl::StrCat(table[0]);  // the same slot everywhere (a loop-invariant element)
  }
  auto it = loop->tables.find(table);
  if (it != loop->tables.end()) return absl::StrCat(it->second, "[", loop->slot, "]");
  std::string name = Fresh(absl::StrCat(frag->name, "_slot"));
  std::vector<std::string> entries;
  for (int64_t v : table) entries.push_back(absl::StrCat(v));
  loop->decls.push_back(absl::StrCat("constexpr int ", name, "[", table.size(), "] = {",
                                     absl::StrJoin(entries, ", "), "};"));
  loop->tables[table] = name;
  return absl::StrCat(name, "[", loop->slot, "]");
}

}  // namespace tilec::cuda
