// TileLang language functions other than tile operators: launch, loops,
// casts, dtypes, symbols, tensor types and layouts (the scalar math is in
// tl_math.cc).
//
// Mapping to the IR:
// - T.Kernel(*grid, threads=128, prelude=None) -> a KernelSpec; the `with`
//   statement makes the Kernel node. No grid extents is one block without a
//   block index. threads defaults to 128 as in TileLang; a
//   threads tuple (x, 1, 1) is x.
// - T.Parallel(*extents) -> nested kParallel loops from 0; T.grid -> nested
//   serial loops; T.serial / T.unroll / T.vectorized (n) or (a, b[, step]) ->
//   one loop from a (a step other than 1 iterates a counter and binds the
//   name to a + counter * step); T.Pipelined(n or a, b, num_stages=, order=,
//   stage=) -> a kPipelined loop (num_stages stays unset when not given;
//   num_stages=0, TileLang's "no pipelining", gives a serial loop;
//   sync=, group= and annotations are scheduling hints and are accepted and
//   ignored, as are T.Parallel's coalesced_width, loop_layout, prefer_async
//   and annotations, and T.unroll's explicit and unroll_factor).
// - T.cast, x.astype and T.Cast(dt, x) -> Cast; T.float16(x)-style
//   constructors -> a literal of that dtype or a cast.
// - T.dynamic/T.symbolic("n") -> a symbolic size; T.const("M, N") (eager
//   style) -> the bound values, or symbolic sizes when unbound; T.empty(shape,
//   dtype) (eager style) -> a new output tensor parameter.
// - T.Tensor/T.Buffer(shape, dtype) and T.Tensor[shape, dtype] -> a tensor
//   type for parameter annotations; T.StridedTensor(shape, strides, dtype)
//   and T.Tensor(..., strides=) one with strides (tensor_params.cc; the other
//   layout arguments are ignored).
// - T.Layout(shape, lambda i, j: ...) -> a custom layout over fresh index
//   variables; tilelang.layout.make_swizzled_layout(buf) -> a swizzled layout.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/names.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

absl::StatusOr<Value> DTypeCtor(Builder& b, ir::DType t, CallArgs& args) {
  std::string name = Cat("T.", ir::DTypeName(t));
  absl::StatusOr<Args> a = BindArgs(b, args, name, {"value"}, 0);
  if (!a.ok()) return a.status();
  if (!(*a)[0]) {
    return b.Err(args.loc, Cat(name,
                               "() without a value declares a scalar; that is "
                               "only supported as a parameter annotation"));
  }
  const Arg& v = *(*a)[0];
  if (v.value.kind == ValueKind::kStr) {
    double d = 0;
    if (v.value.s == "inf")
      d = std::numeric_limits<double>::infinity();
    else if (v.value.s == "-inf")
      d = -std::numeric_limits<double>::infinity();
    else if (v.value.s == "nan")
      d = std::numeric_limits<double>::quiet_NaN();
    else
      return b.Err(v.loc, Cat(name, "() of the string ", ValueRepr(v.value)));
    if (!ir::IsFloat(t)) return b.Err(v.loc, Cat(name, "() cannot hold ", v.value.s));
    return Value::Runtime(ir::FloatImm(d, t));
  }
  absl::StatusOr<ir::Expr> e = b.ExprAs(v.value, t, v.loc);
  if (!e.ok()) return e.status();
  return Value::Runtime(*e);
}

// An extent `stop - start` (or `start` alone), with its provenance.
absl::StatusOr<Value> Extent(Builder& b, const Arg& start, const std::optional<Arg>& stop) {
  if (!stop || stop->value.kind == ValueKind::kNone) return start.value;
  absl::StatusOr<Value> d = b.At(ApplyBinOp(BinOpKind::kSub, stop->value, start.value), stop->loc);
  if (!d.ok()) return d;
  if (d->kind == ValueKind::kExpr) {
    Value r = Value::Runtime(SimplifyIndex(d->expr));
    r.params = d->params;
    return r;
  }
  return d;
}

absl::StatusOr<std::vector<int64_t>> IntList(Builder& b, const std::optional<Arg>& a,
                                             std::string_view use) {
  std::vector<int64_t> out;
  if (!a || a->value.kind == ValueKind::kNone) return out;
  if (!a->value.IsSequence()) {
    return b.Err(a->loc, Cat(use, " must be a list of ints, got ", DescribeValue(a->value)));
  }
  for (const Value& v : a->value.Items()) {
    absl::StatusOr<int64_t> x = b.StaticInt(v, a->loc, use);
    if (!x.ok()) return x.status();
    out.push_back(*x);
  }
  return out;
}

