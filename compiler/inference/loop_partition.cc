#include "compiler/inference/loop_partition.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/inference/index_expr.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::inference {
namespace {

using ir::BinaryOp;
using ir::Expr;

constexpr int64_t kUnlimited = int64_t{1} << 30;

int64_t ElemBytes(ir::DType t) { return std::max(1, ir::DTypeBits(t) / 8); }

bool Uses(const Expr& e, const ir::VarNode* v) {
  if (e == nullptr) return false;
  if (e.get() == v) return true;
  switch (e->kind) {
    case ir::ExprKind::kBinary: {
      const auto* b = e->as<ir::BinaryNode>();
      return Uses(b->a, v) || Uses(b->b, v);
    }
    case ir::ExprKind::kUnary: return Uses(e->as<ir::UnaryNode>()->a, v);
    case ir::ExprKind::kSelect: {
      const auto* s = e->as<ir::SelectNode>();
      return Uses(s->cond, v) || Uses(s->t, v) || Uses(s->f, v);
    }
    case ir::ExprKind::kCast: return Uses(e->as<ir::CastNode>()->value, v);
    case ir::ExprKind::kCall:
      for (const Expr& a : e->as<ir::CallNode>()->args) {
        if (Uses(a, v)) return true;
      }
      return false;
    case ir::ExprKind::kLoad:
      for (const Expr& a : e->as<ir::LoadNode>()->indices) {
        if (Uses(a, v)) return true;
      }
      return false;
    default: return false;
  }
}

// The terms of a sum (a + b - c ...), with their signs.
void Terms(const Expr& e, bool positive, std::vector<std::pair<Expr, bool>>* out) {
  if (const auto* b = e->as<ir::BinaryNode>()) {
    if (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub) {
      Terms(b->a, positive, out);
      Terms(b->b, b->op == BinaryOp::kAdd ? positive : !positive, out);
      return;
    }
  }
  out->push_back({e, positive});
}

bool IsVar(const Expr& e, const ir::VarNode* v) {
  if (e.get() == v) return true;
  const auto* c = e->as<ir::CastNode>();
  return c != nullptr && ir::IsInt(c->dtype) && c->value.get() == v;
}

// The vector an access to `buffer` at `indices` allows when `j` is the
// innermost iteration index; kUnlimited when it is not contiguous in j (it
// then runs element by element and limits nothing).
int64_t AccessVector(const ir::Buffer& buffer, const std::vector<Expr>& indices,
                     const ir::VarNode* j, const TargetInfo& target) {
  if (buffer->scope == ir::Scope::kFragment || buffer->scope == ir::Scope::kLocal ||
      buffer->scope == ir::Scope::kVar || indices.empty()) {
    return kUnlimited;
  }
  int64_t align = kUnlimited;
  if (!ContiguousIn(indices, j, &align)) return kUnlimited;
  if (buffer->dtype == ir::DType::kInt4) return 1;
  // A constant row length limits the vector so that every vector starts
  // aligned and lies within one row; a symbolic one does not: the emitter
  // tests alignment at run time and takes the element path for the runs
  // that fail it (docs/cuda_backend.md, "Vector runs").
  if (buffer->shape.size() >= 2 && ir::AsConstInt(buffer->shape.back())) {
    align = std::min(align, KnownPow2Divisor(buffer->shape.back()));
  }
  return std::min(align, target.vector_bytes / ElemBytes(buffer->dtype));
}

// Replaces let-bound variables by their values.
class LetSubstituter : public ir::IRMutator {
 public:
  void Bind(const ir::Var& v, Expr value) { lets_[v.get()] = Mutate(value); }
  Expr Mutate(const Expr& e) override {
    if (const auto* v = e->as<ir::VarNode>()) {
      auto it = lets_.find(v);
      if (it != lets_.end()) return it->second;
    }
    return ir::IRMutator::Mutate(e);
  }
  using ir::IRMutator::Mutate;

 private:
  std::map<const ir::VarNode*, Expr> lets_;
};

class NestAccessScanner : public ir::IRVisitor {
 public:
  NestAccessScanner(const ir::VarNode* j, const TargetInfo& target) : j_(j), target_(target) {}
  int64_t vector() const { return vector_; }

