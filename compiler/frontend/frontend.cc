#include "compiler/frontend/frontend.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>

#include "absl/strings/match.h"
#include "compiler/frontend/builder.h"
#include "compiler/frontend/kernel_style.h"
#include "compiler/frontend/parser.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/names.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::frontend {

void Bindings::Set(std::string name, std::string value) {
  for (auto& [n, v] : values) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  values.emplace_back(std::move(name), std::move(value));
}

namespace {

// kSignature: @tilelang.lazy_jit or @T.prim_func(generator=True), a kernel
// whose signature leaves sizes and dtypes for the call to give.
enum class Style { kGenerator, kEager, kPrimFunc, kSignature };

class Compiler {
 public:
  // `body_opens_kernel`: a @T.prim_func body without T.Kernel of its own
  // still runs as block-level code (it calls a macro that opens one).
  Compiler(const Module& module, const FunctionDefStmt& def, bool body_opens_kernel = false)
      : module_(module),
        def_(def),
        b_(module, module.source),
        body_opens_kernel_(body_opens_kernel) {}

  absl::StatusOr<ir::Program> Run(const Bindings& bindings);

 private:
  absl::StatusOr<Value> ParseBinding(const std::string& name, const std::string& text);
  absl::StatusOr<std::optional<Value>> DefaultOf(const Param& p);
  absl::StatusOr<Value> EvalInModule(const Expr& e, std::string_view what);
  absl::Status ClassifySignature();
  absl::Status DeclareSignature(const std::map<std::string, Value>& given);
  absl::Status BuildPrimFunc(const FunctionValue& fn);
  absl::StatusOr<ir::Program> Assemble();