absl::StatusOr<Value> SingleLoop(Builder& b, ir::ForKind kind, std::string_view name,
                                 CallArgs& args) {
  std::vector<std::string_view> names = {"start", "stop", "step", "annotations"};
  if (kind == ir::ForKind::kUnrolled)
    names = {"start", "stop", "step", "explicit", "unroll_factor", "annotations"};
  if (kind == ir::ForKind::kVectorized) names = {"start", "stop", "annotations"};
  if (kind == ir::ForKind::kPipelined)
    names = {"start", "stop", "num_stages", "order", "stage", "sync", "group", "annotations"};
  absl::StatusOr<Args> a = BindArgs(b, args, name, names, 1);
  if (!a.ok()) return a.status();
  const Arg& start = *(*a)[0];
  std::optional<Arg> stop = (*a)[1];
  bool has_stop = stop && stop->value.kind != ValueKind::kNone;
  LoopSpec spec;
  spec.kind = kind;
  ir::Expr min = ir::IntImm(0);
  if (has_stop) {
    absl::StatusOr<ir::Expr> m = b.SizeExpr(start.value, start.loc, "a loop start", false);
    if (!m.ok()) {
      absl::StatusOr<ir::Expr> any = b.ExprOf(start.value, start.loc);
      if (!any.ok() || !ir::IsInt((*any)->dtype)) return m.status();
      m = *any;  // a negative start is fine
    }
    min = *m;
  }
  absl::StatusOr<Value> extent = Extent(b, start, stop);
  if (!extent.ok()) return extent.status();
  int64_t step = 1;
  bool has_step = (kind == ir::ForKind::kSerial || kind == ir::ForKind::kUnrolled) && (*a)[2] &&
                  (*a)[2]->value.kind != ValueKind::kNone;
  if (has_step) {
    absl::StatusOr<int64_t> s = b.StaticInt((*a)[2]->value, (*a)[2]->loc, "a loop step");
    if (!s.ok()) return s.status();
    if (*s == 0) return b.Err((*a)[2]->loc, "a loop step must not be zero");
    step = *s;
  }
  Value count = *extent;
  if (step != 1) {
    // Iterations of `for i in range(start, stop, step)`: ceil((stop - start) / step).
    Value span = *extent;
    int64_t mag = step;
    if (step < 0) {
      absl::StatusOr<Value> neg = b.At(ApplyUnaryOp(UnaryOpKind::kNeg, span), args.loc);
      if (!neg.ok()) return neg;
      span = *neg;
      mag = -step;
    }
    absl::StatusOr<Value> up =
        b.At(ApplyBinOp(BinOpKind::kAdd, span, Value::Int(mag - 1)), args.loc);
    if (!up.ok()) return up;
    absl::StatusOr<Value> c =
        b.At(ApplyBinOp(BinOpKind::kFloorDiv, *up, Value::Int(mag)), args.loc);
    if (!c.ok()) return c;
    count = *c;
    if (count.IsIntLike() && count.AsInt() < 0) count = Value::Int(0);
    spec.step = ir::IntImm(step, min->dtype);
  }
  absl::StatusOr<ir::Expr> ext =
      b.SizeExpr(count, has_stop ? stop->loc : start.loc, "a loop extent", true);
  if (!ext.ok()) return ext.status();
  spec.mins.push_back(min);
  spec.extents.push_back(*ext);
  if (kind == ir::ForKind::kPipelined) {
    if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
      absl::StatusOr<ir::Expr> ns = b.SizeExpr((*a)[2]->value, (*a)[2]->loc, "num_stages", true);
      if (!ns.ok()) return ns.status();
      spec.num_stages = *ns;
    }
    absl::StatusOr<std::vector<int64_t>> order = IntList(b, (*a)[3], "order");
    if (!order.ok()) return order.status();
    absl::StatusOr<std::vector<int64_t>> stage = IntList(b, (*a)[4], "stage");
    if (!stage.ok()) return stage.status();
    spec.order = *order;
    spec.stage = *stage;
    if (const std::optional<Arg>& g = (*a)[6]; g && g->value.kind != ValueKind::kNone) {
      if (!g->value.IsSequence()) {
        return b.Err(g->loc, Cat("group must be a list of lists of statement indices, got ",
                                 DescribeValue(g->value)));
      }
      for (const Value& item : g->value.Items()) {
        absl::StatusOr<std::vector<int64_t>> members =
            IntList(b, Arg{item, g->loc}, "a group of group=");
        if (!members.ok()) return members.status();
        spec.group.push_back(*members);
      }
    }
    if (ir::AsConstInt(spec.num_stages) == 0) {
      // num_stages=0 turns pipelining off in TileLang: a plain serial loop,
      // unless a manual schedule (order/stage) sets the depth itself.
      spec.num_stages = nullptr;
      if (spec.order.empty() && spec.stage.empty()) spec.kind = ir::ForKind::kSerial;
    }
  }
  return Value::Loop(std::move(spec));
}

