// The functions and namespaces a kernel-building function can call: Python
// builtins (range, len, min, ...), `math`, methods of staging values
// (list.append, str.split, ...) and TileLang's `T.*` / `tilelang.*`.
//
// Builtins are values of kind kBuiltin named by their canonical path
// ("T.copy", "math.sqrt", "range", "list.append"); module namespaces are
// kModule values named by their import path ("tilelang.language"). The
// mapping of each TileLang primitive to the IR is documented at its
// implementation (tl_ops.cc for tile operators, tl_builtins.cc for the rest).
#ifndef TILEC_COMPILER_FRONTEND_TL_BUILTINS_H_
#define TILEC_COMPILER_FRONTEND_TL_BUILTINS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/builder.h"
#include "compiler/frontend/value.h"

namespace tilec::frontend {

// `path.attr` for a module value: a submodule, a builtin function, a dtype, a
// constant (math.pi) or a GemmWarpPolicy member. nullopt when tilec does not
// know it.
std::optional<Value> ModuleAttribute(std::string_view path, std::string_view attr);

// The device queries of tilelang.carver.arch.driver and torch.cuda
// (tl_device.cc): their modules and functions, and the call.
std::optional<Value> DeviceModuleAttribute(std::string_view path, std::string_view attr);
absl::StatusOr<Value> CallDevice(Builder& b, std::string_view name, CallArgs& args);
// Torch tensors of host code, known by shape and dtype (tl_torch.cc).
std::optional<Value> TorchModuleAttribute(std::string_view path, std::string_view attr);
absl::StatusOr<Value> CallTorch(Builder& b, std::string_view name, CallArgs& args);
std::optional<absl::StatusOr<Value>> HostTensorAttribute(Builder& b, const Value& v,
                                                         std::string_view attr, SourceLoc loc);
absl::StatusOr<Value> CallHostTensorMethod(Builder& b, std::string_view name, const Value& self,
                                           CallArgs& args);
// tilelang.quantize's converters of packed integers (tl_quantize.cc).
std::optional<Value> QuantizeModuleAttribute(std::string_view path, std::string_view attr);
std::optional<absl::StatusOr<Value>> CallQuantize(Builder& b, std::string_view name,
                                                  CallArgs& args);

// A pointer parameter (`a_ptr: T.ptr`) until T.make_tensor gives it a
// tensor: an object naming the parameter.
Value PointerParam(const std::string& name);
bool IsPointerParam(const Value& v);

// A module that `import <path>` may bind (tilelang, tilelang.language, math,
// torch, ...). Unknown modules are still importable: they become opaque
// module values whose attributes are errors when used.
bool IsKnownModule(std::string_view path);

// A Python builtin function by name (range, len, min, ...).
std::optional<Value> PythonBuiltin(std::string_view name);

// A method or attribute of a staging value: "list.append", "str.split",
// "dict.items", "expr.astype", ... nullopt when there is none.
std::optional<Value> MethodOf(const Value& self, std::string_view attr);

// Calls builtin `fn` (tl_builtins.cc dispatches; tile operators live in
// tl_ops.cc, other TileLang functions in tl_lang.cc, Python's in
// py_builtins.cc).
absl::StatusOr<Value> CallBuiltin(Builder& b, const BuiltinValue& fn, CallArgs& args);

// Python builtins (range, len, min, ...), `math.*` functions and methods of
// staging values (py_builtins.cc).
absl::StatusOr<Value> CallPython(Builder& b, const std::string& name, CallArgs& args);
absl::StatusOr<Value> CallMath(Builder& b, std::string_view fn, CallArgs& args);
absl::StatusOr<Value> CallMethod(Builder& b, std::string_view name, const Value& self,
                                 CallArgs& args);

// Tile operators and allocations (tl_ops.cc): returns nullopt when `name` is
// not one of them.
std::optional<absl::StatusOr<Value>> CallTileOp(Builder& b, std::string_view name, CallArgs& args);

// TileLang language functions other than tile operators (tl_lang.cc): T.Kernel,
// loops, expressions, dtypes, symbols, tensor types, layouts. Returns nullopt
// when `name` is not one of them.
std::optional<absl::StatusOr<Value>> CallTlLang(Builder& b, std::string_view name, CallArgs& args,
                                                const BuiltinValue& fn);

// The scalar functions of T (tl_math.cc): math calls, T.max/T.min,
// T.if_then_else, the integer divisions, T.infinity, T.max_value/min_value,
// the float classes, bitwise spellings and T.likely. Returns nullopt when
// `name` is not one of them.
std::optional<absl::StatusOr<Value>> CallTlMath(Builder& b, std::string_view name, CallArgs& args);

// TileLang and TVM helpers built on the language functions (tl_helpers.cc):
// T.clamp, T.any_of/all_of, tilelang.math, tvm.tir.const, T.Fragment hints.
// Returns nullopt when `name` is not one of them.
std::optional<absl::StatusOr<Value>> CallTlHelper(Builder& b, std::string_view name,
                                                  CallArgs& args);

// TVM's block all-reduce in per-thread code (tl_simt.cc): T.comm_reducer,
// T.attr, T.evaluate, T.tvm_thread_allreduce, T.reinterpret to a handle.
// Returns nullopt when `name` is not one of them.
std::optional<absl::StatusOr<Value>> CallTlSimt(Builder& b, std::string_view name, CallArgs& args);
// Explicit synchronisation and hints (tl_sync.cc): T.alloc_barrier and the
// barrier operations, T.sync_threads, T.ws, register/launch hints, T.print.
// Returns nullopt when `name` is not one of them.
std::optional<absl::StatusOr<Value>> CallTlSync(Builder& b, std::string_view name, CallArgs& args);
// The reductions and scans (tl_reduce.cc). Returns nullopt when `name` is
// not one of them.
std::optional<absl::StatusOr<Value>> CallTlReduce(Builder& b, std::string_view name,
                                                  CallArgs& args);
// "[e0, e1, ...]" (tl_ops.cc).
std::string ExtentsText(const std::vector<ir::Expr>& extents);
// Warp shuffles and reductions in per-thread code (tl_warp.cc). Returns
// nullopt when `name` is not one of them.
std::optional<absl::StatusOr<Value>> CallTlWarp(Builder& b, std::string_view name, CallArgs& args);
// Random numbers as curand's Philox4_32_10 generator draws them
// (tl_random.cc): T.rng_init, T.rng_rand, T.rng_rand_float. Returns nullopt
// when `name` is not one of them.
std::optional<absl::StatusOr<Value>> CallTlRandom(Builder& b, std::string_view name,
                                                  CallArgs& args);
// A view of `base` in `shape` (views.h; tensor_params.cc): same dtype; a
// view of a global tensor has no more elements than `base` where both are
// known, a view of a shared or fragment buffer has exactly as many. A view
// of a view is a view of its base.
absl::StatusOr<Value> MakeView(Builder& b, ir::Buffer base, const ValueList& shape, ir::DType t,
                               SourceLoc loc);
// Whether a `with` context is T.ws(...) (a warp-specialised region).
bool IsWarpGroupScope(const Value& ctx);
// A barrier from T.alloc_barrier (one, not a list of them).
bool IsOneBarrier(const Value& v);
// Whether a `with` context is T.attr(...) (its key "reduce_scope" with a
// T.comm_reducer node: `*reducer` is set to the reducer).
bool IsAttr(const Value& ctx);
bool IsReduceScope(const Value& ctx, const Value** reducer);

// Matches call arguments to a signature. `names` lists the parameters in
// positional order; the first `required` of them must be given. The result
// has one entry per name, empty where the argument was not given.
absl::StatusOr<std::vector<std::optional<Arg>>> BindArgs(const Builder& b, const CallArgs& args,
                                                         std::string_view fn,
                                                         const std::vector<std::string_view>& names,
                                                         size_t required);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_TL_BUILTINS_H_
