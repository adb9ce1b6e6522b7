// Builder: expressions.
#include <algorithm>
#include <functional>
#include <utility>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/parser.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {
namespace {

constexpr size_t kMaxSequence = kMaxStagingItems;

bool IsTensorTypeCtor(const Value& v) {
  return v.kind == ValueKind::kBuiltin &&
         (v.builtin->name == "T.Tensor" || v.builtin->name == "T.Buffer" ||
          v.builtin->name == "T.StridedTensor");
}

}  // namespace

absl::StatusOr<Value> Builder::Eval(const Expr& e) {
  DepthGuard depth(*this, e.loc);
  if (!depth.status().ok()) return depth.status();
  absl::Status tick = Tick(e.loc);
  if (!tick.ok()) return tick;
  switch (e.kind) {
    case ExprKind::kName: return EvalName(*e.as<NameExpr>());
    case ExprKind::kConstant: return EvalConstant(*e.as<ConstantExpr>());
    case ExprKind::kAttribute: return EvalAttribute(*e.as<AttributeExpr>());
    case ExprKind::kSubscript: return EvalSubscript(*e.as<SubscriptExpr>());
    case ExprKind::kCall: return EvalCall(*e.as<CallExpr>());
    case ExprKind::kBinOp: {
      const auto& b = *e.as<BinOpExpr>();
      absl::StatusOr<Value> x = Eval(*b.lhs);
      if (!x.ok()) return x;
      absl::StatusOr<Value> y = Eval(*b.rhs);
      if (!y.ok()) return y;
      if (b.op == BinOpKind::kMul) {
        // `(block,) * n` needs n at staging time.
        bool x_seq = x->IsSequence() || x->kind == ValueKind::kStr;
        bool y_seq = y->IsSequence() || y->kind == ValueKind::kStr;
        if (x_seq && IsRuntimeScalar(*y)) {
          return NotStatic(*y, b.rhs->loc, Cat("the repetition count of a ", DescribeValue(*x)));
        }
        if (y_seq && IsRuntimeScalar(*x)) {
          return NotStatic(*x, b.lhs->loc, Cat("the repetition count of a ", DescribeValue(*y)));
        }
      }
      return At(ApplyBinOp(b.op, *x, *y), b.op_loc);
    }
    case ExprKind::kUnaryOp: {
      const auto& u = *e.as<UnaryOpExpr>();
      absl::StatusOr<Value> x = Eval(*u.operand);
      if (!x.ok()) return x;
      return At(ApplyUnaryOp(u.op, *x), u.loc);
    }
    case ExprKind::kBoolOp: return EvalBoolOp(*e.as<BoolOpExpr>());
    case ExprKind::kCompare: return EvalCompare(*e.as<CompareExpr>());
    case ExprKind::kIfExp: return EvalIfExp(*e.as<IfExpExpr>());
    case ExprKind::kTuple: {
      absl::StatusOr<ValueList> items = EvalElements(e.as<TupleExpr>()->elts);
      if (!items.ok()) return items.status();
      return Value::Tuple(std::move(*items));
    }
    case ExprKind::kList: {
      absl::StatusOr<ValueList> items = EvalElements(e.as<ListExpr>()->elts);
      if (!items.ok()) return items.status();
      return Value::List(std::move(*items));
    }
    case ExprKind::kDict: {
      const auto& d = *e.as<DictExpr>();
      DictItems items;
      for (size_t k = 0; k < d.values.size(); ++k) {
        absl::StatusOr<Value> v = Eval(*d.values[k]);
        if (!v.ok()) return v;
        if (!d.keys[k]) {
          if (v->kind != ValueKind::kDict) {
            return Err(d.values[k]->loc, Cat("`**` needs a dict, got ", DescribeValue(*v)));
          }
          for (const auto& item : *v->dict) items.push_back(item);
          continue;
        }
        absl::StatusOr<Value> key = Eval(*d.keys[k]);
        if (!key.ok()) return key;
        bool replaced = false;
        for (auto& item : items) {
          if (StagingEquals(item.first, *key).value_or(false)) {
            item.second = *v;
            replaced = true;
          }
        }
        if (!replaced) items.emplace_back(*key, *v);
      }
      return Value::Dict(std::move(items));
    }
    case ExprKind::kSet: {
      absl::StatusOr<ValueList> items = EvalElements(e.as<SetExpr>()->elts);
      if (!items.ok()) return items.status();
      std::optional<Value> set = Value::Set(*items);
      if (!set) return Err(e.loc, "a set of runtime values is not supported");
      return *set;
    }
    case ExprKind::kLambda: return EvalLambda(*e.as<LambdaExpr>());
    case ExprKind::kComprehension: return EvalComprehension(*e.as<ComprehensionExpr>());
    case ExprKind::kStarred:
      return Err(e.loc, "a starred expression is only allowed in calls, tuples and lists");
    case ExprKind::kNamedExpr: return Err(e.loc, "assignment expressions (:=) are not supported");
    case ExprKind::kYield: return Err(e.loc, "yield is not supported");
    case ExprKind::kAwait: return Err(e.loc, "await is not supported");
  }
  return Internal("unknown expression kind");
}

