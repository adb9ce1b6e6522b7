// Per-thread code in the frontend: the thread index (T.get_thread_binding,
// T.thread_binding as a value) and the forms built on it. TVM's block
// all-reduce as TileLang kernels write it in per-thread code:
//
//   with T.attr(T.comm_reducer(lambda x, y: x + y, [T.Cast(dtype, 0)]),
//               "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
//       T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, out[0], tk,
//                                         dtype="handle"))
//
// combines `value` over the threads that differ only in the thread axis `tk`
// (threadIdx.x, .y or .z) and gives every one of them the result in `out`.
// It is built from per-thread code (ir/thread_dependence.h): each thread
// stores its value into a shared buffer with one slot per thread, then folds
// the slots of its group in order, from the reducer's identity, with the
// reducer's function. The per-thread statements run one after the other for
// the whole block, so every store precedes every fold.
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {
namespace {

using Args = std::vector<std::optional<Arg>>;

// The thread index along axis `dim` of a block with `dims` threads (x
// fastest), from the linear index.
ir::Expr AxisExpr(const std::vector<int64_t>& dims, size_t dim) {
  ir::Expr e = ir::Call(ir::CallFn::kThreadIndex, {});
  int64_t below = 1;
  for (size_t d = 0; d < dim; ++d) below *= dims[d];
  if (below > 1) e = ir::Binary(ir::BinaryOp::kFloorDiv, e, ir::IntImm(below));
  if (dim + 1 < dims.size()) e = ir::Binary(ir::BinaryOp::kFloorMod, e, ir::IntImm(dims[dim]));
  return e;
}

// The kernel queries: T.get_thread_binding(dim=0) (threadIdx.x, .y or .z of
// the thread running the code, from the block's linear thread index, x
// fastest; 0 for a dimension the block does not have, as in CUDA),
// T.get_block_binding(dim=0) (blockIdx.x/y/z: the kernel's block variable, 0
// for a dimension the grid does not have), T.get_block_bindings() (all of
// them), T.get_thread_bindings() (threadIdx.x, y, z of the block's
// dimensions), T.get_block_extent(dim=0) / T.get_block_extents() (the grid
// extents, 1 beyond them) and T.get_thread_extent(dim=0) /
// T.get_thread_extents() (the block's).
absl::StatusOr<Value> KernelQuery(Builder& b, std::string_view name, CallArgs& args) {
  const bool plural = name.back() == 's';
  absl::StatusOr<Args> a =
      BindArgs(b, args, name,
               plural ? std::vector<std::string_view>{} : std::vector<std::string_view>{"dim"}, 0);
  if (!a.ok()) return a.status();
  int64_t dim = 0;
  if (!plural && (*a)[0]) {
    absl::StatusOr<int64_t> d =
        b.StaticInt((*a)[0]->value, (*a)[0]->loc,
                    name == "T.get_thread_binding" ? "the thread dimension" : "the dimension");
    if (!d.ok()) return d.status();
    dim = *d;
    if (dim < 0 || dim > 2) {
      return b.Err(args.loc, Cat(name, "(", dim, "): the dimension is 0, 1 or 2"));
    }
  }
  if (!b.InKernel()) return b.Err(args.loc, Cat(name, "() outside a T.Kernel"));
  const bool block = name.find("block") != std::string_view::npos;
  const bool extent = name.find("extent") != std::string_view::npos;
  const std::vector<int64_t>& tdims = b.kernel_thread_dims();
  if (!block && (tdims.empty() || tdims[0] == 0)) {
    return b.Err(args.loc, Cat(name, "() needs the kernel's thread count to be a constant"));
  }
  if (!block && !extent && b.InWarpGroupScope()) {
    return b.Err(args.loc,
                 "the thread index inside `with T.ws(...)` is not supported: tilec runs "
                 "a warp-specialised region as block code, where it would number "
                 "every thread");
  }
  auto one = [&](size_t d) -> Value {
    if (block) {
      if (d >= b.kernel_grid().size()) return Value::Int(extent ? 1 : 0);
      return Value::Runtime(extent ? b.kernel_grid()[d] : ir::Expr(b.kernel_block_vars()[d]));
    }
    if (d >= tdims.size()) return Value::Int(extent ? 1 : 0);
    if (extent) return Value::Int(tdims[d]);
    return Value::Runtime(AxisExpr(tdims, d));
  };
  if (!plural) return one(static_cast<size_t>(dim));
  ValueList out;
  const size_t n = block ? b.kernel_grid().size() : tdims.size();
  for (size_t d = 0; d < n; ++d) out.push_back(one(d));
  return Value::Tuple(std::move(out));
}

// The warp queries, from the block's linear thread index t (warp_size
// defaults to 32, warps_per_group to 4): T.get_lane_idx = t % warp_size,
// T.get_warp_idx and T.get_warp_idx_sync = t / warp_size,
// T.get_warp_group_idx = t / (warp_size * warps_per_group), and
// T.shuffle_elect(extent) = whether t is the first of its group of `extent`
// threads (of the block when extent is 0).
absl::StatusOr<Value> WarpInfo(Builder& b, std::string_view name, CallArgs& args) {
  const bool elect = name == "T.shuffle_elect";
  const bool group = name == "T.get_warp_group_idx";
  std::vector<std::string_view> params =
      elect   ? std::vector<std::string_view>{"thread_extent"}
      : group ? std::vector<std::string_view>{"warp_size", "warps_per_group"}
              : std::vector<std::string_view>{"warp_size"};
  absl::StatusOr<Args> a = BindArgs(b, args, name, params, elect ? 1 : 0);
  if (!a.ok()) return a.status();
  std::vector<int64_t> v = {elect ? 0 : 32, 4};
  for (size_t i = 0; i < params.size(); ++i) {
    if (!(*a)[i] || (*a)[i]->value.kind == ValueKind::kNone) continue;
    absl::StatusOr<int64_t> n = b.StaticInt((*a)[i]->value, (*a)[i]->loc, params[i]);
    if (!n.ok()) return n.status();
    if (*n < (elect ? 0 : 1)) {
      return b.Err((*a)[i]->loc, Cat(name, ": ", params[i], " must be ",
                                     elect ? "0 or more" : "positive", ", got ", *n));
    }
    v[i] = *n;
  }
  if (!b.InKernel()) return b.Err(args.loc, Cat(name, "() outside a T.Kernel"));
  if (b.InWarpGroupScope()) {
    return b.Err(args.loc, Cat(name,
                               "() inside `with T.ws(...)` is not supported: tilec runs a "
                               "warp-specialised region as block code"));
  }
  const std::vector<int64_t>& dims = b.kernel_thread_dims();
  if (dims.empty() || dims[0] == 0) {
    return b.Err(args.loc, Cat(name, "() needs the kernel's thread count to be a constant"));
  }
  ir::Expr t = ir::Call(ir::CallFn::kThreadIndex, {});
  if (elect) {
    if (v[0] == 0) return Value::Runtime(ir::Binary(ir::BinaryOp::kEq, t, ir::IntImm(0)));
    return Value::Runtime(ir::Binary(ir::BinaryOp::kEq,
                                     ir::Binary(ir::BinaryOp::kFloorMod, t, ir::IntImm(v[0])),
                                     ir::IntImm(0)));
  }
  if (name == "T.get_lane_idx") {
    return Value::Runtime(ir::Binary(ir::BinaryOp::kFloorMod, t, ir::IntImm(v[0])));
  }
  const int64_t span = group ? v[0] * v[1] : v[0];
  return Value::Runtime(ir::Binary(ir::BinaryOp::kFloorDiv, t, ir::IntImm(span)));
}

// T.thread_binding([start,] stop, thread="threadIdx.x"), written as a value
// (`kr = T.thread_binding(0, 32, thread="threadIdx.x")`): the thread index
// along that axis plus start; the axis must have stop - start threads.
absl::StatusOr<Value> ThreadBinding(Builder& b, CallArgs& args) {
  absl::StatusOr<Args> a =
      BindArgs(b, args, "T.thread_binding", {"start", "stop", "thread", "annotations"}, 1);
  if (!a.ok()) return a.status();
  absl::StatusOr<int64_t> first = b.StaticInt((*a)[0]->value, (*a)[0]->loc, "the start");
  if (!first.ok()) return first.status();
  int64_t start = 0, stop = *first;
  if ((*a)[1] && (*a)[1]->value.kind != ValueKind::kNone) {
    absl::StatusOr<int64_t> s = b.StaticInt((*a)[1]->value, (*a)[1]->loc, "the stop");
    if (!s.ok()) return s.status();
    start = *first;
    stop = *s;
  }
  if (!(*a)[2]) return b.Err(args.loc, "T.thread_binding needs thread=\"threadIdx.x\" (or .y, .z)");
  absl::StatusOr<std::string> axis = b.StaticStr((*a)[2]->value, (*a)[2]->loc, "thread");
  if (!axis.ok()) return axis.status();
  static constexpr std::string_view kAxes[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
  int dim = -1;
  for (int d = 0; d < 3; ++d) {
    if (*axis == kAxes[d]) dim = d;
  }
  if (dim < 0) {
    return b.Err((*a)[2]->loc, Cat("T.thread_binding(thread=\"", *axis,
                                   "\") is not supported; tilec binds threadIdx.x, .y and .z "
                                   "(the block indices come from T.Kernel)"));
  }
  if (!b.InKernel()) return b.Err(args.loc, "T.thread_binding outside a T.Kernel");
  const std::vector<int64_t>& dims = b.kernel_thread_dims();
  const int64_t have = static_cast<size_t>(dim) < dims.size() ? dims[dim] : 1;
  if (stop - start != have) {
    return b.Err(args.loc, Cat("T.thread_binding over ", stop - start, " threads along ", *axis,
                               ", but the block has ", have));
  }
  CallArgs inner;
  inner.loc = args.loc;
  inner.positional.push_back(Arg{Value::Int(dim), args.loc});
  absl::StatusOr<Value> v = KernelQuery(b, "T.get_thread_binding", inner);
  if (!v.ok() || start == 0) return v;
  absl::StatusOr<ir::Expr> e = b.ExprOf(*v, args.loc);
  if (!e.ok()) return e.status();
  return Value::Runtime(ir::Binary(ir::BinaryOp::kAdd, *e, ir::IntImm(start)));
}

constexpr std::string_view kReducerTag = "<comm_reducer>";
constexpr std::string_view kAttrTag = "<attr>";

bool Tagged(const Value& v, std::string_view tag) {
  return v.kind == ValueKind::kTuple && !v.Items().empty() &&
         v.Items()[0].kind == ValueKind::kStr && v.Items()[0].s == tag;
}

// The thread axis (0, 1, 2) an expression is, following lets.
std::optional<int> ThreadAxis(Builder& b, ir::Expr e) {
  while (const auto* v = e->as<ir::VarNode>()) {
    const ir::Expr* value = b.LetValue(v);
    if (!value) return std::nullopt;
    e = *value;
  }
  const std::string text = ir::PrintExpr(e);
  const std::vector<int64_t>& dims = b.kernel_thread_dims();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (ir::PrintExpr(AxisExpr(dims, d)) == text) return static_cast<int>(d);
  }
  return std::nullopt;
}

absl::StatusOr<Value> AllReduce(Builder& b, CallArgs& args) {
  constexpr std::string_view kFn = "T.tvm_thread_allreduce";
  if (b.reducers().empty()) {
    return b.Err(args.loc, Cat(kFn,
                               " outside `with T.attr(T.comm_reducer(...), "
                               "\"reduce_scope\", ...)`"));
  }
  if (args.positional.size() != 5) {
    return b.Err(args.loc, Cat(kFn, " with ", args.positional.size(),
                               " arguments is not supported; tilec takes (size 1, value, True, "
                               "out[i], one thread axis)"));
  }
  absl::StatusOr<int64_t> size = b.StaticInt(args.positional[0].value, args.loc, "the size");
  if (!size.ok()) return size.status();
  if (*size != 1) return b.Err(args.loc, Cat(kFn, " of ", *size, " values is not supported"));
  absl::StatusOr<bool> cond = b.StaticBool(args.positional[2].value, args.loc, "the condition");
  if (!cond.ok()) return cond.status();
  if (!*cond) return b.Err(args.loc, Cat(kFn, " with a condition other than True"));
  const Value& out = args.positional[3].value;
  if (out.kind != ValueKind::kElement) {
    return b.Err(args.positional[3].loc,
                 Cat(kFn, " writes its result into a buffer element, got ", DescribeValue(out)));
  }
  absl::StatusOr<ir::Expr> axis_expr = b.ExprOf(args.positional[4].value, args.positional[4].loc);
  if (!axis_expr.ok()) return axis_expr.status();
  std::optional<int> axis = ThreadAxis(b, *axis_expr);
  if (!axis) {
    return b.Err(args.positional[4].loc,
                 Cat(kFn,
                     ": the reduction axis must be a thread index (T.get_thread_binding(d) "
                     "or T.thread_binding), got ",
                     ir::PrintExpr(*axis_expr)));
  }
  const ir::Buffer& dst = out.element->buffer;
  const std::vector<ir::Expr>& dst_index = out.element->indices;
  const ir::DType t = dst->dtype;
  const std::vector<int64_t>& dims = b.kernel_thread_dims();
  int64_t threads = 1, stride = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    threads *= dims[d];
    if (static_cast<int>(d) < *axis) stride *= dims[d];
  }
  const int64_t group = dims[*axis];
  const Value& reducer = b.reducers().back();
  const Value& fn = reducer.Items()[1];
  const ValueList identities =
      reducer.Items()[2].IsSequence() ? reducer.Items()[2].Items() : ValueList{reducer.Items()[2]};
  if (identities.size() != 1) {
    return b.Err(args.loc, Cat(kFn, " with a reducer of ", identities.size(), " values"));
  }

  // Each thread's value into its slot.
  ir::Buffer slots =
      ir::MakeBuffer(b.TakeNameHint("allreduce"), t, {ir::IntImm(threads)}, ir::Scope::kShared);
  absl::Status st = b.Emit(ir::Allocate(slots), args.loc, kFn);
  if (!st.ok()) return st;
  const ir::Expr tid = ir::Call(ir::CallFn::kThreadIndex, {});
  absl::StatusOr<ir::Expr> value = b.ExprAs(args.positional[1].value, t, args.positional[1].loc);
  if (!value.ok()) return value.status();
  st = b.Emit(ir::Store(slots, {tid}, *value), args.loc, kFn);
  if (!st.ok()) return st;

  // Then the fold over the group's slots, in order.
  absl::StatusOr<ir::Expr> init = b.ExprAs(identities[0], t, args.loc);
  if (!init.ok()) return init.status();
  st = b.Emit(ir::Store(dst, dst_index, *init), args.loc, kFn);
  if (!st.ok()) return st;
  ir::Expr lane = ir::Binary(ir::BinaryOp::kFloorDiv, tid, ir::IntImm(stride));
  lane = ir::Binary(ir::BinaryOp::kFloorMod, lane, ir::IntImm(group));
  const ir::Expr base =
      ir::Binary(ir::BinaryOp::kSub, tid, ir::Binary(ir::BinaryOp::kMul, lane, ir::IntImm(stride)));
  ir::Var r = ir::MakeVar("r", ir::DType::kInt32);
  const ir::Expr slot =
      ir::Binary(ir::BinaryOp::kAdd, base, ir::Binary(ir::BinaryOp::kMul, r, ir::IntImm(stride)));
  CallArgs combine;
  combine.loc = args.loc;
  combine.positional.push_back(Arg{Value::Runtime(ir::Load(dst, dst_index)), args.loc});
  combine.positional.push_back(Arg{Value::Runtime(ir::Load(slots, {slot})), args.loc});
  absl::StatusOr<Value> folded = b.CallValue(fn, combine);
  if (!folded.ok()) return folded.status();
  absl::StatusOr<ir::Expr> next = b.ExprAs(*folded, t, args.loc);
  if (!next.ok()) return next.status();
  st = b.Emit(ir::For(r, ir::IntImm(0), ir::IntImm(group), ir::ForKind::kSerial,
                      ir::Store(dst, dst_index, *next)),
              args.loc, kFn);
  if (!st.ok()) return st;
  return Value::None();
}

// T.dp4a(a, b, c): c += the dot product of the four 8-bit integers at a and
// the four at b (consecutive elements of their buffers' last dimension), in
// c's integer dtype.
absl::StatusOr<Value> Dp4a(Builder& b, CallArgs& args) {
  if (args.positional.size() != 3) return b.Err(args.loc, "T.dp4a takes (a, b, c)");
  for (const Arg& a : args.positional) {
    if (a.value.kind != ValueKind::kElement) {
      return b.Err(a.loc,
                   Cat("T.dp4a takes buffer elements (A_local[k]), got ", DescribeValue(a.value)));
    }
  }
  const ElementValue& c = *args.positional[2].value.element;
  if (!ir::IsInt(c.buffer->dtype)) {
    return b.Err(args.positional[2].loc, "T.dp4a accumulates into an integer buffer");
  }
  ir::Expr sum = ir::Load(c.buffer, c.indices);
  for (int t = 0; t < 4; ++t) {
    ir::Expr lane[2];
    for (int k = 0; k < 2; ++k) {
      const ElementValue& e = *args.positional[k].value.element;
      if (ir::DTypeBits(e.buffer->dtype) != 8 || !ir::IsInt(e.buffer->dtype)) {
        return b.Err(args.positional[k].loc, "T.dp4a multiplies int8 or uint8 elements");
      }
      std::vector<ir::Expr> idx = e.indices;
      idx.back() = ir::Binary(ir::BinaryOp::kAdd, idx.back(), ir::IntImm(t));
      lane[k] = ir::Cast(c.buffer->dtype, ir::Load(e.buffer, idx));
    }
    sum = ir::Binary(ir::BinaryOp::kAdd, sum, ir::Binary(ir::BinaryOp::kMul, lane[0], lane[1]));
  }
  absl::Status st = b.Emit(ir::Store(c.buffer, c.indices, sum), args.loc, "T.dp4a");
  if (!st.ok()) return st;
  return Value::None();
}

}  // namespace

