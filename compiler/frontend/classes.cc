// Builder: classes of the source file, evaluated at staging time.
//
// A class body runs once, when the `class` statement runs (a module-level
// class on first use), in a scope of its own whose parent is the enclosing
// one; as in Python, its methods do not see the class body's names (they
// close over the enclosing scope). Supported: methods, class attributes,
// @staticmethod, @classmethod, @property (getters), __init__, __call__,
// @dataclass (fields with defaults, __post_init__), and bases that are
// classes of the same file. Refused with a located message: other bases
// (NamedTuple, Enum, ...), metaclasses, class decorators other than
// @dataclass, property setters and deleters.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/value_ops.h"

namespace tilec::frontend {
namespace {

// The last name of a decorator: `staticmethod`, `x.setter` -> "setter",
// `dataclasses.dataclass(frozen=True)` -> "dataclass".
std::string DecoratorName(const Expr& d) {
  const Expr* e = &d;
  if (const auto* call = e->as<CallExpr>()) e = call->func.get();
  if (const auto* n = e->as<NameExpr>()) return n->id;
  if (const auto* a = e->as<AttributeExpr>()) return a->attr;
  return "";
}

Value BindTo(const Value& fn, const Value& self) {
  FunctionValue bound = *fn.function;
  bound.bound_self = std::make_shared<const Value>(self);
  return Value::Function(std::move(bound));
}

// A `ClassVar[...]` annotation: a class attribute, not a dataclass field.
bool IsClassVar(const Expr* annotation) {
  if (!annotation) return false;
  const Expr* e = annotation;
  if (const auto* sub = e->as<SubscriptExpr>()) e = sub->value.get();
  return DecoratorName(*e) == "ClassVar";
}

}  // namespace

absl::StatusOr<Value> Builder::MakeClass(const ClassDefStmt& def, Env* closure) {
  auto cls = std::make_shared<ClassValue>();
  cls->name = def.name;
  if (!def.keywords.empty()) {
    return Err(def.keywords[0].loc,
               Cat("class `", def.name, "`: class keywords (metaclass=, ...) are not supported"));
  }
  for (const ExprPtr& d : def.decorators) {
    if (DecoratorName(*d) != "dataclass") {
      return Err(d->loc, Cat("class `", def.name,
                             "`: only the @dataclass decorator is supported on classes"));
    }
    cls->dataclass = true;
  }
  for (const ExprPtr& base : def.bases) {
    if (const auto* n = base->as<NameExpr>(); n && n->id == "object") continue;
    absl::StatusOr<Value> b = Eval(*base);
    if (!b.ok()) return b.status();
    if (b->kind != ValueKind::kClass) {
      return Err(base->loc, Cat("class `", def.name, "`: deriving from a ", DescribeValue(*b),
                                " is not supported; a base must be a class of the source file"));
    }
    cls->bases.push_back(b->klass);
    if (b->klass->dataclass) {
      for (const std::string& f : b->klass->fields) {
        if (std::find(cls->fields.begin(), cls->fields.end(), f) == cls->fields.end()) {
          cls->fields.push_back(f);
        }
      }
    }
  }
  Env* env = NewEnv(closure);
  Frame f;
  f.env = env;
  f.name = def.name;
  absl::Status pushed = PushFrame(std::move(f), def.loc);
  if (!pushed.ok()) return pushed;
  absl::Status body = [&]() -> absl::Status {
    for (const StmtPtr& s : def.body) {
      if (const auto* fdef = s->as<FunctionDefStmt>()) {
        MethodKind kind = MethodKind::kPlain;
        for (const ExprPtr& d : fdef->decorators) {
          std::string dn = DecoratorName(*d);
          if (dn == "staticmethod") kind = MethodKind::kStatic;
          if (dn == "classmethod") kind = MethodKind::kClass;
          if (dn == "property" || dn == "cached_property") kind = MethodKind::kProperty;
          if (dn == "setter" || dn == "deleter") {
            return Err(d->loc, Cat("property ", dn, "s are not supported"));
          }
        }
        // Methods close over the enclosing scope, not the class body.
        absl::StatusOr<Value> fn = MakeFunction(*fdef, closure);
        if (!fn.ok()) return fn.status();
        FunctionValue method = *fn->function;
        method.method = kind;
        env->Set(fdef->name, Value::Function(std::move(method)));
        continue;
      }
      if (const auto* ann = s->as<AnnAssignStmt>()) {
        // Annotations in a class body (`x: int = 4`, `y: Optional[int]`)
        // declare fields; they are not evaluated.
        const auto* n = ann->target->as<NameExpr>();
        if (!n) return Err(ann->target->loc, "only names can be annotated in a class body");
        if (cls->dataclass && !IsClassVar(ann->annotation.get()) &&
            std::find(cls->fields.begin(), cls->fields.end(), n->id) == cls->fields.end()) {
          cls->fields.push_back(n->id);
        }
        if (ann->value) {
          absl::StatusOr<Value> v = Eval(*ann->value);
          if (!v.ok()) return v.status();
          env->Set(n->id, *v);
        }
        continue;
      }
      absl::StatusOr<Flow> flow = Exec(*s);
      if (!flow.ok()) return flow.status();
      if (*flow != Flow::kNormal) return Err(s->loc, "this statement is not allowed in a class body");
    }
    return absl::OkStatus();
  }();
  PopFrame();
  if (!body.ok()) return body;
  cls->attrs = env->LocalItems();
  // Methods know their class, for super().
  for (auto& [n, v] : cls->attrs) {
    if (v.kind != ValueKind::kFunction || v.function->owner || !v.function->def) continue;
    FunctionValue method = *v.function;
    method.owner = cls;
    v = Value::Function(std::move(method));
  }
  return Value::Class(std::move(cls));
}

absl::StatusOr<Value> Builder::CallClass(const Value& cls_value, CallArgs args) {
  const std::shared_ptr<ClassValue>& cls = cls_value.klass;
  auto obj = std::make_shared<ObjectValue>();
  obj->cls = cls;
  Value self = Value::Object(obj);
  if (const Value* init = cls->Find("__init__"); init && init->kind == ValueKind::kFunction) {
    absl::StatusOr<Value> r = CallFunction(*BindTo(*init, self).function, std::move(args));
    if (!r.ok()) return r.status();
    if (r->kind != ValueKind::kNone) {
      return Err(args.loc, Cat("`", cls->name, ".__init__` must return None"));
    }
    return self;
  }
  if (!cls->dataclass) {
    if (!args.positional.empty() || !args.keywords.empty()) {
      return Err(args.loc, Cat("`", cls->name, "()` takes no arguments (it has no __init__)"));
    }
    return self;
  }
  // The __init__ a dataclass generates: its fields, positional or keyword,
  // defaulting to the class attributes of the same names.
  const std::vector<std::string>& fields = cls->fields;
  if (args.positional.size() > fields.size()) {
    return Err(args.positional[fields.size()].loc,
               Cat("`", cls->name, "` takes ", fields.size(), " positional arguments but ",
                   args.positional.size(), " were given"));
  }
  std::vector<bool> given(fields.size(), false);
  for (size_t k = 0; k < args.positional.size(); ++k) {
    SetAttr(obj->attrs, fields[k], args.positional[k].value);
    given[k] = true;
  }
  for (const auto& [name, a] : args.keywords) {
    auto it = std::find(fields.begin(), fields.end(), name);
    if (it == fields.end()) {
      return Err(a.loc, Cat("`", cls->name, "` got an unexpected keyword argument '", name, "'"));
    }
    size_t k = static_cast<size_t>(it - fields.begin());
    if (given[k]) {
      return Err(a.loc, Cat("`", cls->name, "` got multiple values for argument '", name, "'"));
    }
    SetAttr(obj->attrs, name, a.value);
    given[k] = true;
  }
  for (size_t k = 0; k < fields.size(); ++k) {
    if (given[k]) continue;
    const Value* dflt = cls->Find(fields[k]);
    if (!dflt) {
      return Err(args.loc, Cat("`", cls->name, "` is missing the argument '", fields[k], "'"));
    }
    SetAttr(obj->attrs, fields[k], *dflt);
  }
  if (const Value* post = cls->Find("__post_init__"); post && post->kind == ValueKind::kFunction) {
    CallArgs none;
    none.loc = args.loc;
    absl::StatusOr<Value> r = CallFunction(*BindTo(*post, self).function, std::move(none));
    if (!r.ok()) return r.status();
  }
  return self;
}

absl::StatusOr<std::optional<Value>> Builder::ClassAttribute(const Value& v,
                                                             const std::string& attr,
                                                             SourceLoc loc) {
  const bool instance = v.kind == ValueKind::kObject;
  const ClassValue& cls = instance ? *v.object->cls : *v.klass;
  if (instance) {
    if (const Value* own = FindAttr(v.object->attrs, attr)) return std::optional<Value>(*own);
    if (attr == "__class__") return std::optional<Value>(Value::Class(v.object->cls));
  } else if (attr == "__name__") {
    return std::optional<Value>(Value::Str(cls.name));
  }
  const Value* found = cls.Find(attr);
  if (!found) return std::optional<Value>();
  if (found->kind != ValueKind::kFunction || found->function->bound_self) {
    return std::optional<Value>(*found);
  }
  switch (found->function->method) {
    case MethodKind::kStatic: return std::optional<Value>(*found);
    case MethodKind::kClass: {
      Value owner = instance ? Value::Class(v.object->cls) : v;
      return std::optional<Value>(BindTo(*found, owner));
    }
    case MethodKind::kProperty: {
      if (!instance) return std::optional<Value>(*found);
      CallArgs none;
      none.loc = loc;
      absl::StatusOr<Value> r = CallFunction(*BindTo(*found, v).function, std::move(none));
      if (!r.ok()) return r.status();
      return std::optional<Value>(*r);
    }
    case MethodKind::kPlain:
      if (!instance) return std::optional<Value>(*found);
      return std::optional<Value>(BindTo(*found, v));
  }
  return Internal("unknown method kind");
}

absl::StatusOr<Value> Builder::Super(SourceLoc loc) {
  const Frame& f = frame();
  if (!f.method_owner || !f.method_self) {
    return Err(loc, "super() is only supported without arguments inside a method");
  }
  Value r = Value::Tuple({*f.method_self});
  r.kind = ValueKind::kSuper;
  r.klass = f.method_owner;
  return r;
}

absl::StatusOr<std::optional<Value>> Builder::SuperAttribute(const Value& sup,
                                                             const std::string& attr,
                                                             SourceLoc loc) {
  // The attribute as the defining class's bases provide it, bound to self.
  const Value& self = (*sup.tuple)[0];
  for (const auto& base : sup.klass->bases) {
    const Value* found = base->Find(attr);
    if (!found) continue;
    if (found->kind != ValueKind::kFunction || found->function->bound_self) {
      return std::optional<Value>(*found);
    }
    switch (found->function->method) {
      case MethodKind::kStatic: return std::optional<Value>(*found);
      case MethodKind::kClass: {
        Value owner = self.kind == ValueKind::kObject ? Value::Class(self.object->cls) : self;
        return std::optional<Value>(BindTo(*found, owner));
      }
      case MethodKind::kProperty: {
        CallArgs none;
        none.loc = loc;
        absl::StatusOr<Value> r = CallFunction(*BindTo(*found, self).function, std::move(none));
        if (!r.ok()) return r.status();
        return std::optional<Value>(*r);
      }
      case MethodKind::kPlain: return std::optional<Value>(BindTo(*found, self));
    }
  }
  return std::optional<Value>();
}

absl::Status Builder::SetAttribute(const Value& target, const std::string& attr, const Value& v,
                                   SourceLoc loc) {
  if (target.kind == ValueKind::kObject) {
    const Value* cur = target.object->cls->Find(attr);
    if (cur && cur->kind == ValueKind::kFunction &&
        cur->function->method == MethodKind::kProperty) {
      return Err(loc, Cat("cannot assign to the property `", attr, "`"));
    }
    SetAttr(target.object->attrs, attr, v);
    return absl::OkStatus();
  }
  if (target.kind == ValueKind::kClass) {
    SetAttr(target.klass->attrs, attr, v);
    return absl::OkStatus();
  }
  return Err(loc, Cat("assigning to attributes of a ", DescribeValue(target),
                      " is not supported"));
}

}  // namespace tilec::frontend