absl::StatusOr<Value> Kernel(Builder& b, CallArgs& args) {
  CallArgs named = args;
  named.positional.clear();
  absl::StatusOr<Args> a =
      BindArgs(b, named, "T.Kernel", {"threads", "is_cpu", "prelude", "cluster_dims"}, 0);
  if (!a.ok()) return a.status();
  if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
    // Thread-block clusters: the blocks of a cluster run as independent
    // blocks (tilec has no cluster-wide shared memory or multicast, whose
    // operations it refuses by name); the dims must still be 1 to 3 ints.
    const Value& c = (*a)[3]->value;
    std::vector<Value> dims = c.IsSequence() ? c.Items() : std::vector<Value>{c};
    if (dims.empty() || dims.size() > 3) {
      return b.Err((*a)[3]->loc, "T.Kernel(cluster_dims=) takes 1 to 3 extents");
    }
    for (const Value& d : dims) {
      absl::StatusOr<int64_t> n = b.StaticInt(d, (*a)[3]->loc, "a cluster extent");
      if (!n.ok()) return n.status();
      if (*n < 1) return b.Err((*a)[3]->loc, "T.Kernel(cluster_dims=) extents must be positive");
    }
  }
  std::vector<Arg> grid_args = args.positional;
  if (grid_args.size() == 1 && grid_args[0].value.IsSequence()) {
    Arg seq = grid_args[0];
    grid_args.clear();
    for (const Value& v : seq.value.Items()) grid_args.push_back(Arg{v, seq.loc});
  }
  if (grid_args.size() > 3) {
    return b.Err(args.loc, Cat("T.Kernel takes 0 to 3 grid extents, got ", grid_args.size()));
  }
  KernelSpec spec;
  if (grid_args.empty()) {
    // T.Kernel(threads=n): a single block.
    spec.no_grid = true;
    spec.grid.push_back(ir::IntImm(1));
  }
  for (const Arg& g : grid_args) {
    absl::StatusOr<ir::Expr> e = b.SizeExpr(g.value, g.loc, "a grid extent", false);
    if (!e.ok()) return e.status();
    spec.grid.push_back(*e);
  }
  spec.threads = ir::IntImm(128);
  if ((*a)[0] && (*a)[0]->value.kind != ValueKind::kNone) {
    const Arg& t = *(*a)[0];
    Value threads = t.value;
    if (threads.IsSequence()) {
      const ValueList& items = threads.Items();
      if (items.empty() || items.size() > 3) {
        return b.Err(t.loc, "threads must be an int or a tuple of 1 to 3 ints");
      }
      // A block of x * y * z threads, numbered x fastest as CUDA numbers
      // them; T.get_thread_binding(d) takes the index apart.
      int64_t total = 1;
      for (size_t k = 0; k < items.size(); ++k) {
        absl::StatusOr<int64_t> y = b.StaticInt(items[k], t.loc, "threads");
        if (!y.ok()) return y.status();
        if (*y < 1) return b.Err(t.loc, Cat("threads has the extent ", *y, "; each must be >= 1"));
        spec.thread_dims.push_back(*y);
        total *= *y;
      }
      threads = Value::Int(total);
    }
    absl::StatusOr<ir::Expr> e = b.SizeExpr(threads, t.loc, "threads", true);
    if (!e.ok()) return e.status();
    spec.threads = *e;
  }
  if ((*a)[1]) {
    absl::StatusOr<bool> cpu = b.StaticBool((*a)[1]->value, (*a)[1]->loc, "is_cpu");
    if (!cpu.ok()) return cpu.status();
    if (*cpu) return b.Err((*a)[1]->loc, "CPU kernels (is_cpu=True) are not supported");
  }
  if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
    absl::StatusOr<std::string> p = b.StaticStr((*a)[2]->value, (*a)[2]->loc, "prelude");
    if (!p.ok()) return p.status();
    spec.prelude = *p;
  }
  return Value::Kernel(std::move(spec));
}

// T.make_tensor(ptr, shape, dtype): the tensor a pointer parameter points
// to; it becomes the parameter (shapes may use scalar parameters).
absl::StatusOr<Value> MakeTensor(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.make_tensor", {"ptr", "shape", "dtype"}, 2);
  if (!a.ok()) return a.status();
  const Arg& ptr = *(*a)[0];
  if (ptr.value.kind == ValueKind::kBuffer && b.tensor_params().count(ptr.value.buffer->name) &&
      b.tensor_params().at(ptr.value.buffer->name) == ptr.value.buffer) {
    return b.Err(ptr.loc, Cat("`", ptr.value.buffer->name,
                              "` is already a tensor (T.make_tensor is called once per pointer)"));
  }
  if (!IsPointerParam(ptr.value)) {
    return b.Err(ptr.loc, Cat("T.make_tensor takes a pointer parameter (`p: T.ptr`), got ",
                              DescribeValue(ptr.value)));
  }
  const std::string param = FindAttr(ptr.value.object->attrs, "param")->s;
  if (b.tensor_params().count(param)) {
    return b.Err(ptr.loc, Cat("`", param,
                              "` already points to a tensor (T.make_tensor is "
                              "called once per pointer)"));
  }
  ir::DType t = ir::DType::kFloat32;
  if ((*a)[2]) {
    absl::StatusOr<ir::DType> d = b.StaticDType((*a)[2]->value, (*a)[2]->loc, "the tensor dtype");
    if (!d.ok()) return d.status();
    t = *d;
  }
  const Value& shape = (*a)[1]->value;
  TensorTypeValue tt{shape.IsSequence() ? shape.Items() : ValueList{shape}, t, {}, false};
  absl::Status st = b.DeclareTensorParam(param, tt, args.loc);
  if (!st.ok()) return st;
  return Value::BufferRef(b.tensor_params().at(param));
}

