// Tensor parameters: T.Tensor(shape, dtype) and T.StridedTensor(shape,
// strides, dtype).
//
// A strided tensor's elements lie in a row-major storage buffer whose
// dimensions are the tensor's, ordered by decreasing stride, each as long as
// the stride of the dimension before it divided by its own (the outermost as
// long as its dimension): strides (NN, 1) over (M, N) are storage (M, NN);
// strides (1, S) over (N, M) are storage (M, S) indexed [j, i]. The program's
// parameter is that buffer, with the tensor's shape and axis order recorded
// (ir::TensorView) for the artifact and the runtime; the kernel indexes a view
// of it (views.h), whose accesses are bounded by the tensor's own shape.
// MakeView makes the views kernels ask for (T.reshape, T.view,
// T.Tensor(shape, dtype, A.data)).
#include <algorithm>
#include <numeric>
#include <optional>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {

absl::Status Builder::DeclareTensorParam(const std::string& name, const TensorTypeValue& tt,
                                         SourceLoc loc) {
  std::vector<ir::Expr> shape;
  for (const Value& d : tt.shape) {
    absl::StatusOr<ir::Expr> e = SizeExpr(d, loc, "a tensor dimension", false);
    if (!e.ok()) return e.status();
    MarkShape(d);
    shape.push_back(*e);
  }
  // A 0-d tensor (T.Tensor((), dtype)) is one element, as ShapeOf stores
  // 0-d buffers; `B[()]` indexes it.
  if (shape.empty() && tt.strides.empty()) shape.push_back(ir::IntImm(1));
  auto plain = [&](std::vector<ir::Expr> dims) {
    ir::Buffer b = ir::MakeBuffer(name, tt.dtype, std::move(dims), ir::Scope::kGlobal);
    tensor_params_[name] = b;
    BindName(name, Value::BufferRef(b));
    return b;
  };
  if (tt.strides.empty()) {
    plain(std::move(shape));
    return absl::OkStatus();
  }
  const size_t rank = shape.size();
  if (tt.strides.size() != rank) {
    return Err(loc,
               Cat("`", name, "` has ", rank, " dimensions but ", tt.strides.size(), " strides"));
  }
  std::vector<ir::Expr> strides;
  for (const Value& s : tt.strides) {
    absl::StatusOr<ir::Expr> e = SizeExpr(s, loc, "a tensor stride", false);
    if (!e.ok()) return e.status();
    MarkShape(s);
    strides.push_back(*e);
  }
  auto text = [](const std::vector<ir::Expr>& es) {
    std::string out = "(";
    for (size_t i = 0; i < es.size(); ++i) out += Cat(i ? ", " : "", ir::PrintExpr(es[i]));
    return out + (es.size() == 1 ? ",)" : ")");
  };
  const std::string what = Cat("the strides ", text(strides), " of `", name, "`");
  // Dimensions of extent 1 are never stepped over; they go outermost with
  // storage extent 1, whatever their stride.
  std::vector<int32_t> unit, order;
  for (size_t d = 0; d < rank; ++d) {
    (ir::AsConstInt(shape[d]) == 1 ? unit : order).push_back(static_cast<int32_t>(d));
  }
  int runtime = 0;
  for (int32_t d : order) {
    std::optional<int64_t> c = ir::AsConstInt(strides[d]);
    if (!c) ++runtime;
    if (c && *c < 1) return Err(loc, Cat(what, ": a stride must be positive, got ", *c));
  }
  if (runtime > 1) {
    return Err(loc, Cat(what,
                        ": at most one stride may depend on runtime values (tilec orders "
                        "the dimensions by stride when it compiles)"));
  }
  // Decreasing stride; a runtime stride is the largest.
  auto key = [&](int32_t d) {
    std::optional<int64_t> c = ir::AsConstInt(strides[d]);
    return c ? *c : INT64_MAX;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return key(a) > key(b); });
  std::vector<ir::Expr> storage;
  std::vector<int32_t> axes = unit;
  for (size_t k = 0; k < unit.size(); ++k) storage.push_back(ir::IntImm(1));
  for (size_t k = 0; k < order.size(); ++k) {
    const int32_t d = order[k];
    axes.push_back(d);
    if (k == 0) {
      storage.push_back(shape[d]);
      continue;
    }
    const int32_t outer = order[k - 1];
    std::optional<int64_t> so = ir::AsConstInt(strides[outer]), si = ir::AsConstInt(strides[d]);
    if (!si) return Internal(Cat(what, ": a runtime stride sorted inside another"));
    if (so && *so == *si) {
      return Err(loc, Cat(what, ": dimensions ", outer, " and ", d,
                          " have the same stride, so their elements overlap"));
    }
    if (!so && *si != 1) {
      return Err(loc, Cat(what, ": the runtime stride of dimension ", outer,
                          " must be over a dimension of stride 1 (dimension ", d, " has stride ",
                          *si, ")"));
    }
    if (so && *so % *si != 0) {
      return Err(loc, Cat(what, ": the stride of dimension ", outer, " (", *so,
                          ") is not a multiple of the stride of dimension ", d, " (", *si, ")"));
    }
    ir::Expr extent = so ? ir::IntImm(*so / *si) : strides[outer];
    std::optional<int64_t> n = ir::AsConstInt(shape[d]), e = ir::AsConstInt(extent);
    if (n && e && *e < *n) {
      return Err(loc, Cat(what, ": dimension ", d, " has ", *n,
                          " elements but the stride of "
                          "dimension ",
                          outer, " leaves room for ", *e, ", so elements overlap"));
    }
    storage.push_back(extent);
  }
  if (!order.empty() && ir::AsConstInt(strides[order.back()]) != 1) {
    return Err(loc, Cat(what,
                        ": one dimension must have stride 1 (tilec addresses a strided "
                        "tensor through row-major storage)"));
  }
  bool contiguous = true;
  for (size_t k = 0; k < rank; ++k) {
    if (axes[k] != static_cast<int32_t>(k) || !SameExpr(storage[k], shape[k])) contiguous = false;
  }
  if (contiguous) {
    plain(std::move(shape));
    return absl::OkStatus();
  }
  ir::Buffer base = ir::MakeBuffer(name, tt.dtype, storage, ir::Scope::kGlobal);
  tensor_params_[name] = base;
  tensor_views_[name] = ir::TensorView{shape, axes};
  ir::Buffer view = ir::MakeBuffer(name, tt.dtype, std::move(shape), ir::Scope::kGlobal);
  views_[view.get()] = View{base, axes};
  BindName(name, Value::BufferRef(view));
  return absl::OkStatus();
}

