// Builder: blocks of statements, and `break` / `continue` in kernel loops
// (and T.loop_break()).
//
// The IR has no jump: a kernel loop that breaks or continues owns an int32
// variable, its exit flag (0: go on, 1: continue, 2: break), allocated before
// the loop with 0. A break/continue sets it; the statements after one that
// may have set it run under `flag == 0`, in every block up to the loop body;
// an iteration begins by clearing a continue and does nothing once the flag
// says break (a `while` stops). The flag is an ordinary T.alloc_var, so the
// rules for runtime branches hold as written: in per-thread code each thread
// has its own, and a tile operator or barrier under a condition that differs
// between threads is refused as it is anywhere else.
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/builder.h"
#include "compiler/frontend/str_util.h"

namespace tilec::frontend {
namespace {

constexpr int64_t kGoOn = 0;
constexpr int64_t kContinue = 1;
constexpr int64_t kBreak = 2;

ir::Expr FlagCompare(const ir::Buffer& flag, ir::BinaryOp op, int64_t v) {
  return ir::Binary(op, ir::Load(flag, {ir::IntImm(0)}), ir::IntImm(v));
}

ir::Stmt SetFlag(const ir::Buffer& flag, int64_t v) {
  return ir::Store(flag, {ir::IntImm(0)}, ir::IntImm(v));
}

}  // namespace

absl::StatusOr<Flow> Builder::ExecBlock(const StmtList& body) { return ExecBlockFrom(body, 0); }

absl::StatusOr<Flow> Builder::ExecBlockFrom(const StmtList& body, size_t begin) {
  for (size_t k = begin; k < body.size(); ++k) {
    if (!body[k]) return Internal("null statement");
    const int exits = LoopExitCount();
    absl::StatusOr<Flow> flow = Exec(*body[k]);
    if (!flow.ok() || *flow != Flow::kNormal) return flow;
    // A break/continue of the enclosing kernel loop may have run.
    if (k + 1 < body.size() && LoopExitCount() != exits) return ExecAfterLoopExit(body, k + 1);
  }
  return Flow::kNormal;
}

void Builder::OpenIrLoop(std::string refusal) {
  frame().loops.push_back(Enclosing::kIrLoop);
  LoopExit e;
  e.refusal = std::move(refusal);
  frame().loop_exits.push_back(std::move(e));
}

Builder::LoopExit Builder::CloseIrLoop() {
  frame().loops.pop_back();
  LoopExit e = std::move(frame().loop_exits.back());
  frame().loop_exits.pop_back();
  return e;
}

int Builder::LoopExitCount() {
  if (!HasFrame() || frame().loop_exits.empty()) return -1;
  return frame().loop_exits.back().exits;
}

absl::StatusOr<Flow> Builder::ExecLoopControl(bool is_break, bool call, SourceLoc loc) {
  const std::string word = call ? "T.loop_break()" : Cat("`", is_break ? "break" : "continue", "`");
  const std::vector<Enclosing>& loops = frame().loops;
  bool under_branch = false;
  for (size_t i = loops.size(); i-- > 0;) {
    switch (loops[i]) {
      case Enclosing::kBranch: under_branch = true; continue;
      case Enclosing::kPythonLoop:
        if (call) {
          return Err(loc,
                     "T.loop_break() ends a kernel loop (T.serial, range in kernel code); "
                     "the innermost loop here is a Python loop: use `break`");
        }
        if (under_branch) {
          return Err(loc, Cat(word,
                              " under a runtime condition cannot end a Python loop (it runs at "
                              "staging time); loop with T.serial to make it a kernel loop"));
        }
        return is_break ? Flow::kBreak : Flow::kContinue;
      case Enclosing::kKernel:
        return Err(loc, Cat(word, " inside a T.Kernel cannot end a loop outside it"));
      case Enclosing::kIrLoop: {
        LoopExit& e = frame().loop_exits.back();
        if (!e.refusal.empty())
          return Err(loc, Cat(word, " inside ", e.refusal, " is not supported"));
        if (!e.flag) {
          e.flag = ir::MakeBuffer("loop_exit", ir::DType::kInt32, {ir::IntImm(1)}, ir::Scope::kVar);
        }
        (is_break ? e.breaks : e.continues) = true;
        ++e.exits;
        absl::Status st = Emit(SetFlag(e.flag, is_break ? kBreak : kContinue), loc, word);
        if (!st.ok()) return st;
        return Flow::kNormal;
      }
    }
  }
  return Err(loc, Cat(word, " outside a loop"));
}

absl::StatusOr<Flow> Builder::ExecAfterLoopExit(const StmtList& body, size_t begin) {
  const ir::Buffer flag = frame().loop_exits.back().flag;
  if (!flag) return Internal("a kernel loop's exit count changed without its flag");
  PushBlock();
  frame().loops.push_back(Enclosing::kBranch);
  absl::StatusOr<Flow> flow = ExecBlockFrom(body, begin);
  frame().loops.pop_back();
  std::vector<ir::Stmt> stmts = PopBlock();
  if (!flow.ok()) return flow;
  absl::Status st =
      Emit(ir::If(FlagCompare(flag, ir::BinaryOp::kEq, kGoOn), ir::Seq(std::move(stmts))),
           body[begin]->loc, "the statements after a break/continue");
  if (!st.ok()) return st;
  return flow;
}

absl::StatusOr<ir::Stmt> Builder::ApplyLoopExits(const LoopExit& e, ir::Stmt body, SourceLoc loc,
                                                 bool skip_after_break) {
  if (!e.flag) return body;
  absl::Status st = Emit(ir::Allocate(e.flag, ir::IntImm(kGoOn)), loc, "a kernel loop's exit flag");
  if (!st.ok()) return st;
  if (e.continues) body = ir::Seq({SetFlag(e.flag, kGoOn), std::move(body)});
  if (e.breaks && skip_after_break) {
    body = ir::If(FlagCompare(e.flag, ir::BinaryOp::kNe, kBreak), std::move(body));
  }
  return body;
}

absl::StatusOr<ir::Stmt> Builder::WhileWithExits(const LoopExit& e, ir::Expr cond, ir::Stmt body,
                                                 SourceLoc loc) {
  absl::StatusOr<ir::Stmt> b = ApplyLoopExits(e, std::move(body), loc, /*skip_after_break=*/false);
  if (!b.ok()) return b;
  body = *std::move(b);
  if (!e.breaks) return ir::While(std::move(cond), std::move(body));
  // The condition is not evaluated once the loop has broken, as in Python.
  return ir::While(FlagCompare(e.flag, ir::BinaryOp::kNe, kBreak),
                   ir::If(std::move(cond), std::move(body), SetFlag(e.flag, kBreak)));
}

}  // namespace tilec::frontend
