// Expressions of generated CUDA C++: element types, literals, arithmetic with
// the IR's semantics, conversions and buffer addressing.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/index_expr.h"
#include "compiler/ir/printer.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {

using ir::BinaryOp;
using ir::DType;

std::string CType(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt4: return "int8_t";
    case DType::kInt8: return "int8_t";
    case DType::kUInt8: return "uint8_t";
    case DType::kInt16: return "int16_t";
    case DType::kUInt16: return "uint16_t";
    case DType::kUInt32: return "uint32_t";
    case DType::kUInt64: return "uint64_t";
    case DType::kInt32: return "int";
    case DType::kInt64: return "int64_t";
    case DType::kFloat8E4M3: return "tl::fp8_e4m3_t";
    case DType::kFloat8E5M2: return "tl::fp8_e5m2_t";
    case DType::kFloat8E4M3FNUZ: return "tl::fp8_e4m3fnuz_t";
    case DType::kFloat8E5M2FNUZ: return "tl::fp8_e5m2fnuz_t";
    case DType::kFloat16: return "tl::half_t";
    case DType::kBFloat16: return "tl::bfloat16_t";
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
  }
  return "void";
}

bool IsNarrowFloat(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || IsFloat8(t);
}

bool IsNarrowInt(DType t) {
  return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16 ||
         t == DType::kInt4;
}

int64_t ElemBytes(DType t) { return t == DType::kBool ? 1 : std::max(1, ir::DTypeBits(t) / 8); }

namespace {

// Operand text with parentheses when its precedence is looser than `max`.
std::string P(const CExpr& e, int max) {
  return e.prec <= max ? e.text : absl::StrCat("(", e.text, ")");
}

int BinaryPrec(BinaryOp op) {
  switch (op) {
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod: return 3;
    case BinaryOp::kAdd:
    case BinaryOp::kSub: return 4;
    case BinaryOp::kShl:
    case BinaryOp::kShr: return 5;
    case BinaryOp::kLt:
    case BinaryOp::kLe:
    case BinaryOp::kGt:
    case BinaryOp::kGe: return 6;
    case BinaryOp::kEq:
    case BinaryOp::kNe: return 7;
    case BinaryOp::kBitAnd: return 8;
    case BinaryOp::kBitXor: return 9;
    case BinaryOp::kBitOr: return 10;
    case BinaryOp::kAnd: return 11;
    case BinaryOp::kOr: return 12;
    default: return 0;
  }
}

absl::string_view BinarySymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kEq: return "==";
    case BinaryOp::kNe: return "!=";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kAnd: return "&&";
    case BinaryOp::kOr: return "||";
    case BinaryOp::kBitAnd: return "&";
    case BinaryOp::kBitOr: return "|";
    case BinaryOp::kBitXor: return "^";
    case BinaryOp::kShl: return "<<";
    case BinaryOp::kShr: return ">>";
    default: return "?";
  }
}

// `a op b` with C++ precedence; && inside || and bitwise operators inside
// comparisons keep their parentheses for the reader.
CExpr Infix(const CExpr& a, BinaryOp op, const CExpr& b) {
  int p = BinaryPrec(op);
  int left_max = p;
  int right_max = p - 1;
  if (op == BinaryOp::kOr) left_max = right_max = 10;
  if (p >= 6 && p <= 7) left_max = right_max = 5;
  return {absl::StrCat(P(a, left_max), " ", BinarySymbol(op), " ", P(b, right_max)), p};
}

CExpr Call(absl::string_view fn, const std::vector<CExpr>& args) {
  std::vector<std::string> texts;
  for (const CExpr& a : args) texts.push_back(a.text);
  return {absl::StrCat(fn, "(", absl::StrJoin(texts, ", "), ")"), 0};
}

CExpr AsFloat(const CExpr& e) { return {absl::StrCat("float(", e.text, ")"), 0}; }

