// The tile IR: the one in-memory form of a tile program.
//
// Nodes are immutable plain structs behind shared pointers, each with a kind
// tag and a `make`. Variables and buffers are identified by their node, not by
// their name: two distinct `Var`s may share a name, and renaming one changes
// nothing about the program's meaning (the hash is alpha-invariant).
//
// Declarations (`Allocate`, `Let`) are statements inside a `Seq`; what they
// declare is in scope for the rest of that `Seq`. Loops, kernels and branches
// open a new scope for their bodies.
#ifndef TILEC_COMPILER_IR_IR_H_
#define TILEC_COMPILER_IR_IR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/dtype.h"

namespace tilec::ir {

struct ExprNode;
struct StmtNode;
struct VarNode;
struct BufferNode;
using Expr = std::shared_ptr<const ExprNode>;
using Stmt = std::shared_ptr<const StmtNode>;
using Var = std::shared_ptr<const VarNode>;
using Buffer = std::shared_ptr<const BufferNode>;

// ---------------------------------------------------------------------------
// Expressions

enum class ExprKind : uint8_t {
  kIntImm,
  kFloatImm,
  kVar,
  kBinary,
  kUnary,
  kSelect,
  kCast,
  kCall,
  kLoad,
};

enum class BinaryOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,       // true division on floats; truncating division on integers (C)
  kMod,       // truncating remainder (C)
  kFloorDiv,  // Python's //
  kFloorMod,  // Python's %
  kMin,
  kMax,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,  // logical, on bool
  kOr,
  kBitAnd,
  kBitOr,
  kBitXor,
  kShl,
  kShr,
};
inline constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::kShr) + 1;

enum class UnaryOp : uint8_t { kNeg, kNot, kBitNot };
inline constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kBitNot) + 1;

// Calls to pure math functions. The argument count is fixed per function
// (CallArity); the result dtype is the first argument's.
enum class CallFn : uint8_t {
  kAbs,
  kCeilDiv,
  kExp,
  kExp2,
  kLog,
  kLog2,
  kSqrt,
  kRsqrt,
  kTanh,
  kSigmoid,
  kSin,
  kCos,
  kErf,
  kFloor,
  kCeil,
  kRound,
  kPow,
  // T.get_thread_binding(): the thread's index in its block, 0 to threads - 1
  // (int32, no arguments). Kernels that read it run per-thread code
  // (ir/thread_dependence.h).
  kThreadIndex,
  // T.reinterpret(x, dtype): the bits of x read as the call's dtype, which
  // has as many bits (neither is bool).
  kReinterpret,
  // More float math (the first argument's float dtype; two-argument ones
  // take two operands of it).
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kLog10,
  kLog1p,
  kExp10,
  kExpm1,
  kTrunc,
  kAtan2,
  kFmod,
  kHypot,
  kCopysign,
  // Integer bit counts in the argument's width: set bits, leading zeros.
  kPopcount,
  kClz,
};
inline constexpr int kNumCallFns = static_cast<int>(CallFn::kClz) + 1;

std::string_view BinaryOpName(BinaryOp op);  // "add", "floordiv", ...
// "+", "//", ...; "" for the ops printed as calls (min, max, mod).
std::string_view BinaryOpSymbol(BinaryOp op);
std::string_view UnaryOpName(UnaryOp op);
std::string_view CallFnName(CallFn fn);  // "exp", "ceildiv", ...
std::optional<CallFn> ParseCallFn(std::string_view name);
int CallArity(CallFn fn);
bool IsComparison(BinaryOp op);
bool IsLogical(BinaryOp op);

struct ExprNode {
  ExprKind kind;
  DType dtype;

  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
};

// Integer or bool constant.
struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  int64_t value;
  IntImmNode(DType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};

// Float constant of any float dtype, including +-inf and NaN.
struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  double value;
  FloatImmNode(DType t, double v) : ExprNode(kKind, t), value(v) {}
};

// A scalar variable: loop index, block index, let binding, dynamic dim,
// scalar parameter or unbound tile parameter.
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  std::string name;
  VarNode(DType t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
};

struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  BinaryOp op;
  Expr a, b;
  BinaryNode(DType t, BinaryOp o, Expr x, Expr y)
      : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

struct UnaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kUnary;
  UnaryOp op;
  Expr a;
  UnaryNode(DType t, UnaryOp o, Expr x) : ExprNode(kKind, t), op(o), a(std::move(x)) {}
};

