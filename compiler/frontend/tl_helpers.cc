// TileLang and TVM helpers that build on the language functions:
// - T.clamp(x, lo, hi) -> min(max(x, lo), hi), a float x that is NaN kept
//   (Select on x != x);
// - T.any_of/T.all_of(buffer or region) -> an or/and chain of its elements'
//   loads (at most 1024, extents known at staging);
// - tilelang.cdiv / tilelang.next_power_of_2 (also tilelang.math.*) ->
//   TileLang's Python formulas;
// - tvm.tir.const(value, dtype) -> a literal;
// - T.Fragment(...) -> a layout hint that T.annotate_layout ignores;
// - T.cummax / T.cummin(src, dst=None, dim=0, reverse=False) -> a
//   T.Parallel nest over the lines along `dim`, each scanned serially in
//   shared memory (a fragment side is staged through a shared buffer, as
//   TileLang stages it);
// - T.reduce_bitand / bitor / bitxor(buffer, out, dim=-1, clear=True) on
//   integer tiles -> each output element folds its line serially in shared
//   memory, one per T.Parallel iteration (fragments staged through shared
//   buffers), starting from the old output when clear=False.
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
  absl::StatusOr<Value> m = *CallTlLang(b, "T.max", lower, BuiltinValue{"T.max", nullptr});
  if (!m.ok()) return m;
  CallArgs upper{args.loc, {Arg{*m, x.loc}, *(*a)[2]}, {}};
  absl::StatusOr<Value> r = *CallTlLang(b, "T.min", upper, BuiltinValue{"T.min", nullptr});
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
// the global tensor A reads (safe_access.h); the last annotation of a tensor
// holds for the whole program.
absl::StatusOr<Value> AnnotateSafeValue(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.annotate_safe_value", {"safe_value_map"}, 1);
  if (!a.ok()) return a.status();
  const Arg& m = *(*a)[0];
  if (m.value.kind != ValueKind::kDict) {
    return b.Err(m.loc, Cat("T.annotate_safe_value needs a dict {tensor: value}, got ",
                            DescribeValue(m.value)));
  }
  for (const auto& [key, value] : *m.value.dict) {
    if (key.kind != ValueKind::kBuffer || key.buffer->scope != ir::Scope::kGlobal) {
      return b.Err(m.loc, Cat("T.annotate_safe_value: a key must be a global tensor, got ",
                              DescribeValue(key)));
    }
    absl::StatusOr<ir::Expr> v = b.ExprAs(value, key.buffer->dtype, m.loc);
    if (!v.ok()) return v.status();
    b.safe_values()[key.buffer.get()] = *v;
  }
  return Value::None();
}