// The device library's function for a math call: tl::<the IR's name>, but
// tl::fabs for abs (the thread index and reinterpret are emitted apart).
std::string MathName(ir::CallFn fn) {
  if (fn == ir::CallFn::kAbs) return "tl::fabs";
  return absl::StrCat("tl::", Sv(ir::CallFnName(fn)));
}

// Shortest decimal text that reads back as `v` in the given precision.
std::string ShortestFloat(double v, bool single) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (single ? std::strtof(buf, nullptr) == static_cast<float>(v)
               : std::strtod(buf, nullptr) == v) {
      break;
    }
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string EmitContext::IntLiteral(int64_t v, DType t) {
  switch (t) {
    case DType::kBool: return v ? "true" : "false";
    case DType::kInt32:
      if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      return absl::StrCat(v);
    case DType::kInt64:
      if (v == std::numeric_limits<int64_t>::min()) return "(-int64_t(9223372036854775807) - 1)";
      return absl::StrCat("int64_t(", v, ")");
    default:
      if (ir::IsFloat(t)) return Literal(static_cast<double>(v), t);
      return absl::StrCat(CType(t), "(", v, ")");
  }
}

std::string EmitContext::Literal(double v, DType t) {
  if (!ir::IsFloat(t)) return IntLiteral(static_cast<int64_t>(v), t);
  // +0 is the all-zero encoding in every float type; for float8 the
  // conversion from float is an instruction the compiler does not fold (the
  // fnuz formats have no -0: every zero is the all-zero encoding).
  if (IsFloat8(t) && v == 0 && (!std::signbit(v) || IsFnuz(t))) {
    return absl::StrCat(CType(t), "::from_bits(0)");
  }
  const bool dbl = t == DType::kFloat64;
  const std::string base = dbl ? "double" : "float";
  std::string text;
  if (std::isnan(v)) {
    text = absl::StrCat("tl::quiet_nan<", base, ">()");
  } else if (std::isinf(v)) {
    text = absl::StrCat(v < 0 ? "-" : "", "tl::infinity<", base, ">()");
  } else {
    text = ShortestFloat(v, !dbl);
    if (!dbl) text += "f";
  }
  if (IsNarrowFloat(t)) return absl::StrCat(CType(t), "(", text, ")");
  return text;
}

CExpr EmitContext::Convert(CExpr value, DType from, DType to) {
  if (from == to) return value;
  if (IsNarrowFloat(to)) {
    if (from == DType::kFloat32) return {absl::StrCat(CType(to), "(", value.text, ")"), 0};
    return {absl::StrCat(CType(to), "(float(", value.text, "))"), 0};
  }
  if (to == DType::kBool) {
    if (IsNarrowFloat(from)) return {absl::StrCat("(float(", value.text, ") != 0.0f)"), 0};
    return {absl::StrCat("bool(", value.text, ")"), 0};
  }
  if (IsNarrowFloat(from) && to != DType::kFloat32) {
    return {absl::StrCat(CType(to), "(float(", value.text, "))"), 0};
  }
  return {absl::StrCat(CType(to), "(", value.text, ")"), 0};
}

