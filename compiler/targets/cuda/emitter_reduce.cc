// T.reduce_{sum,max,min,abssum,absmax} and T.cumsum.
//
// Reduction of a fragment into a fragment (the projected layout):
//  1. each thread folds the source slots it holds into one partial per
//     destination slot (a constant slot table maps source to destination);
//  2. the threads of a warp that hold other parts of the same rows combine
//     their partials with xor shuffles (tl::warp_allreduce when they are
//     consecutive lanes);
//  3. when the rows also span warps, partials go through the scratch area:
//     one lane of each group the shuffles made equal writes its partials
//     (at [k][its thread index without the lane and warp bits][its warp
//     bits], so a row's partials are adjacent), a barrier, and each thread
//     reads them in vectors of up to 16 bytes and combines its partner
//     warps' values in ascending thread order, so every replica of an
//     element ends with the same bits;
//  4. the result is stored (combined with the old value when clear=False).
// The emitter checks, by enumerating every thread, that this covers each
// source element of a row exactly once; a layout it cannot reduce this way is
// UNIMPLEMENTED. Reductions from shared memory or per-thread buffers compute
// each output element serially in the thread(s) that own it.
//
// Sums of 16- and 8-bit floats keep their partials in float32 and round to
// the destination's dtype once, at the store.
//
// T.cumsum scans each line along `dim` serially in one thread, in shared
// memory: a fragment side is staged through the scratch area.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

using ir::DType;
using ir::ReduceKind;

// Thread index t with the bits of `drop` taken out (the bits above each
// dropped one move down), and the same as C++ text over the expression `t`.
int64_t CompactIndex(int64_t t, int64_t drop) {
  int64_t out = 0;
  for (int b = 0, k = 0; (t >> b) != 0; ++b) {
    if (drop >> b & 1) continue;
    out |= (t >> b & 1) << k++;
  }
  return out;
}
std::string CompactIndexText(const std::string& t, int64_t drop) {
  if (drop == 0) return t;
  // Runs of kept bits: [lo, hi) each shifted down by the dropped bits below.
  std::vector<std::string> terms;
  int dropped = 0;
  for (int b = 0; b < 32;) {
    if (drop >> b & 1) {
      ++dropped;
      ++b;
      continue;
    }
    int e = b;
    while (e < 32 && !(drop >> e & 1)) ++e;
    const bool top = (drop >> e) == 0;  // no dropped bit above: the rest of t
    std::string shifted = b == 0 ? t : absl::StrCat("(", t, " >> ", b, ")");
    std::string part =
        top ? shifted : absl::StrCat("(", shifted, " & ", (int64_t{1} << (e - b)) - 1, ")");
    terms.push_back(b == dropped ? part : absl::StrCat("(", part, " << ", b - dropped, ")"));
    if (top) break;
    b = e;
  }
  return absl::StrCat("(", absl::StrJoin(terms, " | "), ")");
}

std::pair<int64_t, int64_t> IntRange(DType t) {
  switch (t) {
    case DType::kBool: return {0, 1};
    case DType::kInt8: return {-128, 127};
    case DType::kUInt8: return {0, 255};
    case DType::kInt16: return {-32768, 32767};
    case DType::kUInt16: return {0, 65535};
    case DType::kUInt32: return {0, std::numeric_limits<uint32_t>::max()};
    case DType::kUInt64: return {0, -1};  // max: the bits of 2^64 - 1, see Identity
    case DType::kInt64:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    default: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  }
}

std::string Identity(ReduceKind k, DType t) {
  switch (k) {
    case ReduceKind::kMax:
      if (ir::IsFloat(t)) return EmitContext::Literal(-INFINITY, t);
      return EmitContext::IntLiteral(IntRange(t).first, t);
    case ReduceKind::kMin:
      if (ir::IsFloat(t)) return EmitContext::Literal(INFINITY, t);
      if (t == DType::kUInt64) return "~uint64_t(0)";
      return EmitContext::IntLiteral(IntRange(t).second, t);
    default: return EmitContext::Literal(0, t);
  }
}

// |x| of dtype t.
std::string Abs(const std::string& x, DType t) {
  if (IsNarrowFloat(t)) return absl::StrCat(CType(t), "(tl::fabs(float(", x, ")))");
  if (ir::IsFloat(t)) return absl::StrCat("tl::fabs(", x, ")");
  return absl::StrCat("tl::iabs(", x, ")");
}

