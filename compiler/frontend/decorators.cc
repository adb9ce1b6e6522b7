// What a kernel-building function's decorators say: its flavor
// (@T.prim_func, @T.macro, plain Python) and the pass_configs of its
// compilation decorator (@tilelang.jit(...), @tilelang.autotune(...)).
#include "compiler/frontend/builder.h"
#include "compiler/frontend/str_util.h"

namespace tilec::frontend {

absl::StatusOr<FunctionFlavor> Builder::DecoratorFlavor(const FunctionDefStmt& def, Env* closure) {
  FunctionFlavor flavor = FunctionFlavor::kPython;
  for (const ExprPtr& d : def.decorators) {
    const Expr* callee = d.get();
    if (const auto* call = d->as<CallExpr>()) callee = call->func.get();
    // Decorators tilec does not know (functools.cache, torch.compile, ...)
    // do not change what the kernel computes: evaluating them is skipped.
    absl::StatusOr<Value> v = Eval(*callee);
    if (!v.ok() || v->kind != ValueKind::kBuiltin) continue;
    const std::string& n = v->builtin->name;
    if (n == "T.prim_func") flavor = FunctionFlavor::kPrimFunc;
    if (n == "T.macro") flavor = FunctionFlavor::kMacro;
  }
  return flavor;
}

absl::StatusOr<Builder::PassConfigs> Builder::DecoratorPassConfigs(const FunctionDefStmt& def) {
  PassConfigs out;
  for (const ExprPtr& d : def.decorators) {
    const auto* call = d->as<CallExpr>();
    if (!call) continue;
    absl::StatusOr<Value> v = Eval(*call->func);
    if (!v.ok() || v->kind != ValueKind::kBuiltin) continue;
    const std::string& n = v->builtin->name;
    if (n != "tilelang.jit" && n != "tilelang.autotune" && n != "tilelang.lazy_jit") continue;
    for (const Keyword& k : call->keywords) {
      if (k.name != "pass_configs" || !k.value) continue;
      // Options tilec cannot evaluate change no result (IEEE math stays).
      absl::StatusOr<Value> configs = Eval(*k.value);
      if (!configs.ok() || configs->kind == ValueKind::kNone) continue;
      if (configs->kind != ValueKind::kDict) {
        return Err(k.value->loc, Cat("pass_configs must be a dict, got ", DescribeValue(*configs)));
      }
      for (const auto& [key, value] : *configs->dict) {
        if (key.kind != ValueKind::kStr) continue;
        bool* flag = nullptr;
        if (key.s == "TL_ENABLE_FAST_MATH" || key.s == "tl.enable_fast_math") {
          flag = &out.fast_math;
        } else if (key.s == "TL_DISABLE_WARP_SPECIALIZED" ||
                   key.s == "tl.disable_warp_specialized") {
          flag = &out.disable_warp_specialized;
        }
        if (flag == nullptr) continue;
        if (value.kind != ValueKind::kBool && value.kind != ValueKind::kInt) {
          return Err(k.value->loc, Cat("pass_configs[", key.s, "] must be True or False, got ",
                                       DescribeValue(value)));
        }
        *flag = value.kind == ValueKind::kBool ? value.b : value.i != 0;
      }
    }
  }
  return out;
}

}  // namespace tilec::frontend
