// TileLang and TVM helpers that build on the language functions:
// - T.clamp(x, lo, hi) -> min(max(x, lo), hi), a float x that is NaN kept
//   (Select on x != x);
// - T.any_of/T.all_of(buffer or region) -> an or/and chain of its elements'
//   loads (at most 1024, extents known at staging);
// - tilelang.cdiv / tilelang.next_power_of_2 (also tilelang.math.*) ->
//   TileLang's Python formulas;
// - tvm.tir.const(value, dtype) -> a literal;
// - T.Fragment(...) -> a layout hint that T.annotate_layout ignores.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

// T.clamp(x, lo, hi) = T.min(T.max(x, lo), hi), except that a float NaN
// stays NaN (T.max/T.min ignore a NaN operand, as CUDA's fmaxf does).
absl::StatusOr<Value> Clamp(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.clamp", {"dst", "min_val", "max_val"}, 3);
  if (!a.ok()) return a.status();
  const Arg& x = *(*a)[0];
  if (x.value.kind == ValueKind::kFloat && std::isnan(x.value.f)) return x.value;
  CallArgs lower{args.loc, {x, *(*a)[1]}, {}};
  absl::StatusOr<Value> m = *CallTlMath(b, "T.max", lower);
  if (!m.ok()) return m;
  CallArgs upper{args.loc, {Arg{*m, x.loc}, *(*a)[2]}, {}};
  absl::StatusOr<Value> r = *CallTlMath(b, "T.min", upper);
  if (!r.ok() || !IsRuntimeScalar(x.value)) return r;
  absl::StatusOr<ir::Expr> xe = b.ExprOf(x.value, x.loc);
  if (!xe.ok()) return xe.status();
  absl::StatusOr<ir::Expr> re = b.ExprOf(*r, args.loc);
  if (!re.ok()) return re.status();
  if (!ir::IsFloat((*xe)->dtype) || !ir::IsFloat((*re)->dtype)) return r;
  ir::Expr same = CastTo((*re)->dtype, *xe);
  Value out = Value::Runtime(ir::Select(ir::Binary(ir::BinaryOp::kNe, *xe, *xe), same, *re));
  out.params = r->params;
  return out;
}

// T.any_of(buf) / T.all_of(buf): whether any (all) element of a buffer or a
// region is nonzero, as one boolean expression over its loads (at most
// kMaxReductionTerms elements, known at staging time).
constexpr int64_t kMaxReductionTerms = 1024;

absl::StatusOr<Value> AnyAllOf(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"buffer"}, 1);
  if (!a.ok()) return a.status();
  const Arg& arg = *(*a)[0];
  ir::Region region;
  if (arg.value.kind == ValueKind::kBuffer) {
    region.buffer = arg.value.buffer;
    for (const ir::Expr& d : region.buffer->shape) {
      region.mins.push_back(ir::IntImm(0, d->dtype));
      region.extents.push_back(d);
    }
  } else if (arg.value.kind == ValueKind::kRegion) {
    region = *arg.value.region;
  } else {
    return b.Err(arg.loc,
                 Cat(name, "() needs a buffer or a buffer region, got ", DescribeValue(arg.value)));
  }
  std::vector<int64_t> extents;
  int64_t count = 1;
  for (const ir::Expr& e : region.extents) {
    std::optional<int64_t> c = ir::AsConstInt(e);
    if (!c) {
      return b.Err(arg.loc, Cat(name, "() needs extents known at staging time, got `",
                                ir::PrintExpr(e), "`"));
    }
    extents.push_back(*c);
    count *= *c;
    if (count > kMaxReductionTerms) {
      return b.Err(arg.loc,
                   Cat(name, "() of more than ", kMaxReductionTerms, " elements is not supported"));
    }
  }
  bool is_any = name == "T.any_of";
  if (count == 0) return Value::Runtime(ir::BoolImm(!is_any));
  ir::Expr acc;
  std::vector<int64_t> idx(extents.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    std::vector<ir::Expr> indices;
    for (size_t d = 0; d < idx.size(); ++d) {
      ir::Expr min = region.mins[d];
      indices.push_back(idx[d] == 0 ? min
                                    : SimplifyIndex(ir::Binary(ir::BinaryOp::kAdd, min,
                                                               ir::IntImm(idx[d], min->dtype))));
    }
    ir::Expr term = AsBool(ir::Load(region.buffer, std::move(indices)));
    acc = acc ? ir::Binary(is_any ? ir::BinaryOp::kOr : ir::BinaryOp::kAnd, acc, term) : term;
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < extents[d]) break;
      idx[d] = 0;
    }
  }
  return Value::Runtime(acc);
}