absl::StatusOr<Value> TensorType(Builder& b, std::string_view name, CallArgs& args) {
  // T.StridedTensor(shape, strides, dtype, ...) names its strides second.
  const bool strided = name == "T.StridedTensor";
  std::vector<std::string_view> names = {"shape",       "dtype",          "data",  "strides",
                                         "elem_offset", "scope",          "align", "offset_factor",
                                         "buffer_type", "axis_separators"};
  if (strided) names = {"shape", "strides", "dtype", "scope"};
  absl::StatusOr<Args> bound = BindArgs(b, args, name, names, strided ? 2 : 1);
  if (!bound.ok()) return bound.status();
  Args a_storage = *std::move(bound);
  if (strided) {
    // Same slots as T.Tensor's: shape, dtype, data, strides, ..., scope.
    Args t(10);
    t[0] = a_storage[0];
    t[1] = a_storage[2];
    t[3] = a_storage[1];
    t[5] = a_storage[3];
    a_storage = std::move(t);
  }
  const Args* a = &a_storage;
  ir::DType t = ir::DType::kFloat32;
  if ((*a)[1]) {
    absl::StatusOr<ir::DType> d = b.StaticDType((*a)[1]->value, (*a)[1]->loc, "the tensor dtype");
    if (!d.ok()) return d.status();
    t = *d;
  }
  if ((*a)[5]) {
    absl::StatusOr<std::string> scope = b.StaticStr((*a)[5]->value, (*a)[5]->loc, "scope");
    if (!scope.ok()) return scope.status();
    if (*scope != "global") {
      return b.Err((*a)[5]->loc, "tensor parameters must be in global memory");
    }
  }
  const Value& shape = (*a)[0]->value;
  ValueList dims = shape.IsSequence() ? shape.Items() : ValueList{shape};
  if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
    // T.Tensor(shape, dtype, A.data) in a kernel: a view of A (views.h).
    const Arg& data = *(*a)[2];
    if (data.value.kind != ValueKind::kBuffer || data.value.buffer->scope != ir::Scope::kGlobal) {
      return b.Err(data.loc, Cat("T.Tensor(..., data=...) takes the .data of a global tensor, got ",
                                 DescribeValue(data.value)));
    }
    if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
      return b.Err((*a)[3]->loc,
                   "T.Tensor(..., data=...) with strides is not supported; a view "
                   "of a tensor's data is row-major");
    }
    return MakeView(b, data.value.buffer, dims, t, args.loc);
  }
  ValueList strides;
  if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
    const Value& s = (*a)[3]->value;
    strides = s.IsSequence() ? s.Items() : ValueList{s};
  }
  return Value::TensorType(std::move(dims), t, std::move(strides));
}

absl::StatusOr<Value> Symbol(Builder& b, const std::string& name, ParamInfo::Kind kind, ir::DType t,
                             SourceLoc loc) {
  // The name becomes a parameter's name, which must be an identifier.
  if (std::string problem = ir::NameProblem(ir::SpellNonAscii(name)); !problem.empty()) {
    return b.Err(loc, Cat("the symbol name '", ir::QuoteName(name), "' ", problem));
  }
  for (size_t id = 0; id < b.params().size(); ++id) {
    const ParamInfo& p = b.params()[id];
    if (p.name == name && p.kind == kind) return b.ParamValue(static_cast<int>(id));
  }
  ParamInfo info;
  info.name = name;
  info.kind = kind;
  info.var = ir::MakeVar(name, t);
  int id = b.AddParam(std::move(info));
  return b.ParamValue(id);
}