absl::StatusOr<ValueList> Builder::EvalElements(const std::vector<ExprPtr>& elts) {
  ValueList items;
  for (const ExprPtr& elt : elts) {
    if (const auto* star = elt->as<StarredExpr>()) {
      absl::StatusOr<Value> v = Eval(*star->value);
      if (!v.ok()) return v.status();
      ValueList expanded;
      absl::StatusOr<Value> it = Iterable(*v, star->loc, &expanded);
      if (!it.ok()) return it.status();
      items.insert(items.end(), expanded.begin(), expanded.end());
      continue;
    }
    absl::StatusOr<Value> v = Eval(*elt);
    if (!v.ok()) return v.status();
    items.push_back(std::move(*v));
  }
  return items;
}

absl::StatusOr<Value> Builder::EvalName(const NameExpr& e) {
  if (HasFrame()) {
    if (Env::Slot* slot = frame().env->Lookup(e.id)) {
      if (!BlockOpen(slot->block_id)) {
        return Err(e.loc, Cat("`", e.id,
                              "` was bound inside a loop, branch or kernel body and is "
                              "used outside it; use T.alloc_var to carry a value out"));
      }
      return slot->value;
    }
  }
  if (std::find(pending_tensors_.begin(), pending_tensors_.end(), e.id) != pending_tensors_.end()) {
    return Err(e.loc, Cat("tensor parameter `", e.id, "` is used before its annotation `", e.id,
                          ": T.Tensor(shape, dtype)`"));
  }
  absl::StatusOr<std::optional<Value>> global = ModuleGlobal(e.id, e.loc);
  if (!global.ok()) return global.status();
  if (*global) return **global;
  if (std::optional<Value> b = PythonBuiltin(e.id)) return *b;
  if (names_as_strings_) return Value::Str(e.id);
  return Err(e.loc, Cat("name `", e.id, "` is not defined"));
}

absl::StatusOr<Value> Builder::EvalAttribute(const AttributeExpr& e) {
  absl::StatusOr<Value> v = Eval(*e.value);
  if (!v.ok()) return v;
  return Attribute(*v, e.attr, e.attr_loc);
}