// T.cummax / T.cummin: dst[..., t, ...] = max (min) of src[..., 0..t, ...]
// along `dim` (from the end when reversed).
absl::StatusOr<Value> ScanExtremum(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<Args> a =
      BindArgs(b, args, name, {"src", "dst", "dim", "reverse", "annotations"}, 1);
  if (!a.ok()) return a.status();
  auto buffer = [&](const std::optional<Arg>& x) -> absl::StatusOr<ir::Buffer> {
    if (x->value.kind != ValueKind::kBuffer) {
      return b.Err(x->loc, Cat(name, " works on whole buffers, got ", DescribeValue(x->value)));
    }
    const ir::Buffer& buf = x->value.buffer;
    if (buf->scope != ir::Scope::kShared && buf->scope != ir::Scope::kFragment) {
      return b.Err(x->loc, Cat(name, " works on shared and fragment buffers; `", buf->name,
                               "` is a ", ir::ScopeName(buf->scope), " buffer"));
    }
    return buf;
  };
  absl::StatusOr<ir::Buffer> src = buffer((*a)[0]);
  if (!src.ok()) return src.status();
  ir::Buffer dst = *src;
  if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
    absl::StatusOr<ir::Buffer> d = buffer((*a)[1]);
    if (!d.ok()) return d.status();
    dst = *d;
  }
  std::vector<int64_t> shape;
  for (const ir::Expr& e : (*src)->shape) shape.push_back(ir::AsConstInt(e).value_or(-1));
  std::vector<int64_t> dshape;
  for (const ir::Expr& e : dst->shape) dshape.push_back(ir::AsConstInt(e).value_or(-1));
  if (shape != dshape || dst->dtype != (*src)->dtype) {
    return b.Err(args.loc, Cat(name, ": dst must have src's shape and dtype"));
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t dim = 0;
  if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
    absl::StatusOr<int64_t> d = b.StaticInt((*a)[2]->value, (*a)[2]->loc, "the dim");
    if (!d.ok()) return d.status();
    dim = *d < 0 ? *d + rank : *d;
  }
  if (dim < 0 || dim >= rank) {
    return b.Err(args.loc, Cat(name, ": dim is out of range for a buffer of rank ", rank));
  }
  bool reverse = false;
  if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
    absl::StatusOr<bool> r = b.StaticBool((*a)[3]->value, (*a)[3]->loc, "reverse");
    if (!r.ok()) return r.status();
    reverse = *r;
  }
  // The scan runs in shared memory: fragments are staged through a buffer.
  auto emit = [&](ir::Stmt s) { return b.Emit(std::move(s), args.loc, name); };
  ir::Buffer work =
      (*src)->scope == ir::Scope::kShared && dst->scope == ir::Scope::kShared
          ? dst
          : ir::MakeBuffer(b.TakeNameHint("scan"), dst->dtype, dst->shape, ir::Scope::kShared);
  if (work != dst) {
    if (absl::Status st = emit(ir::Allocate(work)); !st.ok()) return st;
  }
  if (work != *src) {
    if (absl::Status st = emit(ir::Copy(ir::FullRegion(*src), ir::FullRegion(work))); !st.ok()) {
      return st;
    }
  }
  // T.Parallel over the other dims (one iteration for a 1-D buffer), a serial
  // loop along dim inside.
  std::vector<ir::Var> vars;
  std::vector<ir::Expr> extents;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == dim) continue;
    vars.push_back(ir::MakeVar(Cat("i", d), ir::DType::kInt32));
    extents.push_back(ir::IntImm(shape[d]));
  }
  if (vars.empty()) {
    vars.push_back(ir::MakeVar("line", ir::DType::kInt32));
    extents.push_back(ir::IntImm(1));
  }
  ir::Var t = ir::MakeVar("t", ir::DType::kInt32);
  const int64_t n = shape[dim];
  auto at = [&](const ir::Expr& pos) {
    std::vector<ir::Expr> idx;
    size_t k = 0;
    for (int64_t d = 0; d < rank; ++d) idx.push_back(d == dim ? pos : ir::Expr(vars[k++]));
    return idx;
  };
  // Step t (1 .. n-1) reads the element before it in scan order.
  ir::Expr cur = reverse ? ir::Binary(ir::BinaryOp::kSub, ir::IntImm(n - 1), t) : ir::Expr(t);
  ir::Expr prev = reverse ? ir::Binary(ir::BinaryOp::kSub, ir::IntImm(n), t)
                          : ir::Binary(ir::BinaryOp::kSub, t, ir::IntImm(1));
  const ir::BinaryOp op = name == "T.cummax" ? ir::BinaryOp::kMax : ir::BinaryOp::kMin;
  ir::Stmt body = ir::For(
      t, ir::IntImm(1), ir::IntImm(n - 1), ir::ForKind::kSerial,
      ir::Store(work, at(cur), ir::Binary(op, ir::Load(work, at(prev)), ir::Load(work, at(cur)))));
  for (size_t k = vars.size(); k-- > 0;) {
    body = ir::For(vars[k], ir::IntImm(0), extents[k], ir::ForKind::kParallel, body);
  }
  if (absl::Status st = emit(body); !st.ok()) return st;
  if (work != dst) {
    if (absl::Status st = emit(ir::Copy(ir::FullRegion(work), ir::FullRegion(dst))); !st.ok()) {
      return st;
    }
  }
  return Value::None();
}