bool IsReduceScope(const Value& ctx, const Value** reducer) {
  if (!Tagged(ctx, kAttrTag)) return false;
  const ValueList& items = ctx.Items();
  if (items.size() != 3 || items[2].kind != ValueKind::kStr || items[2].s != "reduce_scope" ||
      !Tagged(items[1], kReducerTag)) {
    return false;
  }
  *reducer = &items[1];
  return true;
}

bool IsAttr(const Value& ctx) { return Tagged(ctx, kAttrTag); }

namespace {

// T.reinterpret(value, dtype) or TVM's (dtype, value): value's bits read as
// dtype, of the same width. To "handle" it is the null handle of a
// reduce_scope attribute (None).
absl::StatusOr<Value> Reinterpret(Builder& b, CallArgs& args) {
  constexpr std::string_view kFn = "T.reinterpret";
  std::vector<Arg> all = args.positional;
  for (const auto& [k, a] : args.keywords) all.push_back(a);
  for (const Arg& a : all) {
    if (a.value.kind == ValueKind::kStr && a.value.s == "handle") return Value::None();
  }
  if (all.size() != 2) return b.Err(args.loc, Cat(kFn, " takes a value and a dtype"));
  // The dtype is the argument that names one (a string or a dtype object).
  auto is_dtype = [&](const Arg& a) {
    return a.value.kind == ValueKind::kDType ||
           (a.value.kind == ValueKind::kStr && ir::ParseDType(a.value.s).has_value());
  };
  const bool first = is_dtype(all[0]);
  const Arg& dt = first ? all[0] : all[1];
  const Arg& val = first ? all[1] : all[0];
  absl::StatusOr<ir::DType> t = b.StaticDType(dt.value, dt.loc, "the dtype of T.reinterpret");
  if (!t.ok()) return t.status();
  absl::StatusOr<ir::Expr> v = b.ExprOf(val.value, val.loc);
  if (!v.ok()) return v.status();
  const ir::DType from = (*v)->dtype;
  if (from == ir::DType::kBool || *t == ir::DType::kBool ||
      ir::DTypeBits(from) != ir::DTypeBits(*t)) {
    return b.Err(args.loc, Cat(kFn, " of ", ir::DTypeName(from), " as ", ir::DTypeName(*t),
                               ": a bit cast needs two non-bool types of the same width"));
  }
  if (from == *t) return Value::Runtime(*v);
  return Value::Runtime(
      std::make_shared<ir::CallNode>(*t, ir::CallFn::kReinterpret, std::vector<ir::Expr>{*v}));
}

}  // namespace

