// Which values of a kernel differ between the threads of a block.
//
// A kernel that reads the thread index (`T.get_thread_binding()`, the call
// `get_thread_binding`) runs per-thread code: every thread of the block
// executes the kernel body, each with its own thread index, its own
// T.alloc_local / T.alloc_var buffers and its own values of the names bound
// from them; tile operators (T.copy, T.gemm, T.Parallel nests, ...) remain
// collective, run once by the block.
//
// ThreadDependence says which variables and statements of such a kernel are
// per-thread: a variable is thread-dependent when its value (a let) or its
// range (a loop) reads the thread index, a thread-dependent variable or a
// thread-private buffer (local or var scope). A statement is per-thread when
// it mentions any of these anywhere inside it; it is divergent when its own
// control (an if's condition, a loop's bounds) is thread-dependent.
//
// A thread-private buffer can still hold the same value in every thread:
// the kernel's threads run every statement, so a variable assigned only
// values the same in every thread (constants, block indices, shared or
// global elements at such indices, other such variables), outside control
// that differs between threads, is uniform (`n = S[0]` after a barrier, a
// loop-exit flag set under `if n <= 0:`). Differs() says whether a value may
// differ between threads, and a statement is divergent only when its own
// control differs; uniform private values keep their per-thread storage
// (PerThread, Role) and each thread its copy, in which the interpreter
// checks they agree where they steer the block (interp's InEveryThread).
//
// Kernels that never read the thread index are not per-thread programs:
// their local buffers hold the same values in every thread (UsesThreadIndex
// is false and nothing here applies).
#ifndef TILEC_COMPILER_IR_THREAD_DEPENDENCE_H_
#define TILEC_COMPILER_IR_THREAD_DEPENDENCE_H_

#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "compiler/ir/ir.h"

namespace tilec::ir {

// Whether `s` (or `e`) reads the thread index anywhere inside it.
bool UsesThreadIndex(const Stmt& s);
bool UsesThreadIndex(const Expr& e);

class ThreadDependence {
 public:
  // Analyses a kernel body that uses the thread index.
  explicit ThreadDependence(const Stmt& kernel_body);

  bool Var(const VarNode* v) const { return vars_.count(v) > 0; }
  bool Expr(const ir::Expr& e) const;
  // Mentions the thread index, a thread-dependent variable or a
  // thread-private buffer anywhere inside.
  bool PerThread(const Stmt& s) const;
  // Whether the value of `e` may differ between the threads of a block
  // (it reads the thread index, a variable or a private buffer whose value
  // may differ).
  bool Differs(const ir::Expr& e) const;
  // Its own condition or bounds may differ between threads.
  bool Divergent(const Stmt& s) const;
  // Contains a tile operator that runs once per block: a T.Parallel or
  // T.Pipelined loop, T.gemm, a reduction, a prefix sum, a tile atomic (the
  // scalar form is per-thread), or a T.copy / T.fill that involves no
  // thread-private buffer. `what` names the first one found.
  static bool Collective(const Stmt& s, std::string* what = nullptr);

  // How a statement of the kernel body runs:
  //  - kUniform: once for the block (it mentions nothing per-thread);
  //  - kPerThread: by every thread in turn, as one unit (it mentions
  //    per-thread values and contains no collective operator);
  //  - kContainer: uniform control (a sequence, a serial or pipelined loop
  //    with uniform bounds, an if with a uniform condition) around
  //    statements of different roles, each of which takes its own role.
  // Every thread finishes one statement before any starts the next, as with
  // a block barrier between them (the CUDA emitter places the barriers where
  // shared memory passes between threads).
  //  - kMasked: an if whose condition reads only the thread index and
  //    constants (`if tx < 128:`), around collective operators and uniform
  //    statements only. A collective operator runs once for the block
  //    whatever threads run it, so the branch runs once, by the whole block,
  //    when some thread of the block meets the condition, and the else
  //    branch once when some thread does not (MaskedBranches).
  enum class Role { kUniform, kPerThread, kContainer, kMasked };
  Role RoleOf(const Stmt& s) const;
  // INVALID_ARGUMENT naming the operator when a collective operator reads a
  // per-thread value or runs under per-thread control (`if tx < 128:
  // T.copy(...)`), which tilec does not support.
  absl::Status Check(const Stmt& kernel_body) const;

  // For a kMasked if: whether some thread of `threads` meets its condition
  // (first) and whether some thread does not (second).
  std::pair<bool, bool> MaskedBranches(const IfNode& s, int64_t threads) const;

 private:
  void Walk(const Stmt& s);
  // The uniform private buffers (a greatest fixed point: every private
  // buffer, less those written with a differing value or index or under
  // differing control, until none is removed) and the differing variables.
  void FindUniform(const Stmt& body);
  void WalkUniform(const Stmt& s, bool divergent_control);
  std::set<const VarNode*> vars_;
  std::map<const VarNode*, ir::Expr> lets_;  // values of the dependent lets
  std::set<const BufferNode*> uniform_buffers_;
  std::set<const VarNode*> differing_;
};

// Whether a buffer is private to each thread (local or var scope).
bool ThreadPrivate(const Buffer& b);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_THREAD_DEPENDENCE_H_