// if_then_else(cond, t, f)
struct SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  Expr cond, t, f;
  SelectNode(DType ty, Expr c, Expr x, Expr y)
      : ExprNode(kKind, ty), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
};

struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  Expr value;
  CastNode(DType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};

struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallFn fn;
  std::vector<Expr> args;
  CallNode(DType t, CallFn f, std::vector<Expr> a)
      : ExprNode(kKind, t), fn(f), args(std::move(a)) {}
};

// buffer[indices...]; one index per dimension of the buffer.
struct LoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kLoad;
  Buffer buffer;
  std::vector<Expr> indices;
  LoadNode(DType t, Buffer b, std::vector<Expr> i);
};

// Constructors. They do not check operand types (the verifier does); the
// result dtype follows the rules each comment states.
Expr IntImm(int64_t v, DType t = DType::kInt32);
Expr BoolImm(bool v);
Expr FloatImm(double v, DType t = DType::kFloat32);
Expr Infinity(DType t);  // +inf of a float dtype
Var MakeVar(std::string name, DType t = DType::kInt32);
// Comparisons and logical ops yield bool; others yield a's dtype.
Expr Binary(BinaryOp op, Expr a, Expr b);
Expr Unary(UnaryOp op, Expr a);          // kNot yields bool
Expr Select(Expr cond, Expr t, Expr f);  // yields t's dtype
Expr Cast(DType t, Expr v);
Expr Call(CallFn fn, std::vector<Expr> args);
Expr Load(Buffer b, std::vector<Expr> indices);  // yields the buffer's dtype

// The constant value of an IntImm, if `e` is one.
std::optional<int64_t> AsConstInt(const Expr& e);

// ---------------------------------------------------------------------------
// Buffers

enum class Scope : uint8_t {
  kGlobal,    // tensor parameters and T.alloc_global workspaces
  kShared,    // T.alloc_shared: one copy per block
  kFragment,  // T.alloc_fragment: a tile spread over the block's threads
  kLocal,     // T.alloc_local: one copy per thread
  kVar,       // T.alloc_var: one scalar per thread
};
std::string_view ScopeName(Scope s);  // "global", "shared", ...

struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;  // over constants, dynamic dims and tile params
  Scope scope;
};
Buffer MakeBuffer(std::string name, DType t, std::vector<Expr> shape, Scope scope);

// A rectangular part of a buffer: buffer[min0 : min0+extent0, ...].
struct Region {
  Buffer buffer;
  std::vector<Expr> mins;
  std::vector<Expr> extents;
};
// The whole buffer.
Region FullRegion(const Buffer& b);

// A layout maps the logical index of a buffer element to its physical index.
struct Layout {
  enum class Kind : uint8_t {
    kSwizzled,  // make_swizzled_layout: the compiler picks the swizzle
    kCustom,    // physical = indices(vars)
  };
  Kind kind = Kind::kSwizzled;
  std::vector<Var> vars;      // one per logical dimension (kCustom)
  std::vector<Expr> indices;  // physical index expressions over vars (kCustom)
};

// ---------------------------------------------------------------------------
// Statements

enum class StmtKind : uint8_t {
  kSeq,
  kKernel,
  kAllocate,
  kFor,
  kIf,
  kStore,
  kLet,
  kCopy,
  kGemm,
  kFill,
  kReduce,
  kCumsum,
  kAtomicAdd,
  kAnnotateLayout,
  kUseSwizzle,
  kWhile,
};

struct StmtNode {
  StmtKind kind;

  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 protected:
  explicit StmtNode(StmtKind k) : kind(k) {}
};

struct SeqNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  std::vector<Stmt> stmts;
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
};

// with T.Kernel(*grid, threads=threads, prelude=...) as (*block_vars):
struct KernelNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kKernel;
  std::vector<Expr> grid;       // 1 to 3 extents
  std::vector<Var> block_vars;  // one per grid extent
  Expr threads;
  std::string prelude;  // verbatim device code placed before the kernel
  Stmt body;
  KernelNode() : StmtNode(kKind) {}
};

// Declares a buffer of a non-global scope, or a global workspace.
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Buffer buffer;
  Expr init;  // T.alloc_var(dtype, init=...); may be null
  AllocateNode(Buffer b, Expr i) : StmtNode(kKind), buffer(std::move(b)), init(std::move(i)) {}
};

