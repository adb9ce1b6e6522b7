// Builder core: scopes, parameters, static requirements, IR emission, module
// globals and function calls. Expressions are in builder_expr.cc, statements
// in builder_stmt.cc.
#include "compiler/frontend/builder.h"

#include <algorithm>
#include <utility>

#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::frontend {
namespace {

constexpr int kMaxCallDepth = 100;
constexpr int kMaxDepth = 1000;

// Variables and loads of an expression, in order of first appearance.
class VarCollector : public ir::IRVisitor {
 public:
  using ir::IRVisitor::Visit;
  void Visit(const ir::Expr& e) override {
    if (!e) return;
    if (const auto* v = e->as<ir::VarNode>()) {
      for (const ir::VarNode* seen : vars) {
        if (seen == v) return;
      }
      vars.push_back(v);
    }
    if (e->kind == ir::ExprKind::kLoad) has_load = true;
    ir::IRVisitor::Visit(e);
  }
  std::vector<const ir::VarNode*> vars;
  bool has_load = false;
};

}  // namespace

// ---------------------------------------------------------------------------
// Env

Env::Slot* Env::Lookup(const std::string& name) {
  for (Env* env = this; env != nullptr; env = env->parent_) {
    auto it = env->slots_.find(name);
    if (it != env->slots_.end()) return &it->second;
  }
  return nullptr;
}

Env::Slot* Env::LookupLocal(const std::string& name) {
  auto it = slots_.find(name);
  return it == slots_.end() ? nullptr : &it->second;
}

void Env::Set(const std::string& name, Value v, int block_id) {
  slots_[name] = Slot{std::move(v), block_id};
}

bool Env::Erase(const std::string& name) { return slots_.erase(name) > 0; }

std::vector<std::pair<std::string, Value>> Env::LocalItems() const {
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [name, slot] : slots_) out.emplace_back(name, slot.value);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

// ---------------------------------------------------------------------------
// Builder

Builder::Builder(const Module& module, const SourceFile& file) : module_(module), file_(file) {
  // CompileTileLang installs the budget of the whole call; a builder made
  // elsewhere gets the step budget alone.
  static const StagingLimits kStepsOnly;
  if (StagingBudget::Current() == nullptr) own_budget_.emplace(kStepsOnly);
  IndexModule();
}

absl::Status Builder::Err(SourceLoc loc, std::string_view message) const {
  return SourceError(file_, loc, message);
}

absl::Status Builder::At(const absl::Status& status, SourceLoc loc) const {
  if (status.ok() || status.code() != absl::StatusCode::kInvalidArgument) return status;
  std::string_view msg = SV(status.message());
  if (StartsWith(msg, Cat(file_.path, ":")) && Contains(msg, ": error: ")) {
    return status;
  }
  return Err(loc, msg);
}

absl::Status Builder::Internal(std::string_view what) {
  return absl::InternalError(
      Cat("internal error in the TileLang frontend (this is a compiler bug): ", what));
}

Env* Builder::NewEnv(Env* parent) {
  envs_.push_back(std::make_unique<Env>(parent));
  return envs_.back().get();
}

absl::Status Builder::Tick(SourceLoc loc) { return At(ChargeStaging(1), loc); }

Builder::DepthGuard::DepthGuard(Builder& b, SourceLoc loc) : b_(b) {
  if (++b_.depth_ > kMaxDepth) {
    status_ = b_.Err(loc, Cat("the program nests expressions, statements and calls more than ",
                              kMaxDepth, " levels deep"));
  }
}

// ---- Parameters -----------------------------------------------------------

int Builder::AddParam(ParamInfo info) {
  int id = static_cast<int>(params_.size());
  if (!info.value && !info.var) info.var = ir::MakeVar(info.name, ir::DType::kInt32);
  if (info.var) param_of_var_[info.var.get()] = id;
  params_.push_back(std::move(info));
  return id;
}

