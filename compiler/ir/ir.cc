#include "compiler/ir/ir.h"

#include <limits>

#include "compiler/ir/names.h"

namespace tilec::ir {

std::string_view BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSub: return "sub";
    case BinaryOp::kMul: return "mul";
    case BinaryOp::kDiv: return "div";
    case BinaryOp::kMod: return "mod";
    case BinaryOp::kFloorDiv: return "floordiv";
    case BinaryOp::kFloorMod: return "floormod";
    case BinaryOp::kMin: return "min";
    case BinaryOp::kMax: return "max";
    case BinaryOp::kEq: return "eq";
    case BinaryOp::kNe: return "ne";
    case BinaryOp::kLt: return "lt";
    case BinaryOp::kLe: return "le";
    case BinaryOp::kGt: return "gt";
    case BinaryOp::kGe: return "ge";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
    case BinaryOp::kBitAnd: return "bitand";
    case BinaryOp::kBitOr: return "bitor";
    case BinaryOp::kBitXor: return "bitxor";
    case BinaryOp::kShl: return "shl";
    case BinaryOp::kShr: return "shr";
  }
  return "?";
}

std::string_view BinaryOpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kMod: return "";  // C remainder, printed truncmod(a, b)
    case BinaryOp::kFloorDiv: return "//";
    case BinaryOp::kFloorMod: return "%";
    case BinaryOp::kMin:
    case BinaryOp::kMax: return "";  // printed T.min(a, b)
    case BinaryOp::kEq: return "==";
    case BinaryOp::kNe: return "!=";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
    case BinaryOp::kBitAnd: return "&";
    case BinaryOp::kBitOr: return "|";
    case BinaryOp::kBitXor: return "^";
    case BinaryOp::kShl: return "<<";
    case BinaryOp::kShr: return ">>";
  }
  return "?";
}

std::string_view UnaryOpName(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kNot: return "not";
    case UnaryOp::kBitNot: return "bitnot";
  }
  return "?";
}

namespace {
struct CallInfo {
  CallFn fn;
  std::string_view name;
  int arity;
};
constexpr CallInfo kCallInfo[] = {
    {CallFn::kAbs, "abs", 1},
    {CallFn::kCeilDiv, "ceildiv", 2},
    {CallFn::kExp, "exp", 1},
    {CallFn::kExp2, "exp2", 1},
    {CallFn::kLog, "log", 1},
    {CallFn::kLog2, "log2", 1},
    {CallFn::kSqrt, "sqrt", 1},
    {CallFn::kRsqrt, "rsqrt", 1},
    {CallFn::kTanh, "tanh", 1},
    {CallFn::kSigmoid, "sigmoid", 1},
    {CallFn::kSin, "sin", 1},
    {CallFn::kCos, "cos", 1},
    {CallFn::kErf, "erf", 1},
    {CallFn::kFloor, "floor", 1},
    {CallFn::kCeil, "ceil", 1},
    {CallFn::kRound, "round", 1},
    {CallFn::kPow, "pow", 2},
    {CallFn::kThreadIndex, "get_thread_binding", 0},
    {CallFn::kReinterpret, "reinterpret", 1},
    {CallFn::kTan, "tan", 1},
    {CallFn::kAsin, "asin", 1},
    {CallFn::kAcos, "acos", 1},
    {CallFn::kAtan, "atan", 1},
    {CallFn::kSinh, "sinh", 1},
    {CallFn::kCosh, "cosh", 1},
    {CallFn::kAsinh, "asinh", 1},
    {CallFn::kAcosh, "acosh", 1},
    {CallFn::kAtanh, "atanh", 1},
    {CallFn::kLog10, "log10", 1},
    {CallFn::kLog1p, "log1p", 1},
    {CallFn::kExp10, "exp10", 1},
    {CallFn::kExpm1, "expm1", 1},
    {CallFn::kTrunc, "trunc", 1},
    {CallFn::kAtan2, "atan2", 2},
    {CallFn::kFmod, "fmod", 2},
    {CallFn::kHypot, "hypot", 2},
    {CallFn::kCopysign, "copysign", 2},
    {CallFn::kPopcount, "popcount", 1},
    {CallFn::kClz, "clz", 1},
};
static_assert(std::size(kCallInfo) == kNumCallFns);
}  // namespace

std::string_view CallFnName(CallFn fn) { return kCallInfo[static_cast<int>(fn)].name; }
int CallArity(CallFn fn) { return kCallInfo[static_cast<int>(fn)].arity; }
std::optional<CallFn> ParseCallFn(std::string_view name) {
  for (const CallInfo& c : kCallInfo) {
    if (c.name == name) return c.fn;
  }
  return std::nullopt;
}

bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEq && op <= BinaryOp::kGe; }
bool IsLogical(BinaryOp op) { return op == BinaryOp::kAnd || op == BinaryOp::kOr; }

LoadNode::LoadNode(DType t, Buffer b, std::vector<Expr> i)
    : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(i)) {}

Expr IntImm(int64_t v, DType t) { return std::make_shared<IntImmNode>(t, v); }
Expr BoolImm(bool v) { return std::make_shared<IntImmNode>(DType::kBool, v ? 1 : 0); }
Expr FloatImm(double v, DType t) { return std::make_shared<FloatImmNode>(t, v); }
Expr Infinity(DType t) { return FloatImm(std::numeric_limits<double>::infinity(), t); }
Var MakeVar(std::string name, DType t) {
  return std::make_shared<VarNode>(t, SpellNonAscii(std::move(name)));
}

