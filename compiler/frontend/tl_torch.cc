// Torch tensors made by module-level code or helpers that a kernel's sizes
// are read from (`A = torch.rand(m, k, ...); M, K = A.shape`). tilec never
// runs host code: such a tensor is known by its shape and dtype only (a
// "host tensor"); reading its values is refused.
//
// - Factories: torch.rand / randn / zeros / ones / empty (*size or a size
//   tuple), full(size, fill), randint([low,] high, size), arange([start,]
//   end[, step]), and the *_like forms; dtype= is kept, device=,
//   requires_grad= and the like are accepted and ignored.
// - torch.manual_seed, torch.random.manual_seed, torch.cuda.manual_seed(_all)
//   and torch.cuda.synchronize do nothing.
// - A host tensor has shape, dtype, ndim, T, device, is_cuda; size([dim]),
//   dim(), numel(), stride(), element_size(), t(), transpose(a, b),
//   permute(*dims), view / reshape(*shape with one -1), and the conversions
//   and in-place fills (to, cuda, cpu, half, float, bfloat16, contiguous,
//   clone, detach, uniform_, normal_, zero_, fill_, ...) that keep its shape.
// - Arithmetic with numbers or other host tensors broadcasts shapes.
#include <algorithm>
#include <optional>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

constexpr std::string_view kFactories[] = {"rand",       "randn",      "zeros",       "ones",
                                           "empty",      "full",       "randint",     "arange",
                                           "rand_like",  "randn_like", "zeros_like",  "ones_like",
                                           "empty_like", "full_like",  "randint_like"};
constexpr std::string_view kNoOps[] = {"manual_seed", "manual_seed_all", "synchronize",
                                       "set_grad_enabled", "set_default_device"};
// Methods that return the tensor itself or a tensor of the same shape.
constexpr std::string_view kSameShape[] = {
    "cuda",    "cpu",   "half",    "float",          "bfloat16",   "double",   "int",
    "long",    "bool",  "clone",   "detach",         "contiguous", "uniform_", "normal_",
    "zero_",   "fill_", "random_", "requires_grad_", "abs",        "exp",      "sqrt",
    "sigmoid", "relu",  "neg",     "__neg__"};
constexpr std::string_view kMethods[] = {
    "size", "dim",     "numel", "stride", "element_size", "t",         "transpose", "permute",
    "view", "reshape", "to",    "type",   "new_zeros",    "new_empty", "new_ones"};

template <size_t N>
bool In(const std::string_view (&names)[N], std::string_view x) {
  return std::find(std::begin(names), std::end(names), x) != std::end(names);
}

Value Host(std::vector<int64_t> shape, ir::DType dtype) {
  std::vector<Value> dims;
  for (int64_t d : shape) dims.push_back(Value::Int(d));
  Value r = Value::TensorType(std::move(dims), dtype, {});
  r.kind = ValueKind::kHostTensor;
  return r;
}

std::vector<int64_t> ShapeOf(const Value& t) {
  std::vector<int64_t> out;
  for (const Value& d : t.tensor_type->shape) out.push_back(d.i);
  return out;
}

// A size given as ints or as one tuple / list of ints.
absl::StatusOr<std::vector<int64_t>> Sizes(Builder& b, const std::vector<Arg>& args,
                                           std::string_view fn, SourceLoc loc) {
  std::vector<Value> items;
  if (args.size() == 1 &&
      (args[0].value.kind == ValueKind::kTuple || args[0].value.kind == ValueKind::kList)) {
    items = args[0].value.Items();
  } else {
    for (const Arg& a : args) items.push_back(a.value);
  }
  std::vector<int64_t> out;
  for (const Value& v : items) {
    if (v.kind != ValueKind::kInt || v.i < 0) {
      return b.Err(loc,
                   Cat(fn, "() takes sizes that are non-negative ints, got ", DescribeValue(v)));
    }
    out.push_back(v.i);
  }
  return out;
}

// dtype= of a factory call, else `fallback`.
absl::StatusOr<ir::DType> DTypeArg(Builder& b, CallArgs& args, ir::DType fallback) {
  for (const auto& [name, arg] : args.keywords) {
    if (name != "dtype" || arg.value.kind == ValueKind::kNone) continue;
    return b.StaticDType(arg.value, arg.loc, "dtype");
  }
  return fallback;
}