namespace {
Value WithProvenance(const Value& v, int id) {
  if (v.IsNumber()) {
    Value r = v;
    r.params.Add(id);
    return r;
  }
  if (v.kind == ValueKind::kTuple || v.kind == ValueKind::kList) {
    ValueList items;
    for (const Value& item : v.Items()) items.push_back(WithProvenance(item, id));
    return v.kind == ValueKind::kTuple ? Value::Tuple(std::move(items))
                                       : Value::List(std::move(items));
  }
  return v;
}
}  // namespace

Value Builder::ParamValue(int id) const {
  const ParamInfo& p = params_[id];
  if (p.value) return WithProvenance(*p.value, id);
  return Value::Runtime(p.var);
}

int Builder::ParamOfVar(const ir::VarNode* var) const {
  auto it = param_of_var_.find(var);
  return it == param_of_var_.end() ? -1 : it->second;
}

void Builder::MarkTileSize(const Value& v) {
  for (int id : v.params.ids()) params_[id].tile_used = true;
  if (v.kind == ValueKind::kExpr && v.expr) {
    VarCollector c;
    c.Visit(v.expr);
    for (const ir::VarNode* var : c.vars) {
      int id = ParamOfVar(var);
      if (id >= 0) params_[id].tile_used = true;
    }
  }
  for (const Value& item : v.Items()) MarkTileSize(item);
}

void Builder::MarkShape(const Value& v) {
  for (int id : v.params.ids()) params_[id].shape_used = true;
  if (v.kind == ValueKind::kExpr) MarkShapeExpr(v.expr);
  for (const Value& item : v.Items()) MarkShape(item);
}

void Builder::MarkShapeExpr(const ir::Expr& e) {
  if (!e) return;
  VarCollector c;
  c.Visit(e);
  for (const ir::VarNode* var : c.vars) {
    int id = ParamOfVar(var);
    if (id >= 0) params_[id].shape_used = true;
  }
}

// ---- Static requirements ----------------------------------------------------

std::optional<std::string> Builder::UnboundParamIn(const ir::Expr& e,
                                                   bool skip_shape_params) const {
  if (!e) return std::nullopt;
  VarCollector c;
  c.Visit(e);
  for (const ir::VarNode* var : c.vars) {
    int id = ParamOfVar(var);
    if (id < 0) continue;
    const ParamInfo& p = params_[id];
    if (p.kind == ParamInfo::Kind::kDynamicSymbol) continue;
    if (skip_shape_params && p.shape_used) continue;
    return p.name;
  }
  return std::nullopt;
}

ir::Expr Builder::InlineLets(const ir::Expr& e) const {
  struct Inline : ir::IRMutator {
    const Builder* b;
    using ir::IRMutator::Mutate;
    ir::Expr Mutate(const ir::Expr& x) override {
      if (const auto* v = x ? x->as<ir::VarNode>() : nullptr) {
        if (const ir::Expr* value = b->LetValue(v)) return Mutate(*value);
      }
      return IRMutator::Mutate(x);
    }
  } inline_lets;
  inline_lets.b = this;
  return inline_lets.Mutate(e);
}

bool Builder::HasRuntimeVars(const ir::Expr& e) const {
  if (!e) return false;
  VarCollector c;
  c.Visit(e);
  if (c.has_load) return true;
  for (const ir::VarNode* var : c.vars) {
    if (ParamOfVar(var) < 0) return true;
  }
  return false;
}

absl::Status Builder::NotStatic(const Value& v, SourceLoc loc, std::string_view use) const {
  if (v.kind == ValueKind::kExpr) {
    if (std::optional<std::string> p = UnboundParamIn(v.expr, false)) {
      return Err(loc, Cat("parameter `", *p, "` is not bound, but ", use,
                          " needs its value at staging time; bind it with -D ", *p, "=<value>"));
    }
    return Err(loc, Cat(use, " must be known at staging time, but it is the runtime value `",
                        ir::PrintExpr(v.expr), "`"));
  }
  return Err(loc, Cat(use, " must be known at staging time, but it is a ", DescribeValue(v)));
}