// combine(acc, x) in dtype t.
std::string Combine(ReduceKind k, DType t, const std::string& acc, const std::string& x) {
  const bool narrow = IsNarrowFloat(t);
  auto f = [&](const std::string& v) { return narrow ? absl::StrCat("float(", v, ")") : v; };
  std::string r;
  switch (k) {
    case ReduceKind::kSum:
    case ReduceKind::kAbsSum: r = absl::StrCat(f(acc), " + ", f(x)); break;
    case ReduceKind::kMax:
    case ReduceKind::kAbsMax:
      r = ir::IsFloat(t) ? absl::StrCat("tl::fmax(", f(acc), ", ", f(x), ")")
                         : absl::StrCat("tl::imax(", acc, ", ", x, ")");
      break;
    case ReduceKind::kMin:
      r = ir::IsFloat(t) ? absl::StrCat("tl::fmin(", f(acc), ", ", f(x), ")")
                         : absl::StrCat("tl::imin(", acc, ", ", x, ")");
      break;
  }
  if (narrow || IsNarrowInt(t)) return absl::StrCat(CType(t), "(", r, ")");
  return r;
}

bool IsAbs(ReduceKind k) { return k == ReduceKind::kAbsSum || k == ReduceKind::kAbsMax; }

// The dtype partials are kept in: float32 for sums of 16- and 8-bit floats
// (rounded to the destination's dtype once, as the interpreter does), the
// destination's otherwise.
DType AccumDType(ReduceKind k, DType dt) {
  const bool sum = k == ReduceKind::kSum || k == ReduceKind::kAbsSum;
  return sum && IsNarrowFloat(dt) ? DType::kFloat32 : dt;
}

// `x` (of dtype `from`) as dtype `to` when they differ (narrow float to float).
std::string Widen(const std::string& x, DType from, DType to) {
  return from == to ? x : absl::StrCat("float(", x, ")");
}

std::vector<int64_t> Project(const std::vector<int64_t>& idx, int dim) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (static_cast<int>(d) != dim) out.push_back(idx[d]);
  }
  if (out.empty()) out.push_back(0);
  return out;
}

// The value moved by a shuffle: float, int, the 64-bit types (two halves,
// tl/shfl_wide.h), or through float or int.
std::string Shuffle(DType t, const std::string& v, int mask) {
  if (t == DType::kFloat32 || t == DType::kInt32 || t == DType::kFloat64 || t == DType::kInt64 ||
      t == DType::kUInt64) {
    return absl::StrCat("tl::shfl_xor(", v, ", ", mask, ")");
  }
  if (IsNarrowFloat(t)) {
    return absl::StrCat(CType(t), "(tl::shfl_xor(float(", v, "), ", mask, "))");
  }
  return absl::StrCat(CType(t), "(tl::shfl_xor(int(", v, "), ", mask, "))");
}

