#include "compiler/ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/printer.h"

namespace tilec::ir {
namespace {

// Abseil's string_view is its own type in this build.
absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }
absl::string_view DT(DType t) { return AV(DTypeName(t)); }

std::string Dims(const std::vector<Expr>& es) {
  std::vector<std::string> parts;
  for (const Expr& e : es) parts.push_back(PrintExpr(e));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Describe(const Buffer& b) { return absl::StrCat(b->name, " ", Dims(b->shape)); }

bool SameExtent(const Expr& a, const Expr& b) {
  if (a == b) return true;
  std::optional<int64_t> x = AsConstInt(a), y = AsConstInt(b);
  return x && y && *x == *y;
}

// "A_shared [64, 64]" for a whole buffer, "region of A [64, 32]" otherwise.
std::string Describe(const Region& r) {
  bool full = r.mins.size() == r.buffer->shape.size();
  for (size_t i = 0; full && i < r.mins.size(); ++i) {
    full = AsConstInt(r.mins[i]) == 0 && SameExtent(r.extents[i], r.buffer->shape[i]);
  }
  return absl::StrCat(full ? "" : "region of ", r.buffer->name, " ", Dims(r.extents));
}

// How an operator reads in a message: '+', 'T.max', ...
std::string OpText(BinaryOp op) {
  switch (op) {
    case BinaryOp::kMin: return "T.min";
    case BinaryOp::kMax: return "T.max";
    case BinaryOp::kMod: return "T.truncmod";
    default: return absl::StrCat("'", AV(BinaryOpSymbol(op)), "'");
  }
}

bool LiteralFits(int64_t v, DType t) {
  switch (t) {
    case DType::kBool: return v == 0 || v == 1;
    case DType::kInt4: return v >= -8 && v <= 7;
    case DType::kInt8: return v >= -128 && v <= 127;
    case DType::kUInt8: return v >= 0 && v <= 255;
    case DType::kInt16: return v >= -32768 && v <= 32767;
    case DType::kInt32: return v >= INT32_MIN && v <= INT32_MAX;
    default: return true;
  }
}

bool NeedsFloat(CallFn fn) {
  switch (fn) {
    case CallFn::kAbs:
    case CallFn::kCeilDiv: return false;
    default: return true;
  }
}

// Extents with the constant-1 dims dropped: the shape a copy moves.
std::vector<Expr> DropUnitDims(const std::vector<Expr>& extents) {
  std::vector<Expr> out;
  for (const Expr& e : extents) {
    if (AsConstInt(e) != 1) out.push_back(e);
  }
  return out;
}

// False only when the two extent lists provably differ after dropping
// extent-1 dims (symbolic extents are taken to agree).
bool ExtentsAgree(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  std::vector<Expr> x = DropUnitDims(a), y = DropUnitDims(b);
  auto symbolic = [](const Expr& e) { return !AsConstInt(e); };
  if (x.size() != y.size()) {
    return std::any_of(x.begin(), x.end(), symbolic) || std::any_of(y.begin(), y.end(), symbolic);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    std::optional<int64_t> p = AsConstInt(x[i]), q = AsConstInt(y[i]);
    if (p && q && *p != *q) return false;
  }
  return true;
}

bool ProvablyDiffer(const Expr& a, const Expr& b) {
  std::optional<int64_t> x = AsConstInt(a), y = AsConstInt(b);
  return x && y && *x != *y;
}

bool IsLiteral(const Expr& e) {
  return e->kind == ExprKind::kIntImm || e->kind == ExprKind::kFloatImm;
}

class Verifier {
 public:
  explicit Verifier(const Program& p) : program_(p) {}
  absl::Status Run();

 private:
  // Position path elements, pushed for the lifetime of the guard.
  class At {
   public:
    At(Verifier* v, std::string label) : v_(v) { v_->path_.push_back(std::move(label)); }
    ~At() { v_->path_.pop_back(); }

   private:
    Verifier* v_;
  };
  // A declaration scope: what is declared inside goes out of scope with it.
  class Frame {
   public:
    explicit Frame(Verifier* v) : v_(v) { v_->frames_.emplace_back(); }
    ~Frame() {
      for (const void* k : v_->frames_.back()) v_->in_scope_.erase(k);
      v_->frames_.pop_back();
    }

   private:
    Verifier* v_;
  };

  bool Fail(const std::string& msg);
  // "T.copy #2": the count of `op` so far in the innermost body.
  std::string Label(std::string_view op) {
    return absl::StrCat(AV(op), " #", ++counters_.back()[std::string(op)]);
  }
  bool RequireKernel(std::string_view op) {
    return in_kernel_ || Fail(absl::StrCat(AV(op), " outside a T.Kernel"));
  }

  bool Declare(const void* key, const std::string& name, std::string_view what);
  bool DefineVar(const Var& v, std::string_view what);
  bool DefineIntVar(const Var& v, std::string_view what) {
    return DefineVar(v, what) &&
           (IsInt(v->dtype) || Fail(absl::StrCat(AV(what), " '", v->name,
                                                 "' must be an integer, got ", DT(v->dtype))));
  }
  bool DefineBuffer(const Buffer& b);
  bool Use(const void* key, std::string_view kind, const std::string& name,
           std::string_view undefined_note);
  bool UseVar(const VarNode* v);
  bool UseBuffer(const Buffer& b, std::string_view role);

  bool CheckExpr(const Expr& e, std::string_view what);
  bool CheckInt(const Expr& e, std::string_view what);
  bool CheckPositive(const Expr& e, std::string_view what);
  bool CheckBinary(const Expr& e);
  bool CheckCall(const CallNode* n);
  bool CheckIndices(const Buffer& b, const std::vector<Expr>& indices);
  bool CheckRegion(const Region& r, std::string_view role);
  bool CheckShape(const Buffer& b);
  bool CheckValue(const Expr& v, DType t, bool literal_ok, std::string_view what);

  bool CheckStmt(const Stmt& s);
  bool CheckBody(const Stmt& s);
  bool CheckKernel(const KernelNode* n);
  bool CheckAllocate(const AllocateNode* n);
  bool CheckFor(const ForNode* n);
  bool CheckIf(const IfNode* n);
  bool CheckGemm(const GemmNode* n);
  bool CheckGemmOperand(const Region& r, std::string_view role, Expr* rows, Expr* cols);
  // Shared by reduce and cumsum: operands in scope, not global, dim in range.
  bool CheckAlongDim(std::string_view op, const Buffer& src, const Buffer& dst, int dim);
  bool CheckReduce(const ReduceNode* n);
  bool CheckCumsum(const CumsumNode* n);
  bool CheckAtomicAdd(const AtomicAddNode* n);
  bool CheckLayout(const AnnotateLayoutNode* n);

  const Program& program_;
  std::string error_;
  std::vector<std::string> path_;
  std::vector<std::map<std::string, int>> counters_;
  int kernels_ = 0;
  bool in_kernel_ = false;
  std::vector<std::vector<const void*>> frames_;
  std::unordered_set<const void*> in_scope_;  // variables and buffers
  std::unordered_set<const void*> declared_;  // anywhere so far
  std::unordered_map<const VarNode*, int64_t> bound_tile_params_;
};

bool Verifier::Fail(const std::string& msg) {
  if (error_.empty()) {
    std::string where =
        path_.empty() ? absl::StrCat("program ", program_.name) : absl::StrJoin(path_, " > ");
    error_ = absl::StrCat(where, ": ", msg);
  }
  return false;
}

// ---------------------------------------------------------------------------
// Scopes

bool Verifier::Declare(const void* key, const std::string& name, std::string_view what) {
  if (name.empty()) return Fail(absl::StrCat(AV(what), " has an empty name"));
  if (!declared_.insert(key).second) {
    return Fail(absl::StrCat(AV(what), " '", name,
                             "' is declared twice (the same node is bound by two declarations)"));
  }
  in_scope_.insert(key);
  frames_.back().push_back(key);
  return true;
}

bool Verifier::DefineVar(const Var& v, std::string_view what) {
  if (!v) return Fail(absl::StrCat("null ", AV(what)));
  if (bound_tile_params_.count(v.get())) {
    return Fail(absl::StrCat(AV(what), " '", v->name, "' is also a bound tile parameter"));
  }
  return Declare(v.get(), v->name, what);
}

bool Verifier::DefineBuffer(const Buffer& b) { return Declare(b.get(), b->name, "buffer"); }

bool Verifier::Use(const void* key, std::string_view kind, const std::string& name,
                   std::string_view undefined_note) {
  if (in_scope_.count(key)) return true;
  if (declared_.count(key)) {
    return Fail(absl::StrCat(AV(kind), " '", name, "' used outside its scope"));
  }
  return Fail(absl::StrCat("undefined ", AV(kind), " '", name, "'", AV(undefined_note)));
}

bool Verifier::UseVar(const VarNode* v) {
  if (auto it = bound_tile_params_.find(v); it != bound_tile_params_.end()) {
    return Fail(absl::StrCat("tile parameter '", v->name, "' is bound to ", it->second,
                             " and must not appear in the body"));
  }
  return Use(v, "variable", v->name, "");
}

bool Verifier::UseBuffer(const Buffer& b, std::string_view role) {
  if (!b) return Fail(absl::StrCat("null buffer as ", AV(role)));
  return Use(b.get(), "buffer", b->name,
             " (neither a parameter nor allocated in an enclosing scope)");
}

// ---------------------------------------------------------------------------
// Expressions

bool Verifier::CheckInt(const Expr& e, std::string_view what) {
  if (!CheckExpr(e, what)) return false;
  if (IsInt(e->dtype)) return true;
  return Fail(
      absl::StrCat(AV(what), " must be an integer, got ", DT(e->dtype), " (", PrintExpr(e), ")"));
}

bool Verifier::CheckPositive(const Expr& e, std::string_view what) {
  if (!CheckInt(e, what)) return false;
  std::optional<int64_t> v = AsConstInt(e);
  if (v && *v < 1) return Fail(absl::StrCat(AV(what), " must be >= 1, got ", *v));
  return true;
}

bool Verifier::CheckExpr(const Expr& e, std::string_view what) {
  if (!e) return Fail(absl::StrCat("null expression as ", AV(what)));
  switch (e->kind) {
    case ExprKind::kIntImm: {
      int64_t v = e->as<IntImmNode>()->value;
      if (IsFloat(e->dtype)) {
        return Fail(absl::StrCat("integer literal ", v, " has float dtype ", DT(e->dtype)));
      }
      if (!LiteralFits(v, e->dtype)) {
        return Fail(absl::StrCat("literal ", v, " does not fit its dtype ", DT(e->dtype)));
      }
      return true;
    }
    case ExprKind::kFloatImm:
      if (!IsFloat(e->dtype)) {
        return Fail(absl::StrCat("float literal ", e->as<FloatImmNode>()->value,
                                 " has non-float dtype ", DT(e->dtype)));
      }
      return true;
    case ExprKind::kVar: return UseVar(e->as<VarNode>());
    case ExprKind::kBinary: return CheckBinary(e);
    case ExprKind::kUnary: {
      const auto* n = e->as<UnaryNode>();
      std::string op = n->op == UnaryOp::kNeg ? "'-'" : n->op == UnaryOp::kNot ? "'not'" : "'~'";
      if (!CheckExpr(n->a, absl::StrCat("operand of ", op))) return false;
      DType t = n->a->dtype;
      bool ok = n->op == UnaryOp::kNot   ? t == DType::kBool
                : n->op == UnaryOp::kNeg ? t != DType::kBool
                                         : IsInt(t);
      if (!ok) return Fail(absl::StrCat(op, " does not apply to ", DT(t), " (", PrintExpr(e), ")"));
      DType expect = n->op == UnaryOp::kNot ? DType::kBool : t;
      if (e->dtype != expect) {
        return Fail(absl::StrCat(op, " yields ", DT(expect), " but the node says ", DT(e->dtype)));
      }
      return true;
    }
    case ExprKind::kSelect: {
      const auto* n = e->as<SelectNode>();
      if (!CheckExpr(n->cond, "T.if_then_else condition") ||
          !CheckExpr(n->t, "T.if_then_else true value") ||
          !CheckExpr(n->f, "T.if_then_else false value")) {
        return false;
      }
      if (n->cond->dtype != DType::kBool) {
        return Fail(absl::StrCat("T.if_then_else condition must be bool, got ", DT(n->cond->dtype),
                                 " (", PrintExpr(n->cond), ")"));
      }
      if (n->t->dtype != n->f->dtype || e->dtype != n->t->dtype) {
        return Fail(absl::StrCat("T.if_then_else branches have different dtypes: ", DT(n->t->dtype),
                                 " vs ", DT(n->f->dtype), " (", PrintExpr(e), ")"));
      }
      return true;
    }
    case ExprKind::kCast: return CheckExpr(e->as<CastNode>()->value, "operand of T.cast");
    case ExprKind::kCall: return CheckCall(e->as<CallNode>());
    case ExprKind::kLoad: {
      const auto* n = e->as<LoadNode>();
      if (!UseBuffer(n->buffer, "load source") || !CheckIndices(n->buffer, n->indices)) {
        return false;
      }
      if (e->dtype != n->buffer->dtype) {
        return Fail(absl::StrCat("load from ", n->buffer->name, " has dtype ", DT(e->dtype),
                                 " but the buffer holds ", DT(n->buffer->dtype)));
      }
      return true;
    }
  }
  return Fail("expression of unknown kind (a compiler bug)");
}

bool Verifier::CheckBinary(const Expr& e) {
  const auto* n = e->as<BinaryNode>();
  std::string op = OpText(n->op);
  if (!CheckExpr(n->a, absl::StrCat("left operand of ", op)) ||
      !CheckExpr(n->b, absl::StrCat("right operand of ", op))) {
    return false;
  }
  DType t = n->a->dtype;
  if (t != n->b->dtype) {
    return Fail(absl::StrCat("operands of ", op, " have different dtypes: ", DT(t), " vs ",
                             DT(n->b->dtype), " (", PrintExpr(e), ")"));
  }
  bool bitwise =
      n->op == BinaryOp::kBitAnd || n->op == BinaryOp::kBitOr || n->op == BinaryOp::kBitXor;
  bool shift = n->op == BinaryOp::kShl || n->op == BinaryOp::kShr;
  std::string_view need;
  if (IsLogical(n->op)) {
    if (t != DType::kBool) need = "bool";
  } else if (bitwise) {
    if (IsFloat(t)) need = "integer or bool";
  } else if (shift) {
    if (!IsInt(t)) need = "integer";
  } else if (!IsComparison(n->op) && t == DType::kBool) {
    need = "numeric";
  }
  if (!need.empty()) {
    return Fail(absl::StrCat("operands of ", op, " must be ", AV(need), ", got ", DT(t), " (",
                             PrintExpr(e), ")"));
  }
  DType expect = IsComparison(n->op) || IsLogical(n->op) ? DType::kBool : t;
  if (e->dtype != expect) {
    return Fail(absl::StrCat(op, " yields ", DT(expect), " but the node says ", DT(e->dtype)));
  }
  return true;
}

bool Verifier::CheckCall(const CallNode* n) {
  std::string fn = absl::StrCat("T.", AV(CallFnName(n->fn)));
  int arity = CallArity(n->fn);
  if (static_cast<int>(n->args.size()) != arity) {
    return Fail(absl::StrCat(fn, " takes ", arity, arity == 1 ? " argument" : " arguments",
                             ", got ", n->args.size()));
  }
  for (size_t i = 0; i < n->args.size(); ++i) {
    if (!CheckExpr(n->args[i], absl::StrCat("argument ", i, " of ", fn))) return false;
    if (n->args[i]->dtype != n->args[0]->dtype) {
      return Fail(absl::StrCat("arguments of ", fn, " have different dtypes: ",
                               DT(n->args[0]->dtype), " vs ", DT(n->args[i]->dtype)));
    }
  }
  DType t = n->args[0]->dtype;
  if (NeedsFloat(n->fn) && !IsFloat(t)) {
    return Fail(absl::StrCat(fn, " needs float arguments, got ", DT(t)));
  }
  if (n->fn == CallFn::kCeilDiv && !IsInt(t)) {
    return Fail(absl::StrCat(fn, " needs integer arguments, got ", DT(t)));
  }
  if (n->fn == CallFn::kAbs && t == DType::kBool) return Fail("T.abs does not apply to bool");
  if (n->dtype != t) {
    return Fail(absl::StrCat(fn, " yields ", DT(t), " but the node says ", DT(n->dtype)));
  }
  return true;
}

bool Verifier::CheckIndices(const Buffer& b, const std::vector<Expr>& indices) {
  if (indices.size() != b->shape.size()) {
    return Fail(absl::StrCat(b->name, " has rank ", b->shape.size(), " but is indexed with ",
                             indices.size(), indices.size() == 1 ? " index" : " indices"));
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!CheckInt(indices[i], absl::StrCat("index ", i, " of ", b->name))) return false;
  }
  return true;
}

bool Verifier::CheckRegion(const Region& r, std::string_view role) {
  if (!UseBuffer(r.buffer, role)) return false;
  const Buffer& b = r.buffer;
  if (r.mins.size() != b->shape.size() || r.extents.size() != b->shape.size()) {
    return Fail(absl::StrCat(AV(role), " region of ", b->name, " has ", r.mins.size(), " mins and ",
                             r.extents.size(), " extents but ", b->name, " has rank ",
                             b->shape.size()));
  }
  for (size_t i = 0; i < r.mins.size(); ++i) {
    if (!CheckInt(r.mins[i], absl::StrCat("start ", i, " of ", AV(role), " region of ", b->name)) ||
        !CheckPositive(r.extents[i],
                       absl::StrCat("extent ", i, " of ", AV(role), " region of ", b->name))) {
      return false;
    }
  }
  return true;
}

bool Verifier::CheckShape(const Buffer& b) {
  for (size_t i = 0; i < b->shape.size(); ++i) {
    if (!CheckPositive(b->shape[i], absl::StrCat("dim ", i, " of ", b->name))) return false;
  }
  return true;
}

bool Verifier::CheckValue(const Expr& v, DType t, bool literal_ok, std::string_view what) {
  if (!CheckExpr(v, what)) return false;
  if (v->dtype == t || (literal_ok && IsLiteral(v) && t != DType::kBool)) return true;
  return Fail(absl::StrCat(AV(what), " has dtype ", DT(v->dtype), ", expected ", DT(t), " (",
                           PrintExpr(v), ")"));
}

// ---------------------------------------------------------------------------
// Statements

bool Verifier::CheckBody(const Stmt& s) {
  counters_.emplace_back();
  Frame frame(this);
  bool ok = CheckStmt(s);
  counters_.pop_back();
  return ok;
}

bool Verifier::CheckStmt(const Stmt& s) {
  if (!s) return Fail("null statement");
  switch (s->kind) {
    case StmtKind::kSeq: {
      Frame frame(this);
      for (const Stmt& c : s->as<SeqNode>()->stmts) {
        if (!CheckStmt(c)) return false;
      }
      return true;
    }
    case StmtKind::kKernel: return CheckKernel(s->as<KernelNode>());
    case StmtKind::kAllocate: return CheckAllocate(s->as<AllocateNode>());
    case StmtKind::kFor: return CheckFor(s->as<ForNode>());
    case StmtKind::kIf: return CheckIf(s->as<IfNode>());
    case StmtKind::kStore: {
      const auto* n = s->as<StoreNode>();
      At at(this, Label("store"));
      if (!RequireKernel("store") || !UseBuffer(n->buffer, "store destination") ||
          !CheckIndices(n->buffer, n->indices)) {
        return false;
      }
      return CheckValue(n->value, n->buffer->dtype, false,
                        absl::StrCat("value stored to ", n->buffer->name));
    }
    case StmtKind::kLet: {
      const auto* n = s->as<LetNode>();
      At at(this, absl::StrCat("let ", n->var ? n->var->name : "<null>"));
      if (!n->var) return Fail("let without a variable");
      if (!CheckValue(n->value, n->var->dtype, false,
                      absl::StrCat("value bound to ", n->var->name))) {
        return false;
      }
      return DefineVar(n->var, "let variable");
    }
    case StmtKind::kCopy: {
      const auto* n = s->as<CopyNode>();
      At at(this, Label("T.copy"));
      if (!RequireKernel("T.copy") || !CheckRegion(n->src, "source") ||
          !CheckRegion(n->dst, "destination")) {
        return false;
      }
      if (!ExtentsAgree(n->src.extents, n->dst.extents)) {
        return Fail(absl::StrCat("shape mismatch: source ", Describe(n->src), " vs destination ",
                                 Describe(n->dst)));
      }
      return true;
    }
    case StmtKind::kGemm: return CheckGemm(s->as<GemmNode>());
    case StmtKind::kFill: {
      const auto* n = s->as<FillNode>();
      At at(this, Label("T.fill"));
      if (!RequireKernel("T.fill") || !CheckRegion(n->dst, "T.fill destination")) return false;
      return CheckValue(n->value, n->dst.buffer->dtype, true,
                        absl::StrCat("fill value for ", n->dst.buffer->name));
    }
    case StmtKind::kReduce: return CheckReduce(s->as<ReduceNode>());
    case StmtKind::kCumsum: return CheckCumsum(s->as<CumsumNode>());
    case StmtKind::kAtomicAdd: return CheckAtomicAdd(s->as<AtomicAddNode>());
    case StmtKind::kAnnotateLayout: return CheckLayout(s->as<AnnotateLayoutNode>());
    case StmtKind::kUseSwizzle: {
      At at(this, Label("T.use_swizzle"));
      return RequireKernel("T.use_swizzle") &&
             CheckPositive(s->as<UseSwizzleNode>()->panel_size, "T.use_swizzle panel size");
    }
  }
  return Fail("statement of unknown kind (a compiler bug)");
}

bool Verifier::CheckKernel(const KernelNode* n) {
  At at(this, absl::StrCat("kernel ", kernels_++));
  if (in_kernel_) return Fail("T.Kernel nested inside a T.Kernel");
  if (n->grid.empty() || n->grid.size() > 3) {
    return Fail(absl::StrCat("T.Kernel grid has ", n->grid.size(), " extents; it takes 1 to 3"));
  }
  if (n->block_vars.size() != n->grid.size()) {
    return Fail(absl::StrCat("T.Kernel has ", n->grid.size(), " grid extents but ",
                             n->block_vars.size(), " block variables"));
  }
  for (size_t i = 0; i < n->grid.size(); ++i) {
    if (!CheckPositive(n->grid[i], absl::StrCat("grid extent ", i))) return false;
  }
  if (!n->threads) return Fail("T.Kernel without a thread count");
  if (!CheckPositive(n->threads, "thread count")) return false;
  Frame frame(this);
  for (const Var& v : n->block_vars) {
    if (!DefineIntVar(v, "block variable")) return false;
  }
  if (!n->body) return Fail("T.Kernel without a body");
  in_kernel_ = true;
  bool ok = CheckBody(n->body);
  in_kernel_ = false;
  return ok;
}

bool Verifier::CheckAllocate(const AllocateNode* n) {
  if (!n->buffer) return Fail("allocation without a buffer");
  const Buffer& b = n->buffer;
  std::string op = absl::StrCat("T.alloc_", AV(ScopeName(b->scope)));
  At at(this, absl::StrCat(op, " ", b->name));
  if (b->scope == Scope::kGlobal && in_kernel_) {
    return Fail(absl::StrCat("global workspace ", b->name,
                             " allocated inside a T.Kernel; T.alloc_global belongs at the top "
                             "level, between kernels"));
  }
  if (b->scope != Scope::kGlobal && !in_kernel_) {
    return Fail(absl::StrCat(AV(ScopeName(b->scope)), " buffer ", b->name,
                             " allocated outside a T.Kernel"));
  }
  if (!CheckShape(b)) return false;
  if (n->init && !CheckValue(n->init, b->dtype, true, absl::StrCat("initial value of ", b->name))) {
    return false;
  }
  return DefineBuffer(b);
}

bool Verifier::CheckFor(const ForNode* n) {
  At at(this, absl::StrCat("for ", n->var ? n->var->name : "<null>"));
  std::string loop = absl::StrCat("T.", AV(ForKindName(n->kind)));
  if (!n->var) return Fail("loop without a variable");
  if (n->kind != ForKind::kSerial && !RequireKernel(absl::StrCat(loop, " loop"))) return false;
  if (!CheckInt(n->min, "loop start") || !CheckInt(n->extent, "loop extent")) return false;
  if (std::optional<int64_t> e = AsConstInt(n->extent); e && *e < 0) {
    return Fail(absl::StrCat("loop extent must be >= 0, got ", *e));
  }
  if (n->kind != ForKind::kPipelined) {
    const char* what = n->num_stages       ? "num_stages"
                       : !n->order.empty() ? "order"
                       : !n->stage.empty() ? "stage"
                                           : nullptr;
    if (what) {
      return Fail(absl::StrCat(what, " is only allowed on T.Pipelined loops, not ", loop));
    }
  } else {
    if (n->num_stages && !CheckPositive(n->num_stages, "num_stages")) return false;
    const auto* seq = n->body ? n->body->as<SeqNode>() : nullptr;
    size_t count = seq ? seq->stmts.size() : 1;
    const std::pair<const char*, const std::vector<int64_t>*> lists[] = {{"order", &n->order},
                                                                         {"stage", &n->stage}};
    for (const auto& [name, list] : lists) {
      if (!list->empty() && list->size() != count) {
        return Fail(absl::StrCat(name, " has ", list->size(),
                                 " entries but the pipelined body has ", count,
                                 count == 1 ? " statement" : " statements"));
      }
    }
  }
  Frame frame(this);
  if (!DefineIntVar(n->var, "loop variable")) return false;
  if (!n->body) return Fail("loop without a body");
  return CheckBody(n->body);
}

bool Verifier::CheckIf(const IfNode* n) {
  At at(this, Label("if"));
  if (!CheckExpr(n->cond, "if condition")) return false;
  if (n->cond->dtype != DType::kBool) {
    return Fail(absl::StrCat("if condition must be bool, got ", DT(n->cond->dtype), " (",
                             PrintExpr(n->cond), ")"));
  }
  if (!CheckBody(n->then_case)) return false;
  if (!n->else_case) return true;
  At branch(this, "else");
  return CheckBody(n->else_case);
}

bool Verifier::CheckGemmOperand(const Region& r, std::string_view role, Expr* rows, Expr* cols) {
  if (!CheckRegion(r, absl::StrCat("T.gemm operand ", AV(role)))) return false;
  Scope s = r.buffer->scope;
  bool ok = role == "C" ? s == Scope::kFragment || s == Scope::kLocal
                        : s == Scope::kShared || s == Scope::kFragment;
  if (!ok) {
    return Fail(absl::StrCat("T.gemm operand ", AV(role), " (", r.buffer->name, ") must be in ",
                             role == "C" ? "fragment or local" : "shared or fragment",
                             " memory, not ", AV(ScopeName(s))));
  }
  std::vector<Expr> ext = r.extents;
  while (ext.size() > 2 && AsConstInt(ext[0]) == 1) ext.erase(ext.begin());
  if (ext.size() != 2) {
    return Fail(absl::StrCat("T.gemm operand ", AV(role), " must be 2-D, got ", Describe(r)));
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
  if (!RequireKernel(op) || !UseBuffer(src, absl::StrCat(AV(op), " source")) ||
      !UseBuffer(dst, absl::StrCat(AV(op), " destination"))) {
    return false;
  }
  for (const Buffer& b : {src, dst}) {
    if (b->scope == Scope::kGlobal) {
      return Fail(absl::StrCat(AV(op), " on global buffer ", b->name,
                               "; it works on shared, fragment or local buffers"));
    }
  }
  int rank = static_cast<int>(src->shape.size());
  if (dim < 0 || dim >= rank) {
    return Fail(absl::StrCat(AV(op), " dim ", dim, " is out of range for ", Describe(src),
                             " of rank ", rank));
  }
  return true;
}

bool Verifier::CheckReduce(const ReduceNode* n) {
  std::string op = absl::StrCat("T.reduce_", AV(ReduceKindName(n->reduce_kind)));
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
                             AV(ScopeName(dst->scope)),
                             " buffer; atomics need global or shared memory"));
  }
  if (n->src && n->value) return Fail("T.atomic_add has both a source region and a value");
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

