// The scalar functions of T (tl_builtins.h, CallTlMath):
// - T.exp/exp2/log/log2/sqrt/rsqrt/tanh/sigmoid/sin/cos/erf/floor/ceil/round
//   and the rest of TVM's float math (tan ... copysign, nearbyint) -> Call
//   (integer operands are cast to float32, a Python number becomes a float32
//   literal); T.pow(a, b) likewise; T.abs -> Call(abs); T.popcount/T.clz on
//   integers; T.isnan/isinf/isfinite -> comparisons;
// - T.max/T.min -> Binary max/min; T.if_then_else -> Select; T.ceildiv ->
//   Call(ceildiv) (folded on staging ints); T.floordiv/floormod -> // and %;
//   T.truncdiv/truncmod -> C division and remainder;
// - T.bitwise_* / T.shift_* -> the operators; T.likely(c) -> c;
// - T.infinity(dt) -> +inf literal; T.max_value/T.min_value(dt) -> the
//   largest/lowest finite literal.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

// A float expression for the math functions: numbers become float32
// literals, integer expressions are cast to float32.
absl::StatusOr<ir::Expr> FloatOperand(Builder& b, const Arg& a) {
  if (a.value.IsNumber()) return ir::FloatImm(a.value.AsFloat(), ir::DType::kFloat32);
  absl::StatusOr<ir::Expr> e = b.ExprOf(a.value, a.loc);
  if (!e.ok()) return e.status();
  if (!ir::IsFloat((*e)->dtype)) return CastTo(ir::DType::kFloat32, *e);
  return *e;
}

absl::StatusOr<Value> MathCall(Builder& b, ir::CallFn fn, std::string_view name, CallArgs& args) {
  int arity = ir::CallArity(fn);
  if (!args.keywords.empty()) {
    return b.Err(args.keywords[0].second.loc, Cat(name, "() takes no keyword arguments"));
  }
  if (static_cast<int>(args.positional.size()) != arity) {
    return b.Err(args.loc, Cat(name, "() takes ", arity, " argument", arity == 1 ? "" : "s", " (",
                               args.positional.size(), " given)"));
  }
  if (fn == ir::CallFn::kAbs) {
    const Arg& a = args.positional[0];
    if (a.value.kind == ValueKind::kFloat)
      return Value::Float(std::fabs(a.value.f), a.value.params);
    if (a.value.IsIntLike() && a.value.AsInt() != std::numeric_limits<int64_t>::min()) {
      return Value::Int(a.value.AsInt() < 0 ? -a.value.AsInt() : a.value.AsInt(), a.value.params);
    }
    absl::StatusOr<ir::Expr> e = b.ExprOf(a.value, a.loc);
    if (!e.ok()) return e.status();
    return Value::Runtime(ir::Call(fn, {*e}));
  }
  if (arity == 2) {
    const Arg& x = args.positional[0];
    const Arg& y = args.positional[1];
    Value xv = x.value;
    if (!IsRuntimeScalar(xv) && !IsRuntimeScalar(y.value)) {
      absl::StatusOr<ir::Expr> e = FloatOperand(b, x);
      if (!e.ok()) return e.status();
      xv = Value::Runtime(*e);
    }
    absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(xv, y.value);
    if (!ops.ok()) return b.At(ops.status(), args.loc);
    ir::Expr p = ops->first, q = ops->second;
    if (!ir::IsFloat(p->dtype)) {
      p = CastTo(ir::DType::kFloat32, p);
      q = CastTo(ir::DType::kFloat32, q);
    }
    return Value::Runtime(ir::Call(fn, {p, q}));
  }
  if (fn == ir::CallFn::kPopcount || fn == ir::CallFn::kClz) {
    const Arg& a = args.positional[0];
    absl::StatusOr<ir::Expr> e = b.ExprOf(a.value, a.loc);
    if (!e.ok()) return e.status();
    if (ir::IsFloat((*e)->dtype) || (*e)->dtype == ir::DType::kBool) {
      return b.Err(a.loc, Cat(name, "() takes an integer, got ", ir::DTypeName((*e)->dtype)));
    }
    return Value::Runtime(ir::Call(fn, {*e}));
  }
  absl::StatusOr<ir::Expr> e = FloatOperand(b, args.positional[0]);
  if (!e.ok()) return e.status();
  return Value::Runtime(ir::Call(fn, {*e}));
}