CExpr EmitContext::Emit(const ir::Expr& e) {
  if (!e) {
    Fail(Internal("a null expression reached the emitter"));
    return {"0", 0};
  }
  switch (e->kind) {
    case ir::ExprKind::kIntImm: {
      int64_t v = e->as<ir::IntImmNode>()->value;
      std::string text = IntLiteral(v, e->dtype);
      return {text, (v < 0 && text[0] == '-') ? 2 : 0};
    }
    case ir::ExprKind::kFloatImm: {
      double v = e->as<ir::FloatImmNode>()->value;
      std::string text = Literal(v, e->dtype);
      return {text, text[0] == '-' ? 2 : 0};
    }
    case ir::ExprKind::kVar: return {VarName(e->as<ir::VarNode>()), 0};
    case ir::ExprKind::kBinary: {
      const auto* n = e->as<ir::BinaryNode>();
      // Conditions the ranges decide (bounds checks that always hold) are
      // constants; an and/or keeps only its undecided operand.
      if (n->op == BinaryOp::kAnd || n->op == BinaryOp::kOr) {
        const bool is_and = n->op == BinaryOp::kAnd;
        const std::optional<bool> x = Decide(n->a), y = Decide(n->b);
        if (x == !is_and || y == !is_and) return {is_and ? "false" : "true", 0};
        if (x == is_and) return Emit(n->b);
        if (y == is_and) return Emit(n->a);
      } else if (std::optional<bool> d = Decide(e)) {
        return {*d ? "true" : "false", 0};
      }
      const DType t = n->a->dtype;
      CExpr a = Emit(n->a);
      CExpr b = Emit(n->b);
      const BinaryOp op = n->op;
      if (ir::IsFloat(t)) {
        // float16 and bfloat16 + - * in their own instructions (the same
        // value as through float: tl/arith.h).
        if ((t == DType::kFloat16 || t == DType::kBFloat16) &&
            (op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul)) {
          return Call(op == BinaryOp::kAdd   ? "tl::hadd"
                      : op == BinaryOp::kSub ? "tl::hsub"
                                             : "tl::hmul",
                      {a, b});
        }
        const bool narrow = IsNarrowFloat(t);
        CExpr fa = narrow ? AsFloat(a) : a;
        CExpr fb = narrow ? AsFloat(b) : b;
        CExpr r;
        switch (op) {
          case BinaryOp::kMin: r = Call("tl::fmin", {fa, fb}); break;
          case BinaryOp::kMax: r = Call("tl::fmax", {fa, fb}); break;
          case BinaryOp::kFloorDiv: r = Call("tl::floordiv", {fa, fb}); break;
          case BinaryOp::kFloorMod: r = Call("tl::floormod", {fa, fb}); break;
          case BinaryOp::kMod:
            Fail(Unimplemented("the truncating remainder T.truncmod of floating-point values"));
            return {"0", 0};
          default:
            if (BinaryPrec(op) == 0 || op == BinaryOp::kShl || op == BinaryOp::kShr ||
                op == BinaryOp::kBitAnd || op == BinaryOp::kBitOr || op == BinaryOp::kBitXor) {
              Fail(Internal(absl::StrCat("operator ", Sv(ir::BinaryOpName(op)), " on ",
                                         Sv(ir::DTypeName(t)), " values")));
              return {"0", 0};
            }
            r = Infix(fa, op, fb);
        }
        if (narrow && !ir::IsComparison(op)) return {absl::StrCat(CType(t), "(", r.text, ")"), 0};
        return r;
      }
      // Integers and bool. Floor division of non-negative values is C's;
      // by a power of two it is a shift and a mask, which also tells the
      // CUDA compiler the low bits (so (8 * x + e) % 2 folds to e % 2).
      CExpr r;
      const bool nonneg = NonNegative(n->a) && NonNegative(n->b);
      const std::optional<int64_t> divisor = ir::AsConstInt(n->b);
      // A shift by the operand's width or more is undefined: those stay / and %.
      const bool pow2 = nonneg && divisor && *divisor > 0 && (*divisor & (*divisor - 1)) == 0 &&
                        std::countr_zero(uint64_t(*divisor)) < ir::DTypeBits(t);
      // The operand keeps its parentheses unless it is tighter than * (a
      // shift or a mask of a sum reads wrongly and draws warnings).
      auto div = [&]() -> CExpr {
        if (!pow2) return Infix(a, BinaryOp::kDiv, b);
        return {absl::StrCat(P(a, 2), " >> ", std::countr_zero(uint64_t(*divisor))),
                BinaryPrec(BinaryOp::kShr)};
      };
      auto mod = [&]() -> CExpr {
        if (!pow2) return Infix(a, BinaryOp::kMod, b);
        return {absl::StrCat(P(a, 2), " & ", *divisor - 1), BinaryPrec(BinaryOp::kBitAnd)};
      };
      switch (op) {
        case BinaryOp::kMin: r = Call("tl::imin", {a, b}); break;
        case BinaryOp::kMax: r = Call("tl::imax", {a, b}); break;
        case BinaryOp::kDiv: r = div(); break;
        case BinaryOp::kMod: r = mod(); break;
        case BinaryOp::kFloorDiv:
          if (nonneg) {
            r = div();
            break;
          }
          r = Call(IsNarrowInt(t) ? absl::StrCat("tl::floordiv<", CType(t), ">") : "tl::floordiv",
                   {a, b});
          break;
        case BinaryOp::kFloorMod:
          if (nonneg) {
            r = mod();
            break;
          }
          r = Call(IsNarrowInt(t) ? absl::StrCat("tl::floormod<", CType(t), ">") : "tl::floormod",
                   {a, b});
          break;
        default: r = Infix(a, op, b);
      }
      const bool promotes = IsNarrowInt(t) || t == DType::kBool;
      if (promotes && !ir::IsComparison(op) && !ir::IsLogical(op) && op != BinaryOp::kMin &&
          op != BinaryOp::kMax) {
        return {absl::StrCat(CType(t), "(", r.text, ")"), 0};
      }
      return r;
    }
    case ir::ExprKind::kUnary: {
      const auto* n = e->as<ir::UnaryNode>();
      CExpr a = Emit(n->a);
      const DType t = n->a->dtype;
      switch (n->op) {
        case ir::UnaryOp::kNot: return {absl::StrCat("!", P(a, 2)), 2};
        case ir::UnaryOp::kNeg:
          if (IsNarrowFloat(t)) return {absl::StrCat(CType(t), "(-float(", a.text, "))"), 0};
          if (IsNarrowInt(t)) return {absl::StrCat(CType(t), "(-", P(a, 2), ")"), 0};
          return {absl::StrCat("-", P(a, 2)), 2};
        case ir::UnaryOp::kBitNot:
          if (IsNarrowInt(t) || t == DType::kBool) {
            return {absl::StrCat(CType(t), "(~", P(a, 2), ")"), 0};
          }
          return {absl::StrCat("~", P(a, 2)), 2};
      }
      return a;
    }
    case ir::ExprKind::kSelect: {
      const auto* n = e->as<ir::SelectNode>();
      if (std::optional<bool> d = Decide(n->cond)) return Emit(*d ? n->t : n->f);
      CExpr c = Emit(n->cond);
      CExpr t = Emit(n->t);
      CExpr f = Emit(n->f);
      return {absl::StrCat(P(c, 12), " ? ", P(t, 12), " : ", P(f, 13)), 13};
    }
    case ir::ExprKind::kCast: {
      const auto* n = e->as<ir::CastNode>();
      return Convert(Emit(n->value), n->value->dtype, e->dtype);
    }
    case ir::ExprKind::kCall: {
      const auto* n = e->as<ir::CallNode>();
      // The thread index is `tx` (`const int tx = threadIdx.x;` at kernel
      // entry; the slot loops name it the same way).
      if (n->fn == ir::CallFn::kThreadIndex) return {thread_index_, 0};
      if (n->fn == ir::CallFn::kReinterpret) {
        return {absl::StrCat("tl::bit_cast<", CType(e->dtype), ", ", CType(n->args[0]->dtype), ">(",
                             Emit(n->args[0]).text, ")"),
                0};
      }
      const DType t = n->args.empty() ? e->dtype : n->args[0]->dtype;
      std::vector<CExpr> args;
      for (const ir::Expr& a : n->args) args.push_back(Emit(a));
      if (!ir::IsFloat(t)) {
        switch (n->fn) {
          case ir::CallFn::kAbs: return Call("tl::iabs", args);
          case ir::CallFn::kCeilDiv:
            return Call(
                IsNarrowInt(t) ? absl::StrCat("tl::ceildiv<", CType(t), ">") : "tl::ceildiv", args);
          case ir::CallFn::kFloor:
          case ir::CallFn::kCeil:
          case ir::CallFn::kRound:
          case ir::CallFn::kTrunc: return args[0];
          case ir::CallFn::kPopcount:
          case ir::CallFn::kClz: return Call(MathName(n->fn), args);
          default:
            Fail(Internal(absl::StrCat("T.", Sv(ir::CallFnName(n->fn)), " of an integer")));
            return {"0", 0};
        }
      }
      const bool narrow = IsNarrowFloat(t);
      if (narrow) {
        for (CExpr& a : args) a = AsFloat(a);
      }
      CExpr r;
      if (n->fn == ir::CallFn::kCeilDiv) {
        r = Call("tl::ceil", {Infix(args[0], BinaryOp::kDiv, args[1])});
      } else {
        r = Call(MathName(n->fn), args);
      }
      if (narrow) return {absl::StrCat(CType(t), "(", r.text, ")"), 0};
      return r;
    }
    case ir::ExprKind::kLoad: {
      const auto* n = e->as<ir::LoadNode>();
      loaded_since_barrier_.insert(n->buffer.get());
      return {Access(n->buffer, n->indices), 0};
    }
  }
  return {"0", 0};
}

