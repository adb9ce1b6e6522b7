// Internal to the interpreter: the compiled form of a program and the state
// it runs on.
//
// Compilation turns the IR into a tree of small objects (CExpr, CStmt) in
// which every variable and buffer has been resolved to a slot index, so
// running touches no strings, maps or shared pointers per element. Scoping is
// checked while compiling: a variable or buffer used outside its scope is a
// FailedPrecondition error.
//
// Expression evaluation cannot return a Status per node without slowing every
// node down, so an expression that fails (an out-of-bounds load, an integer
// division by zero) records the error in Env and returns a dummy value; each
// statement checks Env::failed() after evaluating its expressions.
#ifndef TILEC_COMPILER_INTERP_EXEC_H_
#define TILEC_COMPILER_INTERP_EXEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/interp/interp.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/sv.h"
#include "compiler/ir/thread_dependence.h"

namespace tilec::interp::internal {

// A value of a known dtype: `i` for integers and bool, `f` for floats. Float
// values are always exactly representable in their dtype.
union Scalar {
  int64_t i;
  double f;
};
inline Scalar IntScalar(int64_t v) {
  Scalar s;
  s.i = v;
  return s;
}
inline Scalar FloatScalar(double v) {
  Scalar s;
  s.f = v;
  return s;
}

// Converts v from dtype `from` to dtype `to` as a cast does.
Scalar Convert(Scalar v, ir::DType from, ir::DType to);
// Element access in the tensor's own dtype.
inline Scalar ReadElement(const Tensor& t, int64_t flat) {
  return ir::IsFloat(t.dtype()) ? FloatScalar(t.GetDouble(flat)) : IntScalar(t.GetInt(flat));
}
inline void WriteElement(Tensor& t, int64_t flat, Scalar v) {
  if (ir::IsFloat(t.dtype())) {
    t.SetDouble(flat, v.f);
  } else {
    t.SetInt(flat, v.i);
  }
}
std::string ScalarString(Scalar v, ir::DType t);

struct Env {
  std::vector<Scalar> vars;               // by var slot
  std::vector<Tensor*> buffers;           // by buffer slot; null until allocated
  std::vector<Tensor> owned;              // storage of allocations, by buffer slot
  std::vector<std::string> buffer_names;  // by buffer slot, for messages
  RunOptions options;
  // Per-thread code (kernels that read the thread index): the thread running
  // it (-1 outside), and each thread's own values of the thread-dependent
  // variables and its own thread-private buffers, by slot.
  int64_t thread = -1;
  std::vector<std::vector<Scalar>> thread_vars;
  std::vector<std::vector<Tensor>> thread_buffers;

  bool failed() const { return failed_; }
  // Records the first error.
  void Fail(absl::Status s) {
    if (!failed_) {
      failed_ = true;
      error_ = std::move(s);
    }
  }
  absl::Status TakeError() {
    failed_ = false;
    return std::move(error_);
  }
  // The buffer in `slot`, or a recorded error if it is not allocated yet.
  Tensor* Buffer(int slot);

 private:
  bool failed_ = false;
  absl::Status error_;
};

class CExpr {
 public:
  explicit CExpr(ir::DType t) : dtype(t) {}
  virtual ~CExpr() = default;
  virtual Scalar Eval(Env& env) const = 0;
  const ir::DType dtype;
};
using CExprPtr = std::unique_ptr<const CExpr>;

class CStmt {
 public:
  virtual ~CStmt() = default;
  virtual absl::Status Exec(Env& env) const = 0;
};
using CStmtPtr = std::unique_ptr<const CStmt>;

// A region with compiled bounds, and its value at run time.
struct CRegion {
  int slot = -1;
  std::vector<CExprPtr> mins, extents;
};
struct RegionValue {
  Tensor* tensor = nullptr;
  absl::string_view name;
  std::vector<int64_t> mins, extents;
};
// Evaluates a region; false (with the error recorded in env) on failure,
// including a negative extent.
bool EvalRegion(Env& env, const CRegion& r, RegionValue* out);
// "A[0:64, 8:16]"
std::string RegionString(const RegionValue& r);

// Resolves variables and buffers to slots while compiling, tracking scopes.
class Compiler {
 public:
  // Declares v (or b) in scope until the scope is popped; returns its slot.
  int BindVar(const ir::Var& v);
  int BindBuffer(const ir::Buffer& b);
  // Scope marks: PopTo(Mark()) undoes every Bind since the mark.
  size_t Mark() const { return scope_.size(); }
  void PopTo(size_t mark);

