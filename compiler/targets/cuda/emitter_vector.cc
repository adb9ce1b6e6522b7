// Vector loads and stores in T.Parallel nests.
//
// When a nest's partition gives each thread runs of `vector` consecutive
// slots holding consecutive values of the innermost loop variable j (checked
// by enumerating the layout), the nest is emitted one run at a time. Every
// global or shared access of the body that is contiguous in j (the last
// index is `base + j` and no other index uses j, lets seen through), made
// unconditionally within the run and without loads in its indices, moves as
// one tl::load_vec / tl::store_vec per run:
//
//   for (int run = 0; run < local_size / v; ++run) {
//     const int s0 = run * v;
//     const int i0 = <i of slot s0>;
//     const int j0 = <j of slot s0, the run's first column>;
//     if (<the body's guards at the run's ends> && <alignment tests>) {
//       const tl::Vec<T, v> A_vec = tl::load_vec<T, v>(&A[... j0 ...]);
//       tl::Vec<U, v> C_vec;
//       for (int e = 0; e < v; ++e) { ... C_vec.v[e] = f(A_vec.v[e]); }
//       tl::store_vec<U, v>(&C[... j0 ...], C_vec);
//     } else {
//       for (int e = 0; e < v; ++e) { <the body, element by element> }
//     }
//   }
//
// The vector path reads and writes exactly the elements the element path
// would, so it needs no bounds test of its own: a guard `if` of the body
// qualifies when its condition is a conjunction of load-free comparisons
// monotone in j, which then hold on the whole run when they hold at its two
// ends, and the vector path runs its then-branch only. Accesses under any
// other condition (a data-dependent if, a branch of T.if_then_else, the
// right side of && or ||, a serial loop) stay element accesses on both
// paths. Alignment is proven from the index where possible (tensor arguments
// are 16-byte aligned, shared buffers 128-byte), else tested at run time
// with tl::is_aligned; a swizzled shared buffer needs a proven alignment.
//
// A load whose last index is x / c with x contiguous in j (packed int4
// weights at k / 2, a group's scale at k / group_size) moves as one
// tl::load_vec of v / c elements when c divides v, of one element when v
// divides c, provided the run's first x is known to be a multiple of c,
// respectively of v (PlanSubRate); element e of the run reads its element
// e / c, respectively its only one.
//
// Order: a run's vector loads happen before its elements, its vector stores
// after them. A buffer the body stores to is vectorized only when the body
// stores it once, every access of it qualifies with the same index and no
// load of it comes after the store; otherwise all of its accesses stay
// element accesses. Distinct tensors do not alias (they are __restrict__).
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/loop_partition.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/cuda/emitter_internal.h"
#include "compiler/targets/cuda/emitter_vector_body.h"