enum class ForKind : uint8_t { kSerial, kParallel, kPipelined, kUnrolled, kVectorized };
std::string_view ForKindName(ForKind k);  // "serial", "Parallel", ...

struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  Var var;
  Expr min;
  Expr extent;
  ForKind kind;
  // kPipelined only:
  Expr num_stages;  // may be an unbound tile parameter
  // T.Pipelined order= and stage=: one entry per statement of the body that
  // is not a let (lets bind names for the statements after them), or empty.
  std::vector<int64_t> order;
  std::vector<int64_t> stage;
  Stmt body;
  ForNode() : StmtNode(kKind) {}
};

struct IfNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIf;
  Expr cond;
  Stmt then_case;
  Stmt else_case;  // may be null
  IfNode(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
};

// while cond: body -- a loop whose trip count is known only at run time.
// The condition is evaluated before every iteration; a kernel's while whose
// body holds tile operators or barriers must have a block-uniform condition.
struct WhileNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kWhile;
  Expr cond;
  Stmt body;
  WhileNode(Expr c, Stmt b) : StmtNode(kKind), cond(std::move(c)), body(std::move(b)) {}
};

struct StoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  StoreNode(Buffer b, std::vector<Expr> i, Expr v)
      : StmtNode(kKind), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
};

// Binds var to value for the rest of the enclosing Seq.
struct LetNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kLet;
  Var var;
  Expr value;
  LetNode(Var v, Expr x) : StmtNode(kKind), var(std::move(v)), value(std::move(x)) {}
};

// T.copy(src, dst): elements outside the source tensor read as zero; writes
// outside the destination tensor are dropped.
struct CopyNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kCopy;
  Region src, dst;
  // T.copy(..., disable_tma=True): the copy must not become a TMA load or
  // store (it changes no value; a backend without TMA ignores it).
  bool disable_tma = false;
  CopyNode(Region s, Region d, bool no_tma = false)
      : StmtNode(kKind), src(std::move(s)), dst(std::move(d)), disable_tma(no_tma) {}
};

enum class GemmPolicy : uint8_t { kSquare, kFullRow, kFullCol };
std::string_view GemmPolicyName(GemmPolicy p);  // "Square", "FullRow", "FullCol"

// C (+)= op(A) @ op(B), op transposing when the flag is set.
struct GemmNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kGemm;
  Region a, b, c;
  bool transpose_a = false;
  bool transpose_b = false;
  GemmPolicy policy = GemmPolicy::kSquare;
  bool clear_accum = false;
  GemmNode() : StmtNode(kKind) {}
};

struct FillNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFill;
  Region dst;
  Expr value;
  FillNode(Region d, Expr v) : StmtNode(kKind), dst(std::move(d)), value(std::move(v)) {}
};

enum class ReduceKind : uint8_t { kSum, kMax, kMin, kAbsSum, kAbsMax };
std::string_view ReduceKindName(ReduceKind k);  // "sum", "max", ...

// dst = reduce(src, dim); with clear=false, dst is combined with the result.
struct ReduceNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kReduce;
  ReduceKind reduce_kind;
  Buffer src, dst;
  int dim;
  bool clear;
  ReduceNode(ReduceKind k, Buffer s, Buffer d, int dm, bool c)
      : StmtNode(kKind), reduce_kind(k), src(std::move(s)), dst(std::move(d)), dim(dm), clear(c) {}
};

// Inclusive prefix sum along dim; dst may be src.
struct CumsumNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kCumsum;
  Buffer src, dst;
  int dim;
  bool reverse;
  CumsumNode(Buffer s, Buffer d, int dm, bool r)
      : StmtNode(kKind), src(std::move(s)), dst(std::move(d)), dim(dm), reverse(r) {}
};

// How an atomic update combines the old value with the new one.
enum class AtomicOp : uint8_t {
  kAdd,  // dst += v
  kMax,  // dst = max(dst, v), a NaN operand ignored as T.max does
  kMin,  // dst = min(dst, v), likewise
};
std::string_view AtomicOpName(AtomicOp op);  // "add", "max", "min"