// --- integer helpers --------------------------------------------------------

ir::Expr AddI(const ir::Expr& a, const ir::Expr& b) {
  auto ca = ConstValue(a), cb = ConstValue(b);
  if (ca && cb) return ir::IntImm(*ca + *cb, a->dtype);
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  return ir::Binary(BinaryOp::kAdd, a, b);
}

ir::Expr SubI(const ir::Expr& a, const ir::Expr& b) {
  auto ca = ConstValue(a), cb = ConstValue(b);
  if (ca && cb) return ir::IntImm(*ca - *cb, a->dtype);
  if (cb && *cb == 0) return a;
  return ir::Binary(BinaryOp::kSub, a, b);
}

ir::Expr MulI(const ir::Expr& a, const ir::Expr& b) {
  auto ca = ConstValue(a), cb = ConstValue(b);
  if (ca && cb) return ir::IntImm(*ca * *cb, a->dtype);
  if ((ca && *ca == 0) || (cb && *cb == 0)) return ir::IntImm(0, a->dtype);
  if (ca && *ca == 1) return b;
  if (cb && *cb == 1) return a;
  return ir::Binary(BinaryOp::kMul, a, b);
}

std::optional<int64_t> ConstValue(const ir::Expr& e) {
  if (!e || !ir::IsInt(e->dtype)) return std::nullopt;
  return inference::EvalInt(e);
}