namespace tilec::cuda {
namespace {

using ir::BinaryOp;
using ir::DType;
using vector_body::BodyAccess;
using vector_body::BodyScan;
using vector_body::HasLoad;
using vector_body::RunCheck;
using vector_body::UsesVar;

// Whether every run of v slots (s0 = 0, v, 2v, ...) of every thread holds
// consecutive values of the last logical index, the other indices fixed, and
// is valid or padding as a whole. `starts_aligned`: every run starts at a
// multiple of v.
bool RunsAreContiguous(const inference::FragmentLayout& l, int64_t v, bool* starts_aligned) {
  *starts_aligned = true;
  for (int64_t t = 0; t < l.threads; ++t) {
    for (int64_t s0 = 0; s0 < l.local_size; s0 += v) {
      const std::vector<int64_t> base = l.LogicalAt(t, s0);
      if (base.empty()) return false;
      if (base.back() % v != 0) *starts_aligned = false;
      const bool valid = !l.valid || l.ValidAt(t, s0);
      for (int64_t e = 1; e < v; ++e) {
        std::vector<int64_t> idx = l.LogicalAt(t, s0 + e);
        if (l.valid && l.ValidAt(t, s0 + e) != valid) return false;
        idx.back() -= e;
        if (idx != base) return false;
      }
    }
  }
  return true;
}

// A vector of the run: one load or store of v consecutive elements.
struct RunVector {
  ir::Buffer buffer;
  std::vector<ir::Expr> start;  // the index of the run's first element
  bool store = false;
  bool test_alignment = false;
  std::string name;   // C++ name of the tl::Vec
  std::string vtype;  // tl::Vec<T, v>
  std::string ptr;    // C++ address of the first element
  ir::Var element;    // a load's stand-in in the vector path: name.v[e >> shift]
  int64_t width = 0;  // elements moved: v, or v / c for a load at j / c
  int shift = 0;      // element e of the run reads element e >> shift
  ir::Expr guard;     // a guarded load's guard at the run's start: else zeros
};

// Replaces the vectorized loads by their vector element, and a guarded
// load's T.if_then_else by what stands for it.
class LoadRewriter : public ir::IRMutator {
 public:
  LoadRewriter(const std::map<const ir::ExprNode*, ir::Var>& loads,
               const std::map<const ir::ExprNode*, ir::Expr>& selects)
      : loads_(loads), selects_(selects) {}
  ir::Expr Mutate(const ir::Expr& e) override {
    auto it = loads_.find(e.get());
    if (it != loads_.end()) return it->second;
    auto s = selects_.find(e.get());
    if (s != selects_.end()) return s->second;
    return ir::IRMutator::Mutate(e);
  }
  using ir::IRMutator::Mutate;

 private:
  const std::map<const ir::ExprNode*, ir::Var>& loads_;
  const std::map<const ir::ExprNode*, ir::Expr>& selects_;
};

bool IsZero(const ir::Expr& e) {
  if (auto c = ir::AsConstInt(e)) return *c == 0;
  const auto* f = e->as<ir::FloatImmNode>();
  return f && f->value == 0.0 && !std::signbit(f->value);
}

std::string IndexKey(const std::vector<ir::Expr>& indices) {
  std::vector<std::string> parts;
  for (const ir::Expr& i : indices) parts.push_back(ir::PrintExpr(i));
  return absl::StrJoin(parts, ", ");
}

class NestVectorizer {
 public:
  NestVectorizer(EmitContext& ctx, const inference::LoopPartition& p,
                 const std::vector<int64_t>& mins)
      : ctx_(ctx),
        p_(p),
        layout_(p.layout),
        mins_(mins),
        v_(p.vector),
        j_(p.loop_vars.back().get()),
        scan_(
            j_, [this](const ir::Expr& c) { return ctx_.Decide(c); },
            [this](const ir::Expr& e) { return Uniform(e); }) {}

  // Chooses the vectors; false when the nest does not qualify.
  bool Plan() {
    const size_t rank = p_.loop_vars.size();
    if (v_ < 2 || rank == 0 || layout_.local_size % v_ != 0) return false;
    bool starts_aligned = false;
    if (!RunsAreContiguous(layout_, v_, &starts_aligned)) return false;
    for (size_t d = 0; d < rank; ++d) {
      base_.push_back(ir::MakeVar(absl::StrCat(p_.loop_vars[d]->name, "0")));
      ctx_.KeepAlive(base_.back());
      at_start_[p_.loop_vars[d].get()] = base_[d];
      at_end_[p_.loop_vars[d].get()] = base_[d];
      // The ranges the element loop gives the nest's variables, for the
      // conditions the scan asks Decide about.
      if (mins_[d] >= 0) ctx_.MarkNonNegative(p_.loop_vars[d]);
      ctx_.SetRange(p_.loop_vars[d], mins_[d], mins_[d] + layout_.shape[d] - 1);
    }
    at_end_[j_] = AddI(base_.back(), ir::IntImm(v_ - 1));
    j0_divisor_ = starts_aligned && mins_.back() % v_ == 0 ? v_ : 1;
    scan_.Stmt(p_.body, false);
    if (!scan_.ok()) return false;

    std::map<const ir::BufferNode*, std::vector<const BodyAccess*>> by_buffer;
    std::vector<const ir::BufferNode*> order;
    for (const BodyAccess& a : scan_.accesses()) {
      if (!by_buffer.count(a.buffer.get())) order.push_back(a.buffer.get());
      by_buffer[a.buffer.get()].push_back(&a);
    }
    for (const ir::BufferNode* b : order) PlanBuffer(by_buffer[b]);
    return !vectors_.empty();
  }

