// `assert`: checked at staging time when its condition is known then;
// skipped while it reads tile parameters left unbound; kept as a requirement
// the runtime and the interpreter check at launch when it reads dynamic
// sizes only (ir::Requirement); refused on any other run-time value.
#include "compiler/frontend/builder.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/limits.h"

namespace tilec::frontend {

absl::StatusOr<Flow> Builder::ExecAssert(const AssertStmt& s) {
  absl::StatusOr<Value> cond = Eval(*s.test);
  if (!cond.ok()) return cond.status();
  if (std::optional<bool> t = Truthy(*cond)) {
    if (*t) return Flow::kNormal;
    std::string msg = "assertion failed";
    if (s.msg) {
      absl::StatusOr<Value> m = Eval(*s.msg);
      if (!m.ok()) return m.status();
      msg += Cat(": ", m->kind == ValueKind::kStr ? m->s : ValueRepr(*m));
    }
    return Err(s.loc, msg);
  }
  if (cond->kind == ValueKind::kExpr && !HasRuntimeVars(cond->expr) &&
      UnboundParamIn(cond->expr, false)) {
    // A constraint on parameters left unbound (`assert block_M % 16 == 0`):
    // it can only be checked once they are bound, so it is skipped here.
    return Flow::kNormal;
  }
  if (cond->kind == ValueKind::kExpr && !HasRuntimeVars(cond->expr) &&
      cond->expr->dtype == ir::DType::kBool) {
    // Only dynamic sizes (T.dynamic, T.dyn): the runtime checks it at launch.
    std::string msg = Cat("assert at line ", s.loc.line);
    if (s.msg) {
      absl::StatusOr<Value> m = Eval(*s.msg);
      if (!m.ok()) return m.status();
      msg = m->kind == ValueKind::kStr ? m->s : ValueRepr(*m);
    }
    for (char& c : msg) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    if (msg.size() > ir::kMaxRequirementMessage) msg.resize(ir::kMaxRequirementMessage);
    if (requirements_.size() >= ir::kMaxRequirements) {
      return Err(s.loc, Cat("more than ", ir::kMaxRequirements,
                            " asserts on dynamic sizes; tilec checks at most that many at launch"));
    }
    requirements_.push_back(ir::Requirement{cond->expr, std::move(msg)});
    return Flow::kNormal;
  }
  return Err(s.loc,
             "an assert on a runtime value is not supported; tilec checks asserts at "
             "staging time, and at launch those that read only dynamic sizes");
}

}  // namespace tilec::frontend