absl::StatusOr<Value> Builder::Attribute(const Value& v, const std::string& attr, SourceLoc loc) {
  switch (v.kind) {
    case ValueKind::kModule: {
      if (std::optional<Value> r = ModuleAttribute(v.s, attr)) return *r;
      std::string path = Cat(v.s, ".", attr);
      if (IsKnownModule(path)) return Value::Module(path);
      std::string shown = v.s == "tilelang.language" ? "T" : v.s;
      return Err(loc, Cat("`", shown, ".", attr, "` is not supported by tilec"));
    }
    case ValueKind::kBuffer: {
      const ir::Buffer& b = v.buffer;
      if (attr == "shape") {
        ValueList dims;
        for (const ir::Expr& d : b->shape) {
          if (std::optional<int64_t> c = ir::AsConstInt(d)) {
            dims.push_back(Value::Int(*c));
          } else {
            dims.push_back(Value::Runtime(d));
          }
        }
        return Value::Tuple(std::move(dims));
      }
      if (attr == "dtype") return Value::DType(b->dtype);
      if (attr == "name") return Value::Str(b->name);
      // The data of a global tensor, for T.Tensor(shape, dtype, A.data).
      if (attr == "data" && b->scope == ir::Scope::kGlobal) return v;
      if (attr == "ndim") return Value::Int(static_cast<int64_t>(b->shape.size()));
      break;
    }
    case ValueKind::kRegion:
      if (attr == "dtype") return Value::DType(v.region->buffer->dtype);
      break;
    case ValueKind::kElement:
      if (attr == "dtype") return Value::DType(v.element->buffer->dtype);
      break;
    case ValueKind::kExpr:
      if (attr == "dtype") return Value::DType(v.expr->dtype);
      break;
    case ValueKind::kDType: {
      // TileLang dtype objects (T.float16, T.dtype("int8")) carry their
      // width; torch dtypes their size in bytes.
      bool is_bool = v.dtype == ir::DType::kBool;
      int bits = is_bool ? 1 : ir::DTypeBits(v.dtype);
      if (attr == "bits") return Value::Int(bits);
      if (attr == "lanes") return Value::Int(v.lanes);
      if (attr == "is_floating_point") return Value::Bool(ir::IsFloat(v.dtype));
      if (attr == "itemsize") {
        if (is_bool) return Value::Int(1);
        if (bits % 8 != 0) {
          return Err(loc, Cat(ir::DTypeName(v.dtype), " has no whole-byte itemsize"));
        }
        return Value::Int(bits / 8);
      }
      break;
    }
    case ValueKind::kHostTensor:
      if (std::optional<absl::StatusOr<Value>> r = HostTensorAttribute(*this, v, attr, loc)) {
        return *r;
      }
      break;
    case ValueKind::kSuper: {
      absl::StatusOr<std::optional<Value>> r = SuperAttribute(v, attr, loc);
      if (!r.ok()) return r.status();
      if (*r) return **r;
      break;
    }
    case ValueKind::kClass:
    case ValueKind::kObject: {
      absl::StatusOr<std::optional<Value>> r = ClassAttribute(v, attr, loc);
      if (!r.ok()) return r.status();
      if (*r) return **r;
      break;
    }
    default: break;
  }
  if (std::optional<Value> m = MethodOf(v, attr)) return *m;
  return Err(loc, Cat(DescribeValue(v), " has no attribute `", attr, "`"));
}

absl::StatusOr<Value> Builder::EvalSubscript(const SubscriptExpr& e) {
  absl::StatusOr<Value> v = Eval(*e.value);
  if (!v.ok()) return v;
  if (v->kind == ValueKind::kBuffer) return IndexBuffer(v->buffer, e);
  if (IsTensorTypeCtor(*v)) {
    // T.Tensor[(M, K), dtype]
    ValueList items;
    for (const SubscriptItem& item : e.items) {
      if (item.is_slice || !item.index) return Err(item.loc, "a slice is not a tensor type");
      absl::StatusOr<Value> x = Eval(*item.index);
      if (!x.ok()) return x;
      items.push_back(*x);
    }
    const bool strided = v->builtin->name == "T.StridedTensor";
    if (items.size() != (strided ? 3u : 2u)) {
      return Err(e.lbracket_loc, strided ? "T.StridedTensor[...] takes a shape, strides and a dtype"
                                         : "T.Tensor[...] takes a shape and a dtype");
    }
    const size_t dt = items.size() - 1;
    // `Any` (a lazy_jit signature): the call gives the dtype.
    const bool any =
        items[dt].kind == ValueKind::kBuiltin && items[dt].builtin->name == "typing.Any";
    absl::StatusOr<ir::DType> t =
        any ? ir::DType::kFloat32 : StaticDType(items[dt], e.items[dt].loc, "the tensor dtype");
    if (!t.ok()) return t.status();
    ValueList shape = items[0].IsSequence() ? items[0].Items() : ValueList{items[0]};
    ValueList strides;
    if (strided) strides = items[1].IsSequence() ? items[1].Items() : ValueList{items[1]};
    return Value::TensorType(std::move(shape), *t, std::move(strides), any);
  }
  if (v->kind == ValueKind::kBuiltin && v->builtin->name == "T.dyn") {
    // T.dyn[int, "X"]: the dynamic size X, as T.dynamic("X").
    CallArgs call;
    call.loc = e.lbracket_loc;
    for (const SubscriptItem& item : e.items) {
      if (item.is_slice || !item.index) return Err(item.loc, "T.dyn[...] takes a type and a name");
      absl::StatusOr<Value> x = Eval(*item.index);
      if (!x.ok()) return x;
      if (x->kind == ValueKind::kStr) call.positional.push_back(Arg{*x, item.loc});
    }
    if (call.positional.size() != 1) {
      return Err(e.lbracket_loc, "T.dyn[...] takes a type and a name: T.dyn[int, \"n\"]");
    }
    return CallValue(Value::Builtin("T.dynamic"), std::move(call));
  }
  if (v->kind == ValueKind::kRegion || v->kind == ValueKind::kElement) {
    return Err(e.lbracket_loc, Cat("a ", DescribeValue(*v), " cannot be indexed again"));
  }
  return IndexStaging(*v, e);
}