  absl::Status Emit() {
    const std::string run = ctx_.Fresh("run");
    ctx_.w().Line(UnrollPragma(layout_.local_size / v_));
    ctx_.w().Open(absl::StrCat("for (int ", run, " = 0; ", run, " < ", layout_.local_size / v_,
                               "; ++", run, ")"));
    CodeWriter group;
    CodeWriter* outer = ctx_.SetWriter(&group);
    s0_ = ctx_.Fresh("s0");
    ctx_.w().Line(absl::StrCat("const int ", s0_, " = ", run, " * ", v_, ";"));
    std::vector<std::string> logical = ctx_.LogicalText(layout_, s0_);
    const std::vector<int64_t>& shape = layout_.shape;
    for (size_t d = 0; d < base_.size(); ++d) {
      const std::string name = ctx_.DeclareVar(base_[d]);
      ctx_.MarkNonNegative(base_[d]);
      const bool last = d + 1 == base_.size();
      ctx_.SetRange(base_[d], mins_[d], mins_[d] + shape[d] - (last ? v_ : 1));
      std::string value = logical[d];
      if (mins_[d] != 0) value = absl::StrCat(value, " + ", mins_[d]);
      ctx_.w().Line(absl::StrCat("const int ", name, " = ", value, ";"));
    }
    if (layout_.valid) {
      ctx_.w().Open(absl::StrCat("if (", ctx_.LayoutExprText(layout_, layout_.valid, s0_), ")"));
    }
    // The vector path's condition: the guards at the run's ends, then the
    // alignment tests (whose addresses are inside the tensor once the
    // guards hold).
    std::vector<std::string> conds;
    for (const RunCheck& c : scan_.checks()) {
      ir::Expr at = Substitute(c.cond, c.at_end ? at_end_ : at_start_);
      if (auto k = ConstValue(at); k && *k != 0) continue;
      std::string text = ctx_.Expr(at);
      if (std::find(conds.begin(), conds.end(), text) == conds.end()) conds.push_back(text);
    }
    for (RunVector& rv : vectors_) {
      rv.ptr = ctx_.Address(rv.buffer, rv.start);
      const int64_t bytes = rv.width * ElemBytes(rv.buffer->dtype);
      if (rv.test_alignment)
        conds.push_back(absl::StrCat("tl::is_aligned<", bytes, ">(", rv.ptr, ")"));
    }
    e_ = ctx_.Fresh("e");
    const NameTable names = ctx_.names();
    // JoinConds: a guard with || or ?: keeps its grouping beside the others.
    if (!conds.empty()) ctx_.w().Open(absl::StrCat("if (", JoinConds(conds), ")"));
    absl::Status st = VectorPath();
    if (!conds.empty()) {
      ctx_.names() = names;  // the element path is a sibling scope
      ctx_.w().Else();
      absl::Status slow = RunLoop([&]() { return ctx_.EmitStmt(p_.body); });
      if (st.ok()) st = slow;
      ctx_.w().Close();
    }
    if (layout_.valid) ctx_.w().Close();
    ctx_.SetWriter(outer);
    group.DropUnusedConstLets();
    ctx_.w().Splice(group);
    ctx_.w().Close();
    for (const RunVector& rv : vectors_) {
      if (rv.element) ctx_.var_names().erase(rv.element.get());
    }
    return st;
  }