absl::Status FragmentReduce(EmitContext& ctx, const ir::ReduceNode* r) {
  const inference::FragmentLayout* f = ctx.FragmentOf(r->src.get());
  const inference::FragmentLayout* g = ctx.FragmentOf(r->dst.get());
  if (!f || !g) return ctx.Internal("T.reduce operand without a fragment layout");
  const DType dt = r->dst->dtype;
  const ReduceKind kind = r->reduce_kind;
  const DType at = AccumDType(kind, dt);
  const std::string what = absl::StrCat("T.reduce_", Sv(ir::ReduceKindName(kind)), "(",
                                        r->src->name, " -> ", r->dst->name, ", dim=", r->dim, ")");
  const int64_t threads = f->threads;
  // 1. The destination slot of every source slot (thread-independent).
  std::vector<int64_t> table(f->local_size, -1);
  for (int64_t t = 0; t < threads; ++t) {
    for (int64_t s = 0; s < f->local_size; ++s) {
      if (f->valid && !f->ValidAt(t, s)) continue;
      std::vector<int64_t> out = Project(f->LogicalAt(t, s), r->dim);
      const int64_t k = g->LocalOf(out);
      if (g->ThreadOf(out, g->ReplicaOf(t)) != t || (table[s] != -1 && table[s] != k)) {
        return ctx.Internal(absl::StrCat(what, ": the destination layout ", g->ToString(),
                                         " is not the projection of the source layout ",
                                         f->ToString()));
      }
      table[s] = k;
    }
  }
  // 2/3. Partner threads: flipping a thread bit keeps every destination
  // element but changes the source elements held.
  auto same_dst = [&](int64_t t, int64_t u) {
    for (int64_t k = 0; k < g->local_size; ++k) {
      if (g->LogicalAt(t, k) != g->LogicalAt(u, k)) return false;
    }
    return true;
  };
  auto same_src = [&](int64_t t, int64_t u) {
    for (int64_t s = 0; s < f->local_size; ++s) {
      if (f->LogicalAt(t, s) != f->LogicalAt(u, s)) return false;
    }
    return true;
  };
  std::vector<int> bits;
  for (int b = 0; (int64_t{1} << b) < threads; ++b) {
    bool all = true, none = true;
    for (int64_t t = 0; t < threads; ++t) {
      int64_t u = t ^ (int64_t{1} << b);
      if (u >= threads) {
        all = false;
        continue;
      }
      bool partner = same_dst(t, u) && !same_src(t, u);
      all = all && partner;
      none = none && !partner;
    }
    if (all) bits.push_back(b);
    if (!all && !none) {
      return ctx.Unimplemented(absl::StrCat(what, " over the layout ", f->ToString()));
    }
  }
  // Check: the group t ^ span(bits) covers each row's source elements once.
  const int64_t group = int64_t{1} << bits.size();
  auto member = [&](int64_t t, int64_t m) {
    int64_t u = t;
    for (size_t i = 0; i < bits.size(); ++i) {
      if (m >> i & 1) u ^= int64_t{1} << bits[i];
    }
    return u;
  };
  int64_t row_len = f->shape[r->dim];
  for (int64_t t = 0; t < threads; ++t) {
    for (int64_t k = 0; k < g->local_size; ++k) {
      if (g->valid && !g->ValidAt(t, k)) continue;
      std::vector<int64_t> out = g->LogicalAt(t, k);
      std::set<std::vector<int64_t>> seen;
      int64_t count = 0;
      for (int64_t m = 0; m < group; ++m) {
        int64_t u = member(t, m);
        for (int64_t s = 0; s < f->local_size; ++s) {
          if ((f->valid && !f->ValidAt(u, s)) || table[s] != k) continue;
          std::vector<int64_t> idx = f->LogicalAt(u, s);
          if (Project(idx, r->dim) != out) continue;
          seen.insert(idx);
          ++count;
        }
      }
      bool in_shape = true;
      for (size_t d = 0; d < out.size() && d < g->shape.size(); ++d) {
        if (out[d] >= g->shape[d]) in_shape = false;
      }
      if (in_shape && (count != row_len || static_cast<int64_t>(seen.size()) != row_len)) {
        return ctx.Unimplemented(absl::StrCat(what, ": the layout ", f->ToString(),
                                              " spreads a row in a way the warp reduction "
                                              "cannot combine"));
      }
    }
  }
  // Emit.
  const std::string ct = CType(dt), act = CType(at);
  const std::string red = ctx.Fresh(absl::StrCat(r->dst->name, "_red"));
  // Loop and temporary names of this reduction.
  const std::string kk = ctx.Fresh("k"), vv = ctx.Fresh("v");
  const int64_t ls = g->local_size;
  BufferInfo* si = ctx.Info(r->src.get());
  BufferInfo* di = ctx.Info(r->dst.get());
  if (!si || !di) return ctx.Internal("T.reduce operand not declared");
  ctx.w().Line(absl::StrCat("// ", what, ": ", f->kind, " -> ", g->kind));
  ctx.w().Line(absl::StrCat(act, " ", red, "[", ls, "];"));
  ctx.w().Line("#pragma unroll");
  ctx.w().Line(absl::StrCat("for (int ", kk, " = 0; ", kk, " < ", ls, "; ++", kk, ") ", red, "[",
                            kk, "] = ", Identity(kind, at), ";"));
  {
    bool identity = true;
    for (int64_t s = 0; s < f->local_size; ++s) identity = identity && table[s] == s;
    std::string slot = ctx.Fresh("s");
    std::string map;
    if (!identity) {
      map = ctx.Fresh(absl::StrCat(r->src->name, "_to_", r->dst->name));
      std::vector<std::string> entries;
      for (int64_t v : table) entries.push_back(absl::StrCat(std::max<int64_t>(v, 0)));
      ctx.w().Line(absl::StrCat("constexpr int ", map, "[", table.size(), "] = {",
                                absl::StrJoin(entries, ", "), "};"));
    }
    std::string k = identity ? slot : absl::StrCat(map, "[", slot, "]");
    ctx.w().Line(UnrollPragma(f->local_size));
    ctx.w().Open(
        absl::StrCat("for (int ", slot, " = 0; ", slot, " < ", f->local_size, "; ++", slot, ")"));
    std::string x =
        ctx.Convert({absl::StrCat(si->name, "[", slot, "]"), 0}, r->src->dtype, dt).text;
    if (IsAbs(kind)) x = Abs(x, dt);
    std::string line =
        absl::StrCat(red, "[", k, "] = ",
                     Combine(kind, at, absl::StrCat(red, "[", k, "]"), Widen(x, dt, at)), ";");
    if (f->valid) {
      line = absl::StrCat("if (", ctx.LayoutExprText(*f, f->valid, slot), ") ", line);
    }
    ctx.w().Line(line);
    ctx.w().Close();
  }
  std::vector<int> lane_bits, warp_bits;
  // Thread-index bits below log2(warp size) are lanes of one warp.
  const int lane_width = ctx.target().info.warp_size == 64 ? 6 : 5;
  for (int b : bits) (b < lane_width ? lane_bits : warp_bits).push_back(b);
  if (!lane_bits.empty()) {
    bool consecutive = true;
    for (size_t i = 0; i < lane_bits.size(); ++i)
      consecutive &= lane_bits[i] == static_cast<int>(i);
    const bool builtin =
        consecutive && (at == DType::kFloat32 || at == DType::kInt32) && !IsAbs(kind);
    ctx.w().Line("#pragma unroll");
    ctx.w().Open(absl::StrCat("for (int ", kk, " = 0; ", kk, " < ", ls, "; ++", kk, ")"));
    if (builtin) {
      const char* op = kind == ReduceKind::kSum   ? "tl::SumOp"
                       : kind == ReduceKind::kMax ? "tl::MaxOp"
                                                  : "tl::MinOp";
      ctx.w().Line(absl::StrCat(red, "[", kk, "] = tl::warp_allreduce<", op, ", ",
                                1 << lane_bits.size(), ">(", red, "[", kk, "]);"));
    } else {
      for (int b : lane_bits) {
        ctx.w().Line(absl::StrCat(red, "[", kk, "] = ",
                                  Combine(kind == ReduceKind::kAbsSum   ? ReduceKind::kSum
                                          : kind == ReduceKind::kAbsMax ? ReduceKind::kMax
                                                                        : kind,
                                          at, absl::StrCat(red, "[", kk, "]"),
                                          Shuffle(at, absl::StrCat(red, "[", kk, "]"), 1 << b)),
                                  ";"));
      }
    }
    ctx.w().Close();
  }
  if (!warp_bits.empty()) {
    const ReduceKind merge = kind == ReduceKind::kAbsSum   ? ReduceKind::kSum
                             : kind == ReduceKind::kAbsMax ? ReduceKind::kMax
                                                           : kind;
    int64_t mask = 0;
    for (int b : warp_bits) mask |= int64_t{1} << b;
    // After the shuffles, the lanes that differ only in lane bits hold the
    // same partials: the one with those bits clear writes them. Partials
    // are laid out [k][the thread's other bits][its warp bits], so the W
    // partials of a row are adjacent and each thread reads them in vectors
    // of up to 16 bytes, in ascending partner order.
    int64_t lane_mask = 0;
    for (int b : lane_bits) lane_mask |= int64_t{1} << b;
    const int64_t W = int64_t{1} << warp_bits.size();   // warps sharing a row
    const int64_t keep_warp_bits = ~mask & 0xffffffff;  // drop all but the warp bits
    int64_t groups = 0;
    for (int64_t t = 0; t < threads; ++t) {
      groups = std::max(groups, CompactIndex(t, lane_mask | mask) + 1);
    }
    const int64_t slots = groups * W;
    const EmitContext::ScratchArea area = ctx.Scratch(ls * slots * ElemBytes(at), act);
    EmitContext::Access2 w, rd;
    w.writes.insert(area.key);
    rd.reads.insert(area.key);
    ctx.BeforeShared(w);
    std::string buf = ctx.Fresh(absl::StrCat(red, "_smem"));
    ctx.w().Line(absl::StrCat(act, "* ", buf, " = ", area.pointer, ";  // [", ls, "][", groups,
                              "][", W, "]"));
    const std::string group = CompactIndexText(ctx.thread_index(), lane_mask | mask);
    std::string store = absl::StrCat("for (int ", kk, " = 0; ", kk, " < ", ls, "; ++", kk, ") ",
                                     buf, "[", kk, " * ", slots, " + ", group, " * ", W, " + ",
                                     CompactIndexText(ctx.thread_index(), keep_warp_bits),
                                     "] = ", red, "[", kk, "];");
    if (lane_mask != 0) {
      ctx.w().Open(absl::StrCat("if ((tx & ", lane_mask, ") == 0)"));
      ctx.w().Line("#pragma unroll");
      ctx.w().Line(store);
      ctx.w().Close();
    } else {
      ctx.w().Line("#pragma unroll");
      ctx.w().Line(store);
    }
    ctx.AfterShared(w);
    ctx.BeforeShared(rd);
    // Vectors of V partials: the scratch area is 16-byte aligned and each
    // row of W starts at a multiple of W elements.
    int64_t V = 1;
    while (V * 2 <= W && W % (V * 2) == 0 && V * 2 * ElemBytes(at) <= 16) V *= 2;
    const std::string vtype = absl::StrCat("tl::Vec<", act, ", ", V, ">");
    const std::string row = ctx.Fresh(absl::StrCat(red, "_row"));
    auto chunk = [&](const std::string& q) {
      return absl::StrCat("tl::load_vec<", act, ", ", V, ">(&", row, "[", q, " * ", V, "])");
    };
    const std::string w0 = ctx.Fresh("w"), wq = ctx.Fresh("w"), qq = ctx.Fresh("q"),
                      ee = ctx.Fresh("e");
    ctx.w().Line("#pragma unroll");
    ctx.w().Open(absl::StrCat("for (int ", kk, " = 0; ", kk, " < ", ls, "; ++", kk, ")"));
    ctx.w().Line(absl::StrCat("const ", act, "* ", row, " = ", buf, " + ", kk, " * ", slots, " + ",
                              group, " * ", W, ";"));
    ctx.w().Line(absl::StrCat("const ", vtype, " ", w0, " = ", chunk("0"), ";"));
    ctx.w().Line(absl::StrCat(act, " ", vv, " = ", w0, ".v[0];"));
    if (V > 1) {
      ctx.w().Line("#pragma unroll");
      ctx.w().Line(absl::StrCat("for (int ", ee, " = 1; ", ee, " < ", V, "; ++", ee, ") ", vv,
                                " = ", Combine(merge, at, vv, absl::StrCat(w0, ".v[", ee, "]")),
                                ";"));
    }
    if (W > V) {
      ctx.w().Line("#pragma unroll");
      ctx.w().Open(absl::StrCat("for (int ", qq, " = 1; ", qq, " < ", W / V, "; ++", qq, ")"));
      ctx.w().Line(absl::StrCat("const ", vtype, " ", wq, " = ", chunk(qq), ";"));
      ctx.w().Line("#pragma unroll");
      ctx.w().Line(absl::StrCat("for (int ", ee, " = 0; ", ee, " < ", V, "; ++", ee, ") ", vv,
                                " = ", Combine(merge, at, vv, absl::StrCat(wq, ".v[", ee, "]")),
                                ";"));
      ctx.w().Close();
    }
    ctx.w().Line(absl::StrCat(red, "[", kk, "] = ", vv, ";"));
    ctx.w().Close();
    ctx.AfterShared(rd);
  }
  // 4. Store.
  const ReduceKind merge = kind == ReduceKind::kAbsSum   ? ReduceKind::kSum
                           : kind == ReduceKind::kAbsMax ? ReduceKind::kMax
                                                         : kind;
  std::string old = absl::StrCat(di->name, "[", kk, "]");
  if (kind == ReduceKind::kAbsMax) old = Abs(old, dt);
  ctx.w().Line("#pragma unroll");
  const std::string part = absl::StrCat(red, "[", kk, "]");
  ctx.w().Line(absl::StrCat(
      "for (int ", kk, " = 0; ", kk, " < ", ls, "; ++", kk, ") ", di->name, "[", kk, "] = ",
      r->clear ? (at == dt ? part : absl::StrCat(ct, "(", part, ")"))
               : Combine(merge, dt, old, part),
      ";"));
  return ctx.status();
}