absl::StatusOr<Value> Builder::IndexBuffer(const ir::Buffer& b, const SubscriptExpr& e) {
  struct Index {
    bool is_slice = false;
    Value index;
    std::optional<Value> lo, hi, step;
    SourceLoc loc;
  };
  std::vector<Index> idx;
  for (const SubscriptItem& item : e.items) {
    if (item.is_slice) {
      Index x{true, Value::None(), std::nullopt, std::nullopt, std::nullopt, item.loc};
      for (auto [part, slot] :
           {std::pair{item.lower.get(), &x.lo}, std::pair{item.upper.get(), &x.hi},
            std::pair{item.step.get(), &x.step}}) {
        if (!part) continue;
        absl::StatusOr<Value> pv = Eval(*part);
        if (!pv.ok()) return pv.status();
        if (pv->kind != ValueKind::kNone) *slot = *pv;
      }
      idx.push_back(std::move(x));
      continue;
    }
    const Expr* ix = item.index.get();
    bool starred = false;
    if (const auto* star = ix->as<StarredExpr>()) {
      ix = star->value.get();
      starred = true;
    }
    absl::StatusOr<Value> v = Eval(*ix);
    if (!v.ok()) return v.status();
    // A slice() value is a slice; a tuple of indices and slices spreads.
    auto add = [&](const Value& s) {
      if (s.kind != ValueKind::kSlice) {
        idx.push_back(Index{false, s, {}, {}, {}, item.loc});
        return;
      }
      Index x{true, Value::None(), std::nullopt, std::nullopt, std::nullopt, item.loc};
      const ValueList& parts = *s.tuple;
      if (parts[0].kind != ValueKind::kNone) x.lo = parts[0];
      if (parts[1].kind != ValueKind::kNone) x.hi = parts[1];
      if (parts[2].kind != ValueKind::kNone) x.step = parts[2];
      idx.push_back(std::move(x));
    };
    if (v->IsSequence() || starred) {
      ValueList items;
      absl::StatusOr<Value> it = Iterable(*v, item.loc, &items);
      if (!it.ok()) return it.status();
      for (const Value& s : items) add(s);
    } else {
      add(*v);
    }
  }
  size_t rank = b->shape.size();
  // A 0-d buffer is stored as one element (ShapeOf); `x[()]` is that element.
  if (idx.empty() && rank == 1 && ir::AsConstInt(b->shape[0]) == 1) {
    idx.push_back(Index{false, Value::Int(0), {}, {}, {}, e.lbracket_loc});
  }
  if (idx.size() != rank) {
    return Err(e.lbracket_loc, Cat("buffer `", b->name, "` has ", rank,
                                   rank == 1 ? " dimension" : " dimensions", " but ", idx.size(),
                                   idx.size() == 1 ? " index was" : " indices were", " given"));
  }
  auto index_expr = [&](const Value& v, SourceLoc loc) -> absl::StatusOr<ir::Expr> {
    absl::StatusOr<ir::Expr> x = ExprOf(v, loc);
    if (!x.ok()) {
      return Err(loc, Cat("a buffer index must be an integer, got ", DescribeValue(v)));
    }
    if ((*x)->dtype == ir::DType::kBool) return CastTo(ir::DType::kInt32, *x);
    if (!ir::IsInt((*x)->dtype)) {
      return Err(loc, Cat("a buffer index must be an integer, got a ", ir::DTypeName((*x)->dtype),
                          " value"));
    }
    return *x;
  };
  bool any_slice = false;
  for (const Index& x : idx) any_slice |= x.is_slice;
  if (!any_slice) {
    std::vector<ir::Expr> indices;
    for (const Index& x : idx) {
      absl::StatusOr<ir::Expr> ie = index_expr(x.index, x.loc);
      if (!ie.ok()) return ie.status();
      indices.push_back(*ie);
    }
    return Value::Element(b, std::move(indices));
  }
  ir::Region region{b, {}, {}};
  ParamSet provenance;
  for (size_t d = 0; d < rank; ++d) {
    const Index& x = idx[d];
    if (!x.is_slice) {
      absl::StatusOr<ir::Expr> ie = index_expr(x.index, x.loc);
      if (!ie.ok()) return ie.status();
      region.mins.push_back(*ie);
      region.extents.push_back(ir::IntImm(1));
      continue;
    }
    if (x.step) {
      absl::StatusOr<int64_t> step = StaticInt(*x.step, x.loc, "a slice step");
      if (!step.ok()) return step.status();
      if (*step != 1) return Err(x.loc, "buffer slices with a step other than 1 are not supported");
    }
    Value lo = x.lo ? *x.lo : Value::Int(0);
    Value hi = x.hi ? *x.hi : Value::Runtime(b->shape[d]);
    absl::StatusOr<ir::Expr> lo_e = index_expr(lo, x.loc);
    if (!lo_e.ok()) return lo_e.status();
    absl::StatusOr<Value> ext = At(ApplyBinOp(BinOpKind::kSub, hi, lo), x.loc);
    if (!ext.ok()) return ext.status();
    absl::StatusOr<ir::Expr> ext_e = index_expr(*ext, x.loc);
    if (!ext_e.ok()) return ext_e.status();
    ir::Expr extent = SimplifyIndex(*ext_e);
    if (HasRuntimeVars(extent)) {
      // Bounds bound to locals (`kv_end - kv_start`): their values may
      // cancel (`(base + (k + 1) * bn) - (base + k * bn)` is `bn`).
      ir::Expr inlined = SimplifyIndex(InlineLets(*ext_e));
      if (!HasRuntimeVars(inlined)) extent = inlined;
    }
    if (HasRuntimeVars(extent)) {
      return Err(x.loc, Cat("the extent of this slice, `", ir::PrintExpr(extent),
                            "`, depends on runtime values; region extents must be "
                            "known when the kernel is launched"));
    }
    if (std::optional<int64_t> c = ir::AsConstInt(extent); c && *c < 0) {
      return Err(x.loc, Cat("this slice has a negative extent (", *c, ")"));
    }
    if (x.hi || x.lo) provenance.Merge(ext->params);
    region.mins.push_back(*lo_e);
    region.extents.push_back(extent);
  }
  Value r = Value::RegionRef(std::move(region));
  r.params = provenance;
  return r;
}