absl::StatusOr<int64_t> Builder::StaticInt(const Value& v, SourceLoc loc,
                                           std::string_view use) const {
  if (v.IsIntLike()) return v.AsInt();
  if (v.kind == ValueKind::kExpr) {
    if (std::optional<int64_t> c = ir::AsConstInt(v.expr)) return *c;
    if (v.expr && ir::IsFloat(v.expr->dtype)) {
      return Err(loc,
                 Cat(use, " must be an integer, got a ", ir::DTypeName(v.expr->dtype), " value"));
    }
    return NotStatic(v, loc, use);
  }
  if (v.kind == ValueKind::kElement) return NotStatic(v, loc, use);
  return Err(loc, Cat(use, " must be an integer, got ", DescribeValue(v)));
}

absl::StatusOr<bool> Builder::StaticBool(const Value& v, SourceLoc loc,
                                         std::string_view use) const {
  if (std::optional<bool> t = Truthy(v)) return *t;
  return NotStatic(v, loc, use);
}

absl::StatusOr<ir::DType> Builder::StaticDType(const Value& v, SourceLoc loc,
                                               std::string_view use) const {
  if (std::optional<ir::DType> t = AsDType(v)) return *t;
  if ((v.kind == ValueKind::kDType && v.lanes > 1) ||
      (v.kind == ValueKind::kStr && ParseVectorDType(v.s))) {
    return Err(loc, Cat("the vector dtype ",
                        v.kind == ValueKind::kStr ? v.s : Cat(ir::DTypeName(v.dtype), "x", v.lanes),
                        " is not supported for ", use,
                        "; tilec supports vector dtypes in T.alloc_var, their constructors and "
                        "T.extract_lane"));
  }
  if (v.kind == ValueKind::kStr) {
    return Err(loc, Cat("unknown dtype '", v.s, "' for ", use));
  }
  if (v.kind == ValueKind::kExpr) return NotStatic(v, loc, use);
  return Err(loc, Cat(use, " must be a dtype, got ", DescribeValue(v)));
}

absl::StatusOr<std::string> Builder::StaticStr(const Value& v, SourceLoc loc,
                                               std::string_view use) const {
  if (v.kind == ValueKind::kStr) return v.s;
  if (v.kind == ValueKind::kExpr) return NotStatic(v, loc, use);
  return Err(loc, Cat(use, " must be a string, got ", DescribeValue(v)));
}

// ---- IR conversions ---------------------------------------------------------

absl::StatusOr<ir::Expr> Builder::ExprOf(const Value& v, SourceLoc loc) const {
  return At(ToExpr(v), loc);
}

absl::StatusOr<ir::Expr> Builder::ExprAs(const Value& v, ir::DType t, SourceLoc loc) const {
  return At(ToExprAs(v, t), loc);
}

absl::StatusOr<ir::Expr> Builder::SizeExpr(const Value& v, SourceLoc loc, std::string_view use,
                                           bool tile_size) {
  ir::Expr e;
  if (v.IsIntLike()) {
    if (v.AsInt() < 0) return Err(loc, Cat(use, " must not be negative, got ", v.AsInt()));
    absl::StatusOr<ir::Expr> lit = ToExpr(Value::Int(v.AsInt()));
    if (!lit.ok()) return At(lit.status(), loc);
    e = *lit;
  } else if (v.kind == ValueKind::kExpr || v.kind == ValueKind::kElement ||
             (v.kind == ValueKind::kBuffer && IsRuntimeScalar(v))) {
    absl::StatusOr<ir::Expr> x = ExprOf(v, loc);
    if (!x.ok()) return x.status();
    e = *x;
    if (!ir::IsInt(e->dtype)) {
      return Err(loc, Cat(use, " must be an integer, got a ", ir::DTypeName(e->dtype), " value"));
    }
    if (std::optional<int64_t> c = ir::AsConstInt(e); c && *c < 0) {
      return Err(loc, Cat(use, " must not be negative, got ", *c));
    }
  } else if (v.kind == ValueKind::kFloat) {
    return Err(loc, Cat(use, " must be an integer, got the float ", ValueRepr(v)));
  } else {
    return Err(loc, Cat(use, " must be an integer, got ", DescribeValue(v)));
  }
  if (tile_size) MarkTileSize(v);
  return e;
}