// T.isnan / T.isinf / T.isfinite of a float value (false for integers, as
// TVM's): x != x; |x| == inf; neither. The host build never gets fast-math
// and NVRTC's --use_fast_math (a kernel's pass_configs) approximates
// arithmetic without assuming finite values, so the comparisons keep their
// IEEE meaning.
absl::StatusOr<Value> FloatClass(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"x"}, 1);
  if (!a.ok()) return a.status();
  const Arg& x = *(*a)[0];
  if (x.value.kind == ValueKind::kFloat || x.value.IsIntLike()) {
    const double v = x.value.kind == ValueKind::kFloat ? x.value.f : 0.0;
    if (name == "T.isnan") return Value::Bool(std::isnan(v));
    if (name == "T.isinf") return Value::Bool(std::isinf(v));
    return Value::Bool(std::isfinite(v));
  }
  absl::StatusOr<ir::Expr> e = b.ExprOf(x.value, x.loc);
  if (!e.ok()) return e.status();
  if (!ir::IsFloat((*e)->dtype)) return Value::Bool(name == "T.isfinite");
  // float8 has no infinity literal of its own (tl::infinity saturates):
  // judged in float32, which keeps inf and NaN.
  if (ir::DTypeBits((*e)->dtype) == 8) e = CastTo(ir::DType::kFloat32, *e);
  const ir::Expr nan = ir::Binary(ir::BinaryOp::kNe, *e, *e);
  const ir::Expr inf =
      ir::Binary(ir::BinaryOp::kEq, ir::Call(ir::CallFn::kAbs, {*e}), ir::Infinity((*e)->dtype));
  if (name == "T.isnan") return Value::Runtime(nan);
  if (name == "T.isinf") return Value::Runtime(inf);
  return Value::Runtime(ir::Unary(ir::UnaryOp::kNot, ir::Binary(ir::BinaryOp::kOr, nan, inf)));
}

// The largest (or lowest) finite value of a dtype, as a literal.
std::optional<ir::Expr> ExtremeValue(ir::DType t, bool max) {
  double f = 0;
  switch (t) {
    case ir::DType::kFloat16: f = 65504.0; break;
    case ir::DType::kBFloat16: f = 3.3895313892515355e38; break;
    case ir::DType::kFloat32: f = std::numeric_limits<float>::max(); break;
    case ir::DType::kFloat64: f = std::numeric_limits<double>::max(); break;
    case ir::DType::kFloat8E4M3: f = 448.0; break;
    case ir::DType::kFloat8E5M2: f = 57344.0; break;
    case ir::DType::kFloat8E4M3FNUZ: f = 240.0; break;
    case ir::DType::kFloat8E5M2FNUZ: f = 57344.0; break;
    case ir::DType::kBool: return ir::BoolImm(max);
    case ir::DType::kInt8: return ir::IntImm(max ? 127 : -128, t);
    case ir::DType::kUInt8: return ir::IntImm(max ? 255 : 0, t);
    case ir::DType::kInt16: return ir::IntImm(max ? 32767 : -32768, t);
    case ir::DType::kInt32:
      return ir::IntImm(
          max ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min(), t);
    case ir::DType::kInt64:
      return ir::IntImm(
          max ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min(), t);
    case ir::DType::kUInt16: return ir::IntImm(max ? 65535 : 0, t);
    case ir::DType::kUInt32: return ir::IntImm(max ? std::numeric_limits<uint32_t>::max() : 0, t);
    case ir::DType::kUInt64:
      // 2^64 - 1 is beyond an IntImm (int64): the complement of zero.
      return max ? ir::Unary(ir::UnaryOp::kBitNot, ir::IntImm(0, t)) : ir::IntImm(0, t);
    case ir::DType::kInt4: return std::nullopt;
  }
  return ir::FloatImm(max ? f : -f, t);
}

absl::StatusOr<Value> MinMax(Builder& b, bool is_max, CallArgs& args, std::string_view name) {
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"a", "b"}, 2);
  if (!a.ok()) return a.status();
  const Value& x = (*a)[0]->value;
  const Value& y = (*a)[1]->value;
  ParamSet params = x.params;
  params.Merge(y.params);
  if (x.IsNumber() && y.IsNumber()) {
    absl::StatusOr<Value> gt = ApplyCompare(CmpOpKind::kGt, x, y);
    if (!gt.ok()) return b.At(gt.status(), args.loc);
    Value r = (gt->b == is_max) ? x : y;
    r.params = params;
    return r;
  }
  absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(x, y);
  if (!ops.ok()) return b.At(ops.status(), args.loc);
  Value r = Value::Runtime(
      FoldBinary(is_max ? ir::BinaryOp::kMax : ir::BinaryOp::kMin, ops->first, ops->second));
  r.params = params;
  return r;
}

absl::StatusOr<Value> IntDivision(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"a", "b"}, 2);
  if (!a.ok()) return a.status();
  const Value& x = (*a)[0]->value;
  const Value& y = (*a)[1]->value;
  ParamSet params = x.params;
  params.Merge(y.params);
  if (name == "T.floordiv" || name == "T.floormod") {
    return b.At(ApplyBinOp(name == "T.floordiv" ? BinOpKind::kFloorDiv : BinOpKind::kMod, x, y),
                args.loc);
  }
  if (x.IsIntLike() && y.IsIntLike()) {
    int64_t p = x.AsInt(), q = y.AsInt();
    if (q == 0) return b.Err((*a)[1]->loc, Cat(name, "() by zero"));
    if (p == std::numeric_limits<int64_t>::min() && q == -1) return b.Err(args.loc, "overflow");
    if (name == "T.ceildiv") return Value::Int(-FloorDiv(-p, q), params);
    if (name == "T.truncdiv") return Value::Int(p / q, params);
    return Value::Int(p % q, params);
  }
  absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(x, y);
  if (!ops.ok()) return b.At(ops.status(), args.loc);
  if (!ir::IsInt(ops->first->dtype)) {
    return b.Err(args.loc,
                 Cat(name, "() needs integer operands, got ", ir::DTypeName(ops->first->dtype)));
  }
  Value r;
  if (name == "T.ceildiv") {
    r = Value::Runtime(ir::Call(ir::CallFn::kCeilDiv, {ops->first, ops->second}));
  } else {
    r = Value::Runtime(ir::Binary(name == "T.truncdiv" ? ir::BinaryOp::kDiv : ir::BinaryOp::kMod,
                                  ops->first, ops->second));
  }
  r.params = params;
  return r;
}

}  // namespace