  void Visit(const Expr& e) override {
    if (e == nullptr) return;
    if (const auto* load = e->as<ir::LoadNode>()) Access(load->buffer, load->indices);
    ir::IRVisitor::Visit(e);
  }
  void Visit(const ir::Stmt& s) override {
    if (s == nullptr) return;
    if (const auto* let = s->as<ir::LetNode>()) {
      subst_.Bind(let->var, let->value);
    } else if (const auto* store = s->as<ir::StoreNode>()) {
      Access(store->buffer, store->indices);
    } else if (const auto* atomic = s->as<ir::AtomicAddNode>()) {
      if (!atomic->src) Access(atomic->dst.buffer, atomic->dst.mins);
    }
    ir::IRVisitor::Visit(s);
  }

 private:
  void Access(const ir::Buffer& b, const std::vector<Expr>& indices) {
    std::vector<Expr> substituted;
    for (const Expr& i : indices) substituted.push_back(subst_.Mutate(i));
    vector_ = std::min(vector_, AccessVector(b, substituted, j_, target_));
  }

  const ir::VarNode* j_;
  const TargetInfo& target_;
  LetSubstituter subst_;
  int64_t vector_ = kUnlimited;
};

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// The index of the last dimension of `r` whose extent is not the constant 1
// (-1 when all are).
int LastNonUnit(const ir::Region& r) {
  for (int d = static_cast<int>(r.extents.size()) - 1; d >= 0; --d) {
    auto c = ir::AsConstInt(r.extents[d]);
    if (!c || *c != 1) return d;
  }
  return -1;
}

}  // namespace

bool ContiguousIn(const std::vector<Expr>& indices, const ir::VarNode* j, int64_t* base_divisor) {
  if (indices.empty()) return false;
  for (size_t d = 0; d + 1 < indices.size(); ++d) {
    if (Uses(indices[d], j)) return false;
  }
  std::vector<std::pair<Expr, bool>> terms;
  Terms(indices.back(), true, &terms);
  int unit = 0;
  int64_t align = kUnlimited;
  for (const auto& [term, positive] : terms) {
    if (IsVar(term, j) && positive) {
      ++unit;
      continue;
    }
    if (Uses(term, j)) return false;
    align = std::min(align, KnownPow2Divisor(term));
  }
  if (unit != 1) return false;
  if (base_divisor != nullptr) *base_divisor = align;
  return true;
}

std::optional<ParallelNest> NestAt(const ir::ForNode& f) {
  ParallelNest nest;
  nest.outer = &f;
  const ir::ForNode* cur = &f;
  while (true) {
    std::optional<int64_t> min = EvalInt(cur->min), extent = EvalInt(cur->extent);
    if (!min || *min != 0 || !extent || *extent < 1) return std::nullopt;
    nest.vars.push_back(cur->var);
    nest.extents.push_back(*extent);
    ir::Stmt body = cur->body;
    if (const auto* seq = body->as<ir::SeqNode>(); seq != nullptr && seq->stmts.size() == 1) {
      body = seq->stmts[0];
    }
    const auto* inner = body->as<ir::ForNode>();
    if (inner == nullptr || inner->kind != ir::ForKind::kParallel) {
      nest.body = cur->body;
      return nest;
    }
    cur = inner;
  }
}

std::vector<int> OwnedDims(const ParallelNest& nest, const std::vector<ir::Expr>& indices,
                           const std::vector<int64_t>& shape) {
  if (indices.size() != shape.size()) return {};
  std::vector<int> dims;
  for (size_t k = 0; k < indices.size(); ++k) {
    int found = -1;
    for (size_t d = 0; d < nest.vars.size(); ++d) {
      if (indices[k].get() == nest.vars[d].get()) found = static_cast<int>(d);
    }
    if (found < 0 || (!dims.empty() && found <= dims.back()) || nest.extents[found] != shape[k]) {
      return {};
    }
    dims.push_back(found);
  }
  return dims;
}

int64_t Pow2Divisor(int64_t x) { return x <= 0 ? 1 : (x & -x); }

