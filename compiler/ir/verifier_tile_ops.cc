// The tile-operator checks of the verifier (gemm, reduce, cumsum, atomic_add,
// layouts).
#include "compiler/ir/verifier_internal.h"

namespace tilec::ir::verifier_internal {

bool Verifier::CheckGemmOperand(const Region& r, std::string_view role, Expr* rows, Expr* cols) {
  if (!CheckRegion(r, absl::StrCat("T.gemm operand ", Sv(role)))) return false;
  Scope s = r.buffer->scope;
  bool ok = role == "C" ? s == Scope::kFragment || s == Scope::kLocal
                        : s == Scope::kShared || s == Scope::kFragment;
  if (!ok) {
    return Fail(absl::StrCat("T.gemm operand ", Sv(role), " (", r.buffer->name, ") must be in ",
                             role == "C" ? "fragment or local" : "shared or fragment",
                             " memory, not ", Sv(ScopeName(s))));
  }
  // A window of an on-chip buffer must lie inside it where its bounds are
  // known here (a window starting at a loop variable is checked where it is
  // indexed).
  for (size_t d = 0; d < r.extents.size(); ++d) {
    std::optional<int64_t> size = AsConstInt(r.buffer->shape[d]);
    std::optional<int64_t> lo = AsConstInt(r.mins[d]);
    std::optional<int64_t> len = AsConstInt(r.extents[d]);
    if (!size || !len) continue;
    const bool outside = *len > *size || (lo && (*lo < 0 || *lo > *size - *len));
    if (!outside) continue;
    std::string covers = lo ? absl::StrCat("covers ", *lo, " to ", *lo + *len - 1)
                            : absl::StrCat("is ", *len, " long");
    return Fail(absl::StrCat("T.gemm operand ", Sv(role), " window ", Describe(r),
                             " lies outside its ", Sv(ScopeName(s)), " buffer ", Describe(r.buffer),
                             ": dim ", d, " ", covers, ", the buffer has ", *size));
  }
  std::vector<Expr> ext = r.extents;
  while (ext.size() > 2 && AsConstInt(ext[0]) == 1) ext.erase(ext.begin());
  if (ext.size() != 2) {
    return Fail(absl::StrCat("T.gemm operand ", Sv(role), " must be 2-D, got ", Describe(r)));
  }
  *rows = ext[0];
  *cols = ext[1];
  return true;
}

bool Verifier::CheckGemm(const GemmNode* n) {
  At at(this, Label("T.gemm"));
  if (!RequireKernel("T.gemm")) return false;
  Expr a0, a1, b0, b1, c0, c1;
  if (!CheckGemmOperand(n->a, "A", &a0, &a1) || !CheckGemmOperand(n->b, "B", &b0, &b1) ||
      !CheckGemmOperand(n->c, "C", &c0, &c1)) {
    return false;
  }
  std::string a = absl::StrCat("A ", Describe(n->a), n->transpose_a ? " (transpose_A)" : "");
  std::string b = absl::StrCat("B ", Describe(n->b), n->transpose_b ? " (transpose_B)" : "");
  std::string c = absl::StrCat("C ", Describe(n->c));
  const Expr& m_a = n->transpose_a ? a1 : a0;
  const Expr& k_a = n->transpose_a ? a0 : a1;
  const Expr& k_b = n->transpose_b ? b1 : b0;
  const Expr& n_b = n->transpose_b ? b0 : b1;
  auto agree = [&](const char* dim, const Expr& x, const std::string& in_x, const Expr& y,
                   const std::string& in_y) {
    return !ProvablyDiffer(x, y) ||
           Fail(absl::StrCat("gemm shape mismatch: ", dim, " is ", PrintExpr(x), " in ", in_x,
                             " but ", PrintExpr(y), " in ", in_y));
  };
  if (!agree("M", m_a, a, c0, c) || !agree("K", k_a, a, k_b, b) || !agree("N", n_b, b, c1, c)) {
    return false;
  }
  DType ta = n->a.buffer->dtype, tb = n->b.buffer->dtype, tc = n->c.buffer->dtype;
  if (IsFloat(ta) != IsFloat(tb) || ta == DType::kBool || tb == DType::kBool) {
    return Fail(absl::StrCat("T.gemm operands must both be floats or both integers, got A ", DT(ta),
                             " and B ", DT(tb)));
  }
  if (IsFloat(ta) ? !IsFloat(tc) : tc != DType::kInt32) {
    return Fail(absl::StrCat("T.gemm accumulator C (", n->c.buffer->name, ") is ", DT(tc), "; ",
                             DT(ta), " operands need ",
                             IsFloat(ta) ? "a float accumulator" : "an int32 accumulator"));
  }
  return true;
}

bool Verifier::CheckAlongDim(std::string_view op, const Buffer& src, const Buffer& dst, int dim) {
  if (!RequireKernel(op) || !UseBuffer(src, absl::StrCat(Sv(op), " source")) ||
      !UseBuffer(dst, absl::StrCat(Sv(op), " destination"))) {
    return false;
  }
  for (const Buffer& b : {src, dst}) {
    if (b->scope == Scope::kGlobal) {
      return Fail(absl::StrCat(Sv(op), " on global buffer ", b->name,
                               "; it works on shared, fragment or local buffers"));
    }
  }
  int rank = static_cast<int>(src->shape.size());
  if (dim < 0 || dim >= rank) {
    return Fail(absl::StrCat(Sv(op), " dim ", dim, " is out of range for ", Describe(src),
                             " of rank ", rank));
  }
  return true;
}

bool Verifier::CheckReduce(const ReduceNode* n) {
  std::string op = absl::StrCat("T.reduce_", Sv(ReduceKindName(n->reduce_kind)));
  At at(this, Label(op));
  if (!CheckAlongDim(op, n->src, n->dst, n->dim)) return false;
  std::vector<Expr> expect = n->src->shape;
  expect.erase(expect.begin() + n->dim);
  if (expect.empty()) expect.push_back(IntImm(1));
  bool match = expect.size() == n->dst->shape.size();
  for (size_t i = 0; match && i < expect.size(); ++i) {
    match = !ProvablyDiffer(expect[i], n->dst->shape[i]);
  }
  if (!match) {
    return Fail(absl::StrCat(op, " destination ", Describe(n->dst), " does not match reducing ",
                             Describe(n->src), " along dim ", n->dim, ", which gives ",
                             Dims(expect)));
  }
  return true;
}

bool Verifier::CheckCumsum(const CumsumNode* n) {
  At at(this, Label("T.cumsum"));
  if (!CheckAlongDim("T.cumsum", n->src, n->dst, n->dim)) return false;
  bool match = n->src->shape.size() == n->dst->shape.size();
  for (size_t i = 0; match && i < n->src->shape.size(); ++i) {
    match = !ProvablyDiffer(n->src->shape[i], n->dst->shape[i]);
  }
  if (!match) {
    return Fail(absl::StrCat("T.cumsum destination ", Describe(n->dst),
                             " does not have the shape of the source ", Describe(n->src)));
  }
  return true;
}

bool Verifier::CheckAtomicAdd(const AtomicAddNode* n) {
  At at(this, Label("T.atomic_add"));
  if (!RequireKernel("T.atomic_add") || !CheckRegion(n->dst, "T.atomic_add destination")) {
    return false;
  }
  const Buffer& dst = n->dst.buffer;
  if (dst->scope != Scope::kGlobal && dst->scope != Scope::kShared) {
    return Fail(absl::StrCat("T.atomic_add destination ", dst->name, " is a ",
                             Sv(ScopeName(dst->scope)),
                             " buffer; atomics need global or shared memory"));
  }
  if (n->src && n->value) return Fail("T.atomic_add has both a source region and a value");
  if (n->result) {
    if (n->src) return Fail("T.atomic_add with return_prev has a source region (tile form)");
    if (!UseBuffer(n->result, "return_prev variable")) return false;
    if (n->result->scope != Scope::kVar || n->result->dtype != dst->dtype) {
      return Fail(absl::StrCat("T.atomic_add return_prev variable ", n->result->name, " is not a ",
                               Sv(DTypeName(dst->dtype)), " variable"));
    }
  }
  if (!n->src && !n->value) return Fail("T.atomic_add has neither a source region nor a value");
  if (n->src) {
    if (!CheckRegion(*n->src, "T.atomic_add source")) return false;
    if (!ExtentsAgree(n->src->extents, n->dst.extents)) {
      return Fail(absl::StrCat("shape mismatch: source ", Describe(*n->src), " vs destination ",
                               Describe(n->dst)));
    }
    return true;
  }
  for (const Expr& e : n->dst.extents) {
    if (ProvablyDiffer(e, IntImm(1))) {
      return Fail(absl::StrCat("scalar T.atomic_add needs a single element of ", dst->name,
                               ", got ", Describe(n->dst)));
    }
  }
  return CheckValue(n->value, dst->dtype, false,
                    absl::StrCat("value atomically added to ", dst->name));
}

bool Verifier::CheckLayout(const AnnotateLayoutNode* n) {
  At at(this, Label("T.annotate_layout"));
  if (!RequireKernel("T.annotate_layout") || !UseBuffer(n->buffer, "annotated buffer")) {
    return false;
  }
  if (n->layout.kind != Layout::Kind::kCustom) return true;
  const Buffer& b = n->buffer;
  if (n->layout.vars.size() != b->shape.size()) {
    return Fail(absl::StrCat("layout of ", b->name, " takes ", n->layout.vars.size(),
                             " variables but the buffer has rank ", b->shape.size()));
  }
  if (n->layout.indices.empty()) {
    return Fail(absl::StrCat("layout of ", b->name, " has no physical index"));
  }
  Frame frame(this);
  for (const Var& v : n->layout.vars) {
    if (!DefineVar(v, "layout variable")) return false;
  }
  for (size_t i = 0; i < n->layout.indices.size(); ++i) {
    if (!CheckInt(n->layout.indices[i], absl::StrCat("physical index ", i, " of ", b->name))) {
      return false;
    }
  }
  return true;
}

}  // namespace tilec::ir::verifier_internal