absl::StatusOr<std::vector<ir::Expr>> Builder::ShapeOf(const Value& v, SourceLoc loc,
                                                       std::string_view use, bool tile_size) {
  std::vector<ir::Expr> shape;
  if (v.IsSequence()) {
    // A 0-d shape (a scalar tensor, or a reduction of a 1-d one) is one
    // element, as TVM stores it.
    if (v.Items().empty()) return std::vector<ir::Expr>{ir::IntImm(1)};
    for (const Value& item : v.Items()) {
      absl::StatusOr<ir::Expr> e = SizeExpr(item, loc, use, tile_size);
      if (!e.ok()) return e.status();
      shape.push_back(*e);
    }
    return shape;
  }
  if (v.IsIntLike() || v.kind == ValueKind::kExpr) {
    absl::StatusOr<ir::Expr> e = SizeExpr(v, loc, use, tile_size);
    if (!e.ok()) return e.status();
    shape.push_back(*e);
    return shape;
  }
  return Err(loc, Cat(use, " must be an int or a tuple of ints, got ", DescribeValue(v)));
}

// ---- Emission ---------------------------------------------------------------

bool Builder::KernelSyntax() const { return !frames_.empty() && frames_.back().kernel_syntax; }

absl::Status Builder::Emit(ir::Stmt s, SourceLoc loc, std::string_view what) {
  if (blocks_.empty()) {
    return Err(loc, Cat(what,
                        " is only allowed inside a kernel (a @T.prim_func body, "
                        "an eager @tilelang.jit body or a @T.macro)"));
  }
  if (!InKernel()) {
    const auto* alloc = s->as<ir::AllocateNode>();
    bool ok = s->kind == ir::StmtKind::kKernel ||
              (alloc && alloc->buffer && alloc->buffer->scope == ir::Scope::kGlobal);
    if (!ok) return Err(loc, Cat(what, " must be inside a T.Kernel block"));
  }
  // Refusals that later passes would make without a location.
  if (std::optional<std::string> bad = UnsupportedViewUse(s, views_)) return Err(loc, *bad);
  if (std::optional<std::string> bad = CollectiveReadsThreadIndex(s, what)) return Err(loc, *bad);
  blocks_.back().stmts.push_back(std::move(s));
  return absl::OkStatus();
}

std::string Builder::TakeNameHint(std::string_view fallback) {
  std::string hint = std::move(name_hint_);
  name_hint_.clear();
  return hint.empty() ? std::string(fallback) : hint;
}

absl::Status Builder::PushFrame(Frame f, SourceLoc loc) {
  if (frames_.size() >= kMaxCallDepth) {
    return Err(loc, Cat("call depth exceeds ", kMaxCallDepth, " (unbounded recursion?)"));
  }
  f.block_base = blocks_.size();
  frames_.push_back(std::move(f));
  return absl::OkStatus();
}

void Builder::PushBlock() { blocks_.push_back(Block{next_block_id_++, {}}); }

std::vector<ir::Stmt> Builder::PopBlock() {
  std::vector<ir::Stmt> stmts = std::move(blocks_.back().stmts);
  blocks_.pop_back();
  return stmts;
}

bool Builder::BlockOpen(int id) const {
  if (id < 0) return true;
  for (const Block& b : blocks_) {
    if (b.id == id) return true;
  }
  return false;
}

namespace {
bool IsRuntimeBinding(const Value& v) {
  switch (v.kind) {
    case ValueKind::kExpr:
    case ValueKind::kElement:
    case ValueKind::kRegion: return true;
    case ValueKind::kBuffer: return v.buffer && v.buffer->scope != ir::Scope::kGlobal;
    default: return false;
  }
}
}  // namespace

void Builder::BindName(const std::string& name, const Value& v) {
  int block = (IsRuntimeBinding(v) && !blocks_.empty()) ? CurrentBlockId() : -1;
  frame().env->Set(name, v, block);
}