absl::StatusOr<int64_t> Int(Builder& b, const Arg& a, std::string_view what) {
  if (a.value.kind != ValueKind::kInt) {
    return b.Err(a.loc, Cat(what, " must be an int here, got ", DescribeValue(a.value)));
  }
  return a.value.i;
}

// A dimension index, Python-style negative counting.
absl::StatusOr<int64_t> Dim(Builder& b, const Arg& a, size_t rank) {
  absl::StatusOr<int64_t> d = Int(b, a, "a dimension");
  if (!d.ok()) return d;
  const int64_t r = static_cast<int64_t>(rank);
  if (*d < -r || *d >= r) return b.Err(a.loc, Cat("dimension ", *d, " of a rank-", r, " tensor"));
  return *d < 0 ? *d + r : *d;
}

}  // namespace

std::optional<Value> TorchModuleAttribute(std::string_view path, std::string_view attr) {
  if (path == "torch" || path == "torch.random" || path == "torch.cuda") {
    if (In(kNoOps, attr)) {
      return Value::Builtin(Cat("torch.noop.", attr));
    }
  }
  if (path == "torch" && In(kFactories, attr)) {
    return Value::Builtin(Cat("torch.", attr));
  }
  return std::nullopt;
}

absl::StatusOr<Value> CallTorch(Builder& b, std::string_view name, CallArgs& args) {
  if (StartsWith(name, "noop.")) return Value::None();
  const std::string fn = Cat("torch.", name);
  std::vector<Arg>& pos = args.positional;
  const bool like = EndsWith(name, "_like");
  const bool ints = name == "randint" || name == "randint_like";
  if (like) {
    if (pos.empty() || pos[0].value.kind != ValueKind::kHostTensor) {
      return b.Err(args.loc, Cat(fn, "() takes a torch tensor first"));
    }
    absl::StatusOr<ir::DType> t = DTypeArg(b, args, pos[0].value.tensor_type->dtype);
    if (!t.ok()) return t.status();
    return Host(ShapeOf(pos[0].value), *t);
  }
  absl::StatusOr<ir::DType> t = DTypeArg(b, args, ints ? ir::DType::kInt64 : ir::DType::kFloat32);
  if (!t.ok()) return t.status();
  std::vector<Arg> size_args = pos;
  if (name == "full") size_args.resize(std::min<size_t>(pos.size(), 1));
  if (ints) {
    // randint(high, size) or randint(low, high, size); size= as a keyword.
    size_args.clear();
    for (const auto& [k, a] : args.keywords) {
      if (k == "size") size_args.push_back(a);
    }
    if (size_args.empty() && !pos.empty()) size_args.push_back(pos.back());
  }
  if (name == "arange") {
    std::vector<double> v;
    bool all_int = true;
    for (const Arg& a : pos) {
      if (!a.value.IsNumber()) {
        return b.Err(a.loc, Cat(fn, "() takes numbers, got ", DescribeValue(a.value)));
      }
      all_int &= a.value.kind == ValueKind::kInt;
      v.push_back(a.value.kind == ValueKind::kInt ? static_cast<double>(a.value.i) : a.value.f);
    }
    if (v.empty() || v.size() > 3) return b.Err(args.loc, Cat(fn, "() takes 1 to 3 numbers"));
    const double start = v.size() > 1 ? v[0] : 0, end = v.size() > 1 ? v[1] : v[0];
    const double step = v.size() > 2 ? v[2] : 1;
    if (step == 0) return b.Err(args.loc, Cat(fn, "() with step 0"));
    absl::StatusOr<ir::DType> at =
        DTypeArg(b, args, all_int ? ir::DType::kInt64 : ir::DType::kFloat32);
    if (!at.ok()) return at.status();
    const double n = std::ceil((end - start) / step);
    return Host({static_cast<int64_t>(std::max(0.0, n))}, *at);
  }
  absl::StatusOr<std::vector<int64_t>> shape = Sizes(b, size_args, fn, args.loc);
  if (!shape.ok()) return shape.status();
  return Host(*shape, *t);
}

