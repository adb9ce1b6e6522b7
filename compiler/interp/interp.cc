#include "compiler/interp/interp.h"

#include <memory>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/interp/exec.h"
#include "compiler/ir/printer.h"

namespace tilec::interp {
namespace {

using internal::CExprPtr;
using internal::Compiler;
using internal::CStmtPtr;
using internal::Env;

// The program-level declarations resolved to slots: what is in scope
// everywhere in the body.
struct ProgramScope {
  std::vector<int> param_slots;  // a buffer slot for tensors, a var slot for scalars
  std::vector<int> dyn_dim_slots;
  std::vector<std::pair<int, int64_t>> tile_values;  // bound tile params
  std::vector<std::vector<CExprPtr>> shapes;         // per param; empty for scalars
  std::vector<CExprPtr> requirements;                // Program.requirements' conditions
};

std::string ParamName(const ir::Program& p, size_t i) {
  const ir::Param& param = p.params[i];
  if (param.tensor != nullptr)
    return absl::StrCat("tensor ", param.tensor->name, " (parameter ", i, ")");
  return absl::StrCat("scalar ", param.scalar->name, " (parameter ", i, ")");
}

absl::StatusOr<ProgramScope> BindProgram(const ir::Program& p, Compiler& c) {
  for (const ir::TileParam& tp : p.tile_params) {
    if (tp.var == nullptr) return internal::Unverified("a tile parameter has no variable");
    if (!tp.value.has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tile parameter ", tp.var->name, " is unbound; bind it or let tilec recommend one"));
    }
  }
  ProgramScope scope;
  for (const ir::Var& d : p.dyn_dims) {
    if (d == nullptr) return internal::Unverified("a dynamic dim has no variable");
    scope.dyn_dim_slots.push_back(c.BindVar(d));
  }
  for (const ir::TileParam& tp : p.tile_params) {
    scope.tile_values.emplace_back(c.BindVar(tp.var), *tp.value);
  }
  for (const ir::Param& param : p.params) {
    if ((param.tensor == nullptr) == (param.scalar == nullptr)) {
      return internal::Unverified("a parameter is neither a tensor nor a scalar");
    }
    scope.param_slots.push_back(param.tensor != nullptr ? c.BindBuffer(param.tensor)
                                                        : c.BindVar(param.scalar));
  }
  for (const ir::Param& param : p.params) {
    std::vector<CExprPtr> shape;
    if (param.tensor != nullptr) {
      for (const ir::Expr& d : param.tensor->shape) {
        auto e = c.CompileIndex(d);
        if (!e.ok()) return e.status();
        shape.push_back(std::move(*e));
      }
    }
    scope.shapes.push_back(std::move(shape));
  }
  for (const ir::Requirement& r : p.requirements) {
    auto e = c.CompileExprAs(r.cond, ir::DType::kInt64);
    if (!e.ok()) return e.status();
    scope.requirements.push_back(std::move(*e));
  }
  return scope;
}

void InitEnv(const Compiler& c, const ProgramScope& scope, Env& env) {
  env.vars.assign(static_cast<size_t>(c.num_var_slots()), internal::IntScalar(0));
  env.buffers.assign(static_cast<size_t>(c.num_buffer_slots()), nullptr);
  env.owned.assign(static_cast<size_t>(c.num_buffer_slots()), Tensor());
  env.buffer_names = c.buffer_names();
  for (const auto& [slot, value] : scope.tile_values) env.vars[slot].i = value;
}

// Binds the dynamic dims from the tensor arguments' shapes and checks every
// tensor argument's shape against its parameter's.
absl::Status BindDynDims(const ir::Program& p, const ProgramScope& scope,
                         const std::vector<Tensor>& args, Env& env) {
  struct Source {
    int64_t value;
    size_t param;
    size_t dim;
  };
  absl::flat_hash_map<const ir::VarNode*, Source> bound;
  absl::flat_hash_set<const ir::VarNode*> dyn(p.dyn_dims.size());
  for (const ir::Var& d : p.dyn_dims) dyn.insert(d.get());
  for (size_t i = 0; i < p.params.size(); ++i) {
    const ir::Buffer& t = p.params[i].tensor;
    if (t == nullptr) continue;
    for (size_t d = 0; d < t->shape.size(); ++d) {
      const auto* v = t->shape[d]->as<ir::VarNode>();
      if (v == nullptr || !dyn.contains(v)) continue;
      const int64_t size = args[i].shape()[d];
      auto [it, inserted] = bound.try_emplace(v, Source{size, i, d});
      if (!inserted && it->second.value != size) {
        return absl::InvalidArgumentError(
            absl::StrCat("dynamic dim ", v->name, " is ", it->second.value, " in ",
                         ParamName(p, it->second.param), " (dim ", it->second.dim, ") but ", size,
                         " in ", ParamName(p, i), " (dim ", d, ")"));
      }
    }
  }
  for (size_t k = 0; k < p.dyn_dims.size(); ++k) {
    auto it = bound.find(p.dyn_dims[k].get());
    if (it == bound.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dynamic dim ", p.dyn_dims[k]->name,
          " is not a dimension of any tensor parameter, so no argument gives its value"));
    }
    env.vars[scope.dyn_dim_slots[k]].i = it->second.value;
  }
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (p.params[i].tensor == nullptr) continue;
    std::vector<int64_t> expected;
    for (const CExprPtr& e : scope.shapes[i]) expected.push_back(e->Eval(env).i);
    if (env.failed()) return env.TakeError();
    if (expected != args[i].shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ParamName(p, i), " has shape ", ShapeString(args[i].shape()),
                       " but the program expects ", ShapeString(expected)));
    }
  }
  // As the runtime checks them before a launch.
  for (size_t k = 0; k < p.requirements.size(); ++k) {
    const int64_t holds = scope.requirements[k]->Eval(env).i;
    if (env.failed()) return env.TakeError();
    if (holds != 0) continue;
    std::vector<std::string> values;
    for (size_t d = 0; d < p.dyn_dims.size(); ++d) {
      values.push_back(
          absl::StrCat(p.dyn_dims[d]->name, " = ", env.vars[scope.dyn_dim_slots[d]].i));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(p.name, " requires ", ir::PrintExpr(p.requirements[k].cond), " (",
                     absl::StrJoin(values, ", "), "): ", p.requirements[k].message));
  }
  return absl::OkStatus();
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