std::optional<absl::StatusOr<Value>> CallTlSimt(Builder& b, std::string_view name, CallArgs& args) {
  if (name == "T.thread_binding") return ThreadBinding(b, args);
  if (name == "T.get_thread_binding" || name == "T.get_block_binding" ||
      name == "T.get_block_bindings" || name == "T.get_thread_bindings" ||
      name == "T.get_block_extent" || name == "T.get_block_extents" ||
      name == "T.get_thread_extent" || name == "T.get_thread_extents") {
    return KernelQuery(b, name, args);
  }
  if (name == "T.get_lane_idx" || name == "T.get_warp_idx" || name == "T.get_warp_idx_sync" ||
      name == "T.get_warp_group_idx" || name == "T.shuffle_elect") {
    return WarpInfo(b, name, args);
  }
  if (name == "T.comm_reducer") {
    if (args.positional.size() != 2 || args.positional[0].value.kind != ValueKind::kFunction) {
      return b.Err(args.loc, "T.comm_reducer takes (function of two values, [identity])");
    }
    return Value::Tuple(
        {Value::Str(std::string(kReducerTag)), args.positional[0].value, args.positional[1].value});
  }
  if (name == "T.attr") {
    if (args.positional.size() != 3) return b.Err(args.loc, "T.attr takes (node, key, value)");
    absl::StatusOr<std::string> key = b.StaticStr(args.positional[1].value, args.loc, "the key");
    if (!key.ok()) return key.status();
    return Value::Tuple(
        {Value::Str(std::string(kAttrTag)), args.positional[0].value, Value::Str(*key)});
  }
  if (name == "T.evaluate") return Value::None();  // its argument did the work
  if (name == "T.reinterpret") return Reinterpret(b, args);
  if (name == "T.tvm_thread_allreduce") return AllReduce(b, args);
  if (name == "T.dp4a") return Dp4a(b, args);
  if (name == "T.import_source" || name == "T.call_extern") {
    // No source (T.import_source(None), as kernels write it when a fast path
    // is off) is nothing to import.
    if (name == "T.import_source" && args.positional.size() == 1 &&
        args.positional[0].value.kind == ValueKind::kNone) {
      return Value::None();
    }
    return b.Err(args.loc, Cat(name,
                               " (hand-written CUDA inside a kernel) is not supported: tilec "
                               "compiles only what it can check against its interpreter; write "
                               "the operation in TileLang (for dequantization, the element-wise "
                               "form of the kernel's slow path)"));
  }
  return std::nullopt;
}

}  // namespace tilec::frontend
