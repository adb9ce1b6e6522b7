// Namespaces (T, tilelang, math, torch ...), the names of builtins, argument
// binding, and the dispatch of builtin calls.
#include "compiler/frontend/tl_builtins.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/frontend/str_util.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

constexpr std::string_view kLang = "tilelang.language";

// T.* functions tilec implements (tl_lang.cc and tl_ops.cc).
constexpr std::string_view kLangFunctions[] = {
    "prim_func",
    "macro",
    "Kernel",
    "alloc_shared",
    "alloc_fragment",
    "alloc_local",
    "alloc_var",
    "alloc_global",
    "alloc_buffer",
    "Parallel",
    "Pipelined",
    "serial",
    "parallel",
    "Serial",
    "unroll",
    "Unroll",
    "vectorized",
    "Vectorized",
    "grid",
    "copy",
    "gemm",
    "fill",
    "clear",
    "reduce_max",
    "reduce_min",
    "reduce_sum",
    "reduce_abssum",
    "reduce_absmax",
    "reduce_argmax",
    "alloc_reducer",
    "finalize_reducer",
    "reduce_argmin",
    "cumsum",
    "atomic_addx2",
    "atomic_addx4",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "annotate_layout",
    "use_swizzle",
    "get_thread_binding",
    "get_thread_bindings",
    "get_block_binding",
    "get_block_bindings",
    "get_thread_extent",
    "get_thread_extents",
    "get_block_extent",
    "get_block_extents",
    "get_lane_idx",
    "get_warp_idx",
    "get_warp_idx_sync",
    "get_warp_group_idx",
    "shuffle_elect",
    "transpose",
    "c2d_im2col",
    "Persistent",
    "extract_lane",
    "annotate_safe_value",
    "annotate_padding",
    "cummax",
    "reduce_bitand",
    "reduce_bitor",
    "reduce_bitxor",
    "cummin",
    "shfl_xor",
    "shfl_down",
    "shfl_up",
    "shfl_sync",
    "tvm_warp_shuffle",
    "warp_reduce_sum",
    "warp_reduce_max",
    "warp_reduce_min",
    "warp_reduce_bitand",
    "warp_reduce_bitor",
    "alloc_barrier",
    "barrier_arrive",
    "barrier_wait",
    "mbarrier_arrive",
    "mbarrier_wait_parity",
    "mbarrier_expect_tx",
    "mbarrier_arrive_expect_tx",
    "create_list_of_mbarrier",
    "get_mbarrier",
    "cp_async_barrier_noinc",
    "warpgroup_arrive",
    "warpgroup_commit_batch",
    "warpgroup_wait",
    "wait_wgmma",
    "warpgroup_fence_operand",
    "fence_proxy_async",
    "tma_store_arrive",
    "tma_store_wait",
    "sync_thread_partial",
    "ptx_commit_group",
    "ptx_wait_group",
    "device_assert",
    "assume",
    "sync_grid",
    "sync_global",
    "loop_break",
    "tma_copy",
    "async_copy",
    "wgmma_gemm",
    "sync_threads",
    "sync_warp",
    "ws",
    "set_max_nreg",
    "inc_max_nreg",
    "dec_max_nreg",
    "no_set_max_nreg",
    "pdl_trigger",
    "pdl_sync",
    "annotate_l2_hit_ratio",
    "annotate_restrict_buffers",
    "annotate_min_blocks_per_sm",
    "func_attr",
    "annotate_producer_reg_dealloc",
    "annotate_consumer_reg_alloc",
    "print",
    "rng_init",
    "rng_rand",
    "rng_rand_float",
    "thread_binding",
    "comm_reducer",
    "attr",
    "evaluate",
    "tvm_thread_allreduce",
    "dp4a",
    "reshape",
    "view",
    "import_source",
    "call_extern",
    "reinterpret",
    "disable_warp_group_reg_alloc",
    "dynamic",
    "symbolic",
    "dyn",
    "const",
    "empty",
    "Tensor",
    "make_tensor",
    "Ramp",
    "ptr",
    "handle",
    "Buffer",
    "StridedTensor",
    "Layout",
    "Fragment",
    "if_then_else",
    "clamp",
    "any_of",
    "all_of",
    "max",
    "min",
    "abs",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "sin",
    "cos",
    "erf",
    "floor",
    "ceil",
    "round",
    "pow",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "log10",
    "log1p",
    "exp10",
    "expm1",
    "trunc",
    "nearbyint",
    "atan2",
    "fmod",
    "hypot",
    "copysign",
    "popcount",
    "clz",
    "isnan",
    "isinf",
    "isfinite",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "shift_left",
    "shift_right",
    "likely",
    "infinity",
    "cast",
    "ceildiv",
    "floordiv",
    "floormod",
    "truncdiv",
    "truncmod",
    "dtype",
    "Cast",
    "max_value",
    "min_value",
};

