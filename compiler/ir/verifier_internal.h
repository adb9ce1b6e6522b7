// Internal to the verifier: the Verifier class, shared by verifier.cc (scopes,
// expressions, statements) and verifier_tile_ops.cc (the tile operators).
#ifndef TILEC_COMPILER_IR_VERIFIER_INTERNAL_H_
#define TILEC_COMPILER_IR_VERIFIER_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/names.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/sv.h"

namespace tilec::ir::verifier_internal {

inline absl::string_view DT(DType t) { return Sv(DTypeName(t)); }

inline std::string Dims(const std::vector<Expr>& es) {
  std::vector<std::string> parts;
  for (const Expr& e : es) parts.push_back(PrintExpr(e));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

inline std::string Describe(const Buffer& b) { return absl::StrCat(b->name, " ", Dims(b->shape)); }

inline bool SameExtent(const Expr& a, const Expr& b) {
  if (a == b) return true;
  std::optional<int64_t> x = AsConstInt(a), y = AsConstInt(b);
  return x && y && *x == *y;
}

// "A_shared [64, 64]" for a whole buffer, "region of A [64, 32]" otherwise.
inline std::string Describe(const Region& r) {
  bool full = r.mins.size() == r.buffer->shape.size();
  for (size_t i = 0; full && i < r.mins.size(); ++i) {
    full = AsConstInt(r.mins[i]) == 0 && SameExtent(r.extents[i], r.buffer->shape[i]);
  }
  return absl::StrCat(full ? "" : "region of ", r.buffer->name, " ", Dims(r.extents));
}

// How an operator reads in a message: '+', 'T.max', ...
inline std::string OpText(BinaryOp op) {
  switch (op) {
    case BinaryOp::kMin: return "T.min";
    case BinaryOp::kMax: return "T.max";
    case BinaryOp::kMod: return "T.truncmod";
    default: return absl::StrCat("'", Sv(BinaryOpSymbol(op)), "'");
  }
}

inline bool LiteralFits(int64_t v, DType t) {
  switch (t) {
    case DType::kBool: return v == 0 || v == 1;
    case DType::kInt4: return v >= -8 && v <= 7;
    case DType::kInt8: return v >= -128 && v <= 127;
    case DType::kUInt8: return v >= 0 && v <= 255;
    case DType::kInt16: return v >= -32768 && v <= 32767;
    case DType::kUInt16: return v >= 0 && v <= UINT16_MAX;
    case DType::kInt32: return v >= INT32_MIN && v <= INT32_MAX;
    case DType::kUInt32: return v >= 0 && v <= UINT32_MAX;
    case DType::kUInt64: return v >= 0;  // an IntImm holds at most 2^63 - 1
    default: return true;
  }
}

// The largest finite magnitude and the smallest nonzero (subnormal)
// magnitude of a float dtype.
struct FloatRange {
  double max, min_subnormal;
};
FloatRange RangeOf(DType t);

// Empty when the float literal `v` keeps a finite, nonzero-when-nonzero
// value in dtype `t`; otherwise what is wrong ("is out of range for ...").
std::string FloatLiteralProblem(double v, DType t);

inline bool NeedsFloat(CallFn fn) {
  switch (fn) {
    case CallFn::kAbs:
    case CallFn::kCeilDiv:
    case CallFn::kPopcount:
    case CallFn::kClz: return false;
    default: return true;
  }
}

// Extents with the constant-1 dims dropped: the shape a copy moves.
inline std::vector<Expr> DropUnitDims(const std::vector<Expr>& extents) {
  std::vector<Expr> out;
  for (const Expr& e : extents) {
    if (AsConstInt(e) != 1) out.push_back(e);
  }
  return out;
}

// False only when the two extent lists provably differ after dropping
// extent-1 dims (symbolic extents are taken to agree).
inline bool ExtentsAgree(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  std::vector<Expr> x = DropUnitDims(a), y = DropUnitDims(b);
  auto symbolic = [](const Expr& e) { return !AsConstInt(e); };
  if (x.size() != y.size()) {
    return std::any_of(x.begin(), x.end(), symbolic) || std::any_of(y.begin(), y.end(), symbolic);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    std::optional<int64_t> p = AsConstInt(x[i]), q = AsConstInt(y[i]);
    if (p && q && *p != *q) return false;
  }
  return true;
}

inline bool ProvablyDiffer(const Expr& a, const Expr& b) {
  std::optional<int64_t> x = AsConstInt(a), y = AsConstInt(b);
  return x && y && *x != *y;
}

inline bool IsLiteral(const Expr& e) {
  return e->kind == ExprKind::kIntImm || e->kind == ExprKind::kFloatImm;
}

class Verifier {
 public:
  explicit Verifier(const Program& p) : program_(p) {}
  absl::Status Run();

 private:
  // Position path elements, pushed for the lifetime of the guard.
  class At {
   public:
    At(Verifier* v, std::string label) : v_(v) { v_->path_.push_back(std::move(label)); }
    ~At() { v_->path_.pop_back(); }

   private:
    Verifier* v_;
  };
  // A declaration scope: what is declared inside goes out of scope with it.
  class Frame {
   public:
    explicit Frame(Verifier* v) : v_(v) { v_->frames_.emplace_back(); }
    ~Frame() {
      for (const void* k : v_->frames_.back()) v_->in_scope_.erase(k);
      v_->frames_.pop_back();
    }

   private:
    Verifier* v_;
  };

  bool Fail(const std::string& msg);
  // Bounds the nesting of statements and expressions (kMaxNesting); release
  // through the guard's destructor.
  class Nest {
   public:
    explicit Nest(Verifier* v) : v_(v) { ++v_->depth_; }
    ~Nest() { --v_->depth_; }
    bool ok() const { return v_->depth_ <= kMaxNesting; }

   private:
    Verifier* v_;
  };
  bool TooDeep();
  bool CheckName(const std::string& name, std::string_view what);
  // Region extents are fixed when the kernel is launched: they may use
  // dynamic dims, scalar parameters and tile parameters, not loop, block or
  // let variables or loads.
  bool CheckLaunchInvariant(const Expr& e, std::string_view what);
  // "T.copy #2": the count of `op` so far in the innermost body.
  std::string Label(std::string_view op) {
    return absl::StrCat(Sv(op), " #", ++counters_.back()[std::string(op)]);
  }
  bool RequireKernel(std::string_view op) {
    return in_kernel_ || Fail(absl::StrCat(Sv(op), " outside a T.Kernel"));
  }

  bool Declare(const void* key, const std::string& name, std::string_view what);
  bool DefineVar(const Var& v, std::string_view what);
  bool DefineIntVar(const Var& v, std::string_view what) {
    return DefineVar(v, what) &&
           (IsInt(v->dtype) || Fail(absl::StrCat(Sv(what), " '", v->name,
                                                 "' must be an integer, got ", DT(v->dtype))));
  }
  bool DefineBuffer(const Buffer& b);
  bool Use(const void* key, std::string_view kind, const std::string& name,
           std::string_view undefined_note);
  bool UseVar(const VarNode* v);
  bool UseBuffer(const Buffer& b, std::string_view role);

  bool CheckExpr(const Expr& e, std::string_view what);
  bool CheckInt(const Expr& e, std::string_view what);
  bool CheckPositive(const Expr& e, std::string_view what);
  bool CheckBinary(const Expr& e);
  bool CheckCall(const CallNode* n);
  bool CheckIndices(const Buffer& b, const std::vector<Expr>& indices);
  bool CheckRegion(const Region& r, std::string_view role);
  bool CheckShape(const Buffer& b);
  bool CheckValue(const Expr& v, DType t, bool literal_ok, std::string_view what);

  bool CheckStmt(const Stmt& s);
  bool CheckBody(const Stmt& s);
  bool CheckKernel(const KernelNode* n);
  bool CheckAllocate(const AllocateNode* n);
  bool CheckFor(const ForNode* n);
  bool CheckIf(const IfNode* n);
  bool CheckGemm(const GemmNode* n);
  bool CheckGemmOperand(const Region& r, std::string_view role, Expr* rows, Expr* cols);
  // Shared by reduce and cumsum: operands in scope, not global, dim in range.
  bool CheckAlongDim(std::string_view op, const Buffer& src, const Buffer& dst, int dim);
  bool CheckReduce(const ReduceNode* n);
  bool CheckCumsum(const CumsumNode* n);
  bool CheckAtomicAdd(const AtomicAddNode* n);
  bool CheckLayout(const AnnotateLayoutNode* n);

  const Program& program_;
  std::string error_;
  std::vector<std::string> path_;
  std::vector<std::map<std::string, int>> counters_;
  int kernels_ = 0;
  bool in_kernel_ = false;
  std::vector<std::vector<const void*>> frames_;
  std::unordered_set<const void*> in_scope_;  // variables and buffers
  std::unordered_set<const void*> declared_;  // anywhere so far
  std::unordered_map<const VarNode*, int64_t> bound_tile_params_;
  std::unordered_set<const VarNode*> launch_invariant_;  // dyn dims, scalar and tile params
  int depth_ = 0;
};

}  // namespace tilec::ir::verifier_internal

#endif  // TILEC_COMPILER_IR_VERIFIER_INTERNAL_H_
