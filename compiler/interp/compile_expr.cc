// Expressions: compilation of the IR's expression nodes into CExpr objects,
// slot resolution and scoping, and the conversions shared by all statements.
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/interp/exec.h"
#include "compiler/interp/numerics.h"
#include "compiler/ir/sv.h"

namespace tilec::interp::internal {
namespace {

using ir::BinaryOp;
using ir::CallFn;
using ir::DType;
using ir::IsFloat;

// ---------------------------------------------------------------------------
// Integer and float arithmetic with the IR's semantics.

int64_t Add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t Sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t Mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// Truncating division and remainder; b != 0. INT64_MIN / -1 wraps.
int64_t TruncDiv(int64_t a, int64_t b) { return b == -1 ? Sub(0, a) : a / b; }
int64_t TruncMod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = TruncDiv(a, b);
  if (TruncMod(a, b) != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorMod(int64_t a, int64_t b) {
  int64_t r = TruncMod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::string_view OpText(BinaryOp op) {
  std::string_view sym = ir::BinaryOpSymbol(op);
  return sym.empty() ? ir::BinaryOpName(op) : sym;
}

class ConstExpr final : public CExpr {
 public:
  ConstExpr(DType t, Scalar v) : CExpr(t), v_(v) {}
  Scalar Eval(Env&) const override { return v_; }

 private:
  Scalar v_;
};

class VarExpr final : public CExpr {
 public:
  VarExpr(DType t, int slot) : CExpr(t), slot_(slot) {}
  Scalar Eval(Env& env) const override { return env.vars[slot_]; }

 private:
  int slot_;
};

// Arithmetic, bitwise and comparison ops on integer (or bool) operands of
// dtype `operand`.
class IntBinaryExpr final : public CExpr {
 public:
  IntBinaryExpr(DType result, DType operand, BinaryOp op, CExprPtr a, CExprPtr b)
      : CExpr(result), operand_(operand), op_(op), a_(std::move(a)), b_(std::move(b)) {}

  Scalar Eval(Env& env) const override {
    const int64_t a = a_->Eval(env).i, b = b_->Eval(env).i;
    if (operand_ == DType::kUInt64) {
      if (std::optional<Scalar> r = EvalUInt64(env, a, b)) return *r;
    }
    switch (op_) {
      case BinaryOp::kAdd: return Wrap(Add(a, b));
      case BinaryOp::kSub: return Wrap(Sub(a, b));
      case BinaryOp::kMul: return Wrap(Mul(a, b));
      case BinaryOp::kDiv: return b == 0 ? DivByZero(env, a) : Wrap(TruncDiv(a, b));
      case BinaryOp::kMod: return b == 0 ? DivByZero(env, a) : Wrap(TruncMod(a, b));
      case BinaryOp::kFloorDiv: return b == 0 ? DivByZero(env, a) : Wrap(FloorDiv(a, b));
      case BinaryOp::kFloorMod: return b == 0 ? DivByZero(env, a) : Wrap(FloorMod(a, b));
      case BinaryOp::kMin: return IntScalar(std::min(a, b));
      case BinaryOp::kMax: return IntScalar(std::max(a, b));
      case BinaryOp::kEq: return IntScalar(a == b);
      case BinaryOp::kNe: return IntScalar(a != b);
      case BinaryOp::kLt: return IntScalar(a < b);
      case BinaryOp::kLe: return IntScalar(a <= b);
      case BinaryOp::kGt: return IntScalar(a > b);
      case BinaryOp::kGe: return IntScalar(a >= b);
      case BinaryOp::kAnd: return IntScalar(a != 0 && b != 0);
      case BinaryOp::kOr: return IntScalar(a != 0 || b != 0);
      case BinaryOp::kBitAnd: return Wrap(a & b);
      case BinaryOp::kBitOr: return Wrap(a | b);
      case BinaryOp::kBitXor: return Wrap(a ^ b);
      case BinaryOp::kShl:
        if (!ShiftOk(env, a, b)) return IntScalar(0);
        return Wrap(static_cast<int64_t>(static_cast<uint64_t>(a) << b));
      case BinaryOp::kShr:
        if (!ShiftOk(env, a, b)) return IntScalar(0);
        // Values of signed types are sign-extended (arithmetic shift); those of
        // the unsigned types below 64 bits are non-negative (logical shift).
        return Wrap(a >> b);
    }
    return IntScalar(0);
  }

 private:
  // The ops whose uint64 result depends on reading the bits as unsigned (the
  // rest are the same as for int64); nullopt for those.
  std::optional<Scalar> EvalUInt64(Env& env, int64_t a, int64_t b) const {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    auto u = [](uint64_t v) { return IntScalar(static_cast<int64_t>(v)); };
    switch (op_) {
      case BinaryOp::kDiv:
      case BinaryOp::kFloorDiv: return y == 0 ? DivByZero(env, a) : u(x / y);
      case BinaryOp::kMod:
      case BinaryOp::kFloorMod: return y == 0 ? DivByZero(env, a) : u(x % y);
      case BinaryOp::kMin: return u(std::min(x, y));
      case BinaryOp::kMax: return u(std::max(x, y));
      case BinaryOp::kLt: return IntScalar(x < y);
      case BinaryOp::kLe: return IntScalar(x <= y);
      case BinaryOp::kGt: return IntScalar(x > y);
      case BinaryOp::kGe: return IntScalar(x >= y);
      case BinaryOp::kShr:
        if (!ShiftOk(env, a, b)) return IntScalar(0);
        return u(x >> b);  // logical
      default: return std::nullopt;
    }
  }
  Scalar Wrap(int64_t v) const { return IntScalar(WrapInt(v, operand_)); }
  Scalar DivByZero(Env& env, int64_t a) const {
    env.Fail(absl::InvalidArgumentError(
        absl::StrCat("integer division by zero: ", ScalarString(IntScalar(a), operand_), " ",
                     Sv(OpText(op_)), " 0 in ", Sv(ir::DTypeName(operand_)))));
    return IntScalar(0);
  }
  bool ShiftOk(Env& env, int64_t a, int64_t b) const {
    const int bits = ir::DTypeBits(operand_);
    if (b >= 0 && b < bits) return true;
    env.Fail(absl::InvalidArgumentError(absl::StrCat(
        "shift amount out of range: ", ScalarString(IntScalar(a), operand_), " ", Sv(OpText(op_)),
        " ", b, " in ", Sv(ir::DTypeName(operand_)), " (", bits, " bits)")));
    return false;
  }

  DType operand_;
  BinaryOp op_;
  CExprPtr a_, b_;
};

// Arithmetic and comparison ops on float operands of dtype `operand`; results
// are computed in double and rounded to the operand dtype.
class FloatBinaryExpr final : public CExpr {
 public:
  FloatBinaryExpr(DType result, DType operand, BinaryOp op, CExprPtr a, CExprPtr b)
      : CExpr(result), operand_(operand), op_(op), a_(std::move(a)), b_(std::move(b)) {}

  Scalar Eval(Env& env) const override {
    const double a = a_->Eval(env).f, b = b_->Eval(env).f;
    switch (op_) {
      case BinaryOp::kAdd: return R(a + b);
      case BinaryOp::kSub: return R(a - b);
      case BinaryOp::kMul: return R(a * b);
      case BinaryOp::kDiv: return R(a / b);
      case BinaryOp::kMod: return R(std::fmod(a, b));
      // floor(a / b) and a - floor(a / b) * b, each step in the dtype, as
      // TVM lowers them for floats.
      case BinaryOp::kFloorDiv: return R(std::floor(R(a / b).f));
      case BinaryOp::kFloorMod: return R(a - R(std::floor(R(a / b).f) * b).f);
      case BinaryOp::kMin: return FloatScalar(FloatMin(a, b));
      case BinaryOp::kMax: return FloatScalar(FloatMax(a, b));
      case BinaryOp::kEq: return IntScalar(a == b);
      case BinaryOp::kNe: return IntScalar(a != b);
      case BinaryOp::kLt: return IntScalar(a < b);
      case BinaryOp::kLe: return IntScalar(a <= b);
      case BinaryOp::kGt: return IntScalar(a > b);
      case BinaryOp::kGe: return IntScalar(a >= b);
      default: return FloatScalar(0);  // rejected at compile time
    }
  }

 private:
  Scalar R(double v) const { return FloatScalar(RoundToFloat(v, operand_)); }

  DType operand_;
  BinaryOp op_;
  CExprPtr a_, b_;
};

// `and` / `or`, short-circuiting like the && and || generated code uses.
class LogicalExpr final : public CExpr {
 public:
  LogicalExpr(bool is_and, CExprPtr a, CExprPtr b)
      : CExpr(DType::kBool), is_and_(is_and), a_(std::move(a)), b_(std::move(b)) {}
  Scalar Eval(Env& env) const override {
    const bool a = a_->Eval(env).i != 0;
    if (a != is_and_) return IntScalar(a);
    return IntScalar(b_->Eval(env).i != 0);
  }

 private:
  bool is_and_;
  CExprPtr a_, b_;
};

class UnaryExpr final : public CExpr {
 public:
  UnaryExpr(DType t, ir::UnaryOp op, CExprPtr a) : CExpr(t), op_(op), a_(std::move(a)) {}
  Scalar Eval(Env& env) const override {
    Scalar v = a_->Eval(env);
    switch (op_) {
      case ir::UnaryOp::kNeg:
        return IsFloat(dtype) ? FloatScalar(-v.f) : IntScalar(WrapInt(Sub(0, v.i), dtype));
      case ir::UnaryOp::kNot: return IntScalar(v.i == 0);
      case ir::UnaryOp::kBitNot: return IntScalar(WrapInt(~v.i, dtype));
    }
    return v;
  }

 private:
  ir::UnaryOp op_;
  CExprPtr a_;
};

// if_then_else: evaluates only the chosen branch.
class SelectExpr final : public CExpr {
 public:
  SelectExpr(DType t, CExprPtr c, CExprPtr a, CExprPtr b)
      : CExpr(t), c_(std::move(c)), a_(std::move(a)), b_(std::move(b)) {}
  Scalar Eval(Env& env) const override {
    return c_->Eval(env).i != 0 ? a_->Eval(env) : b_->Eval(env);
  }

 private:
  CExprPtr c_, a_, b_;
};

class CastExpr final : public CExpr {
 public:
  CastExpr(DType t, CExprPtr a) : CExpr(t), a_(std::move(a)) {}
  Scalar Eval(Env& env) const override { return Convert(a_->Eval(env), a_->dtype, dtype); }

 private:
  CExprPtr a_;
};

// T.get_thread_binding(): the index of the thread running per-thread code
// (Env::thread, set by the per-thread statements of compile_stmt.cc).
class ThreadIndexExpr final : public CExpr {
 public:
  ThreadIndexExpr() : CExpr(DType::kInt32) {}
  Scalar Eval(Env& env) const override {
    if (env.thread < 0) {
      env.Fail(absl::InternalError(
          "compiler bug: the interpreter read the thread index outside per-thread code"));
      return IntScalar(0);
    }
    return IntScalar(env.thread);
  }
};

// T.reinterpret: the argument's bits, stored as its dtype stores them, read
// as the result's dtype.
class ReinterpretExpr final : public CExpr {
 public:
  ReinterpretExpr(DType t, CExprPtr a, DType from) : CExpr(t), a_(std::move(a)), from_(from) {}
  Scalar Eval(Env& env) const override {
    const Scalar v = a_->Eval(env);
    Tensor in(from_, {1}), out(dtype, {1});
    if (IsFloat(from_)) {
      in.SetDouble(0, v.f);
    } else {
      in.SetInt(0, v.i);
    }
    out.SetBits(0, in.GetBits(0));
    return IsFloat(dtype) ? FloatScalar(out.GetDouble(0)) : IntScalar(out.GetInt(0));
  }

 private:
  CExprPtr a_;
  DType from_;
};

class CallExpr final : public CExpr {
 public:
  CallExpr(DType t, CallFn fn, std::vector<CExprPtr> args)
      : CExpr(t), fn_(fn), args_(std::move(args)) {}

  Scalar Eval(Env& env) const override {
    Scalar a = args_[0]->Eval(env);
    Scalar b = args_.size() > 1 ? args_[1]->Eval(env) : IntScalar(0);
    if (!IsFloat(dtype)) return EvalInt(env, a.i, b.i);
    return FloatScalar(RoundToFloat(Math(a.f, b.f), dtype));
  }

 private:
  double Math(double x, double y) const {
    switch (fn_) {
      case CallFn::kThreadIndex:            // ThreadIndexExpr, never a CallExpr
      case CallFn::kReinterpret: return 0;  // ReinterpretExpr, never a CallExpr
      case CallFn::kAbs: return std::fabs(x);
      case CallFn::kCeilDiv: return std::ceil(RoundToFloat(x / y, dtype));
      case CallFn::kExp: return std::exp(x);
      case CallFn::kExp2: return std::exp2(x);
      case CallFn::kLog: return std::log(x);
      case CallFn::kLog2: return std::log2(x);
      case CallFn::kSqrt: return std::sqrt(x);
      case CallFn::kRsqrt: return 1.0 / std::sqrt(x);
      case CallFn::kTanh: return std::tanh(x);
      case CallFn::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
      case CallFn::kSin: return std::sin(x);
      case CallFn::kCos: return std::cos(x);
      case CallFn::kErf: return std::erf(x);
      case CallFn::kFloor: return std::floor(x);
      case CallFn::kCeil: return std::ceil(x);
      case CallFn::kRound: return std::nearbyint(x);
      case CallFn::kPow: return std::pow(x, y);
      case CallFn::kTan: return std::tan(x);
      case CallFn::kAsin: return std::asin(x);
      case CallFn::kAcos: return std::acos(x);
      case CallFn::kAtan: return std::atan(x);
      case CallFn::kSinh: return std::sinh(x);
      case CallFn::kCosh: return std::cosh(x);
      case CallFn::kAsinh: return std::asinh(x);
      case CallFn::kAcosh: return std::acosh(x);
      case CallFn::kAtanh: return std::atanh(x);
      case CallFn::kLog10: return std::log10(x);
      case CallFn::kLog1p: return std::log1p(x);
      case CallFn::kExp10: return std::pow(10.0, x);
      case CallFn::kExpm1: return std::expm1(x);
      case CallFn::kTrunc: return std::trunc(x);
      case CallFn::kAtan2: return std::atan2(x, y);
      case CallFn::kFmod: return std::fmod(x, y);
      case CallFn::kHypot: return std::hypot(x, y);
      case CallFn::kCopysign: return std::copysign(x, y);
      case CallFn::kPopcount:
      case CallFn::kClz: return 0;  // integer only (EvalInt)
    }
    return x;
  }

  Scalar EvalInt(Env& env, int64_t a, int64_t b) const {
    switch (fn_) {
      case CallFn::kAbs:
        if (!ir::IsSigned(dtype)) return IntScalar(a);
        return IntScalar(WrapInt(a < 0 ? Sub(0, a) : a, dtype));
      case CallFn::kCeilDiv:
        if (b == 0) {
          env.Fail(absl::InvalidArgumentError(absl::StrCat(
              "integer division by zero: ceildiv(", ScalarString(IntScalar(a), dtype), ", 0)")));
          return IntScalar(0);
        }
        if (!ir::IsSigned(dtype)) {
          const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
          return IntScalar(static_cast<int64_t>(x / y + (x % y != 0)));
        }
        return IntScalar(WrapInt(Sub(0, FloorDiv(Sub(0, a), b)), dtype));
      case CallFn::kFloor:
      case CallFn::kCeil:
      case CallFn::kRound:
      case CallFn::kTrunc: return IntScalar(a);
      case CallFn::kPopcount:
      case CallFn::kClz: {
        const int bits = ir::DTypeBits(dtype);
        const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
        const uint64_t u = static_cast<uint64_t>(a) & mask;
        if (fn_ == CallFn::kPopcount) return IntScalar(std::popcount(u));
        return IntScalar(u == 0 ? bits : std::countl_zero(u) - (64 - bits));
      }
      default:
        // Transcendentals of integers: in double, truncated back.
        return IntScalar(FloatToInt(Math(IntAsDouble(a, dtype), IntAsDouble(b, dtype)), dtype));
    }
  }

  CallFn fn_;
  std::vector<CExprPtr> args_;
};

class LoadExpr final : public CExpr {
 public:
  LoadExpr(DType t, int slot, std::vector<CExprPtr> indices)
      : CExpr(t), slot_(slot), indices_(std::move(indices)) {}

  Scalar Eval(Env& env) const override {
    Tensor* t = env.Buffer(slot_);
    if (t == nullptr) return IntScalar(0);
    int64_t flat = 0;
    const auto& shape = t->shape();
    for (size_t d = 0; d < indices_.size(); ++d) {
      const int64_t v = indices_[d]->Eval(env).i;
      if (v < 0 || v >= shape[d]) return OutOfBounds(env, *t);
      flat = flat * shape[d] + v;
    }
    return ReadElement(*t, flat);
  }

 private:
  Scalar OutOfBounds(Env& env, const Tensor& t) const {
    if (env.failed()) return IntScalar(0);
    std::vector<int64_t> index;
    for (const CExprPtr& e : indices_) index.push_back(e->Eval(env).i);
    env.Fail(
        absl::OutOfRangeError(absl::StrCat("load ", env.buffer_names[slot_], ShapeString(index),
                                           " is out of bounds of shape ", ShapeString(t.shape()))));
    return IntScalar(0);
  }

  int slot_;
  std::vector<CExprPtr> indices_;
};

}  // namespace

// ---------------------------------------------------------------------------

Scalar Convert(Scalar v, DType from, DType to) {
  const bool ff = IsFloat(from), tf = IsFloat(to);
  if (ff && tf) return FloatScalar(RoundToFloat(v.f, to));
  if (ff) return IntScalar(FloatToInt(v.f, to));
  if (tf) return FloatScalar(IntToFloat(v.i, to, from));
  return IntScalar(WrapInt(v.i, to));
}

std::string ScalarString(Scalar v, DType t) {
  if (IsFloat(t)) return absl::StrCat(v.f);
  if (t == DType::kUInt64) return absl::StrCat(static_cast<uint64_t>(v.i));
  return absl::StrCat(v.i);
}

Tensor* Env::Buffer(int slot) {
  Tensor* t = buffers[slot];
  if (t == nullptr) {
    Fail(absl::FailedPreconditionError(
        absl::StrCat("buffer ", buffer_names[slot],
                     " is used before its allocation runs (the program is not "
                     "valid; run the verifier)")));
  }
  return t;
}

bool EvalRegion(Env& env, const CRegion& r, RegionValue* out) {
  out->tensor = env.Buffer(r.slot);
  if (out->tensor == nullptr) return false;
  out->name = env.buffer_names[r.slot];
  out->mins.resize(r.mins.size());
  out->extents.resize(r.extents.size());
  for (size_t d = 0; d < r.mins.size(); ++d) {
    out->mins[d] = r.mins[d]->Eval(env).i;
    out->extents[d] = r.extents[d]->Eval(env).i;
  }
  if (env.failed()) return false;
  for (size_t d = 0; d < r.extents.size(); ++d) {
    if (out->extents[d] < 0) {
      env.Fail(absl::InvalidArgumentError(
          absl::StrCat("region ", RegionString(*out), " has a negative extent")));
      return false;
    }
  }
  return true;
}

std::string RegionString(const RegionValue& r) {
  std::vector<std::string> dims;
  for (size_t d = 0; d < r.mins.size(); ++d) {
    dims.push_back(absl::StrCat(r.mins[d], ":", r.mins[d] + r.extents[d]));
  }
  return absl::StrCat(r.name, "[", absl::StrJoin(dims, ", "), "]");
}

absl::Status Unverified(absl::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, " (the program is not valid; run the verifier)"));
}

int Compiler::BindVar(const ir::Var& v) {
  auto [it, inserted] = var_slots_.try_emplace(v.get(), static_cast<int>(var_slots_.size()));
  ++in_scope_[v.get()];
  scope_.push_back(v.get());
  return it->second;
}

int Compiler::BindBuffer(const ir::Buffer& b) {
  auto [it, inserted] = buffer_slots_.try_emplace(b.get(), static_cast<int>(buffer_names_.size()));
  if (inserted) buffer_names_.push_back(b->name);
  ++in_scope_[b.get()];
  scope_.push_back(b.get());
  return it->second;
}

void Compiler::PopTo(size_t mark) {
  while (scope_.size() > mark) {
    --in_scope_[scope_.back()];
    scope_.pop_back();
  }
}

absl::StatusOr<int> Compiler::VarSlot(const ir::VarNode* v) const {
  auto scope = in_scope_.find(v);
  if (scope == in_scope_.end() || scope->second == 0) {
    return Unverified(absl::StrCat("variable ", v->name, " is used outside its scope"));
  }
  return var_slots_.at(v);
}

absl::StatusOr<int> Compiler::BufferSlot(const ir::Buffer& b) const {
  if (b == nullptr) return Unverified("a statement has no buffer");
  auto scope = in_scope_.find(b.get());
  if (scope == in_scope_.end() || scope->second == 0) {
    return Unverified(absl::StrCat("buffer ", b->name, " is used outside its scope"));
  }
  return buffer_slots_.at(b.get());
}

absl::StatusOr<CExprPtr> Compiler::CompileExprAs(const ir::Expr& e, DType t) {
  auto c = CompileExpr(e);
  if (!c.ok() || (*c)->dtype == t) return c;
  return CExprPtr(std::make_unique<CastExpr>(t, std::move(*c)));
}

absl::StatusOr<CExprPtr> Compiler::CompileIndex(const ir::Expr& e) {
  auto c = CompileExpr(e);
  if (!c.ok() || !IsFloat((*c)->dtype)) return c;
  return Unverified(absl::StrCat("an index or extent has dtype ", Sv(ir::DTypeName((*c)->dtype))));
}

absl::StatusOr<CExprPtr> Compiler::CompileExpr(const ir::Expr& e) {
  if (e == nullptr) return Unverified("an expression is missing");
  const DType t = e->dtype;
  switch (e->kind) {
    case ir::ExprKind::kIntImm: {
      const int64_t v = e->as<ir::IntImmNode>()->value;
      return CExprPtr(std::make_unique<ConstExpr>(t, Convert(IntScalar(v), DType::kInt64, t)));
    }
    case ir::ExprKind::kFloatImm: {
      const double v = e->as<ir::FloatImmNode>()->value;
      return CExprPtr(std::make_unique<ConstExpr>(t, Convert(FloatScalar(v), DType::kFloat64, t)));
    }
    case ir::ExprKind::kVar: {
      auto slot = VarSlot(static_cast<const ir::VarNode*>(e.get()));
      if (!slot.ok()) return slot.status();
      return CExprPtr(std::make_unique<VarExpr>(t, *slot));
    }
    case ir::ExprKind::kBinary: {
      const auto* b = e->as<ir::BinaryNode>();
      auto a = CompileExpr(b->a);
      if (!a.ok()) return a.status();
      const DType operand = (*a)->dtype;
      auto c = CompileExprAs(b->b, operand);
      if (!c.ok()) return c.status();
      if (ir::IsLogical(b->op)) {
        return CExprPtr(
            std::make_unique<LogicalExpr>(b->op == BinaryOp::kAnd, std::move(*a), std::move(*c)));
      }
      // The node's dtype is the operand's or bool; results are converted to
      // it should the two ever differ.
      const DType natural = ir::IsComparison(b->op) ? DType::kBool : operand;
      CExprPtr r;
      if (IsFloat(operand)) {
        if (b->op >= BinaryOp::kBitAnd) {
          return Unverified(absl::StrCat("bitwise ", Sv(ir::BinaryOpName(b->op)), " on ",
                                         Sv(ir::DTypeName(operand))));
        }
        r = std::make_unique<FloatBinaryExpr>(natural, operand, b->op, std::move(*a),
                                              std::move(*c));
      } else {
        r = std::make_unique<IntBinaryExpr>(natural, operand, b->op, std::move(*a), std::move(*c));
      }
      if (natural != t) r = std::make_unique<CastExpr>(t, std::move(r));
      return r;
    }
    case ir::ExprKind::kUnary: {
      const auto* u = e->as<ir::UnaryNode>();
      auto a =
          u->op == ir::UnaryOp::kNot ? CompileExprAs(u->a, DType::kBool) : CompileExprAs(u->a, t);
      if (!a.ok()) return a.status();
      if (u->op == ir::UnaryOp::kBitNot && IsFloat(t)) {
        return Unverified(absl::StrCat("bitwise not on ", Sv(ir::DTypeName(t))));
      }
      CExprPtr r = std::make_unique<UnaryExpr>(u->op == ir::UnaryOp::kNot ? DType::kBool : t, u->op,
                                               std::move(*a));
      if (r->dtype != t) r = std::make_unique<CastExpr>(t, std::move(r));
      return r;
    }
    case ir::ExprKind::kSelect: {
      const auto* s = e->as<ir::SelectNode>();
      auto c = CompileExprAs(s->cond, DType::kBool);
      if (!c.ok()) return c.status();
      auto a = CompileExprAs(s->t, t);
      if (!a.ok()) return a.status();
      auto b = CompileExprAs(s->f, t);
      if (!b.ok()) return b.status();
      return CExprPtr(std::make_unique<SelectExpr>(t, std::move(*c), std::move(*a), std::move(*b)));
    }
    case ir::ExprKind::kCast: {
      return CompileExprAs(e->as<ir::CastNode>()->value, t);
    }
    case ir::ExprKind::kCall: {
      const auto* call = e->as<ir::CallNode>();
      if (call->fn == CallFn::kThreadIndex) {
        CExprPtr r = std::make_unique<ThreadIndexExpr>();
        if (t != DType::kInt32) r = std::make_unique<CastExpr>(t, std::move(r));
        return r;
      }
      if (static_cast<int>(call->args.size()) != ir::CallArity(call->fn)) {
        return Unverified(absl::StrCat(Sv(ir::CallFnName(call->fn)), " takes ",
                                       ir::CallArity(call->fn), " arguments, not ",
                                       call->args.size()));
      }
      if (call->fn == CallFn::kReinterpret) {
        auto a = CompileExpr(call->args[0]);
        if (!a.ok()) return a.status();
        return CExprPtr(std::make_unique<ReinterpretExpr>(t, std::move(*a), call->args[0]->dtype));
      }
      std::vector<CExprPtr> args;
      for (const ir::Expr& arg : call->args) {
        auto a = CompileExprAs(arg, t);
        if (!a.ok()) return a.status();
        args.push_back(std::move(*a));
      }
      return CExprPtr(std::make_unique<CallExpr>(t, call->fn, std::move(args)));
    }
    case ir::ExprKind::kLoad: {
      const auto* load = e->as<ir::LoadNode>();
      auto slot = BufferSlot(load->buffer);
      if (!slot.ok()) return slot.status();
      if (load->indices.size() != load->buffer->shape.size()) {
        return Unverified(absl::StrCat("load from ", load->buffer->name, " has ",
                                       load->indices.size(), " indices for rank ",
                                       load->buffer->shape.size()));
      }
      std::vector<CExprPtr> indices;
      for (const ir::Expr& i : load->indices) {
        auto c = CompileIndex(i);
        if (!c.ok()) return c.status();
        indices.push_back(std::move(*c));
      }
      CExprPtr r = std::make_unique<LoadExpr>(load->buffer->dtype, *slot, std::move(indices));
      if (r->dtype != t) r = std::make_unique<CastExpr>(t, std::move(r));
      return r;
    }
  }
  return Unverified("unknown expression kind");
}

absl::StatusOr<CRegion> Compiler::CompileRegion(const ir::Region& r) {
  CRegion out;
  auto slot = BufferSlot(r.buffer);
  if (!slot.ok()) return slot.status();
  out.slot = *slot;
  const size_t rank = r.buffer->shape.size();
  if (r.mins.size() != rank || r.extents.size() != rank) {
    return Unverified(absl::StrCat("a region of ", r.buffer->name, " has ", r.mins.size(),
                                   " mins and ", r.extents.size(), " extents for rank ", rank));
  }
  for (size_t d = 0; d < rank; ++d) {
    auto m = CompileIndex(r.mins[d]);
    if (!m.ok()) return m.status();
    auto x = CompileIndex(r.extents[d]);
    if (!x.ok()) return x.status();
    out.mins.push_back(std::move(*m));
    out.extents.push_back(std::move(*x));
  }
  return out;
}

}  // namespace tilec::interp::internal
