// Atomic tile operators (docs/language.md):
// - T.atomic_add(dst, value): a buffer element and a scalar -> the scalar
//   form; buffers/regions/head addresses -> the tile form (extents as for
//   T.copy). memory_order and use_tma are accepted and ignored;
//   return_prev=True (one element only) makes the call's value the
//   element's value before the update (a variable the atomic writes).
// - T.atomic_addx2 / T.atomic_addx4(dst, value): 2 / 4 scalar atomic adds of
//   consecutive elements along the last dimension.
// - T.atomic_max / T.atomic_min(dst, value): as T.atomic_add (scalar or tile
//   form) with AtomicOp kMax / kMin, into a global or shared buffer;
//   memory_order is accepted and ignored, return_prev as for T.atomic_add.
// Every destination has a dtype with atomics (ir::IsAtomicDType).
#include <optional>
#include <string_view>
#include <vector>

#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/tl_operands.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

// A destination the atomic `name` can update: a dtype with atomics and, with
// `scope`, a global or shared buffer.
absl::Status CheckAtomicDst(Builder& b, const Arg& dst, std::string_view name,
                            const ir::Buffer& buf, bool scope) {
  ir::DType t = buf->dtype;
  if (!ir::IsAtomicDType(t)) {
    return b.Err(dst.loc, Cat(name, " into ", ir::DTypeName(t), " (`", buf->name,
                              "`) is not supported; the 16-, 32- and 64-bit floats and the 32- "
                              "and 64-bit integers are"));
  }
  if (scope && buf->scope != ir::Scope::kGlobal && buf->scope != ir::Scope::kShared) {
    return b.Err(dst.loc, Cat(name, " needs a global or shared destination; `", buf->name,
                              "` is a ", ir::ScopeName(buf->scope), " buffer"));
  }
  return absl::OkStatus();
}

// The static value of an atomic's return_prev= (false when not given).
absl::StatusOr<bool> ReturnPrev(Builder& b, const std::optional<Arg>& arg) {
  if (!arg) return false;
  return b.StaticBool(arg->value, arg->loc, "return_prev");
}

// Whether an atomic is the tile form: a region, or a buffer that is not a
// runtime scalar, on either side.
bool TileForm(const Arg& dst, const Arg& value) {
  auto tile = [](const Value& v) {
    return v.kind == ValueKind::kRegion || (v.kind == ValueKind::kBuffer && !IsRuntimeScalar(v));
  };
  return tile(dst.value) || tile(value.value);
}

// Emits the one-element atomic `op` of `v` into `region`; with
// `return_prev`, into a fresh variable that receives the old value, whose
// load is the call's value (0 when the element lies outside its tensor and
// the atomic is dropped).
absl::StatusOr<Value> EmitElementAtomic(Builder& b, const CallArgs& args, std::string_view name,
                                        ir::Region region, ir::Expr v, ir::AtomicOp op,
                                        bool return_prev) {
  ir::Buffer prev;
  if (return_prev) {
    prev = ir::MakeBuffer(b.TakeNameHint("prev"), region.buffer->dtype, {ir::IntImm(1)},
                          ir::Scope::kVar);
    const ir::DType t = region.buffer->dtype;
    ir::Expr zero = ir::IsFloat(t) ? ir::FloatImm(0.0, t) : ir::IntImm(0, t);
    absl::Status s = b.Emit(ir::Allocate(prev, std::move(zero)), args.loc, name);
    if (!s.ok()) return s;
  }
  absl::Status s = b.Emit(
      std::make_shared<ir::AtomicAddNode>(std::move(region), std::nullopt, std::move(v), op, prev),
      args.loc, name);
  if (!s.ok()) return s;
  if (!return_prev) return Value::None();
  return Value::Runtime(ir::Load(prev, {ir::IntImm(0)}));
}