 private:
  // Decides which accesses of one buffer become vectors.
  void PlanBuffer(const std::vector<const BodyAccess*>& accesses) {
    const BodyAccess* store = nullptr;
    int stores = 0;
    for (const BodyAccess* a : accesses) {
      if (a->store) {
        store = a;
        ++stores;
      }
    }
    if (stores > 1) return;
    if (store) {
      const std::string key = IndexKey(store->indices);
      for (const BodyAccess* a : accesses) {
        if (!Qualifies(*a) || a->guard || IndexKey(a->indices) != key || a->order > store->order)
          return;
      }
    }
    std::map<std::string, size_t> loads;  // index key (and guard) -> vectors_ entry
    for (const BodyAccess* a : accesses) {
      if (!Qualifies(*a)) {
        if (!store && a->load && !a->guard) PlanSubRate(*a, &loads);
        continue;
      }
      std::string key = IndexKey(a->indices);
      if (a->guard) key = absl::StrCat(key, " if ", ir::PrintExpr(a->guard));
      if (a->load) {
        auto it = loads.find(key);
        if (it == loads.end()) {
          it = loads.emplace(key, AddVector(a->buffer, Start(*a), false, v_, 0)).first;
          if (a->guard) vectors_[it->second].guard = Substitute(a->guard, at_start_);
        }
        load_elements_[a->load] = vectors_[it->second].element;
        if (a->select) {
          // The vector is zero where the guard fails: a zero `otherwise`
          // needs no select per element.
          const ir::Var& element = vectors_[it->second].element;
          selects_[a->select] = IsZero(a->select->f)
                                    ? ir::Expr(element)
                                    : ir::Select(vectors_[it->second].guard, element, a->select->f);
        }
      } else {
        store_vectors_[a->store] = AddVector(a->buffer, Start(*a), true, v_, 0);
      }
    }
  }

  // Whether `width` elements of the access can move as one tl::Vec: made for
  // every element of the run, at most 16 bytes, indices without loads.
  static bool Movable(const BodyAccess& a, int64_t width) {
    const ir::Buffer& b = a.buffer;
    if (!a.unconditional || b->dtype == DType::kInt4 || width * ElemBytes(b->dtype) > 16 ||
        a.indices.size() != b->shape.size()) {
      return false;
    }
    for (const ir::Expr& i : a.indices) {
      if (HasLoad(i)) return false;
    }
    return true;
  }

  bool Qualifies(const BodyAccess& a) {
    const ir::Buffer& b = a.buffer;
    if (!Movable(a, v_) || !RunContiguous(a.indices)) return false;
    if (b->scope == ir::Scope::kShared) {
      BufferInfo* info = ctx_.Info(b.get());
      if (!info || !info->shared) return false;
      // A swizzled row is contiguous within 16-byte chunks only: the run
      // must start on a multiple of v.
      if (info->shared->kind == inference::SharedLayout::Kind::kSwizzled &&
          inference::KnownPow2Divisor(Start(a).back(), Divisors()) % v_ != 0) {
        return false;
      }
    }
    return true;
  }

  // Whether b is floor division (floor remainder when `mod`), or the
  // truncating one of a non-negative value, which is the same.
  bool FloorOp(const ir::BinaryNode& b, bool mod) const {
    const bool floor = mod ? b.op == BinaryOp::kFloorMod : b.op == BinaryOp::kFloorDiv;
    const bool trunc = mod ? b.op == BinaryOp::kMod : b.op == BinaryOp::kDiv;
    return floor || (trunc && ctx_.NonNegative(b.a));
  }

  // Where x + j0 is known to be a multiple of, x contiguous in j.
  int64_t StartDivisor(const ir::Expr& x) const {
    return inference::KnownPow2Divisor(Substitute(x, at_start_), Divisors());
  }

  // Whether x / c (x % c) of x = base + j keeps its value on a run
  // (moves with j on it): c a multiple of v and the run's first x one.
  bool RunAligned(const ir::BinaryNode& b, bool mod) const {
    if (!FloorOp(b, mod)) return false;
    const std::optional<int64_t> c = ir::AsConstInt(b.b);
    return c && *c > 0 && *c % v_ == 0 && inference::ContiguousIn({b.a}, j_) &&
           StartDivisor(b.a) % v_ == 0;
  }

