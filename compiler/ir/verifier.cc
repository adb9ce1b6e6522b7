#include "compiler/ir/verifier.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "compiler/ir/inline_source.h"
#include "compiler/ir/names.h"
#include "compiler/ir/verifier_internal.h"

namespace tilec::ir {
namespace verifier_internal {

FloatRange RangeOf(DType t) {
  switch (t) {
    case DType::kFloat8E4M3: return {448.0, std::ldexp(1.0, -9)};
    case DType::kFloat8E5M2: return {57344.0, std::ldexp(1.0, -16)};
    case DType::kFloat8E4M3FNUZ: return {240.0, std::ldexp(1.0, -10)};
    case DType::kFloat8E5M2FNUZ: return {57344.0, std::ldexp(1.0, -17)};
    case DType::kFloat16: return {65504.0, std::ldexp(1.0, -24)};
    case DType::kBFloat16: return {std::ldexp(255.0, 120), std::ldexp(1.0, -133)};
    case DType::kFloat32:
      return {std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()};
    default: return {std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min()};
  }
}

std::string FloatLiteralProblem(double v, DType t) {
  if (!std::isfinite(v) || !IsFloat(t)) return "";  // T.infinity and NaN are meant
  FloatRange r = RangeOf(t);
  if (std::fabs(v) > r.max) {
    return absl::StrFormat("float literal %g is out of range for %s (largest finite value %g)", v,
                           DTypeName(t), r.max);
  }
  if (v != 0 && std::fabs(v) < r.min_subnormal) {
    return absl::StrFormat(
        "float literal %g underflows to 0 in %s (smallest nonzero magnitude %g); write 0 if 0 is "
        "meant",
        v, DTypeName(t), r.min_subnormal);
  }
  return "";
}

bool Verifier::Fail(const std::string& msg) {
  if (error_.empty()) {
    // Deep paths show their first and last steps.
    std::vector<std::string> path;
    for (size_t i = 0; i < path_.size(); ++i) {
      if (path_.size() > 10 && i >= 3 && i + 5 < path_.size()) {
        if (i == 3) path.push_back(absl::StrCat("(", path_.size() - 8, " more)"));
        continue;
      }
      path.push_back(QuoteName(path_[i]));
    }
    std::string where = path.empty() ? absl::StrCat("program ", QuoteName(program_.name))
                                     : absl::StrJoin(path, " > ");
    error_ = absl::StrCat(where, ": ", msg);
  }
  return false;
}

bool Verifier::TooDeep() {
  return Fail(absl::StrCat("statements and expressions nest more than ", kMaxNesting,
                           " levels deep here; tilec accepts at most ", kMaxNesting,
                           " (split a long expression into lets, or flatten the nest)"));
}

bool Verifier::CheckName(const std::string& name, std::string_view what) {
  std::string problem = NameProblem(name);
  if (problem.empty()) return true;
  return Fail(absl::StrCat("the name of ", Sv(what), " '", QuoteName(name), "' ", problem));
}

bool Verifier::CheckLaunchInvariant(const Expr& e, std::string_view what) {
  if (!e) return true;
  switch (e->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm: return true;
    case ExprKind::kVar: {
      const auto* v = e->as<VarNode>();
      if (launch_invariant_.count(v)) return true;
      return Fail(absl::StrCat(Sv(what), " depends on '", QuoteName(v->name),
                               "', which changes while the kernel runs; region extents must be "
                               "known when the kernel is launched (constants, dynamic dims, "
                               "scalar and tile parameters)"));
    }
    case ExprKind::kBinary: {
      const auto* n = e->as<BinaryNode>();
      return CheckLaunchInvariant(n->a, what) && CheckLaunchInvariant(n->b, what);
    }
    case ExprKind::kUnary: return CheckLaunchInvariant(e->as<UnaryNode>()->a, what);
    case ExprKind::kSelect: {
      const auto* n = e->as<SelectNode>();
      return CheckLaunchInvariant(n->cond, what) && CheckLaunchInvariant(n->t, what) &&
             CheckLaunchInvariant(n->f, what);
    }
    case ExprKind::kCast: return CheckLaunchInvariant(e->as<CastNode>()->value, what);
    case ExprKind::kCall:
      if (e->as<CallNode>()->fn == CallFn::kThreadIndex) {
        return Fail(absl::StrCat(Sv(what),
                                 " depends on the thread index; region extents must be "
                                 "known when the kernel is launched"));
      }
      for (const Expr& a : e->as<CallNode>()->args) {
        if (!CheckLaunchInvariant(a, what)) return false;
      }
      return true;
    case ExprKind::kLoad:
      return Fail(absl::StrCat(Sv(what), " loads from ", QuoteName(e->as<LoadNode>()->buffer->name),
                               "; region extents must be known when the kernel is launched"));
  }
  return true;
}

// ---------------------------------------------------------------------------
// Scopes

bool Verifier::Declare(const void* key, const std::string& name, std::string_view what) {
  if (name.empty()) return Fail(absl::StrCat(Sv(what), " has an empty name"));
  if (!CheckName(name, what)) return false;
  if (!declared_.insert(key).second) {
    return Fail(absl::StrCat(Sv(what), " '", name,
                             "' is declared twice (the same node is bound by two declarations)"));
  }
  in_scope_.insert(key);
  frames_.back().push_back(key);
  return true;
}

bool Verifier::DefineVar(const Var& v, std::string_view what) {
  if (!v) return Fail(absl::StrCat("null ", Sv(what)));
  if (bound_tile_params_.count(v.get())) {
    return Fail(absl::StrCat(Sv(what), " '", v->name, "' is also a bound tile parameter"));
  }
  return Declare(v.get(), v->name, what);
}

bool Verifier::DefineBuffer(const Buffer& b) { return Declare(b.get(), b->name, "buffer"); }

bool Verifier::Use(const void* key, std::string_view kind, const std::string& name,
                   std::string_view undefined_note) {
  if (in_scope_.count(key)) return true;
  if (declared_.count(key)) {
    return Fail(absl::StrCat(Sv(kind), " '", name, "' used outside its scope"));
  }
  return Fail(absl::StrCat("undefined ", Sv(kind), " '", name, "'", Sv(undefined_note)));
}

bool Verifier::UseVar(const VarNode* v) {
  if (auto it = bound_tile_params_.find(v); it != bound_tile_params_.end()) {
    return Fail(absl::StrCat("tile parameter '", v->name, "' is bound to ", it->second,
                             " and must not appear in the body"));
  }
  return Use(v, "variable", v->name, "");
}

bool Verifier::UseBuffer(const Buffer& b, std::string_view role) {
  if (!b) return Fail(absl::StrCat("null buffer as ", Sv(role)));
  return Use(b.get(), "buffer", b->name,
             " (neither a parameter nor allocated in an enclosing scope)");
}

// ---------------------------------------------------------------------------
// Expressions

bool Verifier::CheckInt(const Expr& e, std::string_view what) {
  if (!CheckExpr(e, what)) return false;
  if (IsInt(e->dtype)) return true;
  return Fail(
      absl::StrCat(Sv(what), " must be an integer, got ", DT(e->dtype), " (", PrintExpr(e), ")"));
}

bool Verifier::CheckPositive(const Expr& e, std::string_view what) {
  if (!CheckInt(e, what)) return false;
  std::optional<int64_t> v = AsConstInt(e);
  if (v && *v < 1) return Fail(absl::StrCat(Sv(what), " must be >= 1, got ", *v));
  return true;
}

bool Verifier::CheckExpr(const Expr& e, std::string_view what) {
  if (!e) return Fail(absl::StrCat("null expression as ", Sv(what)));
  Nest nest(this);
  if (!nest.ok()) return TooDeep();
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
      if (std::string p = FloatLiteralProblem(e->as<FloatImmNode>()->value, e->dtype); !p.empty()) {
        return Fail(absl::StrCat(p, " (", Sv(what), ")"));
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
    return Fail(absl::StrCat("operands of ", op, " must be ", Sv(need), ", got ", DT(t), " (",
                             PrintExpr(e), ")"));
  }
  DType expect = IsComparison(n->op) || IsLogical(n->op) ? DType::kBool : t;
  if (e->dtype != expect) {
    return Fail(absl::StrCat(op, " yields ", DT(expect), " but the node says ", DT(e->dtype)));
  }
  return true;
}

bool Verifier::CheckCall(const CallNode* n) {
  std::string fn = absl::StrCat("T.", Sv(CallFnName(n->fn)));
  int arity = CallArity(n->fn);
  if (static_cast<int>(n->args.size()) != arity) {
    return Fail(absl::StrCat(fn, " takes ", arity, arity == 1 ? " argument" : " arguments",
                             ", got ", n->args.size()));
  }
  if (n->fn == CallFn::kThreadIndex) {
    if (!in_kernel_) return Fail(absl::StrCat(fn, " outside a T.Kernel"));
    if (n->dtype != DType::kInt32) {
      return Fail(absl::StrCat(fn, " yields int32 but the node says ", DT(n->dtype)));
    }
    return true;
  }
  for (size_t i = 0; i < n->args.size(); ++i) {
    if (!CheckExpr(n->args[i], absl::StrCat("argument ", i, " of ", fn))) return false;
    if (n->args[i]->dtype != n->args[0]->dtype) {
      return Fail(absl::StrCat("arguments of ", fn, " have different dtypes: ",
                               DT(n->args[0]->dtype), " vs ", DT(n->args[i]->dtype)));
    }
  }
  DType t = n->args[0]->dtype;
  if (n->fn == CallFn::kReinterpret) {
    if (t == DType::kBool || n->dtype == DType::kBool || DTypeBits(t) != DTypeBits(n->dtype)) {
      return Fail(absl::StrCat(fn, " of ", DT(t), " as ", DT(n->dtype),
                               ": both must be non-bool types of the same width"));
    }
    return true;
  }
  if (NeedsFloat(n->fn) && !IsFloat(t)) {
    return Fail(absl::StrCat(fn, " needs float arguments, got ", DT(t)));
  }
  if ((n->fn == CallFn::kCeilDiv || n->fn == CallFn::kPopcount || n->fn == CallFn::kClz) &&
      !IsInt(t)) {
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
    return Fail(absl::StrCat(Sv(role), " region of ", b->name, " has ", r.mins.size(), " mins and ",
                             r.extents.size(), " extents but ", b->name, " has rank ",
                             b->shape.size()));
  }
  for (size_t i = 0; i < r.mins.size(); ++i) {
    if (!CheckInt(r.mins[i], absl::StrCat("start ", i, " of ", Sv(role), " region of ", b->name)) ||
        !CheckPositive(r.extents[i],
                       absl::StrCat("extent ", i, " of ", Sv(role), " region of ", b->name)) ||
        !CheckLaunchInvariant(
            r.extents[i], absl::StrCat("extent ", i, " of ", Sv(role), " region of ", b->name))) {
      return false;
    }
  }
  return true;
}

bool Verifier::CheckShape(const Buffer& b) {
  if (b->shape.empty()) {
    return Fail(
        absl::StrCat(b->name, " has no dimensions (a 0-d buffer is one element: shape [1])"));
  }
  for (size_t i = 0; i < b->shape.size(); ++i) {
    if (!CheckPositive(b->shape[i], absl::StrCat("dim ", i, " of ", b->name))) return false;
  }
  return true;
}

bool Verifier::CheckValue(const Expr& v, DType t, bool literal_ok, std::string_view what) {
  if (!CheckExpr(v, what)) return false;
  if (literal_ok && v->kind == ExprKind::kFloatImm && v->dtype != t) {
    // The literal is converted to the destination's dtype.
    if (std::string p = FloatLiteralProblem(v->as<FloatImmNode>()->value, t); !p.empty()) {
      return Fail(absl::StrCat(p, " (", Sv(what), ")"));
    }
  }
  if (v->dtype == t || (literal_ok && IsLiteral(v) && t != DType::kBool)) return true;
  return Fail(absl::StrCat(Sv(what), " has dtype ", DT(v->dtype), ", expected ", DT(t), " (",
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
  Nest nest(this);
  if (!nest.ok()) return TooDeep();
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
    case StmtKind::kWhile: {
      const auto* n = s->as<WhileNode>();
      At at(this, Label("while"));
      if (!RequireKernel("while") || !CheckExpr(n->cond, "while condition")) return false;
      if (n->cond->dtype != DType::kBool) {
        return Fail(absl::StrCat("while condition must be bool, got ", DT(n->cond->dtype), " (",
                                 PrintExpr(n->cond), ")"));
      }
      return CheckBody(n->body);
    }
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
    // Dynamic extents are checked when the launch configuration is known.
    const int64_t limit = i == 0 ? kMaxGridX : kMaxGridYZ;
    if (std::optional<int64_t> g = AsConstInt(n->grid[i]); g && *g > limit) {
      return Fail(absl::StrCat("grid extent ", i, " is ", *g, "; CUDA launches at most ", limit,
                               " blocks along ",
                               i == 0   ? "x"
                               : i == 1 ? "y"
                                        : "z"));
    }
  }
  if (std::optional<InlineSourceProblem> p = CheckInlineSource(n->prelude)) {
    At at(this, absl::StrCat("prelude:", p->line, ":", p->column));
    return Fail(p->message);
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
  std::string op = absl::StrCat("T.alloc_", Sv(ScopeName(b->scope)));
  At at(this, absl::StrCat(op, " ", b->name));
  if (b->scope == Scope::kGlobal && in_kernel_) {
    return Fail(absl::StrCat("global workspace ", b->name,
                             " allocated inside a T.Kernel; T.alloc_global belongs at the top "
                             "level, between kernels"));
  }
  if (b->scope != Scope::kGlobal && !in_kernel_) {
    return Fail(absl::StrCat(Sv(ScopeName(b->scope)), " buffer ", b->name,
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
  std::string loop = absl::StrCat("T.", Sv(ForKindName(n->kind)));
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
    // order and stage index the statements the pipeline schedules: the
    // body's statements other than lets (a let binds a name for the
    // statements after it, as a Python local inside the loop does).
    const auto* seq = n->body ? n->body->as<SeqNode>() : nullptr;
    size_t count = 0;
    if (seq) {
      for (const Stmt& s : seq->stmts) count += s && s->kind != StmtKind::kLet ? 1 : 0;
    } else {
      count = n->body && n->body->kind == StmtKind::kLet ? 0 : 1;
    }
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

absl::Status Verifier::Run() {
  counters_.emplace_back();
  Frame frame(this);
  // An unnamed program is allowed (the emitters name its kernels).
  if (!program_.name.empty() && !CheckName(program_.name, "the program")) {
    return absl::InvalidArgumentError(error_);
  }
  if (program_.device_queries.size() > kMaxDeviceQueries) {
    return absl::InvalidArgumentError(absl::StrCat("the program records ",
                                                   program_.device_queries.size(),
                                                   " device queries; at most ", kMaxDeviceQueries));
  }
  for (const std::string& q : program_.device_queries) {
    if (q.size() > kMaxNameLength * 2 || q.find_first_of("\n\r") != std::string::npos) {
      return absl::InvalidArgumentError(
          "a device query record is longer than 512 characters or spans lines");
    }
  }
  for (const Var& v : program_.dyn_dims) {
    At at(this, absl::StrCat("dyn dim ", v ? v->name : "<null>"));
    if (!DefineIntVar(v, "dynamic dim")) break;
    launch_invariant_.insert(v.get());
  }
  if (program_.requirements.size() > kMaxRequirements) {
    Fail(absl::StrCat("the program records ", program_.requirements.size(),
                      " requirements; at most ", kMaxRequirements));
  }
  for (size_t i = 0; i < program_.requirements.size() && error_.empty(); ++i) {
    const Requirement& r = program_.requirements[i];
    At at(this, absl::StrCat("requirement ", i));
    if (r.message.size() > kMaxRequirementMessage ||
        r.message.find_first_of("\n\r") != std::string::npos) {
      Fail(absl::StrCat("a requirement's message is longer than ", kMaxRequirementMessage,
                        " characters or spans lines"));
      break;
    }
    if (!r.cond) {
      Fail("a requirement has no condition");
      break;
    }
    // Only the dynamic dims are in scope yet.
    if (!CheckValue(r.cond, DType::kBool, false, "its condition")) break;
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
      if (!CheckName(tp.var->name, "tile parameter")) break;
      bound_tile_params_[tp.var.get()] = *tp.value;
    } else {
      DefineIntVar(tp.var, "tile parameter");
      launch_invariant_.insert(tp.var.get());
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
                          Sv(ScopeName(p.tensor->scope))));
      } else {
        DefineBuffer(p.tensor);
      }
    } else if (p.scalar) {
      DefineVar(p.scalar, "scalar parameter");
      launch_invariant_.insert(p.scalar.get());
    } else {
      Fail("parameter is neither a tensor nor a scalar");
    }
  }
  for (const Param& p : program_.params) {
    if (!error_.empty() || !p.tensor) continue;
    At at(this, absl::StrCat("param ", p.tensor->name));
    if (!CheckShape(p.tensor) || !p.view) continue;
    const size_t rank = p.tensor->shape.size();
    if (p.view->shape.size() != rank || p.view->axes.size() != rank) {
      Fail(absl::StrCat("the strided view of ", p.tensor->name, " has rank ", p.view->shape.size(),
                        " and ", p.view->axes.size(), " axes; its buffer has rank ", rank));
      continue;
    }
    std::vector<bool> seen(rank, false);
    for (int32_t a : p.view->axes) {
      if (a < 0 || static_cast<size_t>(a) >= rank || seen[a]) {
        Fail(absl::StrCat("the axes of the strided view of ", p.tensor->name,
                          " are not a permutation of its dimensions"));
        break;
      }
      seen[a] = true;
    }
    for (size_t d = 0; d < rank && error_.empty(); ++d) {
      CheckPositive(p.view->shape[d], absl::StrCat("dim ", d, " of the view of ", p.tensor->name));
    }
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

}  // namespace verifier_internal

absl::Status Verify(const Program& program) { return verifier_internal::Verifier(program).Run(); }

}  // namespace tilec::ir