namespace {

bool IsBuiltin(const Value& v, std::string_view name) {
  return v.kind == ValueKind::kBuiltin && v.builtin->name == name;
}

}  // namespace

absl::StatusOr<TensorTypeValue> Builder::SignatureTensor(const std::string& name,
                                                         const std::optional<Value>& annotation,
                                                         const std::optional<Value>& given,
                                                         SourceLoc loc) {
  std::optional<TensorTypeValue> ann, arg;
  if (annotation) ann = *annotation->tensor_type;
  std::optional<ir::DType> arg_dtype;
  if (given) {
    if (given->kind == ValueKind::kTensorType) {
      arg = *given->tensor_type;
      if (!arg->any_dtype) arg_dtype = arg->dtype;
    } else {
      // A dtype alone (`-D A=float16`): the annotation's shape with it.
      absl::StatusOr<ir::DType> t = StaticDType(*given, loc, Cat("the value of `", name, "`"));
      if (!t.ok()) {
        return Err(loc, Cat("tensor parameter `", name, "` is given ", DescribeValue(*given),
                            "; give a tensor type such as T.Tensor((M, N), T.float16), or a "
                            "dtype"));
      }
      arg_dtype = *t;
    }
  }
  if (!ann && !arg) {
    return Err(loc, Cat("tensor parameter `", name, "` has no shape: annotate it, or give -D ",
                        name, "=\"T.Tensor((M, N), T.float16)\""));
  }
  if (!ann) ann = *arg;
  const std::string bind_hint = Cat("-D ", name, "=\"T.Tensor((...), T.float16)\"");
  auto symbol = [&](const std::string& sym) {
    for (size_t id = 0; id < params_.size(); ++id) {
      if (params_[id].name == sym && params_[id].var) return ParamValue(static_cast<int>(id));
    }
    ParamInfo info;
    info.name = sym;
    info.kind = ParamInfo::Kind::kDynamicSymbol;
    info.var = ir::MakeVar(sym, ir::DType::kInt32);
    return ParamValue(AddParam(std::move(info)));
  };
  // Each open entry of `want` (`int`: the given value, else a size named
  // `<name>_<suffix><d>`; `T.dyn`: always that dynamic size); fixed ones must
  // agree with what is given.
  auto resolve = [&](const std::vector<Value>& want, const std::vector<Value>* got,
                     std::string_view what, std::string_view suffix) -> absl::StatusOr<ValueList> {
    if (got && got->size() != want.size()) {
      return Err(loc, Cat("tensor parameter `", name, "` has ", want.size(), " ", what,
                          " in its annotation but ", got->size(), " are given"));
    }
    const std::string_view one = what == "strides" ? "stride" : "dimension";
    ValueList out;
    for (size_t d = 0; d < want.size(); ++d) {
      const Value& w = want[d];
      const Value* g = got ? &(*got)[d] : nullptr;
      if (IsBuiltin(w, "T.dyn") || (IsBuiltin(w, "int") && !g)) {
        out.push_back(symbol(Cat(name, "_", suffix, d)));
        continue;
      }
      if (IsBuiltin(w, "int")) {
        if (!g->IsIntLike()) {
          return Err(loc, Cat("tensor parameter `", name, "`: ", one, " ", d,
                              " must be given as an integer, got ", DescribeValue(*g)));
        }
        out.push_back(*g);
        continue;
      }
      if (g && w.IsIntLike() && g->IsIntLike() && w.AsInt() != g->AsInt()) {
        return Err(loc, Cat("tensor parameter `", name, "`: ", one, " ", d, " is ", w.AsInt(),
                            " in its annotation but ", g->AsInt(), " is given"));
      }
      out.push_back(w);
    }
    return out;
  };
  TensorTypeValue tt;
  absl::StatusOr<ValueList> shape =
      resolve(ann->shape, arg ? &arg->shape : nullptr, "dimensions", "");
  if (!shape.ok()) return shape.status();
  tt.shape = *std::move(shape);
  if (!ann->strides.empty()) {
    const std::vector<Value>* got = arg && !arg->strides.empty() ? &arg->strides : nullptr;
    absl::StatusOr<ValueList> strides = resolve(ann->strides, got, "strides", "stride_");
    if (!strides.ok()) return strides.status();
    tt.strides = *std::move(strides);
  }
  if (ann->any_dtype) {
    if (!arg_dtype) {
      return Err(loc, Cat("tensor parameter `", name,
                          "` takes any dtype (`Any`); give the one to compile for: ", bind_hint,
                          ", or -D ", name, "=float16"));
    }
    tt.dtype = *arg_dtype;
  } else {
    if (arg_dtype && *arg_dtype != ann->dtype) {
      return Err(loc, Cat("tensor parameter `", name, "` is ", ir::DTypeName(ann->dtype),
                          " in its annotation but ", ir::DTypeName(*arg_dtype), " is given"));
    }
    tt.dtype = ann->dtype;
  }
  return tt;
}