  // Whether `e` (lets substituted) has one value on each run: j appears
  // only in x / c of RunAligned, or in a condition the ranges decide.
  bool Uniform(const ir::Expr& e) const {
    if (!UsesVar(e, j_) || ctx_.Decide(e)) return true;
    switch (e->kind) {
      case ir::ExprKind::kBinary: {
        const auto* b = e->as<ir::BinaryNode>();
        if (RunAligned(*b, /*mod=*/false) || UniformComparison(*b)) return true;
        return Uniform(b->a) && Uniform(b->b);
      }
      case ir::ExprKind::kUnary: return Uniform(e->as<ir::UnaryNode>()->a);
      case ir::ExprKind::kCast: return Uniform(e->as<ir::CastNode>()->value);
      case ir::ExprKind::kSelect: {
        const auto* s = e->as<ir::SelectNode>();
        return Uniform(s->cond) && Uniform(s->t) && Uniform(s->f);
      }
      default: return false;
    }
  }

  // x < B, x >= B, x <= B - 1 or x > B - 1 (either side) with x = base + j
  // and the run's first x multiples of v: the run's x lie between two
  // multiples of v, so B is not strictly among them.
  bool UniformComparison(const ir::BinaryNode& b) const {
    int64_t shift = 0;
    switch (b.op) {
      case BinaryOp::kLt:
      case BinaryOp::kGe: shift = 0; break;
      case BinaryOp::kLe:
      case BinaryOp::kGt: shift = 1; break;
      default: return false;
    }
    const bool left = !UsesVar(b.b, j_);
    const ir::Expr& x = left ? b.a : b.b;
    const ir::Expr& bound = left ? b.b : b.a;
    if (UsesVar(bound, j_) || !inference::ContiguousIn({x}, j_) || StartDivisor(x) % v_ != 0) {
      return false;
    }
    // x < B and B > x (B <= x and x >= B) put the cut at B; x <= B and
    // B >= x (x > B and B < x) at B + 1.
    const bool at_plus_one = left ? shift == 1 : shift == 0;
    const ir::Expr cut = at_plus_one ? AddI(bound, ir::IntImm(1, bound->dtype)) : bound;
    return inference::KnownPow2Divisor(cut, Divisors()) % v_ == 0;
  }

  // Whether the element at `indices` moves by one with j on a run, the
  // other indices fixed: the last index is base + j, or x % c of
  // RunAligned (the im2col gather's channel k % C); the others Uniform.
  bool RunContiguous(const std::vector<ir::Expr>& indices) const {
    if (indices.empty()) return false;
    if (inference::ContiguousIn(indices, j_)) return true;
    for (size_t d = 0; d + 1 < indices.size(); ++d) {
      if (!Uniform(indices[d])) return false;
    }
    if (inference::ContiguousIn({indices.back()}, j_)) return true;
    const auto* m = indices.back()->as<ir::BinaryNode>();
    return m && RunAligned(*m, /*mod=*/true);
  }

  // A load whose last index is x / c with x = base + j: a run of v reads
  // v / c consecutive elements when c divides v (element e is the
  // (e / c)-th; the packed-int4 weights at k / 2), one element when v
  // divides c (a group's scale at k / group_size), provided the run's
  // first x is a multiple of c, respectively of v: then x / c moves by
  // one every c elements of the run, respectively not at all.
  void PlanSubRate(const BodyAccess& a, std::map<std::string, size_t>* loads) {
    const ir::Buffer& b = a.buffer;
    for (size_t d = 0; d + 1 < a.indices.size(); ++d) {
      if (UsesVar(a.indices[d], j_)) return;
    }
    const auto* div = a.indices.empty() ? nullptr : a.indices.back()->as<ir::BinaryNode>();
    if (!div || !FloorOp(*div, /*mod=*/false)) return;
    const std::optional<int64_t> c = ir::AsConstInt(div->b);
    if (!c || *c < 2 || !inference::ContiguousIn({div->a}, j_)) return;
    if (*c < v_ ? v_ % *c != 0 : *c % v_ != 0) return;
    const int64_t width = *c < v_ ? v_ / *c : 1;
    if (!Movable(a, width) || StartDivisor(div->a) % std::min(*c, v_) != 0) return;
    if (b->scope == ir::Scope::kShared) {
      BufferInfo* info = ctx_.Info(b.get());
      if (!info || !info->shared || info->shared->kind == inference::SharedLayout::Kind::kSwizzled)
        return;
    }
    const std::string key = IndexKey(a.indices);
    auto it = loads->find(key);
    if (it == loads->end()) {
      std::vector<ir::Expr> start = Start(a);
      start.back() = ir::Binary(div->op, Substitute(div->a, at_start_), div->b);
      const int shift = *c < v_ ? std::countr_zero(uint64_t(*c)) : 0;
      it = loads->emplace(key, AddVector(a.buffer, std::move(start), false, width, shift)).first;
    }
    load_elements_[a.load] = vectors_[it->second].element;
  }