// T.reduce_bitand / bitor / bitxor: out[..] = src[.., 0, ..] op src[.., 1,
// ..] op ... along `dim` (and op the old out[..] when clear=False).
absl::StatusOr<Value> BitwiseReduce(Builder& b, std::string_view name, CallArgs& args) {
  absl::StatusOr<Args> a =
      BindArgs(b, args, name, {"buffer", "out", "dim", "clear", "batch", "annotations"}, 2);
  if (!a.ok()) return a.status();
  ir::Buffer bufs[2];
  for (int k = 0; k < 2; ++k) {
    const Arg& x = *(*a)[k];
    if (x.value.kind != ValueKind::kBuffer) {
      return b.Err(x.loc, Cat(name, " works on whole buffers, got ", DescribeValue(x.value)));
    }
    bufs[k] = x.value.buffer;
    if ((bufs[k]->scope != ir::Scope::kShared && bufs[k]->scope != ir::Scope::kFragment) ||
        !ir::IsInt(bufs[k]->dtype)) {
      return b.Err(x.loc, Cat(name, " takes integer or bool shared and fragment buffers; `",
                              bufs[k]->name, "` is a ", ir::DTypeName(bufs[k]->dtype), " ",
                              ir::ScopeName(bufs[k]->scope), " buffer"));
    }
  }
  const ir::Buffer& src = bufs[0];
  const ir::Buffer& dst = bufs[1];
  std::vector<int64_t> shape;
  for (const ir::Expr& e : src->shape) shape.push_back(ir::AsConstInt(e).value_or(-1));
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t dim = rank - 1;
  if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
    absl::StatusOr<int64_t> d = b.StaticInt((*a)[2]->value, (*a)[2]->loc, "the dim");
    if (!d.ok()) return d.status();
    dim = *d < 0 ? *d + rank : *d;
  }
  if (dim < 0 || dim >= rank) {
    return b.Err(args.loc, Cat(name, ": dim is out of range for a buffer of rank ", rank));
  }
  bool clear = true;
  if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
    absl::StatusOr<bool> c = b.StaticBool((*a)[3]->value, (*a)[3]->loc, "clear");
    if (!c.ok()) return c.status();
    clear = *c;
  }
  std::vector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) expected.push_back(shape[d]);
  }
  if (expected.empty()) expected.push_back(1);
  std::vector<int64_t> got;
  for (const ir::Expr& e : dst->shape) got.push_back(ir::AsConstInt(e).value_or(-1));
  if (got != expected || std::count(shape.begin(), shape.end(), -1) > 0) {
    return b.Err((*a)[1]->loc, Cat(name, ": `", dst->name, "` must have the constant shape of `",
                                   src->name, "` without dim ", dim));
  }
  auto emit = [&](ir::Stmt s) { return b.Emit(std::move(s), args.loc, name); };
  // Both sides in shared memory.
  auto staged = [&](const ir::Buffer& buf, bool copy_in) -> absl::StatusOr<ir::Buffer> {
    if (buf->scope == ir::Scope::kShared) return buf;
    ir::Buffer s =
        ir::MakeBuffer(b.TakeNameHint("bits"), buf->dtype, buf->shape, ir::Scope::kShared);
    if (absl::Status st = emit(ir::Allocate(s)); !st.ok()) return st;
    if (copy_in) {
      if (absl::Status st = emit(ir::Copy(ir::FullRegion(buf), ir::FullRegion(s))); !st.ok()) {
        return st;
      }
    }
    return s;
  };
  absl::StatusOr<ir::Buffer> in = staged(src, true);
  if (!in.ok()) return in.status();
  absl::StatusOr<ir::Buffer> out = staged(dst, !clear);
  if (!out.ok()) return out.status();
  const ir::BinaryOp op = name == "T.reduce_bitand"  ? ir::BinaryOp::kBitAnd
                          : name == "T.reduce_bitor" ? ir::BinaryOp::kBitOr
                                                     : ir::BinaryOp::kBitXor;
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < expected.size(); ++d) {
    vars.push_back(ir::MakeVar(Cat("o", d), ir::DType::kInt32));
  }
  std::vector<ir::Expr> out_idx(vars.begin(), vars.end());
  if (rank == 1) out_idx = {ir::IntImm(0)};
  ir::Var r = ir::MakeVar("r", ir::DType::kInt32);
  auto src_at = [&](const ir::Expr& pos) {
    std::vector<ir::Expr> idx;
    size_t k = 0;
    for (int64_t d = 0; d < rank; ++d) idx.push_back(d == dim ? pos : ir::Expr(vars[k++]));
    return idx;
  };
  auto cast = [&](ir::Expr e) {
    return e->dtype == dst->dtype ? e : ir::Cast(dst->dtype, std::move(e));
  };
  // Element 0 (combined with the old output when not clearing), then the
  // rest of the line.
  ir::Expr first = cast(ir::Load(*in, src_at(ir::IntImm(0))));
  if (!clear) first = ir::Binary(op, ir::Load(*out, out_idx), first);
  ir::Stmt body = ir::Seq(
      {ir::Store(*out, out_idx, first),
       ir::For(
           r, ir::IntImm(1), ir::IntImm(shape[dim] - 1), ir::ForKind::kSerial,
           ir::Store(*out, out_idx,
                     ir::Binary(op, ir::Load(*out, out_idx), cast(ir::Load(*in, src_at(r))))))});
  for (size_t k = vars.size(); k-- > 0;) {
    body = ir::For(vars[k], ir::IntImm(0), ir::IntImm(expected[k]), ir::ForKind::kParallel, body);
  }
  if (absl::Status st = emit(body); !st.ok()) return st;
  if (*out != dst) {
    if (absl::Status st = emit(ir::Copy(ir::FullRegion(*out), ir::FullRegion(dst))); !st.ok()) {
      return st;
    }
  }
  return Value::None();
}

std::optional<absl::StatusOr<Value>> CallTlHelper(Builder& b, std::string_view name,
                                                  CallArgs& args) {
  if (name == "tilelang.math.cdiv" || name == "tilelang.math.next_power_of_2") {
    return TilelangMath(b, name, args);
  }
  if (name == "T.clamp") return Clamp(b, args);
  if (name == "T.annotate_safe_value") return AnnotateSafeValue(b, args);
  if (name == "T.cummax" || name == "T.cummin") return ScanExtremum(b, name, args);
  if (name == "T.reduce_bitand" || name == "T.reduce_bitor" || name == "T.reduce_bitxor") {
    return BitwiseReduce(b, name, args);
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