std::optional<absl::StatusOr<Value>> HostTensorAttribute(Builder& b, const Value& v,
                                                         std::string_view attr, SourceLoc loc) {
  const std::vector<int64_t> shape = ShapeOf(v);
  if (attr == "shape") {
    ValueList dims;
    for (int64_t d : shape) dims.push_back(Value::Int(d));
    return Value::Tuple(std::move(dims));
  }
  if (attr == "dtype") return Value::DType(v.tensor_type->dtype);
  if (attr == "ndim") return Value::Int(static_cast<int64_t>(shape.size()));
  if (attr == "device") return Value::Str("cuda:0");
  if (attr == "is_cuda") return Value::Bool(true);
  if (attr == "requires_grad") return Value::Bool(false);
  if (attr == "T") {
    std::vector<int64_t> r(shape.rbegin(), shape.rend());
    return Host(r, v.tensor_type->dtype);
  }
  if (In(kSameShape, attr) || In(kMethods, attr)) {
    return Value::Builtin(Cat("torch_tensor.", attr), std::make_shared<const Value>(v));
  }
  return b.Err(loc, Cat("a torch tensor has no attribute `", attr,
                        "` that tilec knows; tilec knows a host tensor's shape and dtype, "
                        "never its values"));
}

absl::StatusOr<Value> CallHostTensorMethod(Builder& b, std::string_view name, const Value& self,
                                           CallArgs& args) {
  std::vector<int64_t> shape = ShapeOf(self);
  ir::DType dtype = self.tensor_type->dtype;
  const std::string fn = Cat("Tensor.", name);
  std::vector<Arg>& pos = args.positional;
  auto dims = [&](std::vector<int64_t> d) {
    ValueList out;
    for (int64_t x : d) out.push_back(Value::Int(x));
    return Value::Tuple(std::move(out));
  };
  if (name == "size" || name == "stride") {
    std::vector<int64_t> v = shape;
    if (name == "stride") {
      int64_t s = 1;
      for (size_t k = shape.size(); k-- > 0;) {
        v[k] = s;
        s *= shape[k];
      }
    }
    if (pos.empty()) return dims(v);
    absl::StatusOr<int64_t> d = Dim(b, pos[0], shape.size());
    if (!d.ok()) return d.status();
    return Value::Int(v[*d]);
  }
  if (name == "dim") return Value::Int(static_cast<int64_t>(shape.size()));
  if (name == "numel") {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return Value::Int(n);
  }
  if (name == "element_size") return Value::Int(std::max(1, ir::DTypeBits(dtype) / 8));
  if (name == "t") {
    if (shape.size() > 2) return b.Err(args.loc, "Tensor.t() takes a tensor of at most 2 dims");
    std::reverse(shape.begin(), shape.end());
    return Host(shape, dtype);
  }
  if (name == "transpose") {
    if (pos.size() != 2) return b.Err(args.loc, "Tensor.transpose() takes two dimensions");
    absl::StatusOr<int64_t> x = Dim(b, pos[0], shape.size()), y = Dim(b, pos[1], shape.size());
    if (!x.ok()) return x.status();
    if (!y.ok()) return y.status();
    std::swap(shape[*x], shape[*y]);
    return Host(shape, dtype);
  }
  if (name == "permute") {
    absl::StatusOr<std::vector<int64_t>> order = Sizes(b, pos, fn, args.loc);
    if (!order.ok()) return order.status();
    std::vector<int64_t> out;
    std::vector<bool> seen(shape.size(), false);
    for (int64_t d : *order) {
      if (d >= static_cast<int64_t>(shape.size()) || seen[d]) {
        return b.Err(args.loc, "Tensor.permute() takes each dimension once");
      }
      seen[d] = true;
      out.push_back(shape[d]);
    }
    if (out.size() != shape.size())
      return b.Err(args.loc, "Tensor.permute() takes every dimension");
    return Host(out, dtype);
  }
  if (name == "view" || name == "reshape") {
    std::vector<Value> items;
    if (pos.size() == 1 &&
        (pos[0].value.kind == ValueKind::kTuple || pos[0].value.kind == ValueKind::kList)) {
      items = pos[0].value.Items();
    } else {
      for (const Arg& a : pos) items.push_back(a.value);
    }
    int64_t n = 1, known = 1, free = -1;
    for (int64_t d : shape) n *= d;
    std::vector<int64_t> out;
    for (size_t k = 0; k < items.size(); ++k) {
      if (items[k].kind != ValueKind::kInt || items[k].i < -1 || (items[k].i == -1 && free >= 0)) {
        return b.Err(args.loc, Cat(fn, "() takes sizes (at most one -1)"));
      }
      if (items[k].i == -1)
        free = static_cast<int64_t>(k);
      else
        known *= items[k].i;
      out.push_back(items[k].i);
    }
    if (free >= 0 && known > 0) out[free] = n / known, known *= out[free];
    if (known != n) return b.Err(args.loc, Cat(fn, "(): the sizes do not hold ", n, " elements"));
    return Host(out, dtype);
  }
  if (name == "to" || name == "type" || StartsWith(name, "new_")) {
    for (const Arg& a : pos) {
      if (a.value.kind == ValueKind::kDType) dtype = a.value.dtype;
    }
    absl::StatusOr<ir::DType> t = DTypeArg(b, args, dtype);
    if (!t.ok()) return t.status();
    if (StartsWith(name, "new_")) {
      absl::StatusOr<std::vector<int64_t>> s = Sizes(b, pos, fn, args.loc);
      if (!s.ok()) return s.status();
      return Host(*s, *t);
    }
    return Host(shape, *t);
  }
  static const std::pair<std::string_view, ir::DType> kCasts[] = {
      {"half", ir::DType::kFloat16},      {"float", ir::DType::kFloat32},
      {"bfloat16", ir::DType::kBFloat16}, {"double", ir::DType::kFloat64},
      {"int", ir::DType::kInt32},         {"long", ir::DType::kInt64},
      {"bool", ir::DType::kBool}};
  for (const auto& [cast, t] : kCasts) {
    if (name == cast) return Host(shape, t);
  }
  return self;  // conversions and in-place fills that keep shape and dtype
}