  std::vector<ir::Expr> Start(const BodyAccess& a) const {
    std::vector<ir::Expr> start;
    for (const ir::Expr& i : a.indices) start.push_back(Substitute(i, at_start_));
    return start;
  }

  std::map<const ir::VarNode*, int64_t> Divisors() const {
    return {{base_.back().get(), j0_divisor_}};
  }

  size_t AddVector(const ir::Buffer& buffer, std::vector<ir::Expr> start, bool store, int64_t width,
                   int shift) {
    RunVector rv;
    rv.buffer = buffer;
    rv.start = std::move(start);
    rv.store = store;
    rv.width = width;
    rv.shift = shift;
    const int64_t known =
        inference::KnownPow2Divisor(EmitContext::RowMajorIndex(buffer, rv.start), Divisors());
    const bool swizzled =
        buffer->scope == ir::Scope::kShared &&
        ctx_.Info(buffer.get())->shared->kind == inference::SharedLayout::Kind::kSwizzled;
    rv.test_alignment = !swizzled && known % width != 0;
    rv.name = ctx_.Fresh(absl::StrCat(buffer->name, "_vec"));
    rv.vtype = absl::StrCat("tl::Vec<", CType(buffer->dtype), ", ", width, ">");
    if (!store) {
      rv.element = ir::MakeVar(rv.name, buffer->dtype);
      ctx_.KeepAlive(rv.element);
    }
    vectors_.push_back(std::move(rv));
    return vectors_.size() - 1;
  }

  // for (e) { const int s = s0 + e; <nest variables>; body() } with the
  // slot tables the body needs declared before it.
  absl::Status RunLoop(const std::function<absl::Status()>& body) {
    SlotLoop loop;
    loop.layout = &layout_;
    loop.slot = ctx_.Fresh("s");
    for (const ir::Var& x : p_.loop_vars) loop.vars.push_back(x.get());
    loop.mins = mins_;
    loop.replica_guard = ctx_.ReplicaGuard(layout_);
    CodeWriter inner;
    CodeWriter* outer = ctx_.SetWriter(&inner);
    ctx_.slot_loops().push_back(&loop);
    ctx_.w().Line(absl::StrCat("const int ", loop.slot, " = ", s0_, " + ", e_, ";"));
    const std::vector<int64_t>& shape = layout_.shape;
    for (size_t d = 0; d < p_.loop_vars.size(); ++d) {
      const ir::Var& var = p_.loop_vars[d];
      ctx_.MarkNonNegative(var);
      ctx_.SetRange(var, mins_[d], mins_[d] + shape[d] - 1);
      if (d + 1 < p_.loop_vars.size()) {
        ctx_.BindVarText(var, ctx_.VarName(base_[d].get()));
        continue;
      }
      const std::string name = ctx_.DeclareVar(var);
      ctx_.w().Line(
          absl::StrCat("const int ", name, " = ", ctx_.VarName(base_[d].get()), " + ", e_, ";"));
    }
    absl::Status st = body();
    ctx_.slot_loops().pop_back();
    ctx_.SetWriter(outer);
    inner.DropUnusedConstLets();
    for (const std::string& decl : loop.decls) ctx_.w().Line(decl);
    ctx_.w().Line("#pragma unroll");
    ctx_.w().Open(absl::StrCat("for (int ", e_, " = 0; ", e_, " < ", v_, "; ++", e_, ")"));
    ctx_.w().Splice(inner);
    ctx_.w().Close();
    return st;
  }