absl::StatusOr<Value> Builder::IndexStaging(const Value& v, const SubscriptExpr& e) {
  if (e.items.size() != 1 || e.trailing_comma) {
    return Err(e.lbracket_loc, Cat("a ", DescribeValue(v), " takes a single index"));
  }
  const SubscriptItem& item = e.items[0];
  if (v.kind == ValueKind::kDict) {
    if (item.is_slice) return Err(item.loc, "a dict cannot be sliced");
    absl::StatusOr<Value> key = Eval(*item.index);
    if (!key.ok()) return key;
    for (const auto& [k, val] : *v.dict) {
      if (StagingEquals(k, *key).value_or(false)) return val;
    }
    return Err(item.loc, Cat("key ", ValueRepr(*key), " is not in the dict"));
  }
  bool is_str = v.kind == ValueKind::kStr;
  if (!v.IsSequence() && !is_str) {
    return Err(e.lbracket_loc, Cat("a ", DescribeValue(v), " is not subscriptable"));
  }
  int64_t n = is_str ? static_cast<int64_t>(v.s.size()) : static_cast<int64_t>(v.Items().size());
  std::string what = is_str ? "string index" : Cat(DescribeValue(v), " index");
  if (!item.is_slice) {
    absl::StatusOr<Value> iv = Eval(*item.index);
    if (!iv.ok()) return iv;
    // A list of barriers takes a runtime index (`mbars[ko % 2]`): each stands
    // for any other (tl_sync.cc).
    if (!is_str && IsRuntimeScalar(*iv) && n > 0 &&
        std::all_of(v.Items().begin(), v.Items().end(), IsOneBarrier)) {
      return v.Items()[0];
    }
    absl::StatusOr<int64_t> k = StaticInt(*iv, item.loc, Cat("a ", what));
    if (!k.ok()) return k.status();
    int64_t at = *k < 0 ? *k + n : *k;
    if (at < 0 || at >= n) {
      return Err(item.loc, Cat(what, " ", *k, " is out of range (length ", n, ")"));
    }
    if (is_str) return Value::Str(std::string(1, v.s[at]));
    return v.Items()[at];
  }
  std::optional<int64_t> parts[3];
  const Expr* exprs[3] = {item.lower.get(), item.upper.get(), item.step.get()};
  for (int p = 0; p < 3; ++p) {
    if (!exprs[p]) continue;
    absl::StatusOr<Value> pv = Eval(*exprs[p]);
    if (!pv.ok()) return pv;
    if (pv->kind == ValueKind::kNone) continue;
    absl::StatusOr<int64_t> x = StaticInt(*pv, exprs[p]->loc, "a slice bound");
    if (!x.ok()) return x.status();
    parts[p] = *x;
  }
  int64_t step = parts[2].value_or(1);
  if (step == 0) return Err(item.loc, "slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> x, int64_t dflt) {
    if (!x) return dflt;
    int64_t y = *x < 0 ? *x + n : *x;
    if (step > 0) return std::clamp<int64_t>(y, 0, n);
    return std::clamp<int64_t>(y, -1, n - 1);
  };
  int64_t start = clamp(parts[0], step > 0 ? 0 : n - 1);
  int64_t stop = clamp(parts[1], step > 0 ? n : -1);
  ValueList out;
  std::string sout;
  for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
    if (is_str) {
      sout += v.s[k];
    } else {
      out.push_back(v.Items()[k]);
    }
  }
  if (is_str) return Value::Str(sout);
  return v.kind == ValueKind::kList ? Value::List(std::move(out)) : Value::Tuple(std::move(out));
}