  const Module& module_;
  const FunctionDefStmt& def_;
  Builder b_;
  Style style_ = Style::kGenerator;
  Builder::PassConfigs pass_configs_;  // what the decorator's pass_configs ask for
  // Tensor and scalar parameters, in ABI order, by name.
  std::vector<std::string> abi_;
  std::set<std::string> pointers_;  // parameters annotated T.ptr
  // kSignature: the parameters the kernel takes (tensors, pointers, runtime
  // scalars), in order; the others are staging values bound with -D.
  struct SignatureParam {
    enum class Kind : uint8_t { kTensor, kPointer, kScalar } kind = Kind::kTensor;
    const Param* param = nullptr;
    std::optional<Value> annotation;      // evaluated; a tensor type for kTensor, if any
    std::optional<Value> fallback;        // the default value
    ir::DType dtype = ir::DType::kInt32;  // kScalar
  };
  std::vector<SignatureParam> signature_;
  ir::Stmt body_;
  bool body_opens_kernel_ = false;
};

// The message of a diagnostic, without its location and source lines.
std::string_view BareMessage(std::string_view msg) {
  size_t at = msg.find("error: ");
  if (at != std::string_view::npos) msg = msg.substr(at + 7);
  return msg.substr(0, msg.find('\n'));
}

absl::StatusOr<Value> Compiler::ParseBinding(const std::string& name, const std::string& text) {
  // A bare word that is not a Python expression is a string without quotes
  // (`-D mode=causal-only`).
  auto as_string = [&]() -> std::optional<Value> {
    if (text.empty()) return std::nullopt;
    char c = text[0];
    if (c == '"' || c == '\'' || c == '(' || c == '[' || c == '{' || c == '-' || c == '+' ||
        c == '.' || (c >= '0' && c <= '9')) {
      return std::nullopt;
    }
    return Value::Str(text);
  };
  auto fail = [&](std::string_view why) -> absl::Status {
    return absl::InvalidArgumentError(
        Cat(b_.file().path, ": error: cannot read -D ", name, "=", text, ": ", BareMessage(why)));
  };
  SourceFile value_file{Cat("-D ", name), text};
  absl::StatusOr<ExprPtr> expr = ParseExpression(value_file);
  if (!expr.ok() || !*expr) {
    if (std::optional<Value> s = as_string()) return *s;
    return fail(expr.ok() ? "empty value" : SV(expr.status().message()));
  }
  // T, tilelang and torch are always known; other names evaluate in the
  // module, and unknown bare names are strings: `-D dtype=float16`.
  Builder::Frame f;
  f.env = b_.NewEnv(nullptr);
  f.env->Set("T", Value::Module("tilelang.language"));
  f.env->Set("tilelang", Value::Module("tilelang"));
  f.env->Set("torch", Value::Module("torch"));
  f.name = "<binding>";
  absl::Status pushed = b_.PushFrame(std::move(f), def_.loc);
  if (!pushed.ok()) return pushed;
  b_.set_names_as_strings(true);
  absl::StatusOr<Value> v = b_.Eval(**expr);
  b_.set_names_as_strings(false);
  b_.PopFrame();
  if (!v.ok()) {
    // Staging stopped (its deadline, a cancelled call): not the binding's fault.
    if (absl::IsDeadlineExceeded(v.status()) || absl::IsCancelled(v.status())) return v.status();
    if (std::optional<Value> s = as_string()) return *s;
    return fail(SV(v.status().message()));
  }
  // A bare word naming one of Python's builtins (`-D op=max`, `-D op=sum`)
  // or a module the file imports (`-D which=builtins`) is the string: a
  // kernel takes an operator or a mode by name, never those objects.
  if ((*expr)->as<NameExpr>() &&
      ((v->kind == ValueKind::kBuiltin && v->builtin &&
        v->builtin->name.find('.') == std::string::npos && !v->builtin->self) ||
       v->kind == ValueKind::kModule)) {
    return Value::Str(text);
  }
  return v;
}

absl::StatusOr<std::optional<Value>> Compiler::DefaultOf(const Param& p) {
  if (!p.default_value) return std::optional<Value>();
  Builder::Frame f;
  f.env = b_.NewEnv(nullptr);
  f.name = "<defaults>";
  absl::Status pushed = b_.PushFrame(std::move(f), p.loc);
  if (!pushed.ok()) return pushed;
  absl::StatusOr<Value> v = b_.Eval(*p.default_value);
  b_.PopFrame();
  if (!v.ok()) return v.status();
  return std::optional<Value>(*v);
}

absl::StatusOr<Value> Compiler::EvalInModule(const Expr& e, std::string_view what) {
  Builder::Frame f;
  f.env = b_.NewEnv(nullptr);
  f.name = std::string(what);
  absl::Status pushed = b_.PushFrame(std::move(f), e.loc);
  if (!pushed.ok()) return pushed;
  absl::StatusOr<Value> v = b_.Eval(e);
  b_.PopFrame();
  return v;
}

// A lazy_jit signature: a parameter annotated (or defaulting to) a tensor
// type is a tensor; T.ptr / T.handle a pointer; a scalar dtype (T.int32) a
// runtime scalar; anything else (int, T.dtype, no annotation) a staging
// value, bound with -D or defaulted, as a generator's parameters are.
absl::Status Compiler::ClassifySignature() {
  for (const Param& p : def_.params) {
    if (!Bindable(p)) continue;
    SignatureParam sp;
    sp.param = &p;
    if (p.annotation) {
      absl::StatusOr<Value> ann = EvalInModule(*p.annotation, "<annotations>");
      if (!ann.ok()) return ann.status();
      sp.annotation = *ann;
    }
    absl::StatusOr<std::optional<Value>> d = DefaultOf(p);
    if (!d.ok()) return d.status();
    sp.fallback = *d;
    const std::optional<Value>& a = sp.annotation;
    if ((a && a->kind == ValueKind::kTensorType) ||
        (sp.fallback && sp.fallback->kind == ValueKind::kTensorType)) {
      if (a && a->kind != ValueKind::kTensorType) sp.annotation.reset();
    } else if (a && a->kind == ValueKind::kBuiltin &&
               (a->builtin->name == "T.ptr" || a->builtin->name == "T.handle")) {
      sp.kind = SignatureParam::Kind::kPointer;
    } else if (a && a->kind == ValueKind::kDType && a->lanes == 1) {
      sp.kind = SignatureParam::Kind::kScalar;
      sp.dtype = a->dtype;
    } else {
      continue;
    }
    signature_.push_back(std::move(sp));
  }
  return absl::OkStatus();
}

// Declares the kernel's parameters of a lazy_jit signature, in order, in
// the body's frame.
absl::Status Compiler::DeclareSignature(const std::map<std::string, Value>& given) {
  for (const SignatureParam& sp : signature_) {
    const Param& p = *sp.param;
    const SourceLoc loc = p.annotation ? p.annotation->loc : p.loc;
    switch (sp.kind) {
      case SignatureParam::Kind::kTensor: {
        auto it = given.find(p.name);
        absl::StatusOr<TensorTypeValue> tt = b_.SignatureTensor(
            p.name, sp.annotation,
            it == given.end() ? std::nullopt : std::optional<Value>(it->second), loc);
        if (!tt.ok()) return tt.status();
        absl::Status st = b_.DeclareTensorParam(p.name, *tt, loc);
        if (!st.ok()) return st;
        break;
      }
      case SignatureParam::Kind::kPointer:
        b_.BindName(p.name, PointerParam(p.name));
        pointers_.insert(p.name);
        break;
      case SignatureParam::Kind::kScalar: {
        ir::Var var = ir::MakeVar(p.name, sp.dtype);
        b_.scalar_params()[p.name] = var;
        b_.BindName(p.name, Value::Runtime(var));
        break;
      }
    }
    abi_.push_back(p.name);
  }
  return absl::OkStatus();
}

absl::Status Compiler::BuildPrimFunc(const FunctionValue& fn) {
  const FunctionDefStmt& def = *fn.def;
  b_.PushBlock();
  Builder::Frame f;
  f.env = b_.NewEnv(fn.closure);
  f.kernel_syntax = true;
  f.name = def.name;
  absl::Status pushed = b_.PushFrame(std::move(f), def.loc);
  if (!pushed.ok()) return pushed;
  absl::Status status = [&]() -> absl::Status {
    for (const Param& p : def.params) {
      if (!Bindable(p)) return b_.Err(p.loc, "a @T.prim_func takes plain parameters only");
      if (!p.annotation) {
        return b_.Err(p.loc, Cat("parameter `", p.name, "` of the @T.prim_func `", def.name,
                                 "` needs an annotation: T.Tensor(shape, dtype) or a "
                                 "scalar type such as T.int32"));
      }
      absl::StatusOr<Value> ann = b_.Eval(*p.annotation);
      if (!ann.ok()) return ann.status();
      if (ann->kind == ValueKind::kTensorType) {
        absl::Status st = b_.DeclareTensorParam(p.name, *ann->tensor_type, p.annotation->loc);
        if (!st.ok()) return st;
      } else if (ann->kind == ValueKind::kBuiltin &&
                 (ann->builtin->name == "T.ptr" || ann->builtin->name == "T.handle")) {
        // A pointer: its tensor comes from T.make_tensor(ptr, shape, dtype).
        b_.BindName(p.name, PointerParam(p.name));
        pointers_.insert(p.name);
      } else if (ann->kind == ValueKind::kDType && ann->lanes == 1) {
        ir::Var var = ir::MakeVar(p.name, ann->dtype);
        b_.scalar_params()[p.name] = var;
        b_.BindName(p.name, Value::Runtime(var));
      } else {
        return b_.Err(
            p.annotation->loc,
            Cat("the annotation of parameter `", p.name,
                "` must be T.Tensor(shape, dtype) or a scalar type, got ", DescribeValue(*ann)));
      }
      abi_.push_back(p.name);
    }
    // A TIR function without T.Kernel (or thread loops) is sequential code:
    // it runs as one thread of one block, unless it calls a macro that opens
    // a kernel (then CompileFunction compiles it again as block-level code).
    const bool opens = body_opens_kernel_ || AnyKernel(def.body);
    KernelSpec one;
    one.no_grid = true;
    one.grid = {ir::IntImm(1)};
    one.threads = ir::IntImm(1);
    absl::StatusOr<Flow> flow =
        opens ? b_.ExecBlock(def.body)
              : b_.RunKernel(one, {"bx"}, def.body, def.loc, [](const ValueList&) {});
    if (!flow.ok()) return flow.status();
    return absl::OkStatus();
  }();
  b_.PopFrame();
  std::vector<ir::Stmt> stmts = b_.PopBlock();
  if (!status.ok()) return status;
  body_ = ir::Seq(std::move(stmts));
  return absl::OkStatus();
}

absl::StatusOr<ir::Program> Compiler::Run(const Bindings& bindings) {
  b_.set_device(bindings.device);
  // The style: a @T.prim_func itself, a generator with a nested prim_func,
  // or an eager kernel.
  {
    Builder::Frame f;
    f.env = b_.NewEnv(nullptr);
    f.name = "<module>";
    absl::Status pushed = b_.PushFrame(std::move(f), def_.loc);
    if (!pushed.ok()) return pushed;
    absl::StatusOr<FunctionFlavor> flavor = b_.DecoratorFlavor(def_, nullptr);
    absl::StatusOr<Builder::PassConfigs> configs =
        flavor.ok() ? b_.DecoratorPassConfigs(def_)
                    : absl::StatusOr<Builder::PassConfigs>(Builder::PassConfigs{});
    b_.PopFrame();
    if (!flavor.ok()) return flavor.status();
    if (!configs.ok()) return configs.status();
    pass_configs_ = *configs;
    if (IsSignatureGenerator(def_)) {
      style_ = Style::kSignature;
    } else if (*flavor == FunctionFlavor::kPrimFunc) {
      style_ = Style::kPrimFunc;
    } else if (*flavor == FunctionFlavor::kMacro) {
      return b_.Err(def_.name_loc, Cat("`", def_.name,
                                       "` is a @T.macro; compile the "
                                       "kernel that uses it"));
    } else {
      style_ = HasNestedPrimFunc(def_) || !LooksEager(def_) ? Style::kGenerator : Style::kEager;
      // Annotated like a prim_func: its signature is the kernel's, as a
      // lazy_jit's is (T.empty outputs, staging parameters).
      if (style_ == Style::kEager && SignatureKernel(def_)) style_ = Style::kSignature;
    }
  }
  std::vector<std::string> annotated, consts;
  if (style_ == Style::kEager) ScanEager(def_, &annotated, &consts);
  // kSignature: tensors are bound too (-D A="T.Tensor((M, K), T.float16)");
  // pointers and runtime scalars are not.
  std::set<std::string> tensors;
  if (style_ == Style::kSignature) {
    absl::Status st = ClassifySignature();
    if (!st.ok()) return st;
    for (const SignatureParam& sp : signature_) {
      if (sp.kind == SignatureParam::Kind::kTensor) {
        tensors.insert(sp.param->name);
      } else {
        annotated.push_back(sp.param->name);
      }
    }
  }
  // A curried generator (`def flashattn(batch, ...): ... def kernel_func(block_N,
  // ...): ... return main ... return kernel_func`, as autotuned kernels are
  // written): the returned function's parameters are bound too, and it is
  // called with them.
  const std::vector<const FunctionDefStmt*> curried =
      style_ == Style::kGenerator ? CurriedInner(def_) : std::vector<const FunctionDefStmt*>{};
  // ... and so are those of the @autotune functions it calls (gives them
  // what the call leaves open).
  const std::vector<const FunctionDefStmt*> tuned = style_ == Style::kGenerator
                                                        ? AutotunedInner(def_, curried)
                                                        : std::vector<const FunctionDefStmt*>{};
  std::vector<const FunctionDefStmt*> inner = curried;
  inner.insert(inner.end(), tuned.begin(), tuned.end());

  // Bindable names, and the bindings' check.
  std::vector<std::string> bindable;
  if (style_ != Style::kPrimFunc) {
    for (const Param& p : def_.params) {
      if (!Bindable(p)) continue;
      if (std::find(annotated.begin(), annotated.end(), p.name) != annotated.end()) continue;
      bindable.push_back(p.name);
    }
    for (const std::string& c : consts) bindable.push_back(c);
    const size_t own = bindable.size();
    for (const FunctionDefStmt* d : inner) {
      for (const Param& p : d->params) {
        if (!Bindable(p)) continue;
        auto at = std::find(bindable.begin(), bindable.end(), p.name);
        if (at - bindable.begin() < static_cast<std::ptrdiff_t>(own)) {
          return b_.Err(p.loc, Cat("parameter `", p.name, "` of `", d->name,
                                   "` has the name of a parameter of `", def_.name,
                                   "`, so -D cannot bind it alone; rename one"));
        }
        if (at == bindable.end()) bindable.push_back(p.name);  // one name for every candidate
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> given;
  for (const auto& [name, value] : bindings.values) {
    auto it =
        std::find_if(given.begin(), given.end(), [&](const auto& g) { return g.first == name; });
    if (it != given.end()) {
      it->second = value;
    } else {
      given.emplace_back(name, value);
    }
  }
  for (const auto& [name, value] : given) {
    if (std::find(bindable.begin(), bindable.end(), name) != bindable.end()) continue;
    std::string list =
        bindable.empty() ? "it takes none" : Cat("its parameters are: ", Join(bindable, ", "));
    bool tensor = std::find(annotated.begin(), annotated.end(), name) != annotated.end();
    return b_.Err(def_.name_loc, Cat("the binding -D ", name, "=", value,
                                     tensor ? " names a tensor parameter" : " names no parameter",
                                     " of `", def_.name, "`; ", list));
  }
  for (const std::string& name : bindings.unbound) {
    std::string list =
        bindable.empty() ? "it takes none" : Cat("its parameters are: ", Join(bindable, ", "));
    if (std::find(bindable.begin(), bindable.end(), name) == bindable.end()) {
      bool tensor = std::find(annotated.begin(), annotated.end(), name) != annotated.end();
      return b_.Err(def_.name_loc,
                    Cat("-U ", name, tensor ? " names a tensor parameter" : " names no parameter",
                        " of `", def_.name, "`; ", list));
    }
    for (const auto& [n, v] : given) {
      if (n != name) continue;
      return b_.Err(def_.name_loc,
                    Cat("parameter `", name, "` of `", def_.name, "` is both bound (-D ", name, "=",
                        v, ") and left unbound (-U ", name, "); drop one"));
    }
  }
  auto binding_of = [&](const std::string& name) -> const std::string* {
    for (const auto& [n, v] : given) {
      if (n == name) return &v;
    }
    return nullptr;
  };

  // Parameters.
  std::vector<std::pair<std::string, int>> bound_names;  // function params -> param ids
  std::vector<std::pair<std::string, int>> inner_names;  // the curried function's
  // A parameter's value: its -D binding, else its default (none with -U; and
  // none for an @autotune function's `None`, which the tuner would choose).
  auto add_param = [&](const Param& p) -> absl::StatusOr<int> {
    ParamInfo info;
    info.name = p.name;
    if (const std::string* text = binding_of(p.name)) {
      absl::StatusOr<Value> v = ParseBinding(p.name, *text);
      if (!v.ok()) return v.status();
      info.value = *v;
    } else if (!bindings.unbound.count(p.name)) {
      absl::StatusOr<std::optional<Value>> d = DefaultOf(p);
      if (!d.ok()) return d.status();
      const bool tuner_chooses =
          *d && (*d)->kind == ValueKind::kNone &&
          std::any_of(tuned.begin(), tuned.end(), [&](const FunctionDefStmt* t) {
            return std::any_of(t->params.begin(), t->params.end(),
                               [&](const Param& q) { return &q == &p; });
          });
      if (!tuner_chooses) info.value = *d;
    }
    return b_.AddParam(std::move(info));
  };
  if (style_ != Style::kPrimFunc) {
    for (const Param& p : def_.params) {
      if (!Bindable(p) || tensors.count(p.name)) continue;
      if (std::find(annotated.begin(), annotated.end(), p.name) != annotated.end()) continue;
      absl::StatusOr<int> id = add_param(p);
      if (!id.ok()) return id.status();
      bound_names.emplace_back(p.name, *id);
    }
    for (const FunctionDefStmt* d : inner) {
      for (const Param& p : d->params) {
        if (!Bindable(p)) continue;
        if (std::any_of(inner_names.begin(), inner_names.end(),
                        [&](const auto& n) { return n.first == p.name; })) {
          continue;
        }
        absl::StatusOr<int> id = add_param(p);
        if (!id.ok()) return id.status();
        inner_names.emplace_back(p.name, *id);
      }
    }
    for (const std::string& c : consts) {
      ParamInfo info;
      info.name = c;
      info.kind = ParamInfo::Kind::kConstSymbol;
      if (const std::string* text = binding_of(c)) {
        absl::StatusOr<Value> v = ParseBinding(c, *text);
        if (!v.ok()) return v.status();
        info.value = *v;
      }
      b_.AddParam(std::move(info));
    }
  }

  if (style_ == Style::kPrimFunc) {
    absl::StatusOr<std::optional<Value>> fn = b_.ModuleGlobal(def_.name, def_.loc);
    if (!fn.ok()) return fn.status();
    if (!*fn || (*fn)->kind != ValueKind::kFunction) {
      return Builder::Internal("the named prim_func is not a module function");
    }
    absl::Status s = BuildPrimFunc(*(*fn)->function);
    if (!s.ok()) return s;
    return Assemble();
  }

  // kSignature: what the call gives each tensor (its binding, else its
  // default).
  std::map<std::string, Value> given_tensors;
  for (const SignatureParam& sp : signature_) {
    const std::string& name = sp.param->name;
    if (sp.kind != SignatureParam::Kind::kTensor) continue;
    if (const std::string* text = binding_of(name)) {
      absl::StatusOr<Value> v = ParseBinding(name, *text);
      if (!v.ok()) return v.status();
      given_tensors[name] = *v;
    } else if (sp.fallback && !bindings.unbound.count(name)) {
      given_tensors[name] = *sp.fallback;
    }
  }

  const bool eager = style_ == Style::kEager || style_ == Style::kSignature;
  Builder::Frame f;
  f.env = b_.NewEnv(nullptr);
  f.name = def_.name;
  f.kernel_syntax = eager;
  if (eager) {
    b_.set_eager(true);
    b_.PushBlock();
    b_.pending_tensors() = style_ == Style::kEager ? annotated : std::vector<std::string>{};
  }
  absl::Status pushed = b_.PushFrame(std::move(f), def_.loc);
  if (!pushed.ok()) return pushed;
  for (const auto& [name, id] : bound_names) b_.BindName(name, b_.ParamValue(id));
  for (const FunctionDefStmt* d : tuned) {
    std::vector<std::pair<std::string, Value>> args;
    for (const auto& [name, id] : inner_names) {
      if (std::any_of(d->params.begin(), d->params.end(),
                      [&](const Param& p) { return p.name == name; })) {
        args.emplace_back(name, b_.ParamValue(id));
      }
    }
    b_.SetTunedArgs(d, std::move(args));
  }
  absl::Status declared = DeclareSignature(given_tensors);
  absl::StatusOr<Flow> flow =
      declared.ok() ? b_.ExecBlock(def_.body) : absl::StatusOr<Flow>(declared);
  std::optional<Value> returned = b_.frame().return_value;
  const FunctionDefStmt* called = flow.ok() && returned && returned->kind == ValueKind::kFunction
                                      ? returned->function->def
                                      : nullptr;
  if (called && std::find(curried.begin(), curried.end(), called) != curried.end()) {
    CallArgs call;
    call.loc = called->loc;
    for (const auto& [name, id] : inner_names) {
      if (std::none_of(called->params.begin(), called->params.end(),
                       [&](const Param& p) { return p.name == name; })) {
        continue;
      }
      call.keywords.emplace_back(name, Arg{b_.ParamValue(id), called->loc});
    }
    absl::StatusOr<Value> r = b_.CallValue(*returned, std::move(call));
    if (!r.ok()) {
      b_.PopFrame();
      return r.status();
    }
    // @tilelang.jit on the inner function: its value is the prim_func's.
    returned = *r;
  }
  b_.PopFrame();
  if (eager) {
    std::vector<ir::Stmt> stmts = b_.PopBlock();
    if (!flow.ok()) return flow.status();
    if (!b_.pending_tensors().empty()) {
      return b_.Err(def_.name_loc, Cat("tensor parameter `", b_.pending_tensors()[0],
                                       "` is never annotated; add `", b_.pending_tensors()[0],
                                       ": T.Tensor(shape, dtype)` to the body"));
    }
    for (const Param& p : def_.params) {
      if (style_ == Style::kEager &&
          std::find(annotated.begin(), annotated.end(), p.name) != annotated.end()) {
        abi_.push_back(p.name);
      }
    }
    body_ = ir::Seq(std::move(stmts));
    return Assemble();
  }
  if (!flow.ok()) return flow.status();
  if (!returned || returned->kind != ValueKind::kFunction ||
      returned->function->flavor != FunctionFlavor::kPrimFunc || !returned->function->def) {
    return b_.Err(def_.name_loc,
                  Cat("`", def_.name, "` must return ",
                      HasNestedPrimFunc(def_) ? "the @T.prim_func it defines"
                                              : "a @T.prim_func (or be an eager kernel)",
                      ", but it returned ", returned ? DescribeValue(*returned) : "nothing"));
  }
  absl::Status s = BuildPrimFunc(*returned->function);
  if (!s.ok()) return s;
  return Assemble();
}

class UsedVars : public ir::IRVisitor {
 public:
  using ir::IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (e && e->kind == ir::ExprKind::kVar) vars.insert(e.get());
    ir::IRVisitor::Visit(e);
  }
  std::unordered_set<const ir::ExprNode*> vars;
};

absl::StatusOr<ir::Program> Compiler::Assemble() {
  ir::Program program;
  program.name = ir::SpellNonAscii(def_.name);
  program.device_queries = b_.device_queries();
  program.fast_math = pass_configs_.fast_math;
  program.disable_warp_specialized = pass_configs_.disable_warp_specialized;
  for (const std::string& name : abi_) {
    auto t = b_.tensor_params().find(name);
    if (t != b_.tensor_params().end()) {
      ir::Param param{t->second, nullptr};
      auto v = b_.tensor_views().find(name);
      if (v != b_.tensor_views().end()) param.view = v->second;
      program.params.push_back(std::move(param));
      continue;
    }
    auto s = b_.scalar_params().find(name);
    if (s != b_.scalar_params().end()) {
      program.params.push_back(ir::Param{nullptr, s->second});
      continue;
    }
    if (pointers_.count(name)) {
      return b_.Err(def_.loc, Cat("the pointer parameter `", name,
                                  "` is never given a tensor; T.make_tensor(", name,
                                  ", shape, dtype) declares what it points to"));
    }
    return Builder::Internal(Cat("parameter `", name, "` was not declared"));
  }
  for (const ir::Buffer& out : b_.outputs()) program.params.push_back(ir::Param{out, nullptr});
  // A strided tensor's dynamic extents must be some tensor's dimensions, so
  // that every launch can bind them from the storage it is given.
  std::unordered_set<const ir::ExprNode*> storage_dims;
  for (const ir::Param& p : program.params) {
    if (p.tensor) {
      for (const ir::Expr& d : p.tensor->shape) storage_dims.insert(d.get());
    }
  }
  for (const ir::Param& p : program.params) {
    if (!p.view) continue;
    for (size_t d = 0; d < p.view->shape.size(); ++d) {
      const ir::Expr& e = p.view->shape[d];
      if (ir::AsConstInt(e) || (e->kind == ir::ExprKind::kVar && storage_dims.count(e.get()))) {
        continue;
      }
      return absl::UnimplementedError(
          Cat(def_.name, ": dimension ", d, " of the strided tensor `", p.tensor->name, "` is ",
              ir::PrintExpr(e),
              ", a size no tensor's storage has as a dimension: give it a constant, or make it a "
              "dimension of the outermost stride or of another tensor"));
    }
  }
  // Accesses of strided tensors are bounded by their shape, not their
  // storage's: guarded before their views are lowered.
  std::set<const ir::BufferNode*> strided;
  for (const auto& [view, v] : b_.views()) {
    if (!v.axes.empty()) strided.insert(view);
  }
  absl::StatusOr<ir::Stmt> body = LowerReducers(body_, b_.reducer_buffers());
  if (!strided.empty()) body = LegalizeGlobalAccesses(*body, b_.safe_values(), &strided);
  if (!body.ok()) return body.status();
  absl::StatusOr<ir::Stmt> lowered = LowerViews(*body, b_.views());
  if (!lowered.ok()) return lowered.status();
  absl::StatusOr<ir::Stmt> legal = LegalizeGlobalAccesses(*lowered, b_.safe_values());
  if (!legal.ok()) return legal.status();
  program.body = *legal;
  program.requirements = b_.requirements();
  UsedVars used;
  used.VisitProgram(program);
  for (const ir::Requirement& r : program.requirements) used.Visit(r.cond);
  for (const ParamInfo& p : b_.params()) {
    if (p.var) {
      if (!used.vars.count(p.var.get())) continue;
      if (p.shape_used || p.kind != ParamInfo::Kind::kFunctionParam) {
        program.dyn_dims.push_back(p.var);
      } else {
        program.tile_params.push_back(ir::TileParam{p.var, std::nullopt, {}});
      }
      continue;
    }
    if (p.kind == ParamInfo::Kind::kFunctionParam && p.tile_used && !p.shape_used && p.value &&
        p.value->IsIntLike() && p.value->kind != ValueKind::kBool) {
      program.tile_params.push_back(ir::TileParam{ir::MakeVar(p.name), p.value->AsInt(), {}});
    }
  }
  return program;
}

}  // namespace

absl::StatusOr<ir::Program> CompileTileLang(const SourceFile& file, std::string_view function,
                                            const Bindings& bindings) {
  if (function.size() > ir::kMaxNameLength) {
    return absl::InvalidArgumentError(Cat(file.path, ": error: the function name to compile is ",
                                          function.size(), " characters long; names are at most ",
                                          ir::kMaxNameLength, " characters"));
  }
  for (const auto& [name, value] : bindings.values) {
    if (name.size() > ir::kMaxNameLength) {
      return absl::InvalidArgumentError(Cat(file.path, ": error: a binding names a parameter of ",
                                            name.size(), " characters; names are at most ",
                                            ir::kMaxNameLength, " characters"));
    }
  }
  // One budget for the whole call, the second try below included.
  StagingBudget budget(bindings.staging);
  absl::StatusOr<std::unique_ptr<Module>> module = Parse(file);
  if (!module.ok()) return module.status();
  if (!*module) return Builder::Internal("the parser returned no module");
  const FunctionDefStmt* def = (*module)->FindFunction(function);
  if (!def) {
    std::vector<std::string> names;
    for (const FunctionDefStmt* f : (*module)->Functions()) names.push_back(f->name);
    return absl::InvalidArgumentError(
        Cat(file.path, ": error: no top-level function named `", function, "`",
            names.empty() ? " (the file defines none)"
                          : Cat(" (the file defines: ", Join(names, ", "), ")")));
  }
  absl::StatusOr<ir::Program> program = Compiler(**module, *def).Run(bindings);
  if (!program.ok() && absl::StrContains(program.status().message(), kNestedKernel)) {
    // The body, run as the one thread of an implicit kernel, called something
    // that opens T.Kernel: it is block-level code after all.
    absl::StatusOr<ir::Program> again = Compiler(**module, *def, true).Run(bindings);
    if (again.ok() || !absl::StrContains(again.status().message(), kNestedKernel)) return again;
  }
  return program;
}

}  // namespace tilec::frontend