absl::StatusOr<Value> Layout(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a = BindArgs(b, args, "T.Layout", {"shape", "forward_fn"}, 2);
  if (!a.ok()) return a.status();
  const Arg& fn = *(*a)[1];
  if (fn.value.kind != ValueKind::kFunction) {
    return b.Err(fn.loc,
                 Cat("T.Layout needs an index function (a lambda), got ", DescribeValue(fn.value)));
  }
  const FunctionValue& f = *fn.value.function;
  const std::vector<Param>& params = f.lambda ? f.lambda->params : f.def->params;
  for (const Param& p : params) {
    if (p.kind != ParamKind::kNormal && p.kind != ParamKind::kPositionalOnly) {
      return b.Err(p.loc, "a T.Layout index function takes plain parameters only");
    }
  }
  const Value& shape = (*a)[0]->value;
  size_t rank = shape.IsSequence() ? shape.Items().size() : 1;
  if (rank != params.size()) {
    return b.Err(fn.loc, Cat("the index function of T.Layout takes ", params.size(),
                             " indices but the shape has ", rank, " dimensions"));
  }
  ir::Layout layout;
  layout.kind = ir::Layout::Kind::kCustom;
  CallArgs call;
  call.loc = fn.loc;
  for (const Param& p : params) {
    ir::Var v = ir::MakeVar(p.name, ir::DType::kInt32);
    layout.vars.push_back(v);
    call.positional.push_back(Arg{Value::Runtime(v), p.loc});
  }
  absl::StatusOr<Value> r = b.CallFunction(f, std::move(call));
  if (!r.ok()) return r.status();
  ValueList outs = r->IsSequence() ? r->Items() : ValueList{*r};
  if (outs.empty()) return b.Err(fn.loc, "the index function of T.Layout returns no index");
  for (const Value& o : outs) {
    absl::StatusOr<ir::Expr> e = b.ExprOf(o, fn.loc);
    if (!e.ok() || !ir::IsInt((*e)->dtype)) {
      return b.Err(fn.loc, "the index function of T.Layout must return integer indices");
    }
    layout.indices.push_back(*e);
  }
  return Value::Layout(std::move(layout));
}

}  // namespace

