// Builder: statements.
#include <algorithm>
#include <utility>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/printer.h"

namespace tilec::frontend {
namespace {

ir::Stmt Body(std::vector<ir::Stmt> stmts) { return ir::Seq(std::move(stmts)); }

}  // namespace

absl::StatusOr<Flow> Builder::Exec(const Stmt& s) {
  DepthGuard depth(*this, s.loc);
  if (!depth.status().ok()) return depth.status();
  absl::Status tick = Tick(s.loc);
  if (!tick.ok()) return tick;
  switch (s.kind) {
    case StmtKind::kFunctionDef: {
      const auto& def = *s.as<FunctionDefStmt>();
      absl::StatusOr<Value> fn = MakeFunction(def, frame().env);
      if (!fn.ok()) return fn.status();
      BindName(def.name, *fn);
      return Flow::kNormal;
    }
    case StmtKind::kClassDef: {
      const auto& def = *s.as<ClassDefStmt>();
      absl::StatusOr<Value> cls = MakeClass(def, frame().env);
      if (!cls.ok()) return cls.status();
      BindName(def.name, *cls);
      return Flow::kNormal;
    }
    case StmtKind::kReturn: return ExecReturn(*s.as<ReturnStmt>());
    case StmtKind::kDelete:
      for (const ExprPtr& t : s.as<DeleteStmt>()->targets) {
        const auto* n = t->as<NameExpr>();
        if (!n) return Err(t->loc, "`del` is only supported on names");
        if (!frame().env->Erase(n->id)) {
          return Err(t->loc, Cat("name `", n->id, "` is not defined"));
        }
      }
      return Flow::kNormal;
    case StmtKind::kAssign: return ExecAssign(*s.as<AssignStmt>());
    case StmtKind::kAugAssign: return ExecAugAssign(*s.as<AugAssignStmt>());
    case StmtKind::kAnnAssign: return ExecAnnAssign(*s.as<AnnAssignStmt>());
    case StmtKind::kFor: return ExecFor(*s.as<ForStmt>());
    case StmtKind::kWhile: return ExecWhile(*s.as<WhileStmt>());
    case StmtKind::kIf: return ExecIf(*s.as<IfStmt>());
    case StmtKind::kWith: return ExecWith(*s.as<WithStmt>());
    case StmtKind::kRaise: {
      const auto& r = *s.as<RaiseStmt>();
      std::string what = "an exception was raised";
      if (r.exc) {
        const Expr* exc = r.exc.get();
        std::string type;
        if (const auto* call = exc->as<CallExpr>()) {
          if (const auto* n = call->func->as<NameExpr>()) type = n->id;
          if (!call->args.empty()) {
            absl::StatusOr<Value> msg = Eval(*call->args[0]);
            if (msg.ok()) {
              what = msg->kind == ValueKind::kStr ? msg->s : ValueRepr(*msg);
            }
          }
        } else if (const auto* n = exc->as<NameExpr>()) {
          type = n->id;
        }
        if (!type.empty()) what = Cat(type, ": ", what);
      }
      return Err(s.loc, Cat("the kernel-building code raised ", what));
    }
    case StmtKind::kTry:
      return Err(s.loc, "try statements are not supported in kernel-building code");
    case StmtKind::kAssert: return ExecAssert(*s.as<AssertStmt>());
    case StmtKind::kImport:
    case StmtKind::kImportFrom: return ExecImport(s);
    case StmtKind::kGlobal: return Err(s.loc, "`global` is not supported");
    case StmtKind::kNonlocal: return Err(s.loc, "`nonlocal` is not supported");
    case StmtKind::kExpr: {
      const auto& e = *s.as<ExprStmt>();
      absl::StatusOr<Value> v = Eval(*e.value);
      if (!v.ok()) return v.status();
      if (v->kind == ValueKind::kKernel || v->kind == ValueKind::kLoop) {
        return Err(e.loc, Cat(DescribeValue(*v), " must be used in a `",
                              v->kind == ValueKind::kKernel ? "with" : "for", "` statement"));
      }
      return Flow::kNormal;
    }
    case StmtKind::kPass: return Flow::kNormal;
    case StmtKind::kBreak:
    case StmtKind::kContinue:
      return ExecLoopControl(s.kind == StmtKind::kBreak, /*call=*/false, s.loc);
  }
  return Internal("unknown statement kind");
}

absl::StatusOr<Flow> Builder::ExecReturn(const ReturnStmt& s) {
  Value v = Value::None();
  if (s.value) {
    absl::StatusOr<Value> r = Eval(*s.value);
    if (!r.ok()) return r.status();
    v = *r;
  }
  if (blocks_.size() > frame().block_base) {
    return Err(s.loc,
               "`return` inside a kernel, a kernel loop or a runtime branch is not "
               "supported; assign a T.alloc_var inside and return it after");
  }
  frame().return_value = std::move(v);
  return Flow::kReturn;
}

absl::StatusOr<Flow> Builder::ExecAssign(const AssignStmt& s) {
  // Buffer names come from the assignment: `A_shared = T.alloc_shared(...)`.
  const auto* tuple_target = s.targets.size() == 1 ? s.targets[0]->as<TupleExpr>() : nullptr;
  const auto* tuple_value = s.value->as<TupleExpr>();
  if (tuple_target && tuple_value && tuple_target->elts.size() == tuple_value->elts.size()) {
    ValueList values;
    for (size_t k = 0; k < tuple_value->elts.size(); ++k) {
      const Expr& elt = *tuple_value->elts[k];
      if (elt.as<StarredExpr>()) {
        values.clear();
        break;
      }
      if (const auto* n = tuple_target->elts[k]->as<NameExpr>(); n && elt.as<CallExpr>()) {
        name_hint_ = n->id;
      }
      absl::StatusOr<Value> v = Eval(elt);
      name_hint_.clear();
      if (!v.ok()) return v.status();
      values.push_back(*v);
    }
    if (values.size() == tuple_value->elts.size()) {
      // Python evaluates the whole right side before the first store: a
      // runtime value that one of the stores could change (`A[0], A[1] =
      // A[1], A[0]`) is read into a local first.
      absl::Status st = SnapshotBeforeStores(tuple_target->elts, values);
      if (!st.ok()) return st;
      for (size_t k = 0; k < values.size(); ++k) {
        absl::Status st = AssignTarget(*tuple_target->elts[k], values[k]);
        if (!st.ok()) return st;
      }
      return Flow::kNormal;
    }
  }
  if (const auto* n = s.targets[0]->as<NameExpr>(); n && s.value->as<CallExpr>()) {
    name_hint_ = n->id;
  }
  absl::StatusOr<Value> v = Eval(*s.value);
  name_hint_.clear();
  if (!v.ok()) return v.status();
  for (const ExprPtr& t : s.targets) {
    absl::Status st = AssignTarget(*t, *v);
    if (!st.ok()) return st;
  }
  return Flow::kNormal;
}

absl::Status Builder::SnapshotBeforeStores(const std::vector<ExprPtr>& targets, ValueList& values) {
  if (targets.size() < 2 || !KernelSyntax() || !InKernel()) return absl::OkStatus();
  bool stores = false;
  for (const ExprPtr& t : targets) {
    if (!t->as<NameExpr>()) {
      stores = true;
    } else if (Env::Slot* slot = frame().env->LookupLocal(t->as<NameExpr>()->id)) {
      stores |= slot->value.kind == ValueKind::kBuffer && slot->value.buffer &&
                slot->value.buffer->scope == ir::Scope::kVar;
    }
  }
  if (!stores) return absl::OkStatus();
  for (size_t k = 0; k < values.size(); ++k) {
    Value& v = values[k];
    if (!IsRuntimeScalar(v)) continue;
    absl::StatusOr<ir::Expr> e = ExprOf(v, targets[k]->loc);
    if (!e.ok()) return e.status();
    absl::StatusOr<Value> local = LetBound(Cat("value", k), *e, targets[k]->loc);
    if (!local.ok()) return local.status();
    v = *local;
  }
  return absl::OkStatus();
}

absl::Status Builder::AssignTarget(const Expr& target, const Value& v) {
  if (const auto* n = target.as<NameExpr>()) return AssignName(n->id, v, n->loc);
  const std::vector<ExprPtr>* elts = nullptr;
  if (const auto* t = target.as<TupleExpr>()) elts = &t->elts;
  if (const auto* l = target.as<ListExpr>()) elts = &l->elts;
  if (elts) {
    if (v.kind == ValueKind::kKernel) {
      return Err(target.loc, "bind T.Kernel block indices with `with T.Kernel(...) as (bx, by):`");
    }
    if (!v.IsSequence()) {
      if (v.kind == ValueKind::kExpr || v.kind == ValueKind::kElement) {
        return NotStatic(v, target.loc, "unpacking");
      }
      return Err(target.loc, Cat("cannot unpack a ", DescribeValue(v)));
    }
    const ValueList& items = v.Items();
    int star = -1;
    for (size_t k = 0; k < elts->size(); ++k) {
      if ((*elts)[k]->as<StarredExpr>()) {
        if (star >= 0) return Err((*elts)[k]->loc, "multiple starred targets");
        star = static_cast<int>(k);
      }
    }
    size_t fixed = elts->size() - (star >= 0 ? 1 : 0);
    if ((star < 0 && items.size() != elts->size()) || (star >= 0 && items.size() < fixed)) {
      return Err(target.loc,
                 Cat("cannot unpack ", items.size(), " values into ", elts->size(), " targets"));
    }
    size_t rest = items.size() - fixed;
    size_t pos = 0;
    for (size_t k = 0; k < elts->size(); ++k) {
      if (static_cast<int>(k) == star) {
        ValueList middle(items.begin() + pos, items.begin() + pos + rest);
        pos += rest;
        absl::Status st =
            AssignTarget(*(*elts)[k]->as<StarredExpr>()->value, Value::List(std::move(middle)));
        if (!st.ok()) return st;
        continue;
      }
      absl::Status st = AssignTarget(*(*elts)[k], items[pos++]);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (const auto* sub = target.as<SubscriptExpr>()) {
    absl::StatusOr<Value> container = Eval(*sub->value);
    if (!container.ok()) return container.status();
    if (container->kind == ValueKind::kBuffer) {
      absl::StatusOr<Value> where = IndexBuffer(container->buffer, *sub);
      if (!where.ok()) return where.status();
      if (where->kind == ValueKind::kRegion &&
          (v.kind == ValueKind::kRegion || v.kind == ValueKind::kBuffer || IsRuntimeScalar(v) ||
           v.IsNumber())) {
        // `A[0, 4:8] = b` (b a region of the same shape): T.copy(b, A[0, 4:8]);
        // `A[0, 4:8] = x` (a scalar): T.fill(A[0, 4:8], x).
        const bool copy = v.kind == ValueKind::kRegion || v.kind == ValueKind::kBuffer;
        // Inside T.Parallel each iteration moves its own few elements (`B[i,
        // T.Ramp(j * 2, 1, 2)] = A[i, T.Ramp(j * 2, 1, 2)]`): element by element.
        if (parallel_depth_ > 0) {
          std::optional<absl::Status> st = StoreSmallRegion(*where->region, v, target.loc);
          if (st) return *st;
        }
        CallArgs args;
        args.loc = target.loc;
        args.positional.push_back(Arg{copy ? v : *where, target.loc});
        args.positional.push_back(Arg{copy ? *where : v, target.loc});
        absl::StatusOr<Value> r =
            CallValue(Value::Builtin(copy ? "T.copy" : "T.fill"), std::move(args));
        return r.ok() ? absl::OkStatus() : r.status();
      }
      if (where->kind != ValueKind::kElement) {
        return Err(sub->lbracket_loc,
                   "assigning to a buffer slice is not supported here; assign a region of the "
                   "same shape or a scalar, or use T.fill, T.copy or a T.Parallel loop");
      }
      return StoreElement(where->element->buffer, where->element->indices, v, target.loc);
    }
    if (container->kind == ValueKind::kList || container->kind == ValueKind::kDict) {
      if (sub->items.size() != 1 || sub->items[0].is_slice || !sub->items[0].index) {
        return Err(sub->lbracket_loc, "only single-index assignment is supported here");
      }
      absl::StatusOr<Value> key = Eval(*sub->items[0].index);
      if (!key.ok()) return key.status();
      if (container->kind == ValueKind::kDict) {
        for (auto& item : *container->dict) {
          if (StagingEquals(item.first, *key).value_or(false)) {
            item.second = v;
            return absl::OkStatus();
          }
        }
        if (container->dict->size() >= kMaxDictItems)
          return Err(target.loc, "the dict is too large");
        container->dict->emplace_back(*key, v);
        return absl::OkStatus();
      }
      absl::StatusOr<int64_t> k = StaticInt(*key, sub->items[0].loc, "a list index");
      if (!k.ok()) return k.status();
      int64_t n = static_cast<int64_t>(container->list->size());
      int64_t at = *k < 0 ? *k + n : *k;
      if (at < 0 || at >= n) return Err(sub->items[0].loc, "list assignment index out of range");
      (*container->list)[at] = v;
      return absl::OkStatus();
    }
    return Err(target.loc, Cat("cannot assign into a ", DescribeValue(*container)));
  }
  if (const auto* attr = target.as<AttributeExpr>()) {
    absl::StatusOr<Value> obj = Eval(*attr->value);
    if (!obj.ok()) return obj.status();
    return SetAttribute(*obj, attr->attr, v, attr->attr_loc);
  }
  return Err(target.loc, "unsupported assignment target");
}

absl::Status Builder::StoreElement(const ir::Buffer& b, std::vector<ir::Expr> indices,
                                   const Value& v, SourceLoc loc) {
  if (!v.IsNumber() && !IsRuntimeScalar(v)) {
    return Err(
        loc,
        Cat("cannot store a ", DescribeValue(v), " into an element of `", b->name, "`",
            v.kind == ValueKind::kBuffer || v.kind == ValueKind::kRegion ? "; use T.copy" : ""));
  }
  // TileLang (TVM) casts the stored value to the buffer's dtype.
  absl::StatusOr<ir::Expr> value = ExprAs(v, b->dtype, loc);
  if (!value.ok()) return value.status();
  return Emit(ir::Store(b, std::move(indices), *value), loc, Cat("a store to `", b->name, "`"));
}

absl::StatusOr<Flow> Builder::ExecAugAssign(const AugAssignStmt& s) {
  absl::StatusOr<Value> rhs = Eval(*s.value);
  if (!rhs.ok()) return rhs.status();
  if (const auto* n = s.target->as<NameExpr>()) {
    absl::StatusOr<Value> cur = EvalName(*n);
    if (!cur.ok()) return cur.status();
    if (cur->kind == ValueKind::kList && s.op == BinOpKind::kAdd) {
      ValueList items;
      absl::StatusOr<Value> it = Iterable(*rhs, s.value->loc, &items);
      if (!it.ok()) return it.status();
      if (cur->list->size() + items.size() > kMaxStagingItems) {
        return Err(s.op_loc, "the list is too large");
      }
      cur->list->insert(cur->list->end(), items.begin(), items.end());
      return Flow::kNormal;
    }
    absl::StatusOr<Value> next = At(ApplyBinOp(s.op, *cur, *rhs), s.op_loc);
    if (!next.ok()) return next.status();
    absl::Status st = AssignName(n->id, *next, n->loc);
    if (!st.ok()) return st;
    return Flow::kNormal;
  }
  if (const auto* sub = s.target->as<SubscriptExpr>()) {
    absl::StatusOr<Value> container = Eval(*sub->value);
    if (!container.ok()) return container.status();
    if (container->kind == ValueKind::kBuffer) {
      absl::StatusOr<Value> where = IndexBuffer(container->buffer, *sub);
      if (!where.ok()) return where.status();
      if (where->kind != ValueKind::kElement) {
        return Err(sub->lbracket_loc, "augmented assignment to a buffer slice is not supported");
      }
      absl::StatusOr<Value> next = At(ApplyBinOp(s.op, *where, *rhs), s.op_loc);
      if (!next.ok()) return next.status();
      absl::Status st =
          StoreElement(where->element->buffer, where->element->indices, *next, s.target->loc);
      if (!st.ok()) return st;
      return Flow::kNormal;
    }
    absl::StatusOr<Value> cur = Eval(*s.target);
    if (!cur.ok()) return cur.status();
    absl::StatusOr<Value> next = At(ApplyBinOp(s.op, *cur, *rhs), s.op_loc);
    if (!next.ok()) return next.status();
    absl::Status st = AssignTarget(*s.target, *next);
    if (!st.ok()) return st;
    return Flow::kNormal;
  }
  if (s.target->as<AttributeExpr>()) {
    absl::StatusOr<Value> cur = Eval(*s.target);
    if (!cur.ok()) return cur.status();
    absl::StatusOr<Value> next = At(ApplyBinOp(s.op, *cur, *rhs), s.op_loc);
    if (!next.ok()) return next.status();
    absl::Status st = AssignTarget(*s.target, *next);
    if (!st.ok()) return st;
    return Flow::kNormal;
  }
  return Err(s.target->loc, "unsupported target of an augmented assignment");
}

absl::StatusOr<Flow> Builder::ExecAnnAssign(const AnnAssignStmt& s) {
  const auto* n = s.target->as<NameExpr>();
  bool pending = n && std::find(pending_tensors_.begin(), pending_tensors_.end(), n->id) !=
                          pending_tensors_.end();
  // `x: ann = value` as a plain assignment (nothing without a value).
  auto assign = [&]() -> absl::StatusOr<Flow> {
    if (!s.value) return Flow::kNormal;
    absl::StatusOr<Value> v = Eval(*s.value);
    if (!v.ok()) return v.status();
    absl::Status st = AssignTarget(*s.target, *v);
    if (!st.ok()) return st;
    return Flow::kNormal;
  };
  // Python code never evaluates the annotation of a local variable
  // (`import_source: Optional[str] = None`).
  if (!pending && !KernelSyntax() && frame().name != "<module>") return assign();
  absl::StatusOr<Value> ann = Eval(*s.annotation);
  if (!ann.ok()) return ann.status();
  if (ann->kind == ValueKind::kTensorType) {
    if (!n) return Err(s.target->loc, "a T.Tensor annotation needs a parameter name");
    if (!pending) {
      if (tensor_params_.count(n->id)) {
        return Err(s.target->loc, Cat("tensor parameter `", n->id, "` is annotated twice"));
      }
      return Err(s.target->loc, Cat("`", n->id,
                                    ": T.Tensor(...)` declares a tensor parameter, "
                                    "but `",
                                    frame().name, "` has no parameter `", n->id, "`"));
    }
    if (s.value) return Err(s.value->loc, "a tensor parameter annotation takes no value");
    absl::Status st = DeclareTensorParam(n->id, *ann->tensor_type, s.annotation->loc);
    if (!st.ok()) return st;
    pending_tensors_.erase(std::find(pending_tensors_.begin(), pending_tensors_.end(), n->id));
    return Flow::kNormal;
  }
  if (ann->kind == ValueKind::kDType) {
    if (pending) {
      if (s.value) return Err(s.value->loc, "a scalar parameter annotation takes no value");
      ir::Var var = ir::MakeVar(n->id, ann->dtype);
      scalar_params_[n->id] = var;
      pending_tensors_.erase(std::find(pending_tensors_.begin(), pending_tensors_.end(), n->id));
      BindName(n->id, Value::Runtime(var));
      return Flow::kNormal;
    }
    if (n && KernelSyntax() && InKernel()) {
      // `x: T.float32 = v` declares a scalar variable (an alloc_var), as in TileLang.
      ir::Buffer b = ir::MakeBuffer(n->id, ann->dtype, {ir::IntImm(1)}, ir::Scope::kVar);
      ir::Expr init;
      Value v;
      if (s.value) {
        absl::StatusOr<Value> r = Eval(*s.value);
        if (!r.ok()) return r.status();
        v = *r;
        if (v.IsNumber()) {
          absl::StatusOr<ir::Expr> lit = ExprAs(v, ann->dtype, s.value->loc);
          if (!lit.ok()) return lit.status();
          init = *lit;
        }
      }
      absl::Status st = Emit(ir::Allocate(b, init), s.loc, "a variable declaration");
      if (!st.ok()) return st;
      BindName(n->id, Value::BufferRef(b));
      if (s.value && !init) {
        absl::Status st2 = StoreElement(b, {ir::IntImm(0)}, v, s.value->loc);
        if (!st2.ok()) return st2;
      }
      return Flow::kNormal;
    }
  }
  if (pending) {
    return Err(s.annotation->loc,
               Cat("the annotation of parameter `", n->id,
                   "` must be T.Tensor(shape, dtype) or a scalar type, got ", DescribeValue(*ann)));
  }
  return assign();
}

absl::StatusOr<Flow> Builder::ExecFor(const ForStmt& s) {
  if (s.is_async) return Err(s.loc, "async for is not supported");
  if (InPrimFunc() && !InKernel() && IsThreadBindingLoop(s)) return ExecThreadBindingKernel(s);
  absl::StatusOr<Value> iter = Eval(*s.iter);
  if (!iter.ok()) return iter.status();
  if (iter->kind == ValueKind::kLoop) return ExecIrLoop(s, *iter->loop);
  if (iter->kind == ValueKind::kGenerator) return ExecGeneratorLoop(s, *iter);
  ValueList items;
  absl::StatusOr<Value> it = Iterable(*iter, s.iter->loc, &items);
  if (!it.ok()) return it.status();
  return ExecStagingLoop(s, items);
}

absl::StatusOr<Flow> Builder::ExecStagingLoop(const ForStmt& s, const ValueList& items) {
  frame().loops.push_back(Enclosing::kPythonLoop);
  bool broke = false;
  for (const Value& item : items) {
    absl::Status tick = Tick(s.loc);
    if (!tick.ok()) return tick;
    absl::Status st = AssignTarget(*s.target, item);
    if (!st.ok()) return st;
    absl::StatusOr<Flow> flow = ExecBlock(s.body);
    if (!flow.ok()) return flow;
    if (*flow == Flow::kBreak) {
      broke = true;
      break;
    }
    if (*flow == Flow::kReturn) {
      frame().loops.pop_back();
      return flow;
    }
  }
  frame().loops.pop_back();
  if (!broke && !s.orelse.empty()) return ExecBlock(s.orelse);
  return Flow::kNormal;
}

absl::StatusOr<Flow> Builder::ExecGeneratorLoop(const ForStmt& s, const Value& gen) {
  // Items are taken one at a time: after a `break`, the rest stays in the
  // generator for the next loop over it.
  frame().loops.push_back(Enclosing::kPythonLoop);
  bool broke = false;
  while (*gen.cursor < gen.list->size()) {
    absl::Status tick = Tick(s.loc);
    if (!tick.ok()) return tick;
    Value item = (*gen.list)[(*gen.cursor)++];
    absl::Status st = AssignTarget(*s.target, item);
    if (!st.ok()) return st;
    absl::StatusOr<Flow> flow = ExecBlock(s.body);
    if (!flow.ok()) return flow;
    if (*flow == Flow::kBreak) {
      broke = true;
      break;
    }
    if (*flow == Flow::kReturn) {
      frame().loops.pop_back();
      return flow;
    }
  }
  frame().loops.pop_back();
  if (!broke && !s.orelse.empty()) return ExecBlock(s.orelse);
  return Flow::kNormal;
}

absl::StatusOr<Flow> Builder::ExecIrLoop(const ForStmt& s, const LoopSpec& loop) {
  std::string_view kind_name = ir::ForKindName(loop.kind);
  if (!InPrimFunc() || !InKernel()) {
    return Err(s.loc, Cat("a ", kind_name, " loop must be inside a T.Kernel block"));
  }
  if (!s.orelse.empty()) return Err(s.loc, "`for ... else` is not supported for kernel loops");
  size_t n = loop.extents.size();
  std::vector<const NameExpr*> names;
  if (const auto* name = s.target->as<NameExpr>()) {
    names.push_back(name);
  } else if (const auto* tup = s.target->as<TupleExpr>()) {
    for (const ExprPtr& elt : tup->elts) {
      const auto* en = elt->as<NameExpr>();
      if (!en) return Err(elt->loc, "a kernel loop variable must be a plain name");
      names.push_back(en);
    }
  } else {
    return Err(s.target->loc, "a kernel loop variable must be a plain name");
  }
  if (names.size() != n) {
    return Err(s.target->loc,
               Cat("this loop has ", n, n == 1 ? " dimension" : " dimensions", " but ",
                   names.size(), names.size() == 1 ? " variable" : " variables"));
  }
  if (loop.persistent) return ExecPersistentLoop(s, loop, names);
  std::vector<ir::Var> vars;
  PushBlock();
  for (size_t d = 0; d < n; ++d) {
    ir::DType t =
        loop.extents[d]->dtype == ir::DType::kInt64 ? ir::DType::kInt64 : ir::DType::kInt32;
    ir::Var var = ir::MakeVar(names[d]->id, t);
    vars.push_back(var);
    if (loop.step) {
      ir::Expr step = CastTo(t, loop.step);
      ir::Expr idx = SimplifyIndex(ir::Binary(ir::BinaryOp::kAdd, CastTo(t, loop.mins[d]),
                                              ir::Binary(ir::BinaryOp::kMul, var, step)));
      BindName(names[d]->id, Value::Runtime(idx));
    } else {
      BindName(names[d]->id, Value::Runtime(var));
    }
  }
  const bool parallel = loop.kind == ir::ForKind::kParallel;
  OpenIrLoop(loop.kind == ir::ForKind::kSerial || loop.kind == ir::ForKind::kUnrolled
                 ? ""
                 : Cat("a T.", kind_name, " loop"));
  parallel_depth_ += parallel;
  const int64_t draws_before = parallel_draws_;
  absl::StatusOr<Flow> flow = ExecBlock(s.body);
  parallel_depth_ -= parallel;
  // The one thread of its kernel draws random numbers in this T.Parallel:
  // it runs the iterations in order, as a serial loop.
  const ir::ForKind kind =
      parallel && parallel_draws_ != draws_before ? ir::ForKind::kSerial : loop.kind;
  const LoopExit exit = CloseIrLoop();
  std::vector<ir::Stmt> stmts = PopBlock();
  if (!flow.ok()) return flow;
  // order= and stage= name the statements the pipeline schedules: every
  // statement of the body except the lets of its Python locals.
  size_t scheduled = 0;
  for (const ir::Stmt& st : stmts) scheduled += st && st->kind != ir::StmtKind::kLet ? 1 : 0;
  absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> schedule =
      PipelineSchedule(s.loc, loop, scheduled);
  if (!schedule.ok()) return schedule.status();
  const auto& [order, stage] = *schedule;
  absl::StatusOr<ir::Stmt> with_exits = ApplyLoopExits(exit, Body(std::move(stmts)), s.loc);
  if (!with_exits.ok()) return with_exits.status();
  ir::Stmt body = *std::move(with_exits);
  // A T.Parallel extent known only at run time but bounded by a constant
  // (`T.Parallel(T.min(valid_len, 512))`): the loop runs to the bound and
  // its body is guarded by the extent.
  std::vector<ir::Expr> extents = loop.extents;
  if (kind == ir::ForKind::kParallel && !loop.step) {
    ir::Expr guard;
    for (size_t d = 0; d < n; ++d) {
      if (ir::AsConstInt(extents[d])) continue;
      std::optional<int64_t> bound = ConstUpperBound(extents[d]);
      if (!bound) {
        // Constant once its tile parameters are bound; else refused here,
        // where the loop is (layout inference would name only the kernel).
        if (UnboundParamIn(extents[d], true)) continue;
        return Err(s.iter->loc, Cat("T.Parallel loops need a constant extent, or one bounded "
                                    "by a constant (T.Parallel(T.min(n, 512))); this one is ",
                                    ir::PrintExpr(extents[d])));
      }
      ir::Expr in_range =
          ir::Binary(ir::BinaryOp::kLt, vars[d], CastTo(vars[d]->dtype, extents[d]));
      guard = guard ? ir::Binary(ir::BinaryOp::kAnd, guard, in_range) : in_range;
      extents[d] = ir::IntImm(std::max<int64_t>(*bound, 0), vars[d]->dtype);
    }
    if (guard) body = ir::If(guard, body);
  }
  for (size_t d = n; d-- > 0;) {
    auto f = std::make_shared<ir::ForNode>();
    f->var = vars[d];
    f->min = loop.step ? ir::IntImm(0, vars[d]->dtype) : loop.mins[d];
    f->extent = extents[d];
    f->kind = kind;
    if (d == 0) {
      f->num_stages = loop.num_stages;
      f->order = order;
      f->stage = stage;
    }
    f->body = std::move(body);
    body = std::move(f);
  }
  absl::Status st = Emit(std::move(body), s.loc, Cat("a ", kind_name, " loop"));
  if (!st.ok()) return st;
  return Flow::kNormal;
}

// A `while` whose condition is a runtime value in kernel code: one loop in
// the IR, its condition re-evaluated before every iteration.
absl::StatusOr<Flow> Builder::ExecRuntimeWhile(const WhileStmt& s, const Value& cond) {
  constexpr std::string_view kUse = "the condition of this `while`";
  if (!IsRuntimeScalar(cond)) return NotStatic(cond, s.test->loc, kUse);
  if (!InKernel()) return Err(s.test->loc, "a runtime `while` must be inside a T.Kernel block");
  if (!s.orelse.empty()) {
    return Err(s.loc, "`while ... else` is not supported when the condition is a runtime value");
  }
  absl::StatusOr<ir::Expr> c = ExprOf(cond, s.test->loc);
  if (!c.ok()) return c.status();
  if (!HasRuntimeVars(*c) && UnboundParamIn(*c, /*skip_shape_params=*/true)) {
    return NotStatic(cond, s.test->loc, kUse);
  }
  PushBlock();
  OpenIrLoop("");
  absl::StatusOr<Flow> flow = ExecBlock(s.body);
  const LoopExit exit = CloseIrLoop();
  std::vector<ir::Stmt> stmts = PopBlock();
  if (!flow.ok()) return flow.status();
  // The condition is built once: names it reads must keep their values, and
  // what changes between iterations must be buffer elements (T.alloc_var).
  absl::StatusOr<Value> again = Eval(*s.test);
  if (!again.ok()) return again.status();
  absl::StatusOr<ir::Expr> c2 =
      IsRuntimeScalar(*again) ? ExprOf(*again, s.test->loc) : absl::StatusOr<ir::Expr>(nullptr);
  if (!c2.ok() || *c2 == nullptr || ir::PrintExpr(*c2) != ir::PrintExpr(*c)) {
    return Err(s.test->loc,
               "the condition of this runtime `while` reads a name that its body rebinds; the "
               "condition is evaluated by the kernel with the values it had before the loop. "
               "Keep loop state in buffer elements (T.alloc_var / T.alloc_local) and assign "
               "to them (x[0] = ...)");
  }
  absl::StatusOr<ir::Stmt> loop = WhileWithExits(exit, AsBool(*c), Body(std::move(stmts)), s.loc);
  if (!loop.ok()) return loop.status();
  absl::Status st = Emit(*std::move(loop), s.loc, "a runtime `while`");
  if (!st.ok()) return st;
  return Flow::kNormal;
}

absl::StatusOr<Flow> Builder::ExecWhile(const WhileStmt& s) {
  if (KernelSyntax()) {
    absl::StatusOr<Value> cond = Eval(*s.test);
    if (!cond.ok()) return cond.status();
    if (!Truthy(*cond).has_value()) return ExecRuntimeWhile(s, *cond);
  }
  frame().loops.push_back(Enclosing::kPythonLoop);
  bool broke = false;
  for (int64_t iterations = 0;; ++iterations) {
    absl::Status tick = Tick(s.loc);
    if (!tick.ok()) return tick;
    if (iterations >= kMaxWhileIterations) {
      return Err(s.loc, Cat("this `while` loop ran ", kMaxWhileIterations,
                            " iterations at staging time without ending (its condition "
                            "never became false?)"));
    }
    absl::StatusOr<Value> cond = Eval(*s.test);
    if (!cond.ok()) return cond.status();
    absl::StatusOr<bool> t = StaticBool(*cond, s.test->loc, "the condition of this `while`");
    if (!t.ok()) return t.status();
    if (!*t) break;
    absl::StatusOr<Flow> flow = ExecBlock(s.body);
    if (!flow.ok()) return flow;
    if (*flow == Flow::kBreak) {
      broke = true;
      break;
    }
    if (*flow == Flow::kReturn) {
      frame().loops.pop_back();
      return flow;
    }
  }
  frame().loops.pop_back();
  if (!broke && !s.orelse.empty()) return ExecBlock(s.orelse);
  return Flow::kNormal;
}

absl::StatusOr<Flow> Builder::ExecIf(const IfStmt& s) {
  return ExecIfParts(*s.test, s.body, s.orelse, s.loc);
}

absl::StatusOr<Flow> Builder::ExecIfParts(const Expr& test, const StmtList& body,
                                          const StmtList& orelse, SourceLoc loc) {
  absl::StatusOr<Value> cond = Eval(test);
  if (!cond.ok()) return cond.status();
  if (std::optional<bool> t = Truthy(*cond)) return ExecBlock(*t ? body : orelse);
  constexpr std::string_view kUse = "the condition of this `if`";
  if (!KernelSyntax() || !IsRuntimeScalar(*cond)) return NotStatic(*cond, test.loc, kUse);
  absl::StatusOr<ir::Expr> c = ExprOf(*cond, test.loc);
  if (!c.ok()) return c.status();
  if (!HasRuntimeVars(*c)) {
    // Only parameters: a static `if` whose value is not known yet.
    if (std::optional<std::string> p = UnboundParamIn(*c, /*skip_shape_params=*/true)) {
      return NotStatic(*cond, test.loc, kUse);
    }
  }
  if (!InKernel()) return Err(test.loc, "a runtime `if` must be inside a T.Kernel block");
  ir::Expr cond_expr = AsBool(*c);
  auto branch = [&](const StmtList& body) -> absl::StatusOr<ir::Stmt> {
    PushBlock();
    frame().loops.push_back(Enclosing::kBranch);
    absl::StatusOr<Flow> flow = ExecBlock(body);
    frame().loops.pop_back();
    std::vector<ir::Stmt> stmts = PopBlock();
    if (!flow.ok()) return flow.status();
    return Body(std::move(stmts));
  };
  absl::StatusOr<ir::Stmt> then_case = branch(body);
  if (!then_case.ok()) return then_case.status();
  ir::Stmt else_case;
  if (!orelse.empty()) {
    absl::StatusOr<ir::Stmt> e = branch(orelse);
    if (!e.ok()) return e.status();
    else_case = *e;
  }
  absl::Status st = Emit(ir::If(cond_expr, *then_case, else_case), loc, "a runtime `if`");
  if (!st.ok()) return st;
  return Flow::kNormal;
}

absl::StatusOr<Flow> Builder::ExecImport(const Stmt& s) {
  if (const auto* imp = s.as<ImportStmt>()) {
    for (const ImportAlias& al : imp->names) {
      if (!al.asname.empty()) {
        BindName(al.asname, Value::Module(al.name));
      } else {
        std::string top = al.name.substr(0, al.name.find('.'));
        BindName(top, Value::Module(top));
      }
    }
    return Flow::kNormal;
  }
  const auto& from = *s.as<ImportFromStmt>();
  for (const ImportAlias& al : from.names) {
    if (al.name == "*") return Err(al.loc, "`from ... import *` is not supported inside functions");
    absl::StatusOr<Value> v =
        from.level > 0 ? absl::StatusOr<Value>(Value::Module(Cat(".", from.module, ".", al.name)))
                       : ImportValue(from.module, al.name, al.loc);
    if (!v.ok()) return v.status();
    BindName(al.asname.empty() ? al.name : al.asname, *v);
  }
  return Flow::kNormal;
}

}  // namespace tilec::frontend
