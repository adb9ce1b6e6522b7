#include "compiler/frontend/value_ops.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "compiler/frontend/staging_budget.h"
#include "compiler/frontend/str_util.h"

namespace tilec::frontend {
namespace {

using ir::DType;

absl::Status Error(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

bool FitsInt32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

bool FitsIntType(int64_t v, DType t) {
  switch (t) {
    case DType::kInt8: return v >= -128 && v <= 127;
    case DType::kUInt8: return v >= 0 && v <= 255;
    case DType::kInt16: return v >= -32768 && v <= 32767;
    case DType::kUInt16: return v >= 0 && v <= 65535;
    case DType::kInt32: return FitsInt32(v);
    case DType::kUInt32: return v >= 0 && v <= std::numeric_limits<uint32_t>::max();
    case DType::kUInt64: return v >= 0;  // literals above 2^63 - 1 are not staged
    case DType::kInt64: return true;
    default: return false;
  }
}

std::string OpText(BinOpKind op) { return std::string(BinOpSymbol(op)); }

absl::Status Unsupported(BinOpKind op, const Value& a, const Value& b) {
  return Error(Cat("unsupported operand types for ", OpText(op), ": ", DescribeValue(a), " and ",
                   DescribeValue(b)));
}

ParamSet Union(const Value& a, const Value& b) {
  ParamSet p = a.params;
  p.Merge(b.params);
  return p;
}

absl::StatusOr<Value> IntResult(bool overflow, int64_t v, const Value& a, const Value& b) {
  if (overflow) {
    return Error(Cat("integer overflow in ", ValueRepr(a), " and ", ValueRepr(b),
                     " (staging integers are 64-bit)"));
  }
  return Value::Int(v, Union(a, b));
}

absl::StatusOr<int64_t> IntPow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) return Error("integer overflow in **");
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base))
      return Error("integer overflow in **");
  }
  return result;
}