absl::StatusOr<Value> MakeView(Builder& b, ir::Buffer base, const ValueList& shape, ir::DType t,
                               SourceLoc loc) {
  if (!b.InKernel()) return b.Err(loc, "a view of a buffer must be made inside T.Kernel");
  if (auto it = b.views().find(base.get()); it != b.views().end()) base = it->second.base;
  // Another dtype reads the bits of the base's elements (views.h): whole
  // bytes, one width a multiple of the other.
  const int vbits = ir::DTypeBits(t), bbits = ir::DTypeBits(base->dtype);
  if (t != base->dtype &&
      (t == ir::DType::kBool || base->dtype == ir::DType::kBool || vbits % 8 != 0 ||
       bbits % 8 != 0 || (vbits % bbits != 0 && bbits % vbits != 0))) {
    return b.Err(loc, Cat("a view of `", base->name, "` (", ir::DTypeName(base->dtype), ") as ",
                          ir::DTypeName(t),
                          ": tilec reinterprets whole bytes between types whose widths divide "
                          "one another"));
  }
  const bool global = base->scope == ir::Scope::kGlobal;
  std::vector<ir::Expr> dims;
  std::optional<int64_t> n = 1, m = 1;
  for (const Value& d : shape) {
    absl::StatusOr<ir::Expr> e = b.SizeExpr(d, loc, "a view dimension", false);
    if (!e.ok()) return e.status();
    dims.push_back(*e);
    std::optional<int64_t> c = ir::AsConstInt(*e);
    n = n && c ? std::optional<int64_t>(*n * *c) : std::nullopt;
  }
  for (const ir::Expr& e : base->shape) {
    std::optional<int64_t> c = ir::AsConstInt(e);
    m = m && c ? std::optional<int64_t>(*m * *c) : std::nullopt;
  }
  // Compared in bits when the dtypes differ.
  if (n) n = *n * vbits;
  if (m) m = *m * bbits;
  if (!global && (!n || !m || *n != *m)) {
    return b.Err(loc, Cat("a view of the ", ir::ScopeName(base->scope), " buffer `", base->name,
                          "` (", m ? Cat(*m / bbits) : "?", " elements) must have as many ",
                          t == base->dtype ? "elements" : "bytes", "; this one has ",
                          n ? Cat(*n / vbits, t == base->dtype ? "" : Cat(" ", ir::DTypeName(t)))
                            : "a number not known at compile time"));
  }
  if (n && m && *n > *m) {
    return b.Err(loc,
                 Cat("a view of ", *n / vbits, " ", ir::DTypeName(t), " elements of `", base->name,
                     "`, which has ", *m / bbits, " ", ir::DTypeName(base->dtype)));
  }
  ir::Buffer view =
      ir::MakeBuffer(b.TakeNameHint(Cat(base->name, "_view")), t, std::move(dims), base->scope);
  b.views()[view.get()] = View{base, {}};
  return Value::BufferRef(view);
}

}  // namespace tilec::frontend