std::optional<absl::StatusOr<Value>> CallTlLang(Builder& b, std::string_view name, CallArgs& args,
                                                const BuiltinValue& fn) {
  if (name == "T.<dtype>" && fn.self->lanes > 1) {
    // T.float16x2(a, b): a vector value, one lane per argument (or one value
    // for every lane); it is assigned to a vector variable lane by lane.
    const int lanes = fn.self->lanes;
    const std::string vname = Cat("T.", ir::DTypeName(fn.self->dtype), "x", lanes);
    if (!args.keywords.empty()) return b.Err(args.loc, Cat(vname, "() takes no keyword arguments"));
    const size_t n = args.positional.size();
    if (n != 1 && n != static_cast<size_t>(lanes)) {
      return b.Err(args.loc,
                   Cat(vname, "() takes ", lanes, " lanes (or one value for all), got ", n));
    }
    ValueList items;
    for (int l = 0; l < lanes; ++l) {
      const Arg& x = args.positional[n == 1 ? 0 : l];
      absl::StatusOr<ir::Expr> e = b.ExprAs(x.value, fn.self->dtype, x.loc);
      if (!e.ok()) return e.status();
      items.push_back(Value::Runtime(*e));
    }
    return Value::Tuple(std::move(items));
  }
  if (name == "T.<dtype>") return DTypeCtor(b, fn.self->dtype, args);
  if (name == "T.extract_lane") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"vector", "lane"}, 2);
    if (!a.ok()) return a.status();
    const Arg& v = *(*a)[0];
    absl::StatusOr<int64_t> lane = b.StaticInt((*a)[1]->value, (*a)[1]->loc, "the lane");
    if (!lane.ok()) return lane.status();
    int64_t lanes = 0;
    if (v.value.kind == ValueKind::kBuffer && b.vector_vars().count(v.value.buffer.get())) {
      lanes = b.vector_vars().at(v.value.buffer.get());
    } else if (v.value.IsSequence()) {
      lanes = static_cast<int64_t>(v.value.Items().size());
    } else {
      return b.Err(v.loc, Cat("T.extract_lane takes a vector (a T.alloc_var of a vector dtype, or "
                              "a vector dtype's value), got ",
                              DescribeValue(v.value)));
    }
    if (*lane < 0 || *lane >= lanes) {
      return b.Err((*a)[1]->loc,
                   Cat("lane ", *lane, " is out of bounds for a vector of ", lanes, " lanes"));
    }
    if (v.value.kind == ValueKind::kBuffer) {
      return Value::Runtime(ir::Load(v.value.buffer, {ir::IntImm(*lane)}));
    }
    return v.value.Items()[*lane];
  }
  if (name == "T.dtype") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"name"}, 1);
    if (!a.ok()) return a.status();
    absl::StatusOr<ir::DType> t = b.StaticDType((*a)[0]->value, (*a)[0]->loc, "T.dtype()");
    if (!t.ok()) return t.status();
    return Value::DType(*t);
  }
  if (name == "T.cast") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"value", "dtype"}, 2);
    if (!a.ok()) return a.status();
    absl::StatusOr<ir::DType> t = b.StaticDType((*a)[1]->value, (*a)[1]->loc, "T.cast()");
    if (!t.ok()) return t.status();
    absl::StatusOr<ir::Expr> e = b.ExprAs((*a)[0]->value, *t, (*a)[0]->loc);
    if (!e.ok()) return e.status();
    return Value::Runtime(*e);
  }
  if (name == "T.Cast") {
    // TVM's spelling: T.Cast(dtype, value).
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"dtype", "value"}, 2);
    if (!a.ok()) return a.status();
    absl::StatusOr<ir::DType> t = b.StaticDType((*a)[0]->value, (*a)[0]->loc, "T.Cast()");
    if (!t.ok()) return t.status();
    absl::StatusOr<ir::Expr> e = b.ExprAs((*a)[1]->value, *t, (*a)[1]->loc);
    if (!e.ok()) return e.status();
    return Value::Runtime(*e);
  }
  if (std::optional<absl::StatusOr<Value>> r = CallTlMath(b, name, args)) return *r;
  if (name == "T.Kernel") return Kernel(b, args);
  // TIR's T.parallel(n) is the loop kind T.Parallel makes: one T.Parallel loop.
  if (name == "T.parallel") {
    if (args.positional.size() != 1 || !args.keywords.empty() ||
        args.positional[0].value.IsSequence()) {
      return b.Err(args.loc,
                   "T.parallel takes one extent here (T.parallel(n)); for a start, write "
                   "T.Parallel(stop - start) and add the start to the index");
    }
    name = "T.Parallel";
  }
  if (name == "T.Parallel" || name == "T.grid") {
    std::vector<Arg> extents = args.positional;
    for (const auto& [kw, arg] : args.keywords) {
      bool hint = name == "T.Parallel" && (kw == "coalesced_width" || kw == "loop_layout" ||
                                           kw == "prefer_async" || kw == "annotations");
      if (!hint) {
        return b.Err(arg.loc, Cat(name, "() got an unexpected keyword argument '", kw, "'"));
      }
    }
    if (extents.size() == 1 && extents[0].value.IsSequence()) {
      Arg seq = extents[0];
      extents.clear();
      for (const Value& v : seq.value.Items()) extents.push_back(Arg{v, seq.loc});
    }
    if (extents.empty()) return b.Err(args.loc, Cat(name, "() needs at least one extent"));
    LoopSpec spec;
    spec.kind = name == "T.Parallel" ? ir::ForKind::kParallel : ir::ForKind::kSerial;
    for (const Arg& e : extents) {
      absl::StatusOr<ir::Expr> x = b.SizeExpr(e.value, e.loc, "a loop extent", true);
      if (!x.ok()) return x.status();
      spec.mins.push_back(ir::IntImm(0, (*x)->dtype));
      spec.extents.push_back(*x);
    }
    return Value::Loop(std::move(spec));
  }
  if (name == "T.serial" || name == "T.Serial")
    return SingleLoop(b, ir::ForKind::kSerial, name, args);
  if (name == "T.Persistent") {
    absl::StatusOr<Args> a =
        BindArgs(b, args, name, {"domain", "wave_size", "index", "group_size"}, 3);
    if (!a.ok()) return a.status();
    const Arg& domain = *(*a)[0];
    ValueList dims = domain.value.IsSequence() ? domain.value.Items() : ValueList{domain.value};
    if (dims.empty())
      return b.Err(domain.loc, "T.Persistent() needs a domain of at least one extent");
    LoopSpec spec;
    spec.persistent = true;
    for (const Value& d : dims) {
      absl::StatusOr<ir::Expr> x = b.SizeExpr(d, domain.loc, "a T.Persistent extent", true);
      if (!x.ok()) return x.status();
      spec.mins.push_back(ir::IntImm(0, (*x)->dtype));
      spec.extents.push_back(*x);
    }
    absl::StatusOr<ir::Expr> wave = b.SizeExpr((*a)[1]->value, (*a)[1]->loc, "the wave size", true);
    if (!wave.ok()) return wave.status();
    if (std::optional<int64_t> w = ir::AsConstInt(*wave); w && *w < 1) {
      return b.Err((*a)[1]->loc, Cat("T.Persistent wave_size must be positive, got ", *w));
    }
    absl::StatusOr<ir::Expr> index = b.ExprAs((*a)[2]->value, ir::DType::kInt32, (*a)[2]->loc);
    if (!index.ok()) return index.status();
    spec.wave_size = *wave;
    spec.index = *index;
    if ((*a)[3] && (*a)[3]->value.kind != ValueKind::kNone) {
      absl::StatusOr<int64_t> g = b.StaticInt((*a)[3]->value, (*a)[3]->loc, "group_size");
      if (!g.ok()) return g.status();
      if (*g < 1)
        return b.Err((*a)[3]->loc, Cat("T.Persistent group_size must be positive, got ", *g));
      spec.group_size = *g;
    }
    return Value::Loop(std::move(spec));
  }
  if (name == "T.reshape" || name == "T.view") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"src", "shape", "dtype"}, 1);
    if (!a.ok()) return a.status();
    const Arg& src = *(*a)[0];
    if (src.value.kind != ValueKind::kBuffer) {
      return b.Err(src.loc, Cat(name, " takes a buffer, got ", DescribeValue(src.value)));
    }
    const ir::Buffer& buf = src.value.buffer;
    if (buf->scope == ir::Scope::kVar) {
      return b.Err(args.loc, Cat(name, " of the variable `", buf->name,
                                 "` (T.alloc_var) is not supported; views are of tensors and "
                                 "of shared, fragment and local buffers"));
    }
    ir::DType t = buf->dtype;
    if ((*a)[2] && (*a)[2]->value.kind != ValueKind::kNone) {
      absl::StatusOr<ir::DType> d = b.StaticDType((*a)[2]->value, (*a)[2]->loc, "the view dtype");
      if (!d.ok()) return d.status();
      t = *d;
    }
    ValueList dims;
    if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
      const Value& shape = (*a)[1]->value;
      dims = shape.IsSequence() ? shape.Items() : ValueList{shape};
    } else {
      for (const ir::Expr& e : buf->shape) dims.push_back(Value::Runtime(e));
    }
    return MakeView(b, buf, dims, t, args.loc);
  }
  if (name == "T.unroll" || name == "T.Unroll") {
    return SingleLoop(b, ir::ForKind::kUnrolled, name, args);
  }
  if (name == "T.vectorized" || name == "T.Vectorized") {
    return SingleLoop(b, ir::ForKind::kVectorized, name, args);
  }
  if (name == "T.Pipelined") return SingleLoop(b, ir::ForKind::kPipelined, name, args);
  if (name == "T.dynamic" || name == "T.symbolic") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"name", "dtype"}, 1);
    if (!a.ok()) return a.status();
    absl::StatusOr<std::string> n = b.StaticStr((*a)[0]->value, (*a)[0]->loc, "the symbol name");
    if (!n.ok()) return n.status();
    ir::DType t = ir::DType::kInt32;
    if ((*a)[1]) {
      absl::StatusOr<ir::DType> d = b.StaticDType((*a)[1]->value, (*a)[1]->loc, "the symbol dtype");
      if (!d.ok()) return d.status();
      if (!ir::IsInt(*d)) return b.Err((*a)[1]->loc, "a symbolic size must have an integer dtype");
      t = *d;
    }
    return Symbol(b, *n, ParamInfo::Kind::kDynamicSymbol, t, (*a)[0]->loc);
  }
  if (name == "T.const") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"names", "dtype"}, 1);
    if (!a.ok()) return a.status();
    absl::StatusOr<std::string> n = b.StaticStr((*a)[0]->value, (*a)[0]->loc, "T.const names");
    if (!n.ok()) return n.status();
    ValueList values;
    for (const std::string& part : SplitAny(*n, ", \t")) {
      absl::StatusOr<Value> v =
          Symbol(b, part, ParamInfo::Kind::kConstSymbol, ir::DType::kInt32, (*a)[0]->loc);
      if (!v.ok()) return v.status();
      values.push_back(*v);
    }
    if (values.empty()) return b.Err((*a)[0]->loc, "T.const() needs at least one name");
    if (values.size() == 1) return values[0];
    return Value::Tuple(std::move(values));
  }
  if (name == "T.empty") {
    // T.empty(M, N, dtype=...): the dimensions one by one.
    const bool dtype_kw = std::any_of(args.keywords.begin(), args.keywords.end(),
                                      [](const auto& k) { return k.first == "dtype"; });
    if (args.positional.size() >= 2 &&
        (dtype_kw || (args.positional.back().value.kind != ValueKind::kDType &&
                      args.positional.back().value.kind != ValueKind::kStr))) {
      ValueList dims;
      for (const Arg& d : args.positional) dims.push_back(d.value);
      Arg shape{Value::Tuple(std::move(dims)), args.positional[0].loc};
      args.positional = {std::move(shape)};
    }
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"shape", "dtype"}, 1);
    if (!a.ok()) return a.status();
    if (!b.eager() || b.InKernel() || !b.InPrimFunc()) {
      return b.Err(args.loc,
                   "T.empty is only supported in the body of an eager @tilelang.jit "
                   "function, outside T.Kernel");
    }
    ir::DType t = ir::DType::kFloat32;
    if ((*a)[1]) {
      absl::StatusOr<ir::DType> d = b.StaticDType((*a)[1]->value, (*a)[1]->loc, "T.empty dtype");
      if (!d.ok()) return d.status();
      t = *d;
    }
    absl::StatusOr<std::vector<ir::Expr>> shape =
        b.ShapeOf((*a)[0]->value, (*a)[0]->loc, "the shape of T.empty", false);
    if (!shape.ok()) return shape.status();
    b.MarkShape((*a)[0]->value);
    for (const ir::Expr& d : *shape) b.MarkShapeExpr(d);
    ir::Buffer out = ir::MakeBuffer(b.TakeNameHint("out"), t, *shape, ir::Scope::kGlobal);
    b.AddOutput(out);
    return Value::BufferRef(out);
  }
  if (name == "T.make_tensor") return MakeTensor(b, args);
  if (name == "T.Ramp") {
    // T.Ramp(base, stride, lanes) as an index: the elements base, base +
    // stride, ..., i.e. the slice base : base + lanes (stride 1).
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"base", "stride", "lanes"}, 3);
    if (!a.ok()) return a.status();
    absl::StatusOr<int64_t> stride = b.StaticInt((*a)[1]->value, (*a)[1]->loc, "the stride");
    if (!stride.ok()) return stride.status();
    absl::StatusOr<int64_t> lanes = b.StaticInt((*a)[2]->value, (*a)[2]->loc, "the lanes");
    if (!lanes.ok()) return lanes.status();
    if (*stride != 1 || *lanes < 1) {
      return b.Err(args.loc, Cat("T.Ramp with stride ", *stride, " and ", *lanes,
                                 " lanes; tilec indexes with ramps of stride 1 (a slice)"));
    }
    const Value& base = (*a)[0]->value;
    absl::StatusOr<Value> stop = ApplyBinOp(BinOpKind::kAdd, base, Value::Int(*lanes));
    if (!stop.ok()) return b.Err(args.loc, std::string(stop.status().message()));
    return Value::Slice(base, *stop, Value::None());
  }
  if (name == "T.Tensor" || name == "T.Buffer" || name == "T.StridedTensor") {
    return TensorType(b, name, args);
  }
  if (name == "T.Layout") return Layout(b, args);
  if (name == "tilelang.layout.make_swizzled_layout") {
    absl::StatusOr<Args> a =
        BindArgs(b, args, "make_swizzled_layout", {"buffer", "k_major", "allow_pad"}, 1);
    if (!a.ok()) return a.status();
    if ((*a)[0]->value.kind != ValueKind::kBuffer) {
      return b.Err((*a)[0]->loc,
                   Cat("make_swizzled_layout needs a buffer, got ", DescribeValue((*a)[0]->value)));
    }
    return Value::Layout(ir::Layout{ir::Layout::Kind::kSwizzled, {}, {}});
  }
  if (name == "tilelang.layout.swizzle_variant") {
    // make_wgmma_swizzled_layout(buffer, continuity, k_major), the bank
    // variants, tilelang.intrinsics' make_mma_swizzle_layout(buffer,
    // is_smooth): a swizzled layout of `buffer`, whose swizzle tilec picks
    // (a layout changes where elements live, never their values).
    const Value* buf = !args.positional.empty() ? &args.positional[0].value : nullptr;
    for (const auto& [k, v] : args.keywords) {
      if (k == "buffer" || k == "shared_buf") buf = &v.value;
    }
    if (buf == nullptr || buf->kind != ValueKind::kBuffer) {
      return b.Err(args.loc, Cat("a swizzled layout needs a shared buffer as its first argument, "
                                 "got ",
                                 buf ? DescribeValue(*buf) : "none"));
    }
    return Value::Layout(ir::Layout{ir::Layout::Kind::kSwizzled, {}, {}});
  }
  if (name == "T.prim_func" || name == "T.macro") {
    absl::StatusOr<Args> a = BindArgs(b, args, name, {"func"}, 1);
    if (!a.ok()) return a.status();
    const Value& f = (*a)[0]->value;
    if (f.kind != ValueKind::kFunction || !f.function->def) {
      return b.Err((*a)[0]->loc, Cat(name, " needs a function"));
    }
    FunctionValue copy = *f.function;
    copy.flavor = name == "T.macro" ? FunctionFlavor::kMacro : FunctionFlavor::kPrimFunc;
    return Value::Function(std::move(copy));
  }
  if (name == "tilelang.transform.simplify") {
    if (args.positional.size() != 1 || args.positional[0].value.kind != ValueKind::kFunction) {
      return b.Err(args.loc, "apply_simplify / simplify_prim_func takes a @T.prim_func");
    }
    return args.positional[0].value;
  }
  if (name == "tilelang.jit" || name == "tilelang.autotune" || name == "tilelang.lazy_jit" ||
      name == "tilelang.compile") {
    // Compilation wrappers: their options (out_idx, targets, configs ...) do
    // not change the program; applied to a function they return it.
    if (!args.positional.empty() && args.positional[0].value.kind == ValueKind::kFunction) {
      return args.positional[0].value;
    }
    if (name == "tilelang.compile") {
      return b.Err(args.loc, "tilelang.compile() needs a @T.prim_func");
    }
    return Value::Builtin(std::string(name));
  }
  return std::nullopt;
}

}  // namespace tilec::frontend