absl::StatusOr<Value> NumberBinOp(BinOpKind op, const Value& a, const Value& b) {
  bool floats = a.kind == ValueKind::kFloat || b.kind == ValueKind::kFloat;
  if (op == BinOpKind::kDiv) {
    if (b.AsFloat() == 0) return Error("division by zero");
    return Value::Float(a.AsFloat() / b.AsFloat(), Union(a, b));
  }
  if (floats) {
    double x = a.AsFloat(), y = b.AsFloat();
    switch (op) {
      case BinOpKind::kAdd: return Value::Float(x + y, Union(a, b));
      case BinOpKind::kSub: return Value::Float(x - y, Union(a, b));
      case BinOpKind::kMul: return Value::Float(x * y, Union(a, b));
      case BinOpKind::kFloorDiv:
        if (y == 0) return Error("float division by zero");
        return Value::Float(std::floor(x / y), Union(a, b));
      case BinOpKind::kMod: {
        if (y == 0) return Error("float modulo by zero");
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value::Float(m, Union(a, b));
      }
      case BinOpKind::kPow: return Value::Float(std::pow(x, y), Union(a, b));
      default: return Unsupported(op, a, b);
    }
  }
  int64_t x = a.AsInt(), y = b.AsInt(), r = 0;
  bool both_bool = a.kind == ValueKind::kBool && b.kind == ValueKind::kBool;
  switch (op) {
    case BinOpKind::kAdd: {
      bool overflow = __builtin_add_overflow(x, y, &r);
      return IntResult(overflow, r, a, b);
    }
    case BinOpKind::kSub: {
      bool overflow = __builtin_sub_overflow(x, y, &r);
      return IntResult(overflow, r, a, b);
    }
    case BinOpKind::kMul: {
      bool overflow = __builtin_mul_overflow(x, y, &r);
      return IntResult(overflow, r, a, b);
    }
    case BinOpKind::kFloorDiv:
      if (y == 0) return Error("integer division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return IntResult(true, 0, a, b);
      return Value::Int(FloorDiv(x, y), Union(a, b));
    case BinOpKind::kMod:
      if (y == 0) return Error("integer modulo by zero");
      if (y == -1) return Value::Int(0, Union(a, b));
      return Value::Int(FloorMod(x, y), Union(a, b));
    case BinOpKind::kPow: {
      if (y < 0)
        return Value::Float(std::pow(static_cast<double>(x), static_cast<double>(y)), Union(a, b));
      absl::StatusOr<int64_t> p = IntPow(x, y);
      if (!p.ok()) return p.status();
      return Value::Int(*p, Union(a, b));
    }
    case BinOpKind::kLShift:
      if (y < 0) return Error("negative shift count");
      if (y >= 63 || (x != 0 && (x > (std::numeric_limits<int64_t>::max() >> y) ||
                                 x < (std::numeric_limits<int64_t>::min() >> y)))) {
        return IntResult(x != 0, 0, a, b);
      }
      return Value::Int(static_cast<int64_t>(static_cast<uint64_t>(x) << y), Union(a, b));
    case BinOpKind::kRShift:
      if (y < 0) return Error("negative shift count");
      return Value::Int(y >= 63 ? (x < 0 ? -1 : 0) : (x >> y), Union(a, b));
    case BinOpKind::kBitAnd: return both_bool ? Value::Bool(x & y) : Value::Int(x & y, Union(a, b));
    case BinOpKind::kBitOr: return both_bool ? Value::Bool(x | y) : Value::Int(x | y, Union(a, b));
    case BinOpKind::kBitXor: return both_bool ? Value::Bool(x ^ y) : Value::Int(x ^ y, Union(a, b));
    default: return Unsupported(op, a, b);
  }
}

absl::StatusOr<Value> Repeat(const Value& seq, const Value& count) {
  int64_t n = std::max<int64_t>(0, count.AsInt());
  size_t unit = seq.kind == ValueKind::kStr ? seq.s.size() : seq.Items().size();
  if (unit == 0) n = 0;
  if (n > 0 && static_cast<uint64_t>(n) > kMaxStagingItems / unit) {
    return Error(Cat("sequence repetition by ", n, " is too large"));
  }
  if (seq.kind == ValueKind::kStr) {
    std::string out;
    for (int64_t k = 0; k < n; ++k) out += seq.s;
    return Value::Str(out);
  }
  ValueList out;
  for (int64_t k = 0; k < n; ++k) {
    for (const Value& v : seq.Items()) out.push_back(v);
  }
  return seq.kind == ValueKind::kList ? Value::List(std::move(out)) : Value::Tuple(std::move(out));
}

absl::StatusOr<Value> StagingBinOp(BinOpKind op, const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) return NumberBinOp(op, a, b);
  if (op == BinOpKind::kAdd) {
    size_t total =
        a.kind == ValueKind::kStr ? a.s.size() + b.s.size() : a.Items().size() + b.Items().size();
    if (total > kMaxStagingItems) return Error("the result of `+` is too large");
    if (a.kind == ValueKind::kStr && b.kind == ValueKind::kStr) return Value::Str(a.s + b.s);
    if ((a.kind == ValueKind::kTuple && b.kind == ValueKind::kTuple) ||
        (a.kind == ValueKind::kList && b.kind == ValueKind::kList)) {
      ValueList out = a.Items();
      for (const Value& v : b.Items()) out.push_back(v);
      return a.kind == ValueKind::kList ? Value::List(std::move(out))
                                        : Value::Tuple(std::move(out));
    }
  }
  if (op == BinOpKind::kMul) {
    bool a_seq = a.IsSequence() || a.kind == ValueKind::kStr;
    bool b_seq = b.IsSequence() || b.kind == ValueKind::kStr;
    if (a_seq && b.IsIntLike()) return Repeat(a, b);
    if (b_seq && a.IsIntLike()) return Repeat(b, a);
  }
  if (op == BinOpKind::kMod && a.kind == ValueKind::kStr) {
    return Error("%-formatting of strings is not supported");
  }
  return Unsupported(op, a, b);
}

ir::Expr RuntimeOf(const Value& v) {
  switch (v.kind) {
    case ValueKind::kExpr: return v.expr;
    case ValueKind::kElement: return ir::Load(v.element->buffer, v.element->indices);
    case ValueKind::kBuffer: return ir::Load(v.buffer, {ir::IntImm(0)});
    default: return nullptr;
  }
}