  absl::StatusOr<int> VarSlot(const ir::VarNode* v) const;
  absl::StatusOr<int> BufferSlot(const ir::Buffer& b) const;

  absl::StatusOr<CExprPtr> CompileExpr(const ir::Expr& e);
  // e converted to dtype t (e itself when it already has t).
  absl::StatusOr<CExprPtr> CompileExprAs(const ir::Expr& e, ir::DType t);
  // An integer expression read through Scalar::i whatever its integer dtype.
  absl::StatusOr<CExprPtr> CompileIndex(const ir::Expr& e);
  absl::StatusOr<CStmtPtr> CompileStmt(const ir::Stmt& s);
  absl::StatusOr<CRegion> CompileRegion(const ir::Region& r);

  int num_var_slots() const { return static_cast<int>(var_slots_.size()); }
  int num_buffer_slots() const { return static_cast<int>(buffer_names_.size()); }
  const std::vector<std::string>& buffer_names() const { return buffer_names_; }

 private:
  // Per-thread code (ir/thread_dependence.h): the statement `s`, which runs
  // by every thread in turn, compiled into one unit.
  absl::StatusOr<CStmtPtr> CompilePerThread(const ir::Stmt& s);
  // The condition or bound `c` (compiled from `e`) of a loop or branch that
  // steers the block: when it reads per-thread storage (uniform private
  // values, ThreadDependence::Differs false), it is evaluated with every
  // thread's copies, which must agree; else `c` itself.
  CExprPtr InEveryThread(const ir::Expr& e, CExprPtr c);
  // The slots of the thread-dependent variables bound so far, in order.
  std::vector<int> ThreadVarSlots() const;

  // While compiling a kernel that reads the thread index.
  const ir::ThreadDependence* simt_ = nullptr;
  int64_t simt_threads_ = 0;
  bool in_per_thread_ = false;
  std::vector<int> private_buffer_slots_;  // thread-private buffers bound so far

  absl::flat_hash_map<const ir::VarNode*, int> var_slots_;
  absl::flat_hash_map<const ir::BufferNode*, int> buffer_slots_;
  std::vector<std::string> buffer_names_;
  absl::flat_hash_map<const void*, int> in_scope_;  // binding counts
  std::vector<const void*> scope_;
  int num_kernels_ = 0;
};

// Tile operators (tile_ops.cc).
absl::StatusOr<CStmtPtr> CompileCopy(Compiler& c, const ir::CopyNode& s);
absl::StatusOr<CStmtPtr> CompileGemm(Compiler& c, const ir::GemmNode& s);
absl::StatusOr<CStmtPtr> CompileFill(Compiler& c, const ir::FillNode& s);
absl::StatusOr<CStmtPtr> CompileReduce(Compiler& c, const ir::ReduceNode& s);
absl::StatusOr<CStmtPtr> CompileCumsum(Compiler& c, const ir::CumsumNode& s);
absl::StatusOr<CStmtPtr> CompileAtomicAdd(Compiler& c, const ir::AtomicAddNode& s);

// An error for IR the verifier rejects.
absl::Status Unverified(absl::string_view what);

}  // namespace tilec::interp::internal

#endif  // TILEC_COMPILER_INTERP_EXEC_H_
