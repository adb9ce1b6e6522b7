// What the source says of a function, read before it runs: how it builds
// its kernel (frontend.cc's Style) and which of its names -D binds.
#include "compiler/frontend/kernel_style.h"

#include <algorithm>
#include <map>

namespace tilec::frontend {
namespace {

// Walks the statements of a function body (into if/for/while/with/try
// blocks, and into nested defs when `into_defs`), calling `fn` on each.
template <typename Fn>
void WalkStmts(const StmtList& body, bool into_defs, const Fn& fn) {
  for (const StmtPtr& s : body) {
    if (!s) continue;
    fn(*s);
    if (const auto* i = s->as<IfStmt>()) {
      WalkStmts(i->body, into_defs, fn);
      WalkStmts(i->orelse, into_defs, fn);
    } else if (const auto* f = s->as<ForStmt>()) {
      WalkStmts(f->body, into_defs, fn);
    } else if (const auto* w = s->as<WhileStmt>()) {
      WalkStmts(w->body, into_defs, fn);
    } else if (const auto* w2 = s->as<WithStmt>()) {
      WalkStmts(w2->body, into_defs, fn);
    } else if (const auto* d = s->as<FunctionDefStmt>(); d && into_defs) {
      WalkStmts(d->body, into_defs, fn);
    }
  }
}

}  // namespace

bool IsPrimFuncDecorator(const Expr& d) {
  const Expr* e = &d;
  if (const auto* call = e->as<CallExpr>()) e = call->func.get();
  if (const auto* a = e->as<AttributeExpr>()) return a->attr == "prim_func";
  if (const auto* n = e->as<NameExpr>()) return n->id == "prim_func";
  return false;
}

bool IsSignatureGenerator(const FunctionDefStmt& def) {
  for (const ExprPtr& d : def.decorators) {
    const Expr* e = d.get();
    const auto* call = e->as<CallExpr>();
    if (call) e = call->func.get();
    std::string_view name;
    if (const auto* a = e->as<AttributeExpr>()) name = a->attr;
    if (const auto* n = e->as<NameExpr>()) name = n->id;
    if (name == "lazy_jit") return true;
    if (name != "prim_func" || !call) continue;
    for (const Keyword& k : call->keywords) {
      const auto* c = k.value ? k.value->as<ConstantExpr>() : nullptr;
      if (k.name == "generator" && c && c->value_kind == ConstantKind::kBool && c->bool_value) {
        return true;
      }
    }
  }
  return false;
}

bool HasNestedPrimFunc(const FunctionDefStmt& def) {
  bool found = false;
  WalkStmts(def.body, true, [&](const Stmt& s) {
    if (const auto* d = s.as<FunctionDefStmt>()) {
      for (const ExprPtr& dec : d->decorators) found |= IsPrimFuncDecorator(*dec);
    }
  });
  return found;
}

// Eager style: the parameters annotated in the body (`A: T.Tensor(...)`), and
// the names declared with T.const("M, N").
void ScanEager(const FunctionDefStmt& def, std::vector<std::string>* annotated,
               std::vector<std::string>* consts) {
  WalkStmts(def.body, false, [&](const Stmt& s) {
    if (const auto* a = s.as<AnnAssignStmt>()) {
      const auto* n = a->target ? a->target->as<NameExpr>() : nullptr;
      if (!n || a->value) return;
      for (const Param& p : def.params) {
        if (p.name == n->id &&
            std::find(annotated->begin(), annotated->end(), n->id) == annotated->end()) {
          annotated->push_back(n->id);
        }
      }
      return;
    }
    const Expr* value = nullptr;
    if (const auto* as = s.as<AssignStmt>()) value = as->value.get();
    if (const auto* es = s.as<ExprStmt>()) value = es->value.get();
    const auto* call = value ? value->as<CallExpr>() : nullptr;
    const auto* attr = call ? call->func->as<AttributeExpr>() : nullptr;
    if (!attr || attr->attr != "const" || call->args.empty()) return;
    const auto* c = call->args[0]->as<ConstantExpr>();
    if (!c || c->value_kind != ConstantKind::kString) return;
    std::string name;
    for (char ch : c->str_value + " ") {
      if (ch == ',' || ch == ' ' || ch == '\t') {
        if (!name.empty() && std::find(consts->begin(), consts->end(), name) == consts->end()) {
          consts->push_back(name);
        }
        name.clear();
      } else {
        name += ch;
      }
    }
  });
}

// Whether a function without a nested @T.prim_func is an eager kernel: its
// own body (not nested defs) opens a `with` block (T.Kernel), annotates a
// name (`A: T.Tensor(...)`) or declares sizes with T.const. Anything else is
// a generator, whose returned @T.prim_func may come from a helper it calls
// (`return _make_kernel(M, N)`).
// Whether a parameter annotation is written as a tensor type
// (T.Tensor(...), T.Tensor[...], T.Buffer(...) ...).
bool TensorAnnotation(const Expr* e) {
  if (e == nullptr) return false;
  if (const auto* c = e->as<CallExpr>()) e = c->func.get();
  if (const auto* s = e->as<SubscriptExpr>()) e = s->value.get();
  const auto* a = e->as<AttributeExpr>();
  return a != nullptr && (a->attr == "Tensor" || a->attr == "Buffer" || a->attr == "StridedTensor");
}

// An eager kernel written like a prim_func: every parameter annotated, at
// least one with a tensor type (`@tilelang.jit def k(A: T.Tensor((64,),
// T.float16), ...)`), and a body that opens T.Kernel (or TIR's thread loops).
// A `with` block (T.Kernel), or TIR's thread loops (`for bx in
// T.thread_binding(...)`).
bool OpensKernel(const Stmt& s) {
  if (s.as<WithStmt>()) return true;
  const auto* f = s.as<ForStmt>();
  const auto* call = f && f->iter ? f->iter->as<CallExpr>() : nullptr;
  const auto* attr = call ? call->func->as<AttributeExpr>() : nullptr;
  return attr != nullptr && attr->attr == "thread_binding";
}

// Whether any statement of `body`, in nested functions and classes too,
// opens a kernel.
bool AnyKernel(const StmtList& body) {
  bool found = false;
  WalkStmts(body, true, [&](const Stmt& s) {
    found |= OpensKernel(s);
    if (const auto* c = s.as<ClassDefStmt>()) found |= AnyKernel(c->body);
  });
  return found;
}

bool SignatureKernel(const FunctionDefStmt& def) {
  bool tensor = false;
  for (const Param& p : def.params) {
    if (!p.annotation) return false;
    tensor |= TensorAnnotation(p.annotation.get());
  }
  bool with = false;
  WalkStmts(def.body, false, [&](const Stmt& s) { with |= OpensKernel(s); });
  return tensor && with;
}

bool LooksEager(const FunctionDefStmt& def) {
  bool found = false;
  WalkStmts(def.body, false, [&](const Stmt& s) {
    if (OpensKernel(s) || s.as<AnnAssignStmt>()) found = true;
  });
  std::vector<std::string> annotated, consts;
  ScanEager(def, &annotated, &consts);
  return found || !consts.empty();
}

// The functions a generator may return by name (`return kernel_func`, in
// any branch): for each such return, the last function of that name defined
// before it in the generator's body (outside nested functions), unless it is
// a @T.prim_func itself; only when the generator holds a @T.prim_func
// somewhere (the returned function defines it or calls the one that does).
// Empty for any other generator.
std::vector<const FunctionDefStmt*> CurriedInner(const FunctionDefStmt& def) {
  std::vector<const FunctionDefStmt*> out;
  if (!HasNestedPrimFunc(def)) return out;
  std::map<std::string, const FunctionDefStmt*> defined;
  WalkStmts(def.body, false, [&](const Stmt& s) {
    if (const auto* d = s.as<FunctionDefStmt>()) {
      defined[d->name] = d;
      return;
    }
    const auto* r = s.as<ReturnStmt>();
    const auto* name = r && r->value ? r->value->as<NameExpr>() : nullptr;
    auto it = name ? defined.find(name->id) : defined.end();
    if (it == defined.end() || std::find(out.begin(), out.end(), it->second) != out.end()) return;
    for (const ExprPtr& dec : it->second->decorators) {
      if (IsPrimFuncDecorator(*dec)) return;
    }
    out.push_back(it->second);
  });
  return out;
}

std::vector<const FunctionDefStmt*> AutotunedInner(
    const FunctionDefStmt& def, const std::vector<const FunctionDefStmt*>& curried) {
  std::vector<const FunctionDefStmt*> out;
  WalkStmts(def.body, false, [&](const Stmt& s) {
    const auto* d = s.as<FunctionDefStmt>();
    if (!d || std::find(curried.begin(), curried.end(), d) != curried.end()) return;
    for (const ExprPtr& dec : d->decorators) {
      const Expr* e = dec.get();
      if (const auto* call = e->as<CallExpr>()) e = call->func.get();
      const auto* a = e->as<AttributeExpr>();
      const auto* n = e->as<NameExpr>();
      if ((a && a->attr == "autotune") || (n && n->id == "autotune")) {
        out.push_back(d);
        return;
      }
    }
  });
  return out;
}

bool Bindable(const Param& p) {
  return p.kind == ParamKind::kNormal || p.kind == ParamKind::kPositionalOnly ||
         p.kind == ParamKind::kKeywordOnly;
}

}  // namespace tilec::frontend