absl::Status RunProgram(const ir::Program& program, std::vector<Tensor>& args,
                        const RunOptions& options) {
  Compiler compiler;
  auto scope = BindProgram(program, compiler);
  if (!scope.ok()) return scope.status();
  auto body = compiler.CompileStmt(program.body);
  if (!body.ok()) return body.status();

  if (args.size() != program.params.size()) {
    return absl::InvalidArgumentError(absl::StrCat("program ", program.name, " takes ",
                                                   program.params.size(), " arguments, got ",
                                                   args.size()));
  }
  Env env;
  env.options = options;
  InitEnv(compiler, *scope, env);
  for (size_t i = 0; i < program.params.size(); ++i) {
    const ir::Param& param = program.params[i];
    Tensor& arg = args[i];
    if (param.tensor != nullptr) {
      if (arg.dtype() != param.tensor->dtype ||
          arg.rank() != static_cast<int>(param.tensor->shape.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            ParamName(program, i), " is ", Sv(ir::DTypeName(param.tensor->dtype)), " of rank ",
            param.tensor->shape.size(), ", the argument is ", arg.TypeString()));
      }
      env.buffers[scope->param_slots[i]] = &arg;
    } else {
      if (arg.rank() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            ParamName(program, i), " needs a 0-d tensor, the argument is ", arg.TypeString()));
      }
      env.vars[scope->param_slots[i]] =
          internal::Convert(internal::ReadElement(arg, 0), arg.dtype(), param.scalar->dtype);
    }
  }
  absl::Status st = BindDynDims(program, *scope, args, env);
  if (!st.ok()) return st;
  return (*body)->Exec(env);
}

absl::StatusOr<std::vector<Tensor>> MakeInputs(
    const ir::Program& program, const absl::flat_hash_map<std::string, int64_t>& values,
    uint64_t seed) {
  Compiler compiler;
  auto scope = BindProgram(program, compiler);
  if (!scope.ok()) return scope.status();
  Env env;
  InitEnv(compiler, *scope, env);

  absl::flat_hash_set<std::string> known;
  for (size_t k = 0; k < program.dyn_dims.size(); ++k) {
    const std::string& name = program.dyn_dims[k]->name;
    known.insert(name);
    auto it = values.find(name);
    if (it == values.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim ", name, " has no value; give it in the values map"));
    }
    env.vars[scope->dyn_dim_slots[k]].i = it->second;
  }
  for (const ir::Param& param : program.params) {
    if (param.scalar != nullptr) known.insert(param.scalar->name);
  }
  for (const auto& [name, value] : values) {
    if (!known.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "program ", program.name, " has no dynamic dim or scalar parameter named ", name));
    }
  }

  // Scalars first: a tensor's shape may use an integer scalar parameter
  // (T.make_tensor(ptr, (m, k), dtype)).
  std::vector<Tensor> scalars(program.params.size());
  for (size_t i = 0; i < program.params.size(); ++i) {
    const ir::Param& param = program.params[i];
    if (param.scalar == nullptr) continue;
    const uint64_t param_seed = SplitMix64(seed + SplitMix64(i));
    const ir::DType t = param.scalar->dtype;
    auto it = values.find(param.scalar->name);
    if (it != values.end()) {
      scalars[i] = Tensor::ScalarInt(t, it->second);
    } else if (ir::IsFloat(t)) {
      scalars[i] = RandomTensor(t, {}, param_seed);
    } else {
      scalars[i] = Tensor::ScalarInt(t, 1 + static_cast<int64_t>(param_seed % 8));
    }
    if (!ir::IsFloat(t)) env.vars[scope->param_slots[i]].i = scalars[i].GetInt(0);
  }
  std::vector<Tensor> args;
  for (size_t i = 0; i < program.params.size(); ++i) {
    const ir::Param& param = program.params[i];
    const uint64_t param_seed = SplitMix64(seed + SplitMix64(i));
    if (param.tensor != nullptr) {
      std::vector<int64_t> shape;
      for (const CExprPtr& e : scope->shapes[i]) shape.push_back(e->Eval(env).i);
      if (env.failed()) return env.TakeError();
      for (int64_t d : shape) {
        if (d < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              ParamName(program, i), " would have the negative shape ", ShapeString(shape)));
        }
      }
      args.push_back(RandomTensor(param.tensor->dtype, std::move(shape), param_seed));
      continue;
    }
    args.push_back(std::move(scalars[i]));
  }
  return args;
}

}  // namespace tilec::interp