// Each output element computed serially by the thread(s) that own it; the
// source must be readable by them (shared memory, or held whole by every
// thread).
absl::Status SerialReduce(EmitContext& ctx, const ir::ReduceNode* r) {
  const ir::Buffer& src = r->src;
  const ir::Buffer& dst = r->dst;
  const DType dt = dst->dtype;
  const ReduceKind kind = r->reduce_kind;
  const DType at = AccumDType(kind, dt);
  std::vector<int64_t> sshape;
  for (const ir::Expr& e : src->shape) {
    auto v = ConstValue(e);
    if (!v) return ctx.Unimplemented("T.reduce of a symbolic shape");
    sshape.push_back(*v);
  }
  const int64_t len = sshape[r->dim];
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < dst->shape.size(); ++d) vars.push_back(ir::MakeVar(absl::StrCat("o", d)));
  // The body for one output index `vars`.
  auto body = [&]() {
    std::string acc = ctx.Fresh("acc");
    std::string old = ctx.Access(dst, std::vector<ir::Expr>(vars.begin(), vars.end()));
    const ReduceKind merge = kind == ReduceKind::kAbsSum   ? ReduceKind::kSum
                             : kind == ReduceKind::kAbsMax ? ReduceKind::kMax
                                                           : kind;
    const bool accumulate = merge == ReduceKind::kSum;
    std::string init = Identity(kind, at);
    if (!r->clear && !accumulate) init = kind == ReduceKind::kAbsMax ? Abs(old, dt) : old;
    ctx.w().Line(absl::StrCat(CType(at), " ", acc, " = ", init, ";"));
    ir::Var j = ir::MakeVar("j");
    std::string jn = ctx.DeclareVar(j);
    ctx.MarkNonNegative(j);
    ctx.w().Open(absl::StrCat("for (int ", jn, " = 0; ", jn, " < ", len, "; ++", jn, ")"));
    std::vector<ir::Expr> sidx;
    size_t o = 0;
    for (size_t d = 0; d < sshape.size(); ++d) {
      if (static_cast<int>(d) == r->dim) {
        sidx.push_back(j);
      } else {
        sidx.push_back(vars[o++]);
      }
    }
    std::string x = ctx.Convert(ctx.Emit(ir::Load(src, sidx)), src->dtype, dt).text;
    if (IsAbs(kind)) x = Abs(x, dt);
    ctx.w().Line(absl::StrCat(acc, " = ", Combine(kind, at, acc, Widen(x, dt, at)), ";"));
    ctx.w().Close();
    if (!r->clear && accumulate) {
      ctx.w().Line(absl::StrCat(old, " = ", Combine(merge, dt, old, acc), ";"));
    } else {
      ctx.w().Line(
          absl::StrCat(old, " = ", at == dt ? acc : absl::StrCat(CType(dt), "(", acc, ")"), ";"));
    }
  };
  if (dst->scope == ir::Scope::kFragment && ctx.FragmentOf(dst.get()) &&
      ctx.FragmentOf(dst.get())->replicate != ctx.threads()) {
    SlotLoop loop;
    for (const ir::Var& v : vars) loop.vars.push_back(v.get());
    ctx.SlotLoopOver(*ctx.FragmentOf(dst.get()), loop, [&](const std::vector<std::string>& l) {
      for (size_t d = 0; d < vars.size(); ++d) {
        ctx.MarkNonNegative(vars[d]);
        std::string n = ctx.DeclareVar(vars[d]);
        ctx.w().Line(absl::StrCat("const int ", n, " = ", l[d], ";"));
      }
      body();
    });
    return ctx.status();
  }
  // Every thread computes every element (per-thread or fully replicated
  // destinations), or threads share out the elements of a shared one.
  int64_t total = 1;
  for (const ir::Expr& e : dst->shape) total *= ConstValue(e).value_or(1);
  std::string f = ctx.Fresh("f");
  if (dst->scope == ir::Scope::kShared) {
    ctx.w().Open(absl::StrCat("for (int ", f, " = tx; ", f, " < ", total, "; ", f,
                              " += ", ctx.threads(), ")"));
  } else {
    ctx.w().Open(absl::StrCat("for (int ", f, " = 0; ", f, " < ", total, "; ++", f, ")"));
  }
  int64_t stride = total;
  for (size_t d = 0; d < vars.size(); ++d) {
    int64_t n = ConstValue(dst->shape[d]).value_or(1);
    stride /= n;
    ctx.MarkNonNegative(vars[d]);
    ctx.SetRange(vars[d], 0, n - 1);
    if (n == 1) {
      ctx.BindVarText(vars[d], "0");
      continue;
    }
    std::string name = ctx.DeclareVar(vars[d]);
    std::string value =
        stride == 1 ? absl::StrCat(f, " % ", n) : absl::StrCat(f, " / ", stride, " % ", n);
    if (stride * n == total) value = stride == 1 ? f : absl::StrCat(f, " / ", stride);
    ctx.w().Line(absl::StrCat("const int ", name, " = ", value, ";"));
  }
  body();
  ctx.w().Close();
  return ctx.status();
}

}  // namespace