std::optional<ir::BinaryOp> ArithOp(BinOpKind op) {
  switch (op) {
    case BinOpKind::kAdd: return ir::BinaryOp::kAdd;
    case BinOpKind::kSub: return ir::BinaryOp::kSub;
    case BinOpKind::kMul: return ir::BinaryOp::kMul;
    case BinOpKind::kDiv: return ir::BinaryOp::kDiv;
    case BinOpKind::kFloorDiv: return ir::BinaryOp::kFloorDiv;
    case BinOpKind::kMod: return ir::BinaryOp::kFloorMod;
    case BinOpKind::kLShift: return ir::BinaryOp::kShl;
    case BinOpKind::kRShift: return ir::BinaryOp::kShr;
    case BinOpKind::kBitAnd: return ir::BinaryOp::kBitAnd;
    case BinOpKind::kBitOr: return ir::BinaryOp::kBitOr;
    case BinOpKind::kBitXor: return ir::BinaryOp::kBitXor;
    default: return std::nullopt;
  }
}

bool IsIntegral(DType t) { return ir::IsInt(t) || t == DType::kBool; }

}  // namespace

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorMod(int64_t a, int64_t b) {
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

bool IsRuntimeScalar(const Value& v) {
  return v.kind == ValueKind::kExpr || v.kind == ValueKind::kElement ||
         (v.kind == ValueKind::kBuffer && v.buffer && v.buffer->scope == ir::Scope::kVar);
}

ir::Expr MakeLiteral(const Value& number, DType t) {
  if (ir::IsFloat(t)) return ir::FloatImm(number.AsFloat(), t);
  if (t == DType::kBool)
    return ir::BoolImm(number.kind == ValueKind::kFloat ? number.f != 0 : number.AsInt() != 0);
  int64_t v = number.kind == ValueKind::kFloat ? static_cast<int64_t>(number.f) : number.AsInt();
  return ir::IntImm(v, t);
}

absl::StatusOr<ir::Expr> ToExpr(const Value& v) {
  switch (v.kind) {
    case ValueKind::kBool: return ir::BoolImm(v.b);
    case ValueKind::kInt: return ir::IntImm(v.i, FitsInt32(v.i) ? DType::kInt32 : DType::kInt64);
    case ValueKind::kFloat: return ir::FloatImm(v.f, DType::kFloat32);
    default: break;
  }
  if (IsRuntimeScalar(v)) return RuntimeOf(v);
  if (v.kind == ValueKind::kBuffer) {
    return Error(Cat("a whole ", DescribeValue(v),
                     " cannot be used as a scalar; index it (buffer[i, ...])"));
  }
  if (v.kind == ValueKind::kRegion) {
    return Error(Cat("a ", DescribeValue(v), " cannot be used as a scalar value"));
  }
  return Error(Cat("expected a number or a runtime scalar, got ", DescribeValue(v)));
}

ir::Expr CastTo(DType t, const ir::Expr& e) {
  if (!e || e->dtype == t) return e;
  if (const auto* i = e->as<ir::IntImmNode>()) {
    if (ir::IsFloat(t)) return ir::FloatImm(static_cast<double>(i->value), t);
    if (t == DType::kBool) return ir::BoolImm(i->value != 0);
    if (FitsIntType(i->value, t)) return ir::IntImm(i->value, t);
  }
  if (const auto* f = e->as<ir::FloatImmNode>()) {
    if (ir::IsFloat(t)) return ir::FloatImm(f->value, t);
  }
  return ir::Cast(t, e);
}

absl::StatusOr<ir::Expr> ToExprAs(const Value& v, DType t) {
  if (v.IsNumber()) {
    if (ir::IsInt(t) && v.kind != ValueKind::kFloat && !FitsIntType(v.AsInt(), t)) {
      return Error(Cat("the value ", ValueRepr(v), " does not fit in ", ir::DTypeName(t)));
    }
    return MakeLiteral(v, t);
  }
  absl::StatusOr<ir::Expr> e = ToExpr(v);
  if (!e.ok()) return e.status();
  return CastTo(t, *e);
}

std::pair<ir::Expr, ir::Expr> MatchTypes(ir::Expr a, ir::Expr b) {
  DType ta = a->dtype, tb = b->dtype;
  if (ta == tb) return {a, b};
  if (ta == DType::kBool) return {CastTo(tb, a), b};
  if (tb == DType::kBool) return {a, CastTo(ta, b)};
  bool fa = ir::IsFloat(ta), fb = ir::IsFloat(tb);
  if (fa && !fb) return {a, CastTo(ta, b)};
  if (fb && !fa) return {CastTo(tb, a), b};
  int ba = ir::DTypeBits(ta), bb = ir::DTypeBits(tb);
  if (ba > bb) return {a, CastTo(ta, b)};
  if (bb > ba) return {CastTo(tb, a), b};
  if (fa) return {CastTo(DType::kFloat32, a), CastTo(DType::kFloat32, b)};
  DType signed_type = ir::IsSigned(ta) ? ta : tb;
  return {CastTo(signed_type, a), CastTo(signed_type, b)};
}

absl::StatusOr<std::pair<ir::Expr, ir::Expr>> PromoteOperands(const Value& a, const Value& b) {
  auto literal_for = [](const Value& lit, DType other) -> ir::Expr {
    if (lit.kind == ValueKind::kFloat) {
      return ir::IsFloat(other) ? ir::FloatImm(lit.f, other) : ir::FloatImm(lit.f, DType::kFloat32);
    }
    if (lit.kind == ValueKind::kBool && other == DType::kBool) return ir::BoolImm(lit.b);
    if (ir::IsFloat(other)) return ir::FloatImm(static_cast<double>(lit.AsInt()), other);
    if (ir::IsInt(other) && FitsIntType(lit.AsInt(), other)) return ir::IntImm(lit.AsInt(), other);
    int64_t v = lit.AsInt();
    return ir::IntImm(v, FitsInt32(v) ? DType::kInt32 : DType::kInt64);
  };
  ir::Expr x, y;
  if (a.IsNumber() && IsRuntimeScalar(b)) {
    y = RuntimeOf(b);
    x = literal_for(a, y->dtype);
  } else if (b.IsNumber() && IsRuntimeScalar(a)) {
    x = RuntimeOf(a);
    y = literal_for(b, x->dtype);
  } else {
    absl::StatusOr<ir::Expr> ea = ToExpr(a);
    if (!ea.ok()) return ea.status();
    absl::StatusOr<ir::Expr> eb = ToExpr(b);
    if (!eb.ok()) return eb.status();
    x = *ea;
    y = *eb;
  }
  return MatchTypes(std::move(x), std::move(y));
}

ir::Expr AsBool(const ir::Expr& e) {
  if (e->dtype == DType::kBool) return e;
  if (ir::IsFloat(e->dtype)) return ir::Binary(ir::BinaryOp::kNe, e, ir::FloatImm(0, e->dtype));
  return ir::Binary(ir::BinaryOp::kNe, e, ir::IntImm(0, e->dtype));
}

ir::Expr FoldBinary(ir::BinaryOp op, ir::Expr a, ir::Expr b) {
  const auto* x = a->as<ir::IntImmNode>();
  const auto* y = b->as<ir::IntImmNode>();
  if (x && y && a->dtype == b->dtype && ir::IsInt(a->dtype)) {
    int64_t r = 0;
    bool ok = true;
    switch (op) {
      case ir::BinaryOp::kAdd: ok = !__builtin_add_overflow(x->value, y->value, &r); break;
      case ir::BinaryOp::kSub: ok = !__builtin_sub_overflow(x->value, y->value, &r); break;
      case ir::BinaryOp::kMul: ok = !__builtin_mul_overflow(x->value, y->value, &r); break;
      case ir::BinaryOp::kFloorDiv:
        ok = y->value != 0 && y->value != -1;
        if (ok) r = FloorDiv(x->value, y->value);
        break;
      case ir::BinaryOp::kFloorMod:
        ok = y->value != 0 && y->value != -1;
        if (ok) r = FloorMod(x->value, y->value);
        break;
      case ir::BinaryOp::kMin: r = std::min(x->value, y->value); break;
      case ir::BinaryOp::kMax: r = std::max(x->value, y->value); break;
      default: ok = false;
    }
    if (ok && FitsIntType(r, a->dtype)) return ir::IntImm(r, a->dtype);
  }
  return ir::Binary(op, std::move(a), std::move(b));
}

namespace {
absl::StatusOr<Value> RuntimeBinOp(BinOpKind op, const Value& a, const Value& b) {
  if (!(a.IsNumber() || IsRuntimeScalar(a)) || !(b.IsNumber() || IsRuntimeScalar(b))) {
    return Unsupported(op, a, b);
  }
  if (op == BinOpKind::kMatMul) return Unsupported(op, a, b);
  absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(a, b);
  if (!ops.ok()) return ops.status();
  auto [x, y] = *ops;
  DType t = x->dtype;
  if (op == BinOpKind::kPow) {
    if (!ir::IsFloat(t)) {
      x = CastTo(DType::kFloat32, x);
      y = CastTo(DType::kFloat32, y);
    }
    return Value::Runtime(ir::Call(ir::CallFn::kPow, {x, y}));
  }
  if (op == BinOpKind::kDiv && IsIntegral(t)) {
    return Error(
        "`/` between integer runtime values is ambiguous (as in TileLang); use `//` for floor "
        "division, or make an operand a float");
  }
  bool bit_op = op == BinOpKind::kLShift || op == BinOpKind::kRShift || op == BinOpKind::kBitAnd ||
                op == BinOpKind::kBitOr || op == BinOpKind::kBitXor;
  if (bit_op && ir::IsFloat(t)) {
    return Error(Cat("`", OpText(op), "` needs integer operands, got ", ir::DTypeName(t)));
  }
  if (bit_op && t == DType::kBool) {
    if (op == BinOpKind::kBitAnd) return Value::Runtime(ir::Binary(ir::BinaryOp::kAnd, x, y));
    if (op == BinOpKind::kBitOr) return Value::Runtime(ir::Binary(ir::BinaryOp::kOr, x, y));
  }
  if (t == DType::kBool && !bit_op) {
    x = CastTo(DType::kInt32, x);
    y = CastTo(DType::kInt32, y);
  }
  std::optional<ir::BinaryOp> irop = ArithOp(op);
  if (!irop) return Unsupported(op, a, b);
  return Value::Runtime(FoldBinary(*irop, x, y));
}
}  // namespace

absl::StatusOr<Value> ApplyBinOp(BinOpKind op, const Value& a, const Value& b) {
  if (std::optional<absl::StatusOr<Value>> h = HostTensorBinOp(op, a, b)) return *h;
  bool runtime = IsRuntimeScalar(a) || IsRuntimeScalar(b);
  if (!runtime) return StagingBinOp(op, a, b);
  absl::StatusOr<Value> r = RuntimeBinOp(op, a, b);
  // Runtime results keep the provenance of the staging numbers they used, so
  // that `A[k * bk:(k + 1) * bk]` still knows its extent came from `bk`.
  if (r.ok()) r->params = Union(a, b);
  return r;
}

absl::StatusOr<Value> ApplyUnaryOp(UnaryOpKind op, const Value& a) {
  if (a.kind == ValueKind::kHostTensor && (op == UnaryOpKind::kNeg || op == UnaryOpKind::kPos)) {
    return a;
  }
  if (IsRuntimeScalar(a)) {
    ir::Expr e = RuntimeOf(a);
    switch (op) {
      case UnaryOpKind::kPos: return Value::Runtime(e);
      case UnaryOpKind::kNot: return Value::Runtime(ir::Unary(ir::UnaryOp::kNot, AsBool(e)));
      case UnaryOpKind::kNeg:
        if (e->dtype == DType::kBool) e = CastTo(DType::kInt32, e);
        if (const auto* f = e->as<ir::FloatImmNode>())
          return Value::Runtime(ir::FloatImm(-f->value, e->dtype));
        if (const auto* i = e->as<ir::IntImmNode>()) {
          if (i->value != std::numeric_limits<int64_t>::min() && FitsIntType(-i->value, e->dtype)) {
            return Value::Runtime(ir::IntImm(-i->value, e->dtype));
          }
        }
        return Value::Runtime(ir::Unary(ir::UnaryOp::kNeg, e));
      case UnaryOpKind::kInvert:
        if (!ir::IsInt(e->dtype)) {
          return Error(Cat("`~` needs an integer operand, got ", ir::DTypeName(e->dtype)));
        }
        return Value::Runtime(ir::Unary(ir::UnaryOp::kBitNot, e));
    }
  }
  if (op == UnaryOpKind::kNot) {
    std::optional<bool> t = Truthy(a);
    if (!t) return Error(Cat("`not` of a ", DescribeValue(a), " is not supported"));
    return Value::Bool(!*t);
  }
  if (!a.IsNumber()) {
    return Error(Cat("bad operand type for unary ", UnaryOpSymbol(op), ": ", DescribeValue(a)));
  }
  switch (op) {
    case UnaryOpKind::kPos: return a.kind == ValueKind::kBool ? Value::Int(a.AsInt(), a.params) : a;
    case UnaryOpKind::kNeg:
      if (a.kind == ValueKind::kFloat) return Value::Float(-a.f, a.params);
      if (a.AsInt() == std::numeric_limits<int64_t>::min()) return Error("integer overflow in -");
      return Value::Int(-a.AsInt(), a.params);
    case UnaryOpKind::kInvert:
      if (a.kind == ValueKind::kFloat) return Error("bad operand type for unary ~: float");
      return Value::Int(~a.AsInt(), a.params);
    case UnaryOpKind::kNot: break;
  }
  return Error("bad unary operator");
}

namespace {
absl::StatusOr<Value> CompareValues(CmpOpKind op, const Value& a, const Value& b);
}  // namespace

absl::StatusOr<Value> ApplyCompare(CmpOpKind op, const Value& a, const Value& b) {
  // One step per comparison. Comparing sequences also charges item by item
  // (StagingEquals) and gives up once the budget is spent: then the budget's
  // error is the answer, before and after.
  if (absl::Status spent = ChargeStaging(1); !spent.ok()) return spent;
  absl::StatusOr<Value> r = CompareValues(op, a, b);
  if (absl::Status spent = ChargeStaging(0); !spent.ok()) return spent;
  return r;
}

namespace {
absl::StatusOr<Value> CompareValues(CmpOpKind op, const Value& a, const Value& b) {
  if (op == CmpOpKind::kIs || op == CmpOpKind::kIsNot) {
    bool same;
    if (a.kind == ValueKind::kNone || b.kind == ValueKind::kNone) {
      same = a.kind == b.kind;
    } else if (a.kind == ValueKind::kBool && b.kind == ValueKind::kBool) {
      same = a.b == b.b;
    } else {
      std::optional<bool> eq = StagingEquals(a, b);
      same = a.kind == b.kind && eq.value_or(false) &&
             (a.IsNumber() || a.kind == ValueKind::kStr || a.kind == ValueKind::kDType ||
              a.kind == ValueKind::kGemmPolicy || a.kind == ValueKind::kModule ||
              a.kind == ValueKind::kBuffer || a.kind == ValueKind::kFunction ||
              (a.kind == ValueKind::kList && a.list == b.list) ||
              (a.kind == ValueKind::kTuple && a.tuple == b.tuple) ||
              (a.kind == ValueKind::kDict && a.dict == b.dict));
    }
    return Value::Bool(op == CmpOpKind::kIs ? same : !same);
  }
  if (op == CmpOpKind::kIn || op == CmpOpKind::kNotIn) {
    bool found = false;
    if (b.kind == ValueKind::kStr && a.kind == ValueKind::kStr) {
      if (absl::Status c = ChargeSearch(b.s.size(), a.s.size()); !c.ok()) return c;
      found = b.s.find(a.s) != std::string::npos;
    } else if (b.IsSequence() || b.kind == ValueKind::kDict || b.kind == ValueKind::kSet) {
      if (b.kind == ValueKind::kSet) {
        for (const Value& item : *b.list) {
          std::optional<bool> eq = StagingEquals(a, item);
          if (!eq) return Error("`in` with a runtime value is not supported");
          if (*eq) found = true;
        }
      } else if (b.kind == ValueKind::kDict) {
        for (const auto& [k, v] : *b.dict) {
          if (StagingEquals(a, k).value_or(false)) found = true;
        }
      } else {
        for (const Value& item : b.Items()) {
          std::optional<bool> eq = StagingEquals(a, item);
          if (!eq) return Error("`in` with a runtime value is not supported");
          if (*eq) found = true;
        }
      }
    } else if (b.kind == ValueKind::kRange) {
      const RangeValue& r = *b.range;
      if (a.IsIntLike()) {
        int64_t x = a.AsInt();
        bool in_bounds = r.step > 0 ? (x >= r.start && x < r.stop) : (x <= r.start && x > r.stop);
        found = in_bounds && FloorMod(x - r.start, r.step) == 0;
      }
    } else {
      return Error(Cat("argument of type ", DescribeValue(b), " is not iterable"));
    }
    return Value::Bool(op == CmpOpKind::kIn ? found : !found);
  }
  bool runtime = IsRuntimeScalar(a) || IsRuntimeScalar(b);
  if (runtime) {
    if (!(a.IsNumber() || IsRuntimeScalar(a)) || !(b.IsNumber() || IsRuntimeScalar(b))) {
      return Error(Cat("cannot compare ", DescribeValue(a), " and ", DescribeValue(b)));
    }
    absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(a, b);
    if (!ops.ok()) return ops.status();
    ir::BinaryOp irop = ir::BinaryOp::kEq;
    switch (op) {
      case CmpOpKind::kEq: irop = ir::BinaryOp::kEq; break;
      case CmpOpKind::kNotEq: irop = ir::BinaryOp::kNe; break;
      case CmpOpKind::kLt: irop = ir::BinaryOp::kLt; break;
      case CmpOpKind::kLtE: irop = ir::BinaryOp::kLe; break;
      case CmpOpKind::kGt: irop = ir::BinaryOp::kGt; break;
      case CmpOpKind::kGtE: irop = ir::BinaryOp::kGe; break;
      default: break;
    }
    return Value::Runtime(ir::Binary(irop, ops->first, ops->second));
  }
  if (op == CmpOpKind::kEq || op == CmpOpKind::kNotEq) {
    std::optional<bool> eq = StagingEquals(a, b);
    if (!eq && a.IsSequence() && b.IsSequence()) {
      // Equal sizes, some items known only at run time (`A.shape == [M, K]`
      // with dynamic sizes): every pair equal.
      ir::Expr all;
      for (size_t k = 0; k < a.Items().size(); ++k) {
        absl::StatusOr<Value> item = ApplyCompare(CmpOpKind::kEq, a.Items()[k], b.Items()[k]);
        if (!item.ok()) return item.status();
        if (item->kind != ValueKind::kExpr) continue;  // equal at staging time
        all = all ? ir::Binary(ir::BinaryOp::kAnd, all, item->expr) : item->expr;
      }
      if (!all)
        return absl::InternalError("compiler bug: a sequence comparison found no runtime item");
      return Value::Runtime(op == CmpOpKind::kEq ? all : ir::Unary(ir::UnaryOp::kNot, all));
    }
    if (!eq) return Error("comparison with a runtime value is not supported here");
    return Value::Bool(op == CmpOpKind::kEq ? *eq : !*eq);
  }
  int cmp = 0;
  if (a.IsNumber() && b.IsNumber()) {
    if (a.kind == ValueKind::kFloat || b.kind == ValueKind::kFloat) {
      double x = a.AsFloat(), y = b.AsFloat();
      if (std::isnan(x) || std::isnan(y)) return Value::Bool(false);
      cmp = x < y ? -1 : (x > y ? 1 : 0);
    } else {
      int64_t x = a.AsInt(), y = b.AsInt();
      cmp = x < y ? -1 : (x > y ? 1 : 0);
    }
  } else if (a.kind == ValueKind::kStr && b.kind == ValueKind::kStr) {
    cmp = a.s.compare(b.s);
    cmp = cmp < 0 ? -1 : (cmp > 0 ? 1 : 0);
  } else if (a.IsSequence() && b.IsSequence() && a.kind == b.kind) {
    const ValueList& x = a.Items();
    const ValueList& y = b.Items();
    size_t n = std::min(x.size(), y.size());
    for (size_t k = 0; k < n && cmp == 0; ++k) {
      std::optional<bool> eq = StagingEquals(x[k], y[k]);
      if (eq.value_or(false)) continue;
      absl::StatusOr<Value> lt = ApplyCompare(CmpOpKind::kLt, x[k], y[k]);
      if (!lt.ok()) return lt.status();
      cmp = lt->b ? -1 : 1;
    }
    if (cmp == 0) cmp = x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  } else {
    return Error(Cat("`", CmpOpSymbol(op), "` is not supported between ", DescribeValue(a), " and ",
                     DescribeValue(b)));
  }
  switch (op) {
    case CmpOpKind::kLt: return Value::Bool(cmp < 0);
    case CmpOpKind::kLtE: return Value::Bool(cmp <= 0);
    case CmpOpKind::kGt: return Value::Bool(cmp > 0);
    case CmpOpKind::kGtE: return Value::Bool(cmp >= 0);
    default: break;
  }
  return Error("bad comparison operator");
}

}  // namespace

}  // namespace tilec::frontend