absl::StatusOr<CallArgs> Builder::EvalArgs(const CallExpr& e) {
  CallArgs args;
  args.loc = e.loc;
  for (const ExprPtr& a : e.args) {
    if (const auto* star = a->as<StarredExpr>()) {
      absl::StatusOr<Value> v = Eval(*star->value);
      if (!v.ok()) return v.status();
      ValueList items;
      absl::StatusOr<Value> it = Iterable(*v, star->loc, &items);
      if (!it.ok()) return it.status();
      for (Value& item : items) args.positional.push_back(Arg{std::move(item), star->loc});
      continue;
    }
    absl::StatusOr<Value> v = Eval(*a);
    if (!v.ok()) return v.status();
    args.positional.push_back(Arg{std::move(*v), a->loc});
  }
  for (const Keyword& kw : e.keywords) {
    absl::StatusOr<Value> v = Eval(*kw.value);
    if (!v.ok()) return v.status();
    if (!kw.name.empty()) {
      for (const auto& [name, prev] : args.keywords) {
        if (name == kw.name) {
          return Err(kw.loc, Cat("keyword argument '", kw.name, "' repeated"));
        }
      }
      args.keywords.emplace_back(kw.name, Arg{std::move(*v), kw.loc});
      continue;
    }
    if (v->kind != ValueKind::kDict) {
      return Err(kw.loc, Cat("`**` needs a dict, got ", DescribeValue(*v)));
    }
    for (const auto& [key, val] : *v->dict) {
      if (key.kind != ValueKind::kStr) return Err(kw.loc, "`**` needs a dict with string keys");
      args.keywords.emplace_back(key.s, Arg{val, kw.loc});
    }
  }
  return args;
}

absl::StatusOr<Value> Builder::EvalCall(const CallExpr& e) {
  std::string hint = std::move(name_hint_);
  name_hint_.clear();
  absl::StatusOr<Value> callee = Eval(*e.func);
  if (!callee.ok()) return callee;
  absl::StatusOr<CallArgs> args = EvalArgs(e);
  if (!args.ok()) return args.status();
  name_hint_ = std::move(hint);
  absl::StatusOr<Value> result = CallValue(*callee, std::move(*args));
  name_hint_.clear();
  return At(std::move(result), e.loc);
}