constexpr std::string_view kPythonBuiltins[] = {
    "range",   "len",     "min",      "max",   "abs",       "int",  "float",  "bool",
    "str",     "tuple",   "list",     "dict",  "enumerate", "zip",  "sum",    "any",
    "all",     "sorted",  "reversed", "print", "round",     "pow",  "divmod", "isinstance",
    "getattr", "hasattr", "slice",    "set",   "super",     "next",
};

bool Contains(const std::string_view* begin, const std::string_view* end, std::string_view x) {
  return std::find(begin, end, x) != end;
}

}  // namespace

Value PointerParam(const std::string& name) {
  static const auto cls = [] {
    auto c = std::make_shared<ClassValue>();
    c->name = "T.ptr";
    return c;
  }();
  auto obj = std::make_shared<ObjectValue>();
  obj->cls = cls;
  SetAttr(obj->attrs, "param", Value::Str(name));
  return Value::Object(obj);
}

bool IsPointerParam(const Value& v) {
  return v.kind == ValueKind::kObject && v.object && v.object->cls &&
         v.object->cls->name == "T.ptr" && FindAttr(v.object->attrs, "param");
}

bool IsKnownModule(std::string_view path) {
  return path == "tilelang" || path == kLang || path == "tilelang.layout" ||
         path == "tilelang.cuda" || path == "tilelang.math" || path == "tilelang.PassConfigKey" ||
         path == "tilelang.language.GemmWarpPolicy" || path == "math" || path == "torch" ||
         path == "dataclasses" || path == "tvm" || path == "tvm.tir" || path == "tvm.te" ||
         path == "functools" || path == "operator" || path == "itertools" ||
         path == "tilelang.transform" || path == "tilelang.transform.simplify" ||
         path == "tvm.script" || path == "tilelang.carver" || path == "tilelang.carver.arch" ||
         path == "tilelang.carver.arch.driver" || path == "torch.cuda" ||
         path == "tilelang.quantize" || path == "tilelang.quantize.quantization" ||
         path == "builtins" || path == "tilelang.tileop" || path == "tilelang.tileop.base" ||
         path == "typing";
}