absl::Status Verifier::Run() {
  counters_.emplace_back();
  Frame frame(this);
  for (const Var& v : program_.dyn_dims) {
    At at(this, absl::StrCat("dyn dim ", v ? v->name : "<null>"));
    if (!DefineIntVar(v, "dynamic dim")) break;
  }
  for (const TileParam& tp : program_.tile_params) {
    if (!error_.empty()) break;
    At at(this, absl::StrCat("tile param ", tp.var ? tp.var->name : "<null>"));
    if (!tp.var) {
      Fail("tile parameter without a variable");
    } else if (tp.value) {
      if (declared_.count(tp.var.get()) || bound_tile_params_.count(tp.var.get())) {
        Fail(absl::StrCat("tile parameter '", tp.var->name, "' is declared twice"));
      }
      bound_tile_params_[tp.var.get()] = *tp.value;
    } else {
      DefineIntVar(tp.var, "tile parameter");
    }
  }
  // Declare every parameter first: a tensor's shape may use a scalar that
  // comes after it.
  for (size_t i = 0; i < program_.params.size() && error_.empty(); ++i) {
    const Param& p = program_.params[i];
    At at(this, p.tensor   ? absl::StrCat("param ", p.tensor->name)
                : p.scalar ? absl::StrCat("param ", p.scalar->name)
                           : absl::StrCat("param #", i));
    if (p.tensor && p.scalar) {
      Fail("parameter is both a tensor and a scalar");
    } else if (p.tensor) {
      if (p.tensor->scope != Scope::kGlobal) {
        Fail(absl::StrCat("tensor parameter ", p.tensor->name, " must be global, not ",
                          AV(ScopeName(p.tensor->scope))));
      } else {
        DefineBuffer(p.tensor);
      }
    } else if (p.scalar) {
      DefineVar(p.scalar, "scalar parameter");
    } else {
      Fail("parameter is neither a tensor nor a scalar");
    }
  }
  for (const Param& p : program_.params) {
    if (!error_.empty() || !p.tensor) continue;
    At at(this, absl::StrCat("param ", p.tensor->name));
    CheckShape(p.tensor);
  }
  if (error_.empty()) {
    if (!program_.body) {
      Fail("program has no body");
    } else {
      CheckStmt(program_.body);
    }
  }
  if (error_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(error_);
}

}  // namespace

absl::Status Verify(const Program& program) { return Verifier(program).Run(); }

}  // namespace tilec::ir