absl::StatusOr<Value> AtomicAdd(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.atomic_add",
                                    {"dst", "value", "memory_order", "return_prev", "use_tma"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<bool> return_prev = ReturnPrev(b, (*a)[3]);
  if (!return_prev.ok()) return return_prev.status();
  const Arg& dst = *(*a)[0];
  const Arg& value = *(*a)[1];
  if (TileForm(dst, value)) {
    if (*return_prev) {
      return b.Err((*a)[3]->loc,
                   "T.atomic_add(return_prev=True) takes one element, not a tile: the old "
                   "value is a scalar");
    }
    absl::StatusOr<Operand> d = ReadOperand(b, dst, "T.atomic_add", true);
    if (!d.ok()) return d.status();
    absl::StatusOr<Operand> v = ReadOperand(b, value, "T.atomic_add", true);
    if (!v.ok()) return v.status();
    absl::StatusOr<std::pair<ir::Region, ir::Region>> p =
        ResolvePair(b, *v, *d, args.loc, "T.atomic_add");
    if (!p.ok()) return p.status();
    if (absl::Status s = CheckAtomicDst(b, dst, "T.atomic_add", p->second.buffer, false); !s.ok()) {
      return s;
    }
    absl::Status s = b.Emit(std::make_shared<ir::AtomicAddNode>(p->second, p->first, nullptr),
                            args.loc, "T.atomic_add");
    if (!s.ok()) return s;
    return Value::None();
  }
  if (dst.value.kind != ValueKind::kElement) {
    return b.Err(dst.loc, Cat("T.atomic_add needs a buffer element or a tile as its "
                              "destination, got ",
                              DescribeValue(dst.value)));
  }
  const ElementValue& e = *dst.value.element;
  if (absl::Status s = CheckAtomicDst(b, dst, "T.atomic_add", e.buffer, false); !s.ok()) return s;
  absl::StatusOr<ir::Expr> v = b.ExprAs(value.value, e.buffer->dtype, value.loc);
  if (!v.ok()) return v.status();
  ir::Region region{e.buffer, e.indices, std::vector<ir::Expr>(e.indices.size(), ir::IntImm(1))};
  return EmitElementAtomic(b, args, "T.atomic_add", std::move(region), *v, ir::AtomicOp::kAdd,
                           *return_prev);
}

// T.atomic_addx2 / T.atomic_addx4(dst, value): `lanes` consecutive elements
// along the last dimension from dst's and value's first (an element, or a
// region of `lanes` elements along the last dimension): each added
// atomically on its own, the result TileLang's vector atomics give.
absl::StatusOr<Value> AtomicAddLanes(Builder& b, CallArgs& args, std::string_view name,
                                     int64_t lanes) {
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"dst", "value", "return_prev"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<bool> return_prev = ReturnPrev(b, (*a)[2]);
  if (!return_prev.ok()) return return_prev.status();
  if (*return_prev) return b.Err((*a)[2]->loc, Cat(name, "(return_prev=True) is not supported"));
  // The first element of an operand and its buffer.
  auto first = [&](const Arg& arg) -> absl::StatusOr<ElementValue> {
    if (arg.value.kind == ValueKind::kElement) return *arg.value.element;
    if (arg.value.kind == ValueKind::kRegion) {
      const ir::Region& r = *arg.value.region;
      for (size_t d = 0; d < r.extents.size(); ++d) {
        std::optional<int64_t> e = ir::AsConstInt(r.extents[d]);
        const int64_t want = d + 1 == r.extents.size() ? lanes : 1;
        if (!e || *e != want) {
          return b.Err(arg.loc,
                       Cat(name, " takes an element or a region of ", lanes,
                           " elements along the last dimension, got ", DescribeValue(arg.value)));
        }
      }
      return ElementValue{r.buffer, r.mins};
    }
    return b.Err(arg.loc, Cat(name, " takes a buffer element (the first of ", lanes, "), got ",
                              DescribeValue(arg.value)));
  };
  absl::StatusOr<ElementValue> dst = first(*(*a)[0]);
  if (!dst.ok()) return dst.status();
  absl::StatusOr<ElementValue> src = first(*(*a)[1]);
  if (!src.ok()) return src.status();
  if (dst->indices.empty() || src->indices.empty()) {
    return b.Err(args.loc, Cat(name, " needs buffer elements with an index"));
  }
  if (absl::Status s = CheckAtomicDst(b, *(*a)[0], name, dst->buffer, false); !s.ok()) return s;
  for (int64_t k = 0; k < lanes; ++k) {
    auto at = [&](std::vector<ir::Expr> idx) {
      idx.back() = SimplifyIndex(
          ir::Binary(ir::BinaryOp::kAdd, idx.back(), ir::IntImm(k, idx.back()->dtype)));
      return idx;
    };
    const std::vector<ir::Expr> di = at(dst->indices);
    ir::Expr v = ir::Load(src->buffer, at(src->indices));
    if (src->buffer->dtype != dst->buffer->dtype) v = ir::Cast(dst->buffer->dtype, v);
    ir::Region region{dst->buffer, di, std::vector<ir::Expr>(di.size(), ir::IntImm(1))};
    absl::Status s =
        b.Emit(std::make_shared<ir::AtomicAddNode>(region, std::nullopt, v), args.loc, name);
    if (!s.ok()) return s;
  }
  return Value::None();
}

// T.atomic_max / T.atomic_min(dst, value): the scalar and the tile form.
absl::StatusOr<Value> AtomicMaxMin(Builder& b, CallArgs& args, std::string_view name,
                                   ir::AtomicOp op) {
  absl::StatusOr<Args> a =
      BindArgs(b, args, name, {"dst", "value", "memory_order", "return_prev"}, 2);
  if (!a.ok()) return a.status();
  absl::StatusOr<bool> return_prev = ReturnPrev(b, (*a)[3]);
  if (!return_prev.ok()) return return_prev.status();
  const Arg& dst = *(*a)[0];
  const Arg& value = *(*a)[1];
  if (TileForm(dst, value)) {
    if (*return_prev) {
      return b.Err((*a)[3]->loc, Cat(name,
                                     "(return_prev=True) takes one element, not a tile: the old "
                                     "value is a scalar"));
    }
    // The tile form: element-wise over two regions, as T.atomic_add's.
    absl::StatusOr<Operand> d = ReadOperand(b, dst, name, true);
    if (!d.ok()) return d.status();
    absl::StatusOr<Operand> v = ReadOperand(b, value, name, true);
    if (!v.ok()) return v.status();
    absl::StatusOr<std::pair<ir::Region, ir::Region>> p = ResolvePair(b, *v, *d, args.loc, name);
    if (!p.ok()) return p.status();
    if (absl::Status s = CheckAtomicDst(b, dst, name, p->second.buffer, true); !s.ok()) return s;
    absl::Status s = b.Emit(std::make_shared<ir::AtomicAddNode>(p->second, p->first, nullptr, op),
                            args.loc, name);
    if (!s.ok()) return s;
    return Value::None();
  }
  if (dst.value.kind != ValueKind::kElement) {
    return b.Err(dst.loc, Cat(name, " needs a buffer element or a tile as its destination, got ",
                              DescribeValue(dst.value)));
  }
  if (!value.value.IsNumber() && !IsRuntimeScalar(value.value)) {
    return b.Err(value.loc, Cat(name, " takes a scalar value, got ", DescribeValue(value.value)));
  }
  const ElementValue& e = *dst.value.element;
  ir::DType t = e.buffer->dtype;
  if (absl::Status s = CheckAtomicDst(b, dst, name, e.buffer, true); !s.ok()) return s;
  absl::StatusOr<ir::Expr> v = b.ExprAs(value.value, t, value.loc);
  if (!v.ok()) return v.status();
  ir::Region region{e.buffer, e.indices, std::vector<ir::Expr>(e.indices.size(), ir::IntImm(1))};
  return EmitElementAtomic(b, args, name, std::move(region), *v, op, *return_prev);
}

}  // namespace

std::optional<absl::StatusOr<Value>> CallTileAtomic(Builder& b, std::string_view name,
                                                    CallArgs& args) {
  if (name == "T.atomic_add") return AtomicAdd(b, args);
  if (name == "T.atomic_addx2") return AtomicAddLanes(b, args, name, 2);
  if (name == "T.atomic_addx4") return AtomicAddLanes(b, args, name, 4);
  if (name == "T.atomic_max") return AtomicMaxMin(b, args, name, ir::AtomicOp::kMax);
  if (name == "T.atomic_min") return AtomicMaxMin(b, args, name, ir::AtomicOp::kMin);
  return std::nullopt;
}

}  // namespace tilec::frontend