absl::StatusOr<Value> Builder::EvalBoolOp(const BoolOpExpr& e) {
  bool is_and = e.op == BoolOpKind::kAnd;
  if (e.values.empty()) return Internal("empty boolean operation");
  absl::StatusOr<Value> first = Eval(*e.values[0]);
  if (!first.ok()) return first;
  Value acc = *first;
  ir::Expr runtime;  // set once a runtime operand has been seen
  for (size_t k = 1; k <= e.values.size(); ++k) {
    if (!runtime) {
      std::optional<bool> t = Truthy(acc);
      if (t) {
        if (is_and ? !*t : *t) return acc;  // short circuit
        if (k == e.values.size()) return acc;
        absl::StatusOr<Value> next = Eval(*e.values[k]);
        if (!next.ok()) return next;
        acc = *next;
        continue;
      }
      absl::StatusOr<ir::Expr> x = ExprOf(acc, e.values[k - 1]->loc);
      if (!x.ok()) return x.status();
      runtime = AsBool(*x);
    }
    if (k == e.values.size()) break;
    absl::StatusOr<Value> next = Eval(*e.values[k]);
    if (!next.ok()) return next;
    absl::StatusOr<ir::Expr> y = ExprOf(*next, e.values[k]->loc);
    if (!y.ok()) return y.status();
    runtime = ir::Binary(is_and ? ir::BinaryOp::kAnd : ir::BinaryOp::kOr, runtime, AsBool(*y));
  }
  return Value::Runtime(runtime);
}

absl::StatusOr<Value> Builder::EvalCompare(const CompareExpr& e) {
  absl::StatusOr<Value> left = Eval(*e.left);
  if (!left.ok()) return left;
  Value lhs = *left;
  if (e.ops.empty() || e.comparators.size() != e.ops.size() || e.op_locs.size() != e.ops.size()) {
    return Internal("malformed comparison");
  }
  std::optional<Value> acc;
  for (size_t k = 0; k < e.ops.size(); ++k) {
    absl::StatusOr<Value> right = Eval(*e.comparators[k]);
    if (!right.ok()) return right;
    absl::StatusOr<Value> r = At(ApplyCompare(e.ops[k], lhs, *right), e.op_locs[k]);
    if (!r.ok()) return r;
    if (!acc) {
      acc = *r;
    } else if (std::optional<bool> t = Truthy(*acc)) {
      acc = *t ? *r : *acc;
    } else {
      absl::StatusOr<ir::Expr> y = ExprOf(*r, e.op_locs[k]);
      if (!y.ok()) return y.status();
      acc = Value::Runtime(ir::Binary(ir::BinaryOp::kAnd, acc->expr, AsBool(*y)));
    }
    if (std::optional<bool> t = Truthy(*acc); t && !*t) return *acc;
    lhs = *right;
  }
  return *acc;
}

absl::StatusOr<Value> Builder::EvalIfExp(const IfExpExpr& e) {
  absl::StatusOr<Value> cond = Eval(*e.test);
  if (!cond.ok()) return cond;
  if (std::optional<bool> t = Truthy(*cond)) return Eval(*(*t ? e.body : e.orelse));
  absl::StatusOr<Value> a = Eval(*e.body);
  if (!a.ok()) return a;
  absl::StatusOr<Value> b = Eval(*e.orelse);
  if (!b.ok()) return b;
  auto scalar = [](const Value& v) { return v.IsNumber() || IsRuntimeScalar(v); };
  if (!scalar(*a) || !scalar(*b)) {
    return NotStatic(*cond, e.test->loc, "the condition of this conditional expression");
  }
  absl::StatusOr<ir::Expr> c = ExprOf(*cond, e.test->loc);
  if (!c.ok()) return c.status();
  Value lhs = *a;
  if (!IsRuntimeScalar(lhs) && !IsRuntimeScalar(*b)) {
    absl::StatusOr<ir::Expr> x = ExprOf(lhs, e.body->loc);
    if (!x.ok()) return x.status();
    lhs = Value::Runtime(*x);
  }
  absl::StatusOr<std::pair<ir::Expr, ir::Expr>> ops = PromoteOperands(lhs, *b);
  if (!ops.ok()) return At(ops.status(), e.loc);
  return Value::Runtime(ir::Select(AsBool(*c), ops->first, ops->second));
}

absl::StatusOr<Value> Builder::EvalLambda(const LambdaExpr& e) {
  // A lambda is a function like a `def` (T.Layout index functions, sort
  // keys, small helpers); its body runs where it is called.
  FunctionValue fn;
  fn.flavor = FunctionFlavor::kLambda;
  fn.lambda = &e;
  fn.name = "<lambda>";
  fn.closure = frame().env;
  for (const Param& p : e.params) {
    if (p.default_value) {
      absl::StatusOr<Value> dv = Eval(*p.default_value);
      if (!dv.ok()) return dv.status();
      fn.defaults.push_back(*dv);
    } else {
      fn.defaults.push_back(std::nullopt);
    }
  }
  return Value::Function(std::move(fn));
}