std::optional<Value> ModuleAttribute(std::string_view path, std::string_view attr) {
  if (std::optional<Value> d = DeviceModuleAttribute(path, attr)) return d;
  if (std::optional<Value> t = TorchModuleAttribute(path, attr)) return t;
  if (std::optional<Value> q = QuantizeModuleAttribute(path, attr)) return q;
  std::string a(attr);
  if (path == "typing" && attr == "Any") return Value::Builtin("typing.Any");
  if (path == kLang) {
    if (attr == "GemmWarpPolicy") return Value::Module("tilelang.language.GemmWarpPolicy");
    if (attr == "PrimExpr") return Value::Builtin("tir.PrimExpr");  // TVM's, re-exported
    if (Contains(std::begin(kLangFunctions), std::end(kLangFunctions), attr)) {
      return Value::Builtin(Cat("T.", attr));
    }
    if (std::optional<ir::DType> t = ir::ParseDType(attr)) return Value::DType(*t);
    if (auto v = ParseVectorDType(attr)) return Value::DType(v->first, v->second);
    return std::nullopt;
  }
  // The class's home module (T.GemmWarpPolicy re-exports it).
  if (path == "tilelang.tileop" && attr == "base") return Value::Module("tilelang.tileop.base");
  if (path == "tilelang.tileop.base" && attr == "GemmWarpPolicy") {
    return Value::Module("tilelang.language.GemmWarpPolicy");
  }
  if (path == "tilelang.language.GemmWarpPolicy") {
    if (attr == "Square") return Value::Policy(ir::GemmPolicy::kSquare);
    if (attr == "FullRow") return Value::Policy(ir::GemmPolicy::kFullRow);
    if (attr == "FullCol") return Value::Policy(ir::GemmPolicy::kFullCol);
    return std::nullopt;
  }
  if (path == "tilelang") {
    if (attr == "language") return Value::Module(std::string(kLang));
    if (attr == "cuda") return Value::Module("tilelang.cuda");
    if (attr == "tvm") return Value::Module("tvm");
    if (attr == "layout") return Value::Module("tilelang.layout");
    if (attr == "tileop") return Value::Module("tilelang.tileop");
    if (attr == "PassConfigKey") return Value::Module("tilelang.PassConfigKey");
    if (attr == "math") return Value::Module("tilelang.math");
    if (attr == "DataType") return Value::Builtin("T.dtype");
    // tilelang re-exports tilelang.math (`from .math import *`).
    if (attr == "cdiv" || attr == "next_power_of_2")
      return Value::Builtin(Cat("tilelang.math.", attr));
    if (attr == "jit" || attr == "autotune" || attr == "compile" || attr == "lazy_jit") {
      return Value::Builtin(Cat("tilelang.", attr));
    }
    return std::nullopt;
  }
  if (path == "tilelang.PassConfigKey") return Value::Str(a);
  if (path == "tilelang.transform" || path == "tilelang.transform.simplify") {
    // Simplification passes over a prim_func: tilec simplifies as it
    // lowers, so applied to a function they return it.
    if (attr == "apply_simplify" || attr == "simplify_prim_func") {
      return Value::Builtin("tilelang.transform.simplify");
    }
    if (path == "tilelang.transform" && attr == "simplify") {
      return Value::Module("tilelang.transform.simplify");
    }
    return std::nullopt;
  }
  if (path == "tilelang.cuda") {
    if (attr == "language") return Value::Module(std::string(kLang));
    return std::nullopt;
  }
  if (path == "tilelang.math") {
    if (attr == "cdiv" || attr == "next_power_of_2")
      return Value::Builtin(Cat("tilelang.math.", attr));
    return std::nullopt;
  }
  if (path == "tvm.script") {
    // TVMScript's `T` (`from tvm.script import tir as T`): tilec reads it as
    // TileLang's, whose names it shares.
    if (attr == "tir") return Value::Module(std::string(kLang));
    return std::nullopt;
  }
  if (path == "tvm") {
    if (attr == "script") return Value::Module("tvm.script");
    if (attr == "tir") return Value::Module("tvm.tir");
    if (attr == "te") return Value::Module("tvm.te");
    if (attr == "DataType") return Value::Builtin("T.dtype");
    return std::nullopt;
  }
  // tvm.te.var(name, dtype): a size variable, as T.symbolic(name, dtype).
  if (path == "tvm.te" && attr == "var") return Value::Builtin("T.symbolic");
  if (path == "tvm.tir") {
    // The tvm.tir functions kernels' helpers use, as their T.* twins.
    static constexpr std::string_view kSame[] = {
        "Cast",        "if_then_else", "floordiv",   "floormod",    "truncdiv",    "truncmod",
        "exp",         "exp2",         "log",        "log2",        "sqrt",        "rsqrt",
        "tanh",        "sigmoid",      "abs",        "floor",       "ceil",        "round",
        "pow",         "max_value",    "min_value",  "reinterpret", "sin",         "cos",
        "tan",         "asin",         "acos",       "atan",        "sinh",        "cosh",
        "asinh",       "acosh",        "atanh",      "erf",         "log10",       "log1p",
        "exp10",       "expm1",        "trunc",      "nearbyint",   "atan2",       "fmod",
        "hypot",       "copysign",     "popcount",   "clz",         "isnan",       "isinf",
        "isfinite",    "bitwise_and",  "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left",
        "shift_right", "likely"};
    if (Contains(std::begin(kSame), std::end(kSame), attr)) return Value::Builtin(Cat("T.", attr));
    if (attr == "const" || attr == "PrimExpr") return Value::Builtin(Cat("tir.", attr));
    // The node constructors Select, Max and Min build what T.if_then_else,
    // T.max and T.min build.
    if (attr == "Select") return Value::Builtin("T.if_then_else");
    if (attr == "Max") return Value::Builtin("T.max");
    if (attr == "Min") return Value::Builtin("T.min");
    return std::nullopt;
  }
  if (path == "functools" && attr == "reduce") return Value::Builtin("functools.reduce");
  if (path == "itertools" && attr == "product") return Value::Builtin("itertools.product");
  if (path == "operator") {
    static constexpr std::string_view kOps[] = {"add",      "sub", "mul",    "truediv",
                                                "floordiv", "mod", "pow",    "and_",
                                                "or_",      "xor", "lshift", "rshift"};
    if (Contains(std::begin(kOps), std::end(kOps), attr))
      return Value::Builtin(Cat("operator.", attr));
    return std::nullopt;
  }
  if (path == "builtins") return PythonBuiltin(attr);  // `builtins.range` is `range`
  if (path == "dataclasses") {
    // Only as a class decorator (classes.cc); dataclasses.field is refused.
    if (attr == "dataclass") return Value::Builtin("dataclasses.dataclass");
    return std::nullopt;
  }
  if (path == "tilelang.layout") {
    if (attr == "make_swizzled_layout")
      return Value::Builtin("tilelang.layout.make_swizzled_layout");
    // The swizzle variants: tilec picks the swizzle of a swizzled layout itself.
    if (attr == "make_wgmma_swizzled_layout" || attr == "make_full_bank_swizzled_layout" ||
        attr == "make_half_bank_swizzled_layout" || attr == "make_quarter_bank_swizzled_layout")
      return Value::Builtin("tilelang.layout.swizzle_variant");
    if (attr == "Layout") return Value::Builtin("T.Layout");
    return std::nullopt;
  }
  if (path == "torch") {
    if (std::optional<ir::DType> t = ir::ParseDType(attr)) return Value::DType(*t);
    return std::nullopt;
  }
  if (path == "math") {
    if (attr == "pi") return Value::Float(M_PI);
    if (attr == "e") return Value::Float(M_E);
    if (attr == "inf") return Value::Float(std::numeric_limits<double>::infinity());
    if (attr == "nan") return Value::Float(std::numeric_limits<double>::quiet_NaN());
    static constexpr std::string_view kMath[] = {
        "sqrt", "log",  "log2", "log10", "exp",   "ceil",     "floor",
        "pow",  "fabs", "gcd",  "lcm",   "prod",  "trunc",    "isqrt",
        "sin",  "cos",  "tanh", "isinf", "isnan", "isfinite", "exp2"};
    if (Contains(std::begin(kMath), std::end(kMath), attr)) {
      return Value::Builtin(Cat("math.", attr));
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Value> PythonBuiltin(std::string_view name) {
  if (Contains(std::begin(kPythonBuiltins), std::end(kPythonBuiltins), name)) {
    return Value::Builtin(std::string(name));
  }
  return std::nullopt;
}

std::optional<Value> MethodOf(const Value& self, std::string_view attr) {
  static constexpr std::string_view kList[] = {"append", "extend", "pop", "index",
                                               "count",  "insert", "copy"};
  static constexpr std::string_view kTuple[] = {"index", "count"};
  static constexpr std::string_view kDict[] = {"get",  "items",  "keys", "values",
                                               "copy", "update", "pop"};
  static constexpr std::string_view kStr[] = {
      "split",  "join",    "strip",   "replace", "startswith", "endswith", "lower", "upper",
      "format", "isdigit", "isalpha", "isalnum", "lstrip",     "rstrip",   "find",  "count"};
  std::string_view type;
  bool ok = false;
  switch (self.kind) {
    case ValueKind::kList:
      type = "list";
      ok = Contains(std::begin(kList), std::end(kList), attr);
      break;
    case ValueKind::kTuple:
      type = "tuple";
      ok = Contains(std::begin(kTuple), std::end(kTuple), attr);
      break;
    case ValueKind::kDict:
      type = "dict";
      ok = Contains(std::begin(kDict), std::end(kDict), attr);
      break;
    case ValueKind::kStr:
      type = "str";
      ok = Contains(std::begin(kStr), std::end(kStr), attr);
      break;
    case ValueKind::kInt:
    case ValueKind::kBool:
      type = "int";
      ok = attr == "bit_length";
      break;
    case ValueKind::kFloat:
      type = "float";
      ok = attr == "is_integer";
      break;
    default:
      if (IsRuntimeScalar(self) && attr == "astype") {
        type = "expr";
        ok = true;
      }
      break;
  }
  if (!ok) return std::nullopt;
  return Value::Builtin(Cat(type, ".", attr), std::make_shared<const Value>(self));
}

absl::StatusOr<std::vector<std::optional<Arg>>> BindArgs(const Builder& b, const CallArgs& args,
                                                         std::string_view fn,
                                                         const std::vector<std::string_view>& names,
                                                         size_t required) {
  std::vector<std::optional<Arg>> out(names.size());
  if (args.positional.size() > names.size()) {
    return b.Err(args.positional[names.size()].loc,
                 Cat(fn, "() takes at most ", names.size(), " positional argument",
                     names.size() == 1 ? "" : "s", " (", args.positional.size(), " given)"));
  }
  for (size_t k = 0; k < args.positional.size(); ++k) out[k] = args.positional[k];
  for (const auto& [name, arg] : args.keywords) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      return b.Err(arg.loc, Cat(fn, "() got an unexpected keyword argument '", name, "'"));
    }
    size_t k = static_cast<size_t>(it - names.begin());
    if (out[k]) {
      return b.Err(arg.loc, Cat(fn, "() got multiple values for argument '", name, "'"));
    }
    out[k] = arg;
  }
  for (size_t k = 0; k < required; ++k) {
    if (!out[k]) {
      return b.Err(args.loc, Cat(fn, "() is missing the argument '", names[k], "'"));
    }
  }
  return out;
}

absl::StatusOr<Value> CallBuiltin(Builder& b, const BuiltinValue& fn, CallArgs& args) {
  const std::string& name = fn.name;
  if (fn.self && name != "T.<dtype>") return CallMethod(b, name, *fn.self, args);
  if (StartsWith(name, "math.")) return CallMath(b, std::string_view(name).substr(5), args);
  if (StartsWith(name, "device.")) return CallDevice(b, std::string_view(name).substr(7), args);
  if (StartsWith(name, "torch.")) return CallTorch(b, std::string_view(name).substr(6), args);
  if (StartsWith(name, "T.") || StartsWith(name, "tilelang.") || StartsWith(name, "tir.")) {
    if (std::optional<absl::StatusOr<Value>> r = CallTileOp(b, name, args)) return *r;
    if (std::optional<absl::StatusOr<Value>> r = CallTlLang(b, name, args, fn)) return *r;
    if (std::optional<absl::StatusOr<Value>> r = CallTlHelper(b, name, args)) return *r;
    if (std::optional<absl::StatusOr<Value>> r = CallQuantize(b, name, args)) return *r;
    if (std::optional<absl::StatusOr<Value>> r = CallTlSimt(b, name, args)) return *r;
    if (std::optional<absl::StatusOr<Value>> r = CallTlSync(b, name, args)) return *r;
    if (std::optional<absl::StatusOr<Value>> r = CallTlWarp(b, name, args)) return *r;
    if (std::optional<absl::StatusOr<Value>> r = CallTlRandom(b, name, args)) return *r;
    return b.Err(args.loc, Cat("`", name, "` is not supported by tilec"));
  }
  return CallPython(b, name, args);
}

}  // namespace tilec::frontend