absl::Status Builder::AssignName(const std::string& name, const Value& v, SourceLoc loc) {
  Env::Slot* existing = frame().env->LookupLocal(name);
  bool target_is_var = existing && existing->value.kind == ValueKind::kBuffer &&
                       existing->value.buffer && existing->value.buffer->scope == ir::Scope::kVar;
  bool value_is_var =
      v.kind == ValueKind::kBuffer && v.buffer && v.buffer->scope == ir::Scope::kVar;
  // A vector variable (T.alloc_var of float16x2, ...) takes its lanes from
  // a vector value (the vector dtype's constructor: a sequence of lanes).
  if (existing && existing->value.kind == ValueKind::kBuffer && existing->value.buffer &&
      vector_vars_.count(existing->value.buffer.get()) && KernelSyntax() && InPrimFunc() &&
      BlockOpen(existing->block_id)) {
    const ir::Buffer& buf = existing->value.buffer;
    const int64_t lanes = vector_vars_.at(buf.get());
    if (!v.IsSequence() || static_cast<int64_t>(v.Items().size()) != lanes) {
      return Err(loc, Cat("`", name, "` is a vector of ", lanes, " ", ir::DTypeName(buf->dtype),
                          " lanes; assign it a vector of as many (", ir::DTypeName(buf->dtype), "x",
                          lanes, "(...)), got ", DescribeValue(v)));
    }
    for (int64_t l = 0; l < lanes; ++l) {
      absl::Status st = StoreElement(buf, {ir::IntImm(l)}, v.Items()[l], loc);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  // Assigning a T.alloc_var stores into it while its block is open; after
  // the block ended the name is bound afresh, as a Python local would be.
  if (target_is_var && !value_is_var && KernelSyntax() && InPrimFunc() &&
      BlockOpen(existing->block_id)) {
    return StoreElement(existing->value.buffer, {ir::IntImm(0)}, v, loc);
  }
  if (KernelSyntax() && InKernel() &&
      (v.kind == ValueKind::kExpr || v.kind == ValueKind::kElement)) {
    absl::StatusOr<ir::Expr> e = ExprOf(v, loc);
    if (!e.ok()) return e.status();
    absl::StatusOr<Value> local = LetBound(name, *e, loc);
    if (!local.ok()) return local.status();
    BindName(name, *local);
    return absl::OkStatus();
  }
  BindName(name, v);
  return absl::OkStatus();
}

// ---- Module globals ---------------------------------------------------------

void Builder::IndexModule() {
  auto index = [&](const Stmt& s, auto& self) -> void {
    if (const auto* f = s.as<FunctionDefStmt>()) {
      module_entries_[f->name] = ModuleEntry{&s, std::nullopt, false};
    } else if (const auto* c = s.as<ClassDefStmt>()) {
      module_entries_[c->name] = ModuleEntry{&s, std::nullopt, false};
    } else if (const auto* a = s.as<AssignStmt>()) {
      for (const ExprPtr& t : a->targets) {
        if (const auto* n = t->as<NameExpr>()) {
          module_entries_[n->id] = ModuleEntry{&s, std::nullopt, false};
        } else if (const auto* tup = t->as<TupleExpr>()) {
          for (const ExprPtr& elt : tup->elts) {
            if (const auto* n2 = elt->as<NameExpr>()) {
              module_entries_[n2->id] = ModuleEntry{&s, std::nullopt, false};
            }
          }
        }
      }
    } else if (const auto* aa = s.as<AnnAssignStmt>()) {
      const auto* n = aa->target ? aa->target->as<NameExpr>() : nullptr;
      if (n && aa->value) module_entries_[n->id] = ModuleEntry{&s, std::nullopt, false};
    } else if (const auto* imp = s.as<ImportStmt>()) {
      for (const ImportAlias& al : imp->names) {
        std::string bound = al.asname.empty() ? al.name.substr(0, al.name.find('.')) : al.asname;
        module_entries_[bound] = ModuleEntry{&s, std::nullopt, false};
      }
    } else if (const auto* from = s.as<ImportFromStmt>()) {
      for (const ImportAlias& al : from->names) {
        if (al.name == "*") continue;
        module_entries_[al.asname.empty() ? al.name : al.asname] =
            ModuleEntry{&s, std::nullopt, false};
      }
    } else if (const auto* t = s.as<TryStmt>()) {
      // `try: import x` / `except ImportError:` is common around imports.
      for (const StmtPtr& inner : t->body) {
        if (inner && (inner->as<ImportStmt>() || inner->as<ImportFromStmt>())) self(*inner, self);
      }
    }
  };
  for (const StmtPtr& s : module_.body) {
    if (s) index(*s, index);
  }
}

std::optional<int64_t> Builder::ConstUpperBound(const ir::Expr& e) const {
  if (std::optional<int64_t> c = ir::AsConstInt(e)) return c;
  if (const auto* v = e->as<ir::VarNode>()) {
    const ir::Expr* value = LetValue(v);
    return value ? ConstUpperBound(*value) : std::nullopt;
  }
  if (const auto* c = e->as<ir::CastNode>()) {
    if (!ir::IsInt(c->value->dtype)) return std::nullopt;
    return ConstUpperBound(c->value);
  }
  const auto* b = e->as<ir::BinaryNode>();
  if (!b) return std::nullopt;
  std::optional<int64_t> x = ConstUpperBound(b->a), y = ConstUpperBound(b->b);
  switch (b->op) {
    case ir::BinaryOp::kMin:
      if (x && y) return std::min(*x, *y);
      return x ? x : y;
    case ir::BinaryOp::kMax:
      if (x && y) return std::max(*x, *y);
      return std::nullopt;
    default: return std::nullopt;
  }
}

absl::StatusOr<Value> Builder::ImportValue(const std::string& module, const std::string& name,
                                           SourceLoc loc) {
  if (std::optional<Value> v = ModuleAttribute(module, name)) return *v;
  return Value::Module(Cat(module, ".", name));
}

absl::StatusOr<std::optional<Value>> Builder::ModuleGlobal(const std::string& name, SourceLoc loc) {
  auto it = module_entries_.find(name);
  if (it == module_entries_.end()) return std::optional<Value>();
  absl::StatusOr<Value> v = EvalModuleEntry(name, it->second, loc);
  if (!v.ok()) return v.status();
  return std::optional<Value>(*v);
}

absl::StatusOr<Value> Builder::EvalModuleEntry(const std::string& name, ModuleEntry& entry,
                                               SourceLoc loc) {
  if (entry.value) return *entry.value;
  if (entry.evaluating) {
    return Err(loc, Cat("module-level name `", name, "` is defined in terms of itself"));
  }
  entry.evaluating = true;
  const Stmt& s = *entry.stmt;
  // Module-level code runs as plain Python in a scope of its own.
  Frame f;
  f.env = NewEnv(nullptr);
  f.name = "<module>";
  absl::Status pushed = PushFrame(std::move(f), s.loc);
  if (!pushed.ok()) {
    entry.evaluating = false;
    return pushed;
  }
  absl::StatusOr<Value> result = [&]() -> absl::StatusOr<Value> {
    if (const auto* def = s.as<FunctionDefStmt>()) return MakeFunction(*def, nullptr);
    if (const auto* cdef = s.as<ClassDefStmt>()) return MakeClass(*cdef, nullptr);
    if (const auto* imp = s.as<ImportStmt>()) {
      for (const ImportAlias& al : imp->names) {
        if (!al.asname.empty() && al.asname == name) return Value::Module(al.name);
        if (al.asname.empty() && al.name.substr(0, al.name.find('.')) == name) {
          return Value::Module(name);
        }
      }
    }
    if (const auto* from = s.as<ImportFromStmt>()) {
      for (const ImportAlias& al : from->names) {
        if ((al.asname.empty() ? al.name : al.asname) != name) continue;
        if (from->level > 0) return Value::Module(Cat(".", from->module, ".", al.name));
        return ImportValue(from->module, al.name, loc);
      }
    }
    if (const auto* a = s.as<AssignStmt>()) {
      absl::StatusOr<Value> v = Eval(*a->value);
      if (!v.ok()) return v.status();
      for (const ExprPtr& t : a->targets) {
        absl::Status st = AssignTarget(*t, *v);
        if (!st.ok()) return st;
      }
      if (Env::Slot* slot = frame().env->LookupLocal(name)) return slot->value;
    }
    if (const auto* aa = s.as<AnnAssignStmt>()) return Eval(*aa->value);
    return Internal(Cat("module entry `", name, "` has no definition"));
  }();
  PopFrame();
  entry.evaluating = false;
  if (result.ok()) entry.value = *result;
  return result;
}

// ---- Functions --------------------------------------------------------------

absl::StatusOr<Value> Builder::MakeFunction(const FunctionDefStmt& def, Env* closure) {
  FunctionValue fn;
  fn.def = &def;
  fn.name = def.name;
  fn.closure = closure;
  absl::StatusOr<FunctionFlavor> flavor = DecoratorFlavor(def, fn.closure);
  if (!flavor.ok()) return flavor.status();
  fn.flavor = *flavor;
  if (def.is_async) return Err(def.loc, "async functions are not supported");
  for (const Param& p : def.params) {
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

absl::StatusOr<Value> Builder::CallValue(const Value& fn, CallArgs args) {
  switch (fn.kind) {
    case ValueKind::kFunction: return CallFunction(*fn.function, std::move(args));
    case ValueKind::kClass: return CallClass(fn, std::move(args));
    case ValueKind::kObject: {
      absl::StatusOr<std::optional<Value>> call = ClassAttribute(fn, "__call__", args.loc);
      if (!call.ok()) return call.status();
      if (*call) return CallValue(**call, std::move(args));
      break;
    }
    case ValueKind::kBuiltin: return CallBuiltin(*this, *fn.builtin, args);
    case ValueKind::kDType: {
      // T.float32(x): a literal or a cast; T.int32() alone is a fresh scalar.
      Value ctor = Value::Builtin("T.<dtype>", std::make_shared<const Value>(fn));
      return CallBuiltin(*this, *ctor.builtin, args);
    }
    case ValueKind::kModule:
      // Helpers that generate inline CUDA or drive TileLang's own lowering.
      if (StartsWith(fn.s, "tilelang.quantize.get_lop3_intrin_group") ||
          StartsWith(fn.s, "tilelang.quantize.lop3")) {
        return Err(args.loc, Cat("`", fn.s,
                                 "` generates inline CUDA for LOP3 decoding (T.import_source), "
                                 "which tilec does not compile; decode with the plain path "
                                 "(tilelang.quantize's _tir_packed_* converters or T.Parallel "
                                 "arithmetic)"));
      }
      if (fn.s == "tilelang.intrinsics.make_mma_swizzle_layout" ||
          fn.s == "tilelang.intrinsics.mma_layout.make_mma_swizzle_layout") {
        // A swizzled shared layout (a layout hint): as make_swizzled_layout.
        return CallValue(Value::Builtin("tilelang.layout.swizzle_variant"), std::move(args));
      }
      if (StartsWith(fn.s, "tilelang.intrinsics.")) {
        return Err(args.loc, Cat("`", fn.s,
                                 "` is one of TileLang's internal instruction emitters, which "
                                 "tilec does not have; write the matrix product as T.gemm"));
      }
      break;
    case ValueKind::kStr: {
      // A dtype given as a string (`-D dtype=float16x2`) constructs as the
      // dtype itself does.
      if (std::optional<ir::DType> t = AsDType(fn))
        return CallValue(Value::DType(*t), std::move(args));
      if (auto v = ParseVectorDType(fn.s)) {
        return CallValue(Value::DType(v->first, v->second), std::move(args));
      }
      break;
    }
    default: break;
  }
  return Err(args.loc, Cat("a ", DescribeValue(fn), " is not callable"));
}

absl::StatusOr<Value> Builder::CallFunction(const FunctionValue& fn, CallArgs args) {
  if (fn.flavor == FunctionFlavor::kPrimFunc) {
    return Err(args.loc,
               Cat("calling the @T.prim_func `", fn.name, "` from kernel code is not supported"));
  }
  if (fn.flavor == FunctionFlavor::kMacro && !InPrimFunc()) {
    return Err(args.loc, Cat("the @T.macro `", fn.name, "` can only be called inside a kernel"));
  }
  const std::vector<Param>* params = nullptr;
  if (fn.lambda) {
    params = &fn.lambda->params;
  } else if (fn.def) {
    params = &fn.def->params;
  } else {
    return Internal("function value without a definition");
  }
  if (fn.bound_self) args.positional.insert(args.positional.begin(), Arg{*fn.bound_self, args.loc});
  Env* env = NewEnv(fn.closure);
  std::vector<bool> given(params->size(), false);
  std::vector<size_t> positional_params;
  ValueList varargs;
  int varargs_index = -1, varkw_index = -1;
  for (size_t k = 0; k < params->size(); ++k) {
    ParamKind kind = (*params)[k].kind;
    if (kind == ParamKind::kPositionalOnly || kind == ParamKind::kNormal) {
      positional_params.push_back(k);
    }
    if (kind == ParamKind::kVarArgs) varargs_index = static_cast<int>(k);
    if (kind == ParamKind::kVarKeywords) varkw_index = static_cast<int>(k);
  }
  for (size_t n = 0; n < args.positional.size(); ++n) {
    const Arg& a = args.positional[n];
    if (n < positional_params.size()) {
      size_t k = positional_params[n];
      env->Set((*params)[k].name, a.value);
      given[k] = true;
    } else if (varargs_index >= 0) {
      varargs.push_back(a.value);
    } else {
      return Err(a.loc, Cat("`", fn.name, "` takes ", positional_params.size(),
                            " positional arguments but ", args.positional.size(), " were given"));
    }
  }
  DictItems varkw;
  for (auto& [name, a] : args.keywords) {
    bool matched = false;
    for (size_t k = 0; k < params->size(); ++k) {
      const Param& p = (*params)[k];
      if (p.name != name || (p.kind != ParamKind::kNormal && p.kind != ParamKind::kKeywordOnly)) {
        continue;
      }
      if (given[k]) {
        return Err(a.loc, Cat("`", fn.name, "` got multiple values for argument '", name, "'"));
      }
      env->Set(name, a.value);
      given[k] = true;
      matched = true;
    }
    if (!matched) {
      if (varkw_index < 0) {
        return Err(a.loc, Cat("`", fn.name, "` got an unexpected keyword argument '", name, "'"));
      }
      varkw.emplace_back(Value::Str(name), a.value);
    }
  }
  for (size_t k = 0; k < params->size(); ++k) {
    const Param& p = (*params)[k];
    if (p.kind == ParamKind::kVarArgs) {
      env->Set(p.name, Value::Tuple(varargs));
    } else if (p.kind == ParamKind::kVarKeywords) {
      env->Set(p.name, Value::Dict(varkw));
    } else if (!given[k]) {
      const Value* tuned = nullptr;
      if (auto t = tuned_args_.find(fn.def); fn.def && t != tuned_args_.end()) {
        for (const auto& [name, v] : t->second) {
          if (name == p.name) tuned = &v;
        }
      }
      if (tuned) {
        env->Set(p.name, *tuned);
      } else if (k < fn.defaults.size() && fn.defaults[k]) {
        env->Set(p.name, *fn.defaults[k]);
      } else {
        return Err(args.loc, Cat("`", fn.name, "` is missing the argument '", p.name, "'"));
      }
    }
  }
  Frame f;
  f.env = env;
  f.name = fn.name;
  if (fn.owner && !params->empty() && (*params)[0].kind != ParamKind::kVarArgs) {
    if (Env::Slot* first = env->LookupLocal((*params)[0].name)) {
      f.method_owner = fn.owner;
      f.method_self = first->value;
    }
  }
  f.kernel_syntax = fn.flavor == FunctionFlavor::kMacro ||
                    (fn.flavor == FunctionFlavor::kLambda && KernelSyntax());
  absl::Status pushed = PushFrame(std::move(f), args.loc);
  if (!pushed.ok()) return pushed;
  absl::StatusOr<Value> result = [&]() -> absl::StatusOr<Value> {
    if (fn.lambda) return Eval(*fn.lambda->body);
    absl::StatusOr<Flow> flow = ExecBlock(fn.def->body);
    if (!flow.ok()) return flow.status();
    if (frame().return_value) return *frame().return_value;
    return Value::None();
  }();
  PopFrame();
  return result;
}

}  // namespace tilec::frontend