int64_t FloorPow2(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

int64_t NestAccessVector(const ParallelNest& nest, const TargetInfo& target) {
  NestAccessScanner scanner(nest.vars.back().get(), target);
  scanner.Visit(nest.body);
  return FloorPow2(std::min(scanner.vector(), target.vector_bytes));
}

FragmentLayout DefaultNestLayout(const ParallelNest& nest, int64_t threads,
                                 const TargetInfo& target) {
  int64_t v = std::min({NestAccessVector(nest, target), Pow2Divisor(nest.extents.back()),
                        FloorPow2(std::max<int64_t>(1, Elements(nest.extents) / threads))});
  return Blocked(nest.extents, threads, v);
}

FragmentLayout DefaultFragmentLayout(const std::vector<int64_t>& shape, int64_t elem_bytes,
                                     int64_t threads, const TargetInfo& target) {
  int64_t v = std::min({FloorPow2(std::max<int64_t>(1, target.vector_bytes / elem_bytes)),
                        Pow2Divisor(shape.back()),
                        FloorPow2(std::max<int64_t>(1, Elements(shape) / threads))});
  return Blocked(shape, threads, v);
}

LoopPartition NestPartition(const ParallelNest& nest, const FragmentLayout& layout,
                            ir::Buffer follows, const TargetInfo& target) {
  LoopPartition p;
  p.kind = LoopPartition::Kind::kParallel;
  p.threads = layout.threads;
  p.vector = std::min(Pow2Divisor(layout.ContiguousRun()), NestAccessVector(nest, target));
  p.follows = std::move(follows);
  p.layout = layout;
  p.loop_vars = nest.vars;
  p.body = nest.body;
  return p;
}

absl::StatusOr<LoopPartition> RegionPartition(LoopPartition::Kind kind, const ir::Region& src,
                                              const ir::Region& dst,
                                              const FragmentLayout* src_layout,
                                              const FragmentLayout* dst_layout, int64_t threads,
                                              const TargetInfo& target) {
  LoopPartition p;
  p.kind = kind;
  p.threads = threads;
  int64_t v = target.vector_bytes;
  const int inner = LastNonUnit(dst);
  if (inner >= 0) {
    auto extent = ir::AsConstInt(dst.extents[inner]);
    v = std::min(v, extent ? Pow2Divisor(*extent) : 1);
  }
  for (const ir::Region* r : {&src, &dst}) {
    const FragmentLayout* layout = r == &src ? src_layout : dst_layout;
    if (layout != nullptr) {
      v = std::min(v, Pow2Divisor(layout->ContiguousRun()));
      continue;
    }
    const int last = static_cast<int>(r->extents.size()) - 1;
    const int non_unit = LastNonUnit(*r);
    if (non_unit >= 0 && non_unit != last) {
      v = 1;  // the innermost dimension of the copy is strided on this side
      continue;
    }
    if (r->buffer->dtype == ir::DType::kInt4) v = 1;
    v = std::min(
        {v, target.vector_bytes / ElemBytes(r->buffer->dtype), KnownPow2Divisor(r->mins.back())});
    if (r->buffer->shape.size() >= 2) v = std::min(v, KnownPow2Divisor(r->buffer->shape.back()));
  }
  v = FloorPow2(std::max<int64_t>(v, 1));
  if (dst_layout != nullptr || src_layout != nullptr) {
    p.follows = dst_layout != nullptr ? dst.buffer : src.buffer;
    p.layout = dst_layout != nullptr ? *dst_layout : *src_layout;
    p.vector = v;
    return p;
  }
  std::vector<int64_t> shape;
  for (const Expr& e : dst.extents) {
    auto c = ir::AsConstInt(e);
    if (!c) {
      return absl::UnimplementedError(
          absl::StrCat("a ", kind == LoopPartition::Kind::kCopy ? "T.copy" : "T.atomic_add",
                       " into ", dst.buffer->name, " with the non-constant extent ",
                       ir::PrintExpr(e), " is not supported"));
    }
    shape.push_back(*c);
  }
  p.vector = std::min(v, FloorPow2(std::max<int64_t>(1, Elements(shape) / threads)));
  p.layout = Blocked(shape, threads, p.vector);
  p.vector = p.layout.ContiguousRun();
  return p;
}

}  // namespace tilec::inference