absl::Status LowerReduce(EmitContext& ctx, const ir::Stmt& s) {
  const auto* r = s->as<ir::ReduceNode>();
  const ir::Scope ss = r->src->scope, ds = r->dst->scope;
  auto everywhere = [&](const ir::Buffer& b) {
    const inference::FragmentLayout* l = ctx.FragmentOf(b.get());
    return l && l->replicate == l->threads;
  };
  if (ss == ir::Scope::kFragment && ds == ir::Scope::kFragment && !everywhere(r->src)) {
    return FragmentReduce(ctx, r);
  }
  const bool readable = ss == ir::Scope::kShared || ss == ir::Scope::kLocal ||
                        ss == ir::Scope::kVar || (ss == ir::Scope::kFragment && everywhere(r->src));
  const bool per_thread_dst = ds == ir::Scope::kLocal || ds == ir::Scope::kVar;
  if (readable && (ds == ir::Scope::kShared || ds == ir::Scope::kFragment || per_thread_dst)) {
    return SerialReduce(ctx, r);
  }
  return ctx.Unimplemented(absl::StrCat("T.reduce from a ", Sv(ir::ScopeName(ss)), " buffer (",
                                        r->src->name, ") into a ", Sv(ir::ScopeName(ds)),
                                        " buffer (", r->dst->name, ")"));
}