std::optional<absl::StatusOr<Value>> HostTensorBinOp(BinOpKind op, const Value& a, const Value& c) {
  const bool ha = a.kind == ValueKind::kHostTensor, hc = c.kind == ValueKind::kHostTensor;
  if (!ha && !hc) return std::nullopt;
  auto refuse = [&](std::string why) -> absl::StatusOr<Value> {
    return absl::InvalidArgumentError(
        Cat("`", BinOpSymbol(op), "` of ", DescribeValue(a), " and ", DescribeValue(c), ": ", why));
  };
  for (const Value* v : {&a, &c}) {
    if (v->kind != ValueKind::kHostTensor && !v->IsNumber()) {
      return refuse("a torch tensor combines with numbers and torch tensors only");
    }
  }
  const std::vector<int64_t> x = ha ? ShapeOf(a) : std::vector<int64_t>{};
  const std::vector<int64_t> y = hc ? ShapeOf(c) : std::vector<int64_t>{};
  ir::DType t = ha ? a.tensor_type->dtype : c.tensor_type->dtype;
  if (ha && hc && a.tensor_type->dtype != c.tensor_type->dtype) {
    const ir::DType p = a.tensor_type->dtype, q = c.tensor_type->dtype;
    t = ir::IsFloat(p) != ir::IsFloat(q) ? (ir::IsFloat(p) ? p : q)
                                         : (ir::DTypeBits(p) >= ir::DTypeBits(q) ? p : q);
  } else if (!ir::IsFloat(t) && (a.kind == ValueKind::kFloat || c.kind == ValueKind::kFloat ||
                                 op == BinOpKind::kDiv)) {
    t = ir::DType::kFloat32;
  }
  if (op == BinOpKind::kMatMul) {
    if (!ha || !hc || x.size() != 2 || y.size() != 2 || x[1] != y[0]) {
      return refuse("`@` takes two 2-D torch tensors of matching inner size");
    }
    return Host({x[0], y[1]}, t);
  }
  std::vector<int64_t> out(std::max(x.size(), y.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t p = k < out.size() - x.size() ? 1 : x[k - (out.size() - x.size())];
    const int64_t q = k < out.size() - y.size() ? 1 : y[k - (out.size() - y.size())];
    if (p != q && p != 1 && q != 1) return refuse("their shapes do not broadcast");
    out[k] = p == 1 ? q : p;
  }
  return Host(out, t);
}

}  // namespace tilec::frontend