// tilelang.math.cdiv(a, b) = (a + b - 1) // b, with Python's semantics (a
// runtime operand builds the floor division); next_power_of_2(x) =
// 1 << (x - 1).bit_length(), on staging ints.
absl::StatusOr<Value> TilelangMath(Builder& b, std::string_view name, CallArgs& args) {
  if (name == "tilelang.math.cdiv") {
    absl::StatusOr<Args> a = BindArgs(b, args, "cdiv", {"a", "b"}, 2);
    if (!a.ok()) return a.status();
    const Value& x = (*a)[0]->value;
    const Value& y = (*a)[1]->value;
    absl::StatusOr<Value> sum = b.At(ApplyBinOp(BinOpKind::kAdd, x, y), args.loc);
    if (!sum.ok()) return sum;
    absl::StatusOr<Value> up = b.At(ApplyBinOp(BinOpKind::kSub, *sum, Value::Int(1)), args.loc);
    if (!up.ok()) return up;
    return b.At(ApplyBinOp(BinOpKind::kFloorDiv, *up, y), args.loc);
  }
  absl::StatusOr<Args> a = BindArgs(b, args, "next_power_of_2", {"x"}, 1);
  if (!a.ok()) return a.status();
  const Arg& x = *(*a)[0];
  absl::StatusOr<int64_t> v = b.StaticInt(x.value, x.loc, "next_power_of_2()");
  if (!v.ok()) return v.status();
  int64_t m = *v - 1;
  uint64_t mag = m < 0 ? uint64_t{0} - static_cast<uint64_t>(m) : static_cast<uint64_t>(m);
  int bits = 0;
  for (; mag != 0; mag >>= 1) ++bits;
  if (bits >= 63) return b.Err(x.loc, Cat("next_power_of_2(", *v, ") does not fit in 64 bits"));
  return Value::Int(int64_t{1} << bits, x.value.params);
}

}  // namespace

// T.annotate_safe_value({A: v, ...}): what an out-of-bounds element load of
// the global tensor A reads; T.annotate_padding({S: v, ...}): what
// out-of-bounds loads of global tensors read in the values stored into the
// shared or local buffer S (safe_access.h). The last annotation of a buffer
// holds for the whole program.
absl::StatusOr<Value> AnnotateSafeValue(Builder& b, CallArgs& args, std::string_view name) {
  const bool padding = name == "T.annotate_padding";
  absl::StatusOr<Args> a = BindArgs(b, args, name, {padding ? "padding_map" : "safe_value_map"}, 1);
  if (!a.ok()) return a.status();
  const Arg& m = *(*a)[0];
  if (m.value.kind != ValueKind::kDict) {
    return b.Err(m.loc, Cat(name, " needs a dict {", padding ? "buffer" : "tensor",
                            ": value}, got ", DescribeValue(m.value)));
  }
  for (const auto& [key, value] : *m.value.dict) {
    if (key.kind != ValueKind::kBuffer || (key.buffer->scope == ir::Scope::kGlobal) == padding) {
      return b.Err(m.loc, Cat(name, ": a key must be a ",
                              padding ? "shared or local buffer" : "global tensor", ", got ",
                              DescribeValue(key)));
    }
    absl::StatusOr<ir::Expr> v = b.ExprAs(value, key.buffer->dtype, m.loc);
    if (!v.ok()) return v.status();
    b.safe_values()[key.buffer.get()] = *v;
  }
  return Value::None();
}

std::optional<absl::StatusOr<Value>> CallTlHelper(Builder& b, std::string_view name,
                                                  CallArgs& args) {
  if (name == "tilelang.math.cdiv" || name == "tilelang.math.next_power_of_2") {
    return TilelangMath(b, name, args);
  }
  if (name == "T.clamp") return Clamp(b, args);
  if (name == "T.annotate_safe_value" || name == "T.annotate_padding") {
    return AnnotateSafeValue(b, args, name);
  }
  if (name == "tir.const") {
    // tvm.tir.const(value, dtype): a literal; the dtype defaults to int32 for
    // an int, float32 for a float and bool for a bool, as TVM's does.
    absl::StatusOr<Args> a = BindArgs(b, args, "tvm.tir.const", {"value", "dtype"}, 1);
    if (!a.ok()) return a.status();
    const Arg& v = *(*a)[0];
    if (!v.value.IsNumber()) {
      return b.Err(v.loc, Cat("tvm.tir.const() needs a number known at staging time, got ",
                              DescribeValue(v.value)));
    }
    ir::DType t = v.value.kind == ValueKind::kFloat  ? ir::DType::kFloat32
                  : v.value.kind == ValueKind::kBool ? ir::DType::kBool
                                                     : ir::DType::kInt32;
    if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
      absl::StatusOr<ir::DType> d = b.StaticDType((*a)[1]->value, (*a)[1]->loc, "tvm.tir.const()");
      if (!d.ok()) return d.status();
      t = *d;
    }
    absl::StatusOr<ir::Expr> e = b.ExprAs(v.value, t, v.loc);
    if (!e.ok()) return e.status();
    return Value::Runtime(*e);
  }
  if (name == "T.Fragment") {
    absl::StatusOr<Args> a = BindArgs(b, args, name,
                                      {"shape", "forward_fn", "forward_thread_fn", "replicate",
                                       "forward_index_fn", "thread_replicate"},
                                      1);
    if (!a.ok()) return a.status();
    for (size_t k : {1, 2, 4}) {
      if ((*a)[k] && (*a)[k]->value.kind != ValueKind::kFunction &&
          (*a)[k]->value.kind != ValueKind::kNone) {
        return b.Err((*a)[k]->loc, Cat("T.Fragment needs a function (a lambda) here, got ",
                                       DescribeValue((*a)[k]->value)));
      }
    }
    // Only T.annotate_layout takes it (and ignores it): a kLayout without an
    // IR layout.
    Value v;
    v.kind = ValueKind::kLayout;
    return v;
  }
  if (name == "tir.PrimExpr") {
    return b.Err(args.loc, "tvm.tir.PrimExpr is only supported as the class of isinstance()");
  }
  if (name == "T.any_of" || name == "T.all_of") return AnyAllOf(b, name, args);
  return std::nullopt;
}

}  // namespace tilec::frontend