  absl::Status VectorPath() {
    std::map<const ir::ExprNode*, ir::Var> loads;
    for (const auto& [node, var] : load_elements_) loads[node] = var;
    for (const RunVector& rv : vectors_) {
      if (rv.store) {
        ctx_.w().Line(absl::StrCat(rv.vtype, " ", rv.name, ";"));
        continue;
      }
      const std::string at = rv.width == 1   ? "0"
                             : rv.shift == 0 ? e_
                                             : absl::StrCat(e_, " >> ", rv.shift);
      ctx_.BindVarText(rv.element, absl::StrCat(rv.name, ".v[", at, "]"));
      std::string load =
          absl::StrCat("tl::load_vec<", CType(rv.buffer->dtype), ", ", rv.width, ">(", rv.ptr, ")");
      if (rv.guard) {
        load = absl::StrCat(ctx_.Operand(rv.guard, 13), " ? ", load, " : tl::vec_zero<",
                            CType(rv.buffer->dtype), ", ", rv.width, ">()");
      }
      ctx_.w().Line(absl::StrCat("const ", rv.vtype, " ", rv.name, " = ", load, ";"));
    }
    LoadRewriter rewrite(loads, selects_);
    absl::Status st = RunLoop([&]() { return VectorBody(p_.body, rewrite); });
    const std::string guard = ctx_.ReplicaGuard(layout_);
    for (const RunVector& rv : vectors_) {
      if (!rv.store) continue;
      std::string line = absl::StrCat("tl::store_vec<", CType(rv.buffer->dtype), ", ", v_, ">(",
                                      rv.ptr, ", ", rv.name, ");");
      if (!guard.empty()) line = absl::StrCat("if (", guard, ") ", line);
      ctx_.w().Line(line);
    }
    return st;
  }

  // The body of one element on the vector path: guards dropped (they hold),
  // vectorized stores into their tl::Vec, the rest as usual.
  absl::Status VectorBody(const ir::Stmt& s, LoadRewriter& rewrite) {
    if (!s) return ctx_.status();
    if (const auto* seq = s->as<ir::SeqNode>()) {
      for (const ir::Stmt& x : seq->stmts) {
        if (absl::Status st = VectorBody(x, rewrite); !st.ok()) return st;
      }
      return ctx_.status();
    }
    if (scan_.guards().count(s.get())) {
      return VectorBody(s->as<ir::IfNode>()->then_case, rewrite);
    }
    auto it = store_vectors_.find(s.get());
    if (it != store_vectors_.end()) {
      const auto* st = s->as<ir::StoreNode>();
      const RunVector& rv = vectors_[it->second];
      const std::string value =
          ctx_.Convert(ctx_.Emit(rewrite.Mutate(st->value)), st->value->dtype, st->buffer->dtype)
              .text;
      ctx_.w().Line(absl::StrCat(rv.name, ".v[", e_, "] = ", value, ";"));
      return ctx_.status();
    }
    return ctx_.EmitStmt(rewrite.Mutate(s));
  }

  EmitContext& ctx_;
  const inference::LoopPartition& p_;
  const inference::FragmentLayout& layout_;
  const std::vector<int64_t>& mins_;
  const int64_t v_;
  const ir::VarNode* j_;
  BodyScan scan_;
  std::vector<ir::Var> base_;  // the nest's variables at the run's first element
  std::map<const ir::VarNode*, ir::Expr> at_start_, at_end_;
  int64_t j0_divisor_ = 1;
  std::vector<RunVector> vectors_;
  std::map<const ir::ExprNode*, ir::Var> load_elements_;
  std::map<const ir::ExprNode*, ir::Expr> selects_;
  std::map<const ir::StmtNode*, size_t> store_vectors_;
  std::string s0_, e_;
};

}  // namespace

bool VectorParallelNest(EmitContext& ctx, const inference::LoopPartition& p,
                        const std::vector<int64_t>& mins, absl::Status* status) {
  NestVectorizer vectorizer(ctx, p, mins);
  if (!vectorizer.Plan()) return false;
  *status = vectorizer.Emit();
  return true;
}

}  // namespace tilec::cuda