std::optional<int64_t> ConstProduct(const std::vector<ir::Expr>& extents) {
  int64_t p = 1;
  for (const ir::Expr& e : extents) {
    auto v = ConstValue(e);
    if (!v) return std::nullopt;
    p *= *v;
  }
  return p;
}

std::optional<std::pair<int64_t, int64_t>> EmitContext::Range(const ir::Expr& e) {
  std::optional<std::pair<int64_t, int64_t>> r = RangeInMath(e);
  if (!r) return r;
  // The C arithmetic of the expression's type wraps (unsigned) or overflows
  // (signed) outside its values: a range beyond them says nothing.
  const int bits = ir::DTypeBits(e->dtype);
  if (bits < 64) {
    const bool is_signed = ir::IsSigned(e->dtype);
    const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    if (r->first < lo || r->second > hi) return std::nullopt;
  } else if (!ir::IsSigned(e->dtype) && r->first < 0) {
    return std::nullopt;
  }
  return r;
}

std::optional<std::pair<int64_t, int64_t>> EmitContext::RangeInMath(const ir::Expr& e) {
  using R = std::pair<int64_t, int64_t>;
  if (!e || !ir::IsInt(e->dtype)) return std::nullopt;
  if (const auto* i = e->as<ir::IntImmNode>()) return R{i->value, i->value};
  if (const auto* v = e->as<ir::VarNode>()) {
    auto it = ranges_.find(v);
    if (it == ranges_.end()) return std::nullopt;
    return it->second;
  }
  if (const auto* c = e->as<ir::CastNode>()) {
    if (!ir::IsInt(c->value->dtype) || ir::DTypeBits(e->dtype) < ir::DTypeBits(c->value->dtype)) {
      return std::nullopt;
    }
    return Range(c->value);
  }
  if (const auto* c = e->as<ir::CallNode>(); c && c->fn == ir::CallFn::kThreadIndex) {
    return R{0, threads_ - 1};
  }
  if (const auto* c = e->as<ir::CallNode>();
      c && c->fn == ir::CallFn::kCeilDiv && c->args.size() == 2) {
    const auto ra = Range(c->args[0]), rb = Range(c->args[1]);
    if (!ra || !rb || rb->first != rb->second || rb->first <= 0 || ra->first < 0) {
      return std::nullopt;
    }
    const int64_t d = rb->first;
    return R{(ra->first + d - 1) / d, (ra->second + d - 1) / d};
  }
  const auto* b = e->as<ir::BinaryNode>();
  if (!b) return std::nullopt;
  auto ra = Range(b->a);
  auto rb = Range(b->b);
  if (!ra || !rb) return std::nullopt;
  constexpr int64_t kLimit = int64_t{1} << 40;  // stay far from overflow
  auto sane = [&](int64_t x) { return x > -kLimit && x < kLimit; };
  if (!sane(ra->first) || !sane(ra->second) || !sane(rb->first) || !sane(rb->second)) {
    return std::nullopt;
  }
  switch (b->op) {
    case BinaryOp::kAdd: return R{ra->first + rb->first, ra->second + rb->second};
    case BinaryOp::kSub: return R{ra->first - rb->second, ra->second - rb->first};
    case BinaryOp::kMul: {
      int64_t c[] = {ra->first * rb->first, ra->first * rb->second, ra->second * rb->first,
                     ra->second * rb->second};
      return R{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
      if (rb->first != rb->second || rb->first <= 0 || ra->first < 0) return std::nullopt;
      return R{ra->first / rb->first, ra->second / rb->first};
    case BinaryOp::kMod:
    case BinaryOp::kFloorMod:
      if (rb->first != rb->second || rb->first <= 0 || ra->first < 0) return std::nullopt;
      if (ra->second < rb->first) return ra;
      return R{0, rb->first - 1};
    case BinaryOp::kMin: return R{std::min(ra->first, rb->first), std::min(ra->second, rb->second)};
    case BinaryOp::kMax: return R{std::max(ra->first, rb->first), std::max(ra->second, rb->second)};
    default: return std::nullopt;
  }
}

std::optional<bool> EmitContext::Decide(const ir::Expr& e) {
  if (!e || e->dtype != DType::kBool) return std::nullopt;
  if (const auto* i = e->as<ir::IntImmNode>()) return i->value != 0;
  if (const auto* u = e->as<ir::UnaryNode>(); u && u->op == ir::UnaryOp::kNot) {
    std::optional<bool> a = Decide(u->a);
    if (a) return !*a;
    return std::nullopt;
  }
  const auto* b = e->as<ir::BinaryNode>();
  if (!b) return std::nullopt;
  if (b->op == BinaryOp::kAnd || b->op == BinaryOp::kOr) {
    const bool is_and = b->op == BinaryOp::kAnd;
    std::optional<bool> x = Decide(b->a), y = Decide(b->b);
    // A false operand decides `and`, a true one `or`.
    if (x == !is_and || y == !is_and) return !is_and;
    if (x && y) return is_and;
    return std::nullopt;
  }
  if (!ir::IsComparison(b->op) || !ir::IsInt(b->a->dtype) || !ir::IsInt(b->b->dtype)) {
    return std::nullopt;
  }
  const auto x = Range(b->a), y = Range(b->b);
  if (!x || !y) return std::nullopt;
  const auto [xl, xh] = *x;
  const auto [yl, yh] = *y;
  switch (b->op) {
    case BinaryOp::kLt:
      if (xh < yl) return true;
      if (xl >= yh) return false;
      break;
    case BinaryOp::kLe:
      if (xh <= yl) return true;
      if (xl > yh) return false;
      break;
    case BinaryOp::kGt:
      if (xl > yh) return true;
      if (xh <= yl) return false;
      break;
    case BinaryOp::kGe:
      if (xl >= yh) return true;
      if (xh < yl) return false;
      break;
    case BinaryOp::kEq:
    case BinaryOp::kNe: {
      const bool ne = b->op == BinaryOp::kNe;
      if (xh < yl || yh < xl) return ne;
      if (xl == xh && yl == yh) return !ne;  // the same single value
      break;
    }
    default: break;
  }
  return std::nullopt;
}

bool EmitContext::NonNegative(const ir::Expr& e) {
  if (!e) return false;
  if (ir::IsInt(e->dtype) && !ir::IsSigned(e->dtype)) return true;
  if (auto r = Range(e); r && r->first >= 0) return true;
  switch (e->kind) {
    case ir::ExprKind::kIntImm: return e->as<ir::IntImmNode>()->value >= 0;
    case ir::ExprKind::kVar: return nonneg_vars_.count(e->as<ir::VarNode>()) > 0;
    case ir::ExprKind::kCast: {
      const auto* c = e->as<ir::CastNode>();
      return ir::IsInt(e->dtype) && ir::IsInt(c->value->dtype) && NonNegative(c->value) &&
             ir::DTypeBits(e->dtype) >= ir::DTypeBits(c->value->dtype);
    }
    case ir::ExprKind::kBinary: {
      const auto* b = e->as<ir::BinaryNode>();
      if (!ir::IsInt(e->dtype)) return false;
      switch (b->op) {
        case BinaryOp::kAdd:
        case BinaryOp::kMul:
        case BinaryOp::kDiv:
        case BinaryOp::kMod:
        case BinaryOp::kFloorDiv:
        case BinaryOp::kFloorMod:
        case BinaryOp::kMin: return NonNegative(b->a) && NonNegative(b->b);
        case BinaryOp::kMax: return NonNegative(b->a) || NonNegative(b->b);
        default: return false;
      }
    }
    case ir::ExprKind::kCall: {
      const auto* c = e->as<ir::CallNode>();
      if (c->fn == ir::CallFn::kThreadIndex) return true;
      if (c->fn == ir::CallFn::kCeilDiv && ir::IsInt(e->dtype)) {
        return NonNegative(c->args[0]) && NonNegative(c->args[1]);
      }
      return false;
    }
    case ir::ExprKind::kSelect: {
      const auto* s = e->as<ir::SelectNode>();
      return NonNegative(s->t) && NonNegative(s->f);
    }
    default: return false;
  }
}

// --- addressing -------------------------------------------------------------

namespace {

ir::Expr Horner(const std::vector<ir::Expr>& indices, const std::vector<ir::Expr>& shape,
                size_t begin, size_t end) {
  ir::Expr flat;
  for (size_t d = begin; d < end; ++d) {
    flat = flat ? AddI(MulI(flat, shape[d]), indices[d]) : indices[d];
  }
  return flat ? flat : ir::IntImm(0);
}

}  // namespace

std::string EmitContext::SharedBase(const BufferInfo& info) {
  auto it = stage_index_.find(info.buffer.get());
  if (it == stage_index_.end() || info.stages <= 1) return info.name;
  return it->second;
}

ir::Expr EmitContext::RowMajorIndex(const ir::Buffer& b, const std::vector<ir::Expr>& indices) {
  return Horner(indices, b->shape, 0, indices.size());
}

std::string EmitContext::FlatIndex(const ir::Buffer& b, const std::vector<ir::Expr>& indices) {
  if (indices.size() != b->shape.size()) {
    Fail(Internal(absl::StrCat("access to ", b->name, " with ", indices.size(),
                               " indices for rank ", b->shape.size())));
    return "0";
  }
  if (b->scope == ir::Scope::kShared) {
    BufferInfo* info = Info(b.get());
    if (!info || !info->shared) {
      Fail(Internal(absl::StrCat("shared buffer ", b->name, " has no layout in the plan")));
      return "0";
    }
    const size_t rank = indices.size();
    ir::Expr r = rank >= 2 ? Horner(indices, b->shape, 0, rank - 1) : ir::IntImm(0);
    ir::Expr c = indices[rank - 1];
    return absl::StrCat(info->layout_type, "::offset(", Expr(r), ", ", Expr(c), ")");
  }
  return Expr(Horner(indices, b->shape, 0, indices.size()));
}

std::string EmitContext::Access(const ir::Buffer& b, const std::vector<ir::Expr>& indices) {
  BufferInfo* info = Info(b.get());
  if (!info) {
    Fail(Internal(absl::StrCat("buffer ", b->name, " is used but not declared")));
    return "0";
  }
  switch (b->scope) {
    case ir::Scope::kVar: return info->name;
    case ir::Scope::kFragment: return absl::StrCat(info->name, "[", FragmentSlot(b, indices), "]");
    case ir::Scope::kShared:
      return absl::StrCat(SharedBase(*info), "[", FlatIndex(b, indices), "]");
    case ir::Scope::kGlobal:
      if (b->dtype == DType::kInt4) {
        Fail(Unimplemented(absl::StrCat("int4 tensor ", b->name, " (packed int4 elements)")));
        return "0";
      }
      [[fallthrough]];
    case ir::Scope::kLocal: return absl::StrCat(info->name, "[", FlatIndex(b, indices), "]");
  }
  return "0";
}

std::string EmitContext::Address(const ir::Buffer& b, const std::vector<ir::Expr>& indices) {
  BufferInfo* info = Info(b.get());
  if (!info) {
    Fail(Internal(absl::StrCat("buffer ", b->name, " is used but not declared")));
    return "nullptr";
  }
  std::string base = b->scope == ir::Scope::kShared ? SharedBase(*info) : info->name;
  return absl::StrCat("&", base, "[", FlatIndex(b, indices), "]");
}

std::string UnrollPragma(int64_t trips) {
  return trips <= kFullUnrollTrips ? "#pragma unroll" : "#pragma unroll 8";
}

std::string JoinConds(const std::vector<std::string>& conds) {
  std::vector<std::string> kept;
  for (const std::string& c : conds) {
    if (c.empty()) continue;
    // Operands that bind more loosely than && (||, ?:) keep their grouping.
    const bool loose = c.find("||") != std::string::npos || c.find('?') != std::string::npos;
    kept.push_back(loose && conds.size() > 1 ? "(" + c + ")" : c);
  }
  return absl::StrJoin(kept, " && ");
}

std::string InBounds(EmitContext& ctx, const ir::Buffer& b, const std::vector<ir::Expr>& indices,
                     int64_t extra_last) {
  std::vector<std::string> conds;
  for (size_t d = 0; d < indices.size(); ++d) {
    const ir::Expr& i = indices[d];
    const ir::Expr& n = b->shape[d];
    const int64_t extra = d + 1 == indices.size() ? extra_last : 0;
    auto ci = ConstValue(i);
    auto cn = ConstValue(n);
    auto ri = ctx.Range(i);
    if (!ctx.NonNegative(i)) {
      if ((ci && *ci < 0) || (ri && ri->second < 0)) return "false";
      conds.push_back(absl::StrCat(ctx.RelOperand(i), " >= 0"));
    }
    if (ci && cn) {
      if (*ci + extra >= *cn) return "false";
      continue;
    }
    if (ri && cn) {
      if (ri->second + extra < *cn) continue;  // always inside
      if (ri->first + extra >= *cn) return "false";
    }
    ir::Expr hi = extra ? AddI(i, ir::IntImm(extra)) : i;
    conds.push_back(absl::StrCat(P(ctx.Emit(hi), 5), " < ", P(ctx.Emit(n), 5)));
  }
  return absl::StrJoin(conds, " && ");
}

}  // namespace tilec::cuda