absl::Status LowerCumsum(EmitContext& ctx, const ir::Stmt& s) {
  const auto* c = s->as<ir::CumsumNode>();
  const ir::Buffer& src = c->src;
  const ir::Buffer& dst = c->dst;
  std::vector<int64_t> shape;
  for (const ir::Expr& e : src->shape) {
    auto v = ConstValue(e);
    if (!v) return ctx.Unimplemented("T.cumsum of a symbolic shape");
    shape.push_back(*v);
  }
  int64_t total = 1;
  for (int64_t x : shape) total *= x;
  const int64_t len = shape[c->dim];
  const int64_t lines = total / len;
  const DType dt = dst->dtype;
  const bool per_thread = src->scope == ir::Scope::kLocal || src->scope == ir::Scope::kVar;
  if (per_thread != (dst->scope == ir::Scope::kLocal || dst->scope == ir::Scope::kVar)) {
    return ctx.Unimplemented("T.cumsum between a per-thread buffer and a shared one");
  }
  // Stage fragments through the scratch area: [total] elements of dst's type.
  std::string stage;
  EmitContext::Access2 sw, sr;
  const bool stage_src = src->scope == ir::Scope::kFragment;
  const bool stage_dst = dst->scope == ir::Scope::kFragment;
  if (stage_src || stage_dst) {
    const EmitContext::ScratchArea area = ctx.Scratch(total * ElemBytes(dt), CType(dt));
    sw.writes.insert(area.key);
    sr.reads.insert(area.key);
    sr.writes.insert(area.key);
    stage = ctx.Fresh(absl::StrCat(dst->name, "_scan"));
    ctx.BeforeShared(sw);
    ctx.w().Line(absl::StrCat(CType(dt), "* ", stage, " = ", area.pointer, ";"));
  }
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) vars.push_back(ir::MakeVar(absl::StrCat("i", d)));
  auto flat_text = [&]() {
    ir::Expr f = vars[0];
    for (size_t d = 1; d < vars.size(); ++d) f = AddI(MulI(f, ir::IntImm(shape[d])), vars[d]);
    return ctx.Expr(f);
  };
  auto fragment_pass = [&](const ir::Buffer& frag, bool to_stage) {
    SlotLoop loop;
    for (const ir::Var& v : vars) loop.vars.push_back(v.get());
    ctx.SlotLoopOver(*ctx.FragmentOf(frag.get()), loop, [&](const std::vector<std::string>& l) {
      for (size_t d = 0; d < vars.size(); ++d) {
        ctx.MarkNonNegative(vars[d]);
        std::string n = ctx.DeclareVar(vars[d]);
        ctx.w().Line(absl::StrCat("const int ", n, " = ", l[d], ";"));
      }
      std::string elem = ctx.Access(frag, std::vector<ir::Expr>(vars.begin(), vars.end()));
      if (to_stage) {
        std::string v = ctx.Convert({elem, 0}, frag->dtype, dt).text;
        ctx.w().Line(absl::StrCat(stage, "[", flat_text(), "] = ", v, ";"));
      } else {
        ctx.w().Line(absl::StrCat(elem, " = ", stage, "[", flat_text(), "];"));
      }
    });
  };
  if (stage_src) {
    if (!ctx.FragmentOf(src.get())) return ctx.Internal("cumsum source without a layout");
    fragment_pass(src, true);
    ctx.AfterShared(sw);
    ctx.BeforeShared(sr);
  }
  // The scan: one line per thread, strided over the threads (per-thread
  // buffers: every line in every thread).
  std::string line = ctx.Fresh("line");
  if (per_thread) {
    ctx.w().Open(absl::StrCat("for (int ", line, " = 0; ", line, " < ", lines, "; ++", line, ")"));
  } else {
    ctx.w().Open(absl::StrCat("for (int ", line, " = tx; ", line, " < ", lines, "; ", line,
                              " += ", ctx.threads(), ")"));
  }
  // line -> the other dims (row-major without dim).
  int64_t stride = lines;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int>(d) == c->dim) continue;
    stride /= shape[d];
    ctx.MarkNonNegative(vars[d]);
    std::string n = ctx.DeclareVar(vars[d]);
    ctx.w().Line(absl::StrCat("const int ", n, " = ", line, " / ", stride, " % ", shape[d], ";"));
  }
  std::string acc = ctx.Fresh("acc");
  ctx.w().Line(absl::StrCat(CType(dt), " ", acc, " = ", EmitContext::Literal(0, dt), ";"));
  std::string step = ctx.Fresh("step");
  ctx.w().Open(absl::StrCat("for (int ", step, " = 0; ", step, " < ", len, "; ++", step, ")"));
  {
    ctx.MarkNonNegative(vars[c->dim]);
    std::string n = ctx.DeclareVar(vars[c->dim]);
    ctx.w().Line(absl::StrCat("const int ", n, " = ",
                              c->reverse ? absl::StrCat(len - 1, " - ", step) : step, ";"));
    std::vector<ir::Expr> idx(vars.begin(), vars.end());
    std::string in = stage_src ? absl::StrCat(stage, "[", flat_text(), "]")
                               : ctx.Convert(ctx.Emit(ir::Load(src, idx)), src->dtype, dt).text;
    std::string out = stage_dst ? absl::StrCat(stage, "[", flat_text(), "]") : ctx.Access(dst, idx);
    ctx.w().Line(absl::StrCat(acc, " = ", Combine(ReduceKind::kSum, dt, acc, in), ";"));
    ctx.w().Line(absl::StrCat(out, " = ", acc, ";"));
  }
  ctx.w().Close();
  ctx.w().Close();
  if (stage_dst) {
    if (!ctx.FragmentOf(dst.get())) return ctx.Internal("cumsum destination without a layout");
    // The scan wrote the stage: publish it before reading it back.
    ctx.AfterShared(sw);
    ctx.BeforeShared(sr);
    fragment_pass(dst, false);
  }
  if (stage_src || stage_dst) ctx.AfterShared(sr);
  return ctx.status();
}

}  // namespace tilec::cuda