absl::StatusOr<Value> Builder::EvalComprehension(const ComprehensionExpr& e) {
  // A comprehension is plain Python even inside a kernel, as in TileLang:
  // `range` is Python's and the loop variables are staging names (no Lets).
  // Its elements may still be runtime expressions (`sum(A[i, k] for k in
  // range(4))`).
  Env* saved = frame().env;
  bool saved_syntax = frame().kernel_syntax;
  frame().env = NewEnv(saved);
  frame().kernel_syntax = false;
  ValueList out;
  DictItems dict_out;
  std::function<absl::Status(size_t)> run = [&](size_t g) -> absl::Status {
    if (g == e.generators.size()) {
      absl::StatusOr<Value> v = Eval(*e.element);
      if (!v.ok()) return v.status();
      if (e.comp_kind == ComprehensionKind::kDict) {
        absl::StatusOr<Value> val = Eval(*e.value);
        if (!val.ok()) return val.status();
        if (dict_out.size() >= kMaxDictItems) return Err(e.loc, "the dict is too large");
        dict_out.emplace_back(*v, *val);
      } else {
        if (out.size() >= kMaxSequence) return Err(e.loc, "comprehension result is too large");
        out.push_back(*v);
      }
      return absl::OkStatus();
    }
    const ComprehensionFor& gen = e.generators[g];
    if (gen.is_async) return Err(gen.loc, "async comprehensions are not supported");
    absl::StatusOr<Value> iter = Eval(*gen.iter);
    if (!iter.ok()) return iter.status();
    ValueList items;
    absl::StatusOr<Value> it = Iterable(*iter, gen.iter->loc, &items);
    if (!it.ok()) return it.status();
    for (const Value& item : items) {
      absl::Status s = AssignTarget(*gen.target, item);
      if (!s.ok()) return s;
      bool keep = true;
      for (const ExprPtr& cond : gen.ifs) {
        absl::StatusOr<Value> c = Eval(*cond);
        if (!c.ok()) return c.status();
        absl::StatusOr<bool> b = StaticBool(*c, cond->loc, "a comprehension condition");
        if (!b.ok()) return b.status();
        if (!*b) {
          keep = false;
          break;
        }
      }
      if (!keep) continue;
      absl::Status s2 = run(g + 1);
      if (!s2.ok()) return s2;
    }
    return absl::OkStatus();
  };
  absl::Status s = run(0);
  frame().env = saved;
  frame().kernel_syntax = saved_syntax;
  if (!s.ok()) return s;
  if (e.comp_kind == ComprehensionKind::kDict) return Value::Dict(std::move(dict_out));
  // A generator expression is evaluated eagerly but consumed once, as in
  // Python (a loop that breaks leaves the rest to the next loop over it).
  if (e.comp_kind == ComprehensionKind::kGenerator) return Value::Generator(std::move(out));
  if (e.comp_kind == ComprehensionKind::kSet) {
    std::optional<Value> set = Value::Set(out);
    if (!set) return Err(e.loc, "a set of runtime values is not supported");
    return *set;
  }
  return Value::List(std::move(out));
}

absl::StatusOr<Value> Builder::Iterable(const Value& v, SourceLoc loc, ValueList* items) {
  switch (v.kind) {
    case ValueKind::kTuple:
    case ValueKind::kList: *items = v.Items(); return v;
    case ValueKind::kGenerator: *items = v.TakeRemaining(); return v;
    case ValueKind::kSet:
      return Err(loc,
                 "iterating a set is not supported: Python's order is the hash order, which "
                 "tilec does not reproduce; iterate sorted(...) instead");
    case ValueKind::kStr:
      for (char c : v.s) items->push_back(Value::Str(std::string(1, c)));
      return v;
    case ValueKind::kDict:
      for (const auto& kv : *v.dict) items->push_back(kv.first);
      return v;
    case ValueKind::kRange: {
      const RangeValue& r = *v.range;
      for (int64_t k = r.start; r.step > 0 ? k < r.stop : k > r.stop; k += r.step) {
        if (items->size() >= kMaxSequence)
          return Err(loc, "range is too long to iterate at staging time");
        items->push_back(Value::Int(k, v.params));
      }
      return v;
    }
    case ValueKind::kExpr:
    case ValueKind::kElement: return NotStatic(v, loc, "iteration");
    default: break;
  }
  return Err(loc, Cat("a ", DescribeValue(v), " is not iterable here"));
}

}  // namespace tilec::frontend