std::optional<absl::StatusOr<Value>> CallTlMath(Builder& b, std::string_view name, CallArgs& args) {
  if (name == "T.max_value" || name == "T.min_value") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"dtype"}, 1);
    if (!a.ok()) return a.status();
    absl::StatusOr<ir::DType> t = b.StaticDType((*a)[0]->value, (*a)[0]->loc, Cat(name, "()"));
    if (!t.ok()) return t.status();
    std::optional<ir::Expr> e = ExtremeValue(*t, name == "T.max_value");
    if (!e) return b.Err((*a)[0]->loc, Cat(name, "() of ", ir::DTypeName(*t), " is not supported"));
    return Value::Runtime(*e);
  }
  if (name == "T.infinity") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"dtype"}, 1);
    if (!a.ok()) return a.status();
    absl::StatusOr<ir::DType> t = b.StaticDType((*a)[0]->value, (*a)[0]->loc, "T.infinity()");
    if (!t.ok()) return t.status();
    if (!ir::IsFloat(*t)) {
      return b.Err((*a)[0]->loc, Cat("T.infinity() needs a float dtype, got ", ir::DTypeName(*t)));
    }
    return Value::Runtime(ir::Infinity(*t));
  }
  if (name == "T.ceildiv" || name == "T.floordiv" || name == "T.floormod" || name == "T.truncdiv" ||
      name == "T.truncmod") {
    return IntDivision(b, name, args);
  }
  if (name == "T.max" || name == "T.min") return MinMax(b, name == "T.max", args, name);
  if (name == "T.if_then_else") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"cond", "t", "f"}, 3);
    if (!a.ok()) return a.status();
    const Arg& c = *(*a)[0];
    if (std::optional<bool> t = Truthy(c.value)) return (*a)[*t ? 1 : 2]->value;
    absl::StatusOr<ir::Expr> ce = b.ExprOf(c.value, c.loc);
    if (!ce.ok()) return ce.status();
    Value x = (*a)[1]->value;
    const Value& y = (*a)[2]->value;
    if (!IsRuntimeScalar(x) && !IsRuntimeScalar(y)) {
      absl::StatusOr<ir::Expr> xe = b.ExprOf(x, (*a)[1]->loc);
      if (!xe.ok()) return xe.status();
      x = Value::Runtime(*xe);
    }
    absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(x, y);
    if (!ops.ok()) return b.At(ops.status(), args.loc);
    return Value::Runtime(ir::Select(AsBool(*ce), ops->first, ops->second));
  }
  if (name == "T.nearbyint") return MathCall(b, ir::CallFn::kRound, name, args);
  if (name == "T.likely") {  // a branch hint: the condition itself
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"cond"}, 1);
    if (!a.ok()) return a.status();
    return (*a)[0]->value;
  }
  if (name == "T.isnan" || name == "T.isinf" || name == "T.isfinite")
    return FloatClass(b, name, args);
  if (name == "T.bitwise_and" || name == "T.bitwise_or" || name == "T.bitwise_xor" ||
      name == "T.shift_left" || name == "T.shift_right") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"a", "b"}, 2);
    if (!a.ok()) return a.status();
    const BinOpKind op = name == "T.bitwise_and"   ? BinOpKind::kBitAnd
                         : name == "T.bitwise_or"  ? BinOpKind::kBitOr
                         : name == "T.bitwise_xor" ? BinOpKind::kBitXor
                         : name == "T.shift_left"  ? BinOpKind::kLShift
                                                   : BinOpKind::kRShift;
    absl::StatusOr<Value> r = ApplyBinOp(op, (*a)[0]->value, (*a)[1]->value);
    if (!r.ok()) return b.At(r.status(), args.loc);
    return r;
  }
  if (name == "T.bitwise_not") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"a"}, 1);
    if (!a.ok()) return a.status();
    absl::StatusOr<Value> r = ApplyUnaryOp(UnaryOpKind::kInvert, (*a)[0]->value);
    if (!r.ok()) return b.At(r.status(), args.loc);
    return r;
  }
  if (StartsWith(name, "T.")) {
    if (std::optional<ir::CallFn> f = ir::ParseCallFn(name.substr(2));
        f && *f != ir::CallFn::kCeilDiv && *f != ir::CallFn::kThreadIndex &&
        *f != ir::CallFn::kReinterpret) {
      return MathCall(b, *f, name, args);
    }
  }
  return std::nullopt;
}

}  // namespace tilec::frontend