Expr Binary(BinaryOp op, Expr a, Expr b) {
  DType t = (IsComparison(op) || IsLogical(op)) ? DType::kBool : a->dtype;
  return std::make_shared<BinaryNode>(t, op, std::move(a), std::move(b));
}
Expr Unary(UnaryOp op, Expr a) {
  DType t = op == UnaryOp::kNot ? DType::kBool : a->dtype;
  return std::make_shared<UnaryNode>(t, op, std::move(a));
}
Expr Select(Expr cond, Expr t, Expr f) {
  DType ty = t->dtype;
  return std::make_shared<SelectNode>(ty, std::move(cond), std::move(t), std::move(f));
}
Expr Cast(DType t, Expr v) { return std::make_shared<CastNode>(t, std::move(v)); }
Expr Call(CallFn fn, std::vector<Expr> args) {
  DType t = args.empty() ? DType::kInt32 : args[0]->dtype;
  return std::make_shared<CallNode>(t, fn, std::move(args));
}
Expr Load(Buffer b, std::vector<Expr> indices) {
  DType t = b->dtype;
  return std::make_shared<LoadNode>(t, std::move(b), std::move(indices));
}

std::optional<int64_t> AsConstInt(const Expr& e) {
  if (const auto* imm = e ? e->as<IntImmNode>() : nullptr) return imm->value;
  return std::nullopt;
}

std::string_view ScopeName(Scope s) {
  switch (s) {
    case Scope::kGlobal: return "global";
    case Scope::kShared: return "shared";
    case Scope::kFragment: return "fragment";
    case Scope::kLocal: return "local";
    case Scope::kVar: return "var";
  }
  return "?";
}

Buffer MakeBuffer(std::string name, DType t, std::vector<Expr> shape, Scope scope) {
  return std::make_shared<BufferNode>(
      BufferNode{SpellNonAscii(std::move(name)), t, std::move(shape), scope});
}

Region FullRegion(const Buffer& b) {
  Region r{b, {}, b->shape};
  r.mins.assign(b->shape.size(), IntImm(0));
  return r;
}

std::vector<Expr> ViewStrides(const Buffer& storage, const TensorView& view) {
  std::vector<Expr> strides(view.axes.size());
  Expr stride = IntImm(1);
  for (size_t k = storage->shape.size(); k-- > 0;) {
    if (k < view.axes.size() && view.axes[k] >= 0 &&
        static_cast<size_t>(view.axes[k]) < strides.size()) {
      strides[view.axes[k]] = stride;
    }
    const Expr& n = storage->shape[k];
    std::optional<int64_t> a = AsConstInt(stride), b = AsConstInt(n);
    if (a && b) {
      stride = IntImm(*a * *b, n->dtype);
    } else if (a && *a == 1) {
      stride = n;
    } else {
      stride =
          Binary(BinaryOp::kMul, stride, n->dtype == stride->dtype ? n : Cast(stride->dtype, n));
    }
  }
  return strides;
}

std::string_view AtomicOpName(AtomicOp op) {
  switch (op) {
    case AtomicOp::kAdd: return "add";
    case AtomicOp::kMax: return "max";
    case AtomicOp::kMin: return "min";
  }
  return "?";
}

std::string_view ForKindName(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "Parallel";
    case ForKind::kPipelined: return "Pipelined";
    case ForKind::kUnrolled: return "unroll";
    case ForKind::kVectorized: return "vectorized";
  }
  return "?";
}

std::string_view GemmPolicyName(GemmPolicy p) {
  switch (p) {
    case GemmPolicy::kSquare: return "Square";
    case GemmPolicy::kFullRow: return "FullRow";
    case GemmPolicy::kFullCol: return "FullCol";
  }
  return "?";
}

std::string_view ReduceKindName(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
    case ReduceKind::kAbsSum: return "abssum";
    case ReduceKind::kAbsMax: return "absmax";
  }
  return "?";
}

Stmt Seq(std::vector<Stmt> stmts) { return std::make_shared<SeqNode>(std::move(stmts)); }
Stmt Allocate(Buffer b, Expr init) {
  return std::make_shared<AllocateNode>(std::move(b), std::move(init));
}
Stmt If(Expr cond, Stmt then_case, Stmt else_case) {
  return std::make_shared<IfNode>(std::move(cond), std::move(then_case), std::move(else_case));
}
Stmt While(Expr cond, Stmt body) {
  return std::make_shared<WhileNode>(std::move(cond), std::move(body));
}
Stmt Store(Buffer b, std::vector<Expr> indices, Expr value) {
  return std::make_shared<StoreNode>(std::move(b), std::move(indices), std::move(value));
}
Stmt Let(Var v, Expr value) { return std::make_shared<LetNode>(std::move(v), std::move(value)); }
Stmt For(Var v, Expr min, Expr extent, ForKind kind, Stmt body) {
  auto f = std::make_shared<ForNode>();
  f->var = std::move(v);
  f->min = std::move(min);
  f->extent = std::move(extent);
  f->kind = kind;
  f->body = std::move(body);
  return f;
}
Stmt Copy(Region src, Region dst, bool disable_tma) {
  return std::make_shared<CopyNode>(std::move(src), std::move(dst), disable_tma);
}
Stmt Fill(Region dst, Expr value) {
  return std::make_shared<FillNode>(std::move(dst), std::move(value));
}

}  // namespace tilec::ir