// dst op= src, element-wise and atomically; either a tile (src set) or a
// scalar (value set, dst a single element).
struct AtomicAddNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAtomicAdd;
  Region dst;
  std::optional<Region> src;
  Expr value;
  AtomicOp op = AtomicOp::kAdd;
  // return_prev=True (one-element form only): a variable (scope kVar, the
  // destination's dtype) that receives the element's value before the update.
  Buffer result;
  AtomicAddNode(Region d, std::optional<Region> s, Expr v, AtomicOp o = AtomicOp::kAdd,
                Buffer r = nullptr)
      : StmtNode(kKind),
        dst(std::move(d)),
        src(std::move(s)),
        value(std::move(v)),
        op(o),
        result(std::move(r)) {}
};

struct AnnotateLayoutNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAnnotateLayout;
  Buffer buffer;
  Layout layout;
  AnnotateLayoutNode(Buffer b, Layout l)
      : StmtNode(kKind), buffer(std::move(b)), layout(std::move(l)) {}
};

// T.use_swizzle(panel_size, order, enable): rasterize blocks in panels for L2
// reuse.
struct UseSwizzleNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kUseSwizzle;
  Expr panel_size;
  bool column_major;  // order="column"
  bool enable;
  UseSwizzleNode(Expr p, bool c, bool e)
      : StmtNode(kKind), panel_size(std::move(p)), column_major(c), enable(e) {}
};

Stmt Seq(std::vector<Stmt> stmts);
Stmt Allocate(Buffer b, Expr init = nullptr);
Stmt If(Expr cond, Stmt then_case, Stmt else_case = nullptr);
Stmt While(Expr cond, Stmt body);
Stmt Store(Buffer b, std::vector<Expr> indices, Expr value);
Stmt Let(Var v, Expr value);
Stmt For(Var v, Expr min, Expr extent, ForKind kind, Stmt body);
Stmt Copy(Region src, Region dst, bool disable_tma = false);
Stmt Fill(Region dst, Expr value);

// ---------------------------------------------------------------------------
// Programs

// A tile parameter: a configuration knob such as block_M or num_stages.
// Bound parameters have been substituted into the body and are kept for the
// record (the config); unbound ones appear in the body as `var`.
struct TileParam {
  Var var;
  std::optional<int64_t> value;
  std::vector<int64_t> candidates;  // declared search space, may be empty
};

// A strided tensor parameter (T.StridedTensor): callers pass a tensor of
// `shape` whose elements lie with gaps or in another dimension order. The
// program's buffer is the row-major storage that holds them: view dimension
// axes[k] is the buffer's dimension k, and its stride is the product of the
// buffer's dimensions after k. The buffer's dimensions are at least the
// view's (the padding is never read or written).
struct TensorView {
  std::vector<Expr> shape;
  std::vector<int32_t> axes;
};

// A parameter of the program, in ABI order: a global tensor or a scalar.
struct Param {
  Buffer tensor;                                  // set for tensors
  Var scalar;                                     // set for scalars
  std::optional<TensorView> view = std::nullopt;  // tensors: set for a strided tensor
};

// The strides, in elements, of the view's dimensions.
std::vector<Expr> ViewStrides(const Buffer& storage, const TensorView& view);

// A condition on the dynamic dims that a launch must meet: an `assert` on
// sizes known only at launch. The runtime and the interpreter check it
// before anything runs and refuse the launch, with `message`, if it fails.
struct Requirement {
  Expr cond;  // bool, over dyn_dims only
  std::string message;
};

struct Program {
  std::string name;
  std::vector<Param> params;
  std::vector<Var> dyn_dims;  // symbolic sizes used in tensor shapes
  std::vector<Requirement> requirements;
  std::vector<TileParam> tile_params;
  Stmt body;  // a Seq of kernels and global workspace allocations
  // Questions the source asked of the device, with the answers the
  // frontend gave from the target's hardware profile and built into the
  // body: "driver.get_num_sms() = 132 (profile h100_sxm)".
  std::vector<std::string> device_queries;
  // The kernel asked for fast math (TileLang's pass_configs
  // TL_ENABLE_FAST_MATH): division, square roots and the exp/log family
  // may use the hardware's approximations, and float32 denormals flush to
  // zero. It changes the code, so it is part of the program's hash.
  bool fast_math = false;
  // The kernel's pass_configs turn warp specialisation off
  // (TL_DISABLE_WARP_SPECIALIZED): every kernel keeps one role.
  bool disable_warp_specialized = false;
};

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_IR_H_
