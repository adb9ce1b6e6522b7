// The staging evaluator of the TileLang frontend: it runs the kernel-building
// function over the syntax tree and builds the tile IR as it goes.
//
// Two kinds of code are evaluated, as in TileLang:
// - Python code (a generator function, local helper functions, module-level
//   constants): plain staging evaluation. `for` iterates at staging time,
//   `if` needs a condition known at staging time.
// - Kernel code (the body of a @T.prim_func, of an eager @tilelang.jit
//   function, of a @T.macro): TileLang's statement semantics. `if` on a
//   staging value picks a branch; on a runtime value it builds an IR If.
//   `for` over T.Parallel/T.serial/T.Pipelined/... builds IR loops, and so
//   does `for i in range(n)`, which TileLang treats as T.serial(n) inside a
//   prim_func (even for a static n). A name bound to a runtime expression
//   inside a T.Kernel becomes an IR Let (a variable or a literal is aliased
//   instead; outside any T.Kernel such expressions only involve parameters and
//   are inlined); a name bound to an alloc_var buffer reads as its element and
//   assigning to it stores. Macros are inlined with their arguments
//   substituted.
//
// Every user error is a SourceError at the offending construct. Bounded work:
// staging loops and recursion are capped, so the builder terminates on any
// input.
#ifndef TILEC_COMPILER_FRONTEND_BUILDER_H_
#define TILEC_COMPILER_FRONTEND_BUILDER_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/ast.h"
#include "compiler/frontend/frontend.h"
#include "compiler/frontend/reducers.h"
#include "compiler/frontend/safe_access.h"
#include "compiler/frontend/source.h"
#include "compiler/frontend/staging_budget.h"
#include "compiler/frontend/value.h"
#include "compiler/frontend/views.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

// The refusal of a T.Kernel opened inside another.
inline constexpr char kNestedKernel[] = "T.Kernel blocks cannot be nested";

// A scope of names: one per function call (and per lambda/comprehension).
// Scopes are owned by the Builder (Builder::NewEnv) and live as long as it:
// closures refer to the scope they were defined in, and a scope holds the
// functions defined in it, so shared ownership would leak the cycle.
class Env {
 public:
  struct Slot {
    Value value;
    // The IR block the name was bound in when its value is runtime (a Let,
    // loop or block variable, a non-global buffer); -1 for staging values.
    int block_id = -1;
  };

  explicit Env(Env* parent) : parent_(parent) {}

  // Searches this scope, then the enclosing ones.
  Slot* Lookup(const std::string& name);
  Slot* LookupLocal(const std::string& name);
  void Set(const std::string& name, Value v, int block_id = -1);
  bool Erase(const std::string& name);
  // The names bound in this scope itself, sorted by name.
  std::vector<std::pair<std::string, Value>> LocalItems() const;

 private:
  std::unordered_map<std::string, Slot> slots_;
  Env* parent_;
};

struct Arg {
  Value value;
  SourceLoc loc;
};

// The evaluated arguments of a call.
struct CallArgs {
  SourceLoc loc;  // the call expression
  std::vector<Arg> positional;
  std::vector<std::pair<std::string, Arg>> keywords;
};

// What a statement asks of the enclosing code.
enum class Flow : uint8_t { kNormal, kBreak, kContinue, kReturn };

// A name the user may bind with -D (a function parameter, or a T.const
// symbol), or a symbolic size (T.dynamic).
struct ParamInfo {
  enum class Kind : uint8_t {
    kFunctionParam,  // parameter of the kernel-building function
    kConstSymbol,    // eager style: T.const("M, N")
    kDynamicSymbol,  // T.dynamic("n") / T.symbolic("n"): never bound
  };
  std::string name;
  Kind kind = Kind::kFunctionParam;
  std::optional<Value> value;  // bound value (binding or default); unset when unbound
  ir::Var var;                 // the symbolic variable of an unbound parameter
  bool shape_used = false;     // appears in a tensor parameter's shape
  bool tile_used = false;      // appears in a tile size (alloc shape, threads, extents, ...)
};

class Builder {
 public:
  Builder(const Module& module, const SourceFile& file);
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  const SourceFile& file() const { return file_; }
  const Module& module() const { return module_; }

  // ---- Diagnostics ---------------------------------------------------------
  absl::Status Err(SourceLoc loc, std::string_view message) const;
  // Adds `loc` to an error without a location (from value_ops); passes
  // located errors and OK through.
  absl::Status At(const absl::Status& status, SourceLoc loc) const;
  template <typename T>
  absl::StatusOr<T> At(absl::StatusOr<T> v, SourceLoc loc) const {
    if (v.ok()) return v;
    return At(v.status(), loc);
  }
  static absl::Status Internal(std::string_view what);

  // ---- Parameters ----------------------------------------------------------
  int AddParam(ParamInfo info);
  std::vector<ParamInfo>& params() { return params_; }
  // The value a bindable name stands for: its bound value (with provenance),
  // or its symbolic variable.
  Value ParamValue(int id) const;
  // Marks the parameters `v` derives from as used in a tile size / a tensor
  // shape.
  void MarkTileSize(const Value& v);
  void MarkShape(const Value& v);
  void MarkShapeExpr(const ir::Expr& e);
  // The index of the parameter whose symbolic variable `var` is, or -1.
  int ParamOfVar(const ir::VarNode* var) const;

  // ---- Static requirements -------------------------------------------------
  // The integer a value denotes at staging time. `use` names the use for the
  // diagnostic ("range()", "the `dim` of T.reduce_sum", ...).
  absl::StatusOr<int64_t> StaticInt(const Value& v, SourceLoc loc, std::string_view use) const;
  absl::StatusOr<bool> StaticBool(const Value& v, SourceLoc loc, std::string_view use) const;
  absl::StatusOr<ir::DType> StaticDType(const Value& v, SourceLoc loc, std::string_view use) const;
  absl::StatusOr<std::string> StaticStr(const Value& v, SourceLoc loc, std::string_view use) const;
  // The error for a value needed at staging time that is not known then.
  absl::Status NotStatic(const Value& v, SourceLoc loc, std::string_view use) const;
  // The first unbound function parameter in `e` (by name), if any.
  std::optional<std::string> UnboundParamIn(const ir::Expr& e, bool skip_shape_params) const;
  // True when `e` reads runtime state: a load, or a variable that is not a
  // parameter or symbol.
  bool HasRuntimeVars(const ir::Expr& e) const;
  // `e` with the variables of locals (lets) replaced by their values.
  ir::Expr InlineLets(const ir::Expr& e) const;

  // ---- IR conversions -----------------------------------------------------
  absl::StatusOr<ir::Expr> ExprOf(const Value& v, SourceLoc loc) const;
  absl::StatusOr<ir::Expr> ExprAs(const Value& v, ir::DType t, SourceLoc loc) const;
  // An integer size or extent (int32/int64 expression); marks tile-size use
  // when `tile_size` is set.
  absl::StatusOr<ir::Expr> SizeExpr(const Value& v, SourceLoc loc, std::string_view use,
                                    bool tile_size);
  // A shape: an int, or a tuple/list of ints and expressions.
  absl::StatusOr<std::vector<ir::Expr>> ShapeOf(const Value& v, SourceLoc loc, std::string_view use,
                                                bool tile_size);

  // ---- IR emission ---------------------------------------------------------
  bool KernelSyntax() const;
  bool InKernel() const { return kernel_depth_ > 0; }
  const std::vector<int64_t>& kernel_thread_dims() const { return kernel_thread_dims_; }
  // The open T.Kernel's block index variables and grid extents (x first).
  const std::vector<ir::Var>& kernel_block_vars() const { return kernel_block_vars_; }
  const std::vector<ir::Expr>& kernel_grid() const { return kernel_grid_; }
  // The value a kernel-code name was bound to by a let (nullptr for other
  // variables).
  const ir::Expr* LetValue(const ir::VarNode* v) const {
    auto it = let_values_.find(v);
    return it == let_values_.end() ? nullptr : &it->second;
  }
  // The reducers of the enclosing `with T.attr(T.comm_reducer(...),
  // "reduce_scope", ...)` blocks, innermost last.
  std::vector<Value>& reducers() { return reducers_; }
  // Inside `with T.ws(...)` (tl_sync.cc).
  bool InWarpGroupScope() const { return warp_group_scopes_ > 0; }
  // T.sync_grid() at `loc`: the open kernel is cut there (grid_sync.h); only
  // at the kernel's top level.
  absl::Status GridSync(SourceLoc loc);
  // Inside a T.Parallel loop: each iteration is one thread's work.
  bool InParallel() const { return parallel_depth_ > 0; }
  // The open kernel's random number generator state (tl_random.cc): the
  // buffers T.rng_init seeds, null before the kernel's first T.rng_init.
  struct RngState {
    ir::Buffer words;     // uint32 counter, key, output block, position, normal flags
    ir::Buffer normal;    // float32 [cached normal, result], made at the first float32 normal
    ir::Buffer normal64;  // the same in float64
  };
  RngState& rng() { return rng_; }
  // A draw inside T.Parallel of a one-thread kernel: the loops around it run
  // serially, in the order of their iterations (ExecIrLoop).
  void NoteDrawInParallel() { ++parallel_draws_; }
  // Places `s` (an Allocate of a thread-private buffer) at the top of the open
  // kernel, before everything the kernel has emitted, so that every later
  // statement of the kernel sees the buffer.
  absl::Status EmitAtKernelTop(ir::Stmt s, SourceLoc loc, std::string_view what);
  // Views of global tensors made in kernels (views.h).
  ViewMap& views() { return views_; }
  // Reducers allocated with T.alloc_reducer, with their ops (reducers.h).
  ReducerMap& reducer_buffers() { return reducer_buffers_; }
  // T.annotate_safe_value (safe_access.h).
  SafeValues& safe_values() { return safe_values_; }
  // A constant no smaller than `e`, from constants, T.min/T.max and the lets
  // of kernel-code names; nullopt when there is none to see.
  std::optional<int64_t> ConstUpperBound(const ir::Expr& e) const;
  bool InPrimFunc() const { return !blocks_.empty(); }
  // Appends a statement to the innermost open block. Outside a prim_func, or
  // outside T.Kernel for anything but a global workspace or a kernel, this is
  // an error naming `what` (e.g. "T.copy").
  absl::Status Emit(ir::Stmt s, SourceLoc loc, std::string_view what);
  // The values of the parameters of an @autotune function a generator calls
  // (frontend.cc): a call that leaves one out passes this value, not the
  // default.
  void SetTunedArgs(const FunctionDefStmt* def, std::vector<std::pair<std::string, Value>> args) {
    tuned_args_[def] = std::move(args);
  }
  // `b[indices] = v`: v cast to b's dtype, as TileLang stores.
  absl::Status StoreElement(const ir::Buffer& b, std::vector<ir::Expr> indices, const Value& v,
                            SourceLoc loc);
  // Why a tile operator `s` (named `what`) cannot run: it reads the thread
  // index; nullopt when it does not.
  std::optional<std::string> CollectiveReadsThreadIndex(const ir::Stmt& s,
                                                        std::string_view what) const;
  // The buffer name taken from the assignment being evaluated
  // (`A_shared = T.alloc_shared(...)`), or `fallback`.
  std::string TakeNameHint(std::string_view fallback);
  // Eager style: outputs created by T.empty, in order.
  void AddOutput(ir::Buffer b) { outputs_.push_back(std::move(b)); }
  bool eager() const { return eager_; }
  void set_eager(bool e) { eager_ = e; }

  // ---- Evaluation ---------------------------------------------------------
  absl::StatusOr<Value> Eval(const Expr& e);
  absl::StatusOr<Flow> ExecBlock(const StmtList& body);
  // A kernel of `spec` whose block indices are named `names` (bound by
  // `bind`, given their values) and whose body is `body` (builder_stmt.cc).
  absl::StatusOr<Flow> RunKernel(const KernelSpec& spec, const std::vector<std::string>& names,
                                 const StmtList& body, SourceLoc loc,
                                 const std::function<void(const ValueList&)>& bind);
  // TIR's explicit thread loops outside T.Kernel (`for bx in
  // T.thread_binding(n, thread="blockIdx.x"): for tx in ...`), a kernel
  // (builder_loops.cc).
  absl::StatusOr<Flow> ExecThreadBindingKernel(const ForStmt& s);
  bool IsThreadBindingLoop(const ForStmt& s);
  absl::StatusOr<Flow> Exec(const Stmt& s);
  // `v.attr` (attribute access, getattr()); `loc` is where the attribute is
  // named.
  absl::StatusOr<Value> Attribute(const Value& v, const std::string& attr, SourceLoc loc);
  // Calls a function value (def, macro, lambda, builtin, dtype constructor).
  absl::StatusOr<Value> CallValue(const Value& fn, CallArgs args);
  // Calls a `def` with arguments; runs its body in a new frame.
  absl::StatusOr<Value> CallFunction(const FunctionValue& fn, CallArgs args);
  // Builds a function value for a `def` evaluated in the current scope.
  absl::StatusOr<Value> MakeFunction(const FunctionDefStmt& def, Env* closure);

  // ---- Classes (classes.cc) --------------------------------------------------
  // Runs a class body (in a scope whose parent is `closure`) and builds the
  // class: methods, class attributes, bases of the source file, @dataclass.
  absl::StatusOr<Value> MakeClass(const ClassDefStmt& def, Env* closure);
  // `Cls(...)`: a new instance, initialised by __init__ (or the dataclass
  // fields) of the class or its bases.
  absl::StatusOr<Value> CallClass(const Value& cls, CallArgs args);
  // `obj.attr` / `Cls.attr` for a class or an instance (methods bound as
  // Python binds them, properties called); nullopt when there is none.
  absl::StatusOr<std::optional<Value>> ClassAttribute(const Value& v, const std::string& attr,
                                                      SourceLoc loc);
  // super() inside a method, and attributes read through it.
  absl::StatusOr<Value> Super(SourceLoc loc);
  absl::StatusOr<std::optional<Value>> SuperAttribute(const Value& sup, const std::string& attr,
                                                      SourceLoc loc);
  // `obj.attr = v` / `Cls.attr = v`.
  absl::Status SetAttribute(const Value& target, const std::string& attr, const Value& v,
                            SourceLoc loc);
  // Names a module-level binding (import, def, assignment), evaluated on
  // first use; nullopt when the module does not define `name`.
  absl::StatusOr<std::optional<Value>> ModuleGlobal(const std::string& name, SourceLoc loc);
  // The flavor a def's decorators give it (prim_func, macro, or plain).
  absl::StatusOr<FunctionFlavor> DecoratorFlavor(const FunctionDefStmt& def, Env* closure);
  // What the pass_configs of a compilation decorator of `def`
  // (@tilelang.jit(...), @tilelang.autotune(...)) ask for: fast math
  // (TL_ENABLE_FAST_MATH, also spelled "tl.enable_fast_math") and no warp
  // specialisation (TL_DISABLE_WARP_SPECIALIZED, "tl.disable_warp_specialized").
  // A pass_configs that evaluates to something other than a dict is an error
  // at its place; one tilec cannot evaluate asks for nothing; other keys
  // change nothing tilec does.
  struct PassConfigs {
    bool fast_math = false;
    bool disable_warp_specialized = false;
  };
  absl::StatusOr<PassConfigs> DecoratorPassConfigs(const FunctionDefStmt& def);

  // What encloses the statement being run (Frame::loops).
  enum class Enclosing : uint8_t { kPythonLoop, kIrLoop, kBranch, kKernel };
  // `break` / `continue` of a kernel loop (and T.loop_break()): a flag
  // variable the loop owns (0 go on, 1 continue, 2 break) is set, the
  // statements after the one that may set it run under `flag == 0`, and the
  // loop does nothing in its remaining iterations once it is 2
  // (builder_loop_exit.cc).
  struct LoopExit {
    std::string refusal;  // non-empty: the loop takes no break/continue ("a T.Parallel loop")
    ir::Buffer flag;      // made at the first break/continue
    bool breaks = false;
    bool continues = false;
    int exits = 0;  // break/continue statements built so far
  };
  // A `break` (or `continue`) at `loc`: Flow::kBreak / kContinue for a
  // Python loop; for a kernel loop (through runtime branches) its flag is
  // set and the flow goes on. `call` is T.loop_break(), which ends kernel
  // loops only.
  absl::StatusOr<Flow> ExecLoopControl(bool is_break, bool call, SourceLoc loc);
  // Around the body of a kernel loop: its exit state, pushed with
  // Enclosing::kIrLoop, and popped with it.
  void OpenIrLoop(std::string refusal);
  LoopExit CloseIrLoop();
  // The loop body with its exits applied (a continue cleared first; with
  // `skip_after_break`, the body skipped once the flag says break), and the
  // flag's Allocate emitted before the loop; `body` unchanged when the loop
  // has no break/continue.
  absl::StatusOr<ir::Stmt> ApplyLoopExits(const LoopExit& e, ir::Stmt body, SourceLoc loc,
                                          bool skip_after_break = true);
  // The runtime `while` with exits: the condition is tested inside the body,
  // and a false one sets the flag as a break does.
  absl::StatusOr<ir::Stmt> WhileWithExits(const LoopExit& e, ir::Expr cond, ir::Stmt body,
                                          SourceLoc loc);
  // break/continue statements built so far in the innermost kernel loop of
  // this frame, or -1 without one.
  int LoopExitCount();
  // body[begin..] under `flag == 0` of the innermost kernel loop.
  absl::StatusOr<Flow> ExecAfterLoopExit(const StmtList& body, size_t begin);
  absl::StatusOr<Flow> ExecBlockFrom(const StmtList& body, size_t begin);

  // Frames: one per function being run.
  struct Frame {
    Env* env = nullptr;
    bool kernel_syntax = false;
    size_t block_base = 0;  // blocks_.size() when the frame started
    std::optional<Value> return_value;
    std::vector<Enclosing> loops;      // what encloses the running statement, innermost last
    std::vector<LoopExit> loop_exits;  // one per Enclosing::kIrLoop of `loops`, in order
    std::string name;
    // A method's frame: the class that defined it and its first argument
    // (what super() needs).
    std::shared_ptr<ClassValue> method_owner;
    std::optional<Value> method_self;
  };
  absl::Status PushFrame(Frame f, SourceLoc loc);
  void PopFrame() { frames_.pop_back(); }
  Frame& frame() { return frames_.back(); }
  bool HasFrame() const { return !frames_.empty(); }

  // Open IR blocks (prim_func body, kernels, loops, branches).
  struct Block {
    int id = 0;
    std::vector<ir::Stmt> stmts;
  };
  void PushBlock();
  std::vector<ir::Stmt> PopBlock();
  int CurrentBlockId() const { return blocks_.empty() ? -1 : blocks_.back().id; }
  bool BlockOpen(int id) const;

  // Binding a name in the current frame, with TileLang's rules for runtime
  // values (Let, alloc_var store). `loc` is the target.
  absl::Status AssignName(const std::string& name, const Value& v, SourceLoc loc);
  // Binds without Let/store rules (parameters, loop variables).
  void BindName(const std::string& name, const Value& v);

  // A new scope, owned by the builder.
  Env* NewEnv(Env* parent);

  // Counts one step of staging work against the thread's StagingBudget
  // (staging_budget.h); fails, located at `loc`, when it is spent.
  absl::Status Tick(SourceLoc loc);

  // Bounds the nesting of evaluation (expressions, statements and calls
  // together), so that deeply nested input is an error, not a stack overflow.
  class DepthGuard {
   public:
    DepthGuard(Builder& b, SourceLoc loc);
    ~DepthGuard() { --b_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    const absl::Status& status() const { return status_; }

   private:
    Builder& b_;
    absl::Status status_;
  };

  // Binding values given on the command line evaluate unknown names as
  // strings (`-D dtype=float16`).
  void set_names_as_strings(bool on) { names_as_strings_ = on; }

  // The tensor parameters declared so far (prim_func params, eager
  // annotations), by parameter name.
  std::unordered_map<std::string, ir::Buffer>& tensor_params() { return tensor_params_; }
  std::unordered_map<std::string, ir::Var>& scalar_params() { return scalar_params_; }
  // Declares tensor parameter `name` of type `tt` (tensor_params.cc): its
  // buffer, and for a strided tensor the view the kernel indexes; binds the
  // name. INVALID_ARGUMENT at `loc` for strides tilec cannot lay out.
  absl::Status DeclareTensorParam(const std::string& name, const TensorTypeValue& tt,
                                  SourceLoc loc);
  // The type of tensor parameter `name` of a @tilelang.lazy_jit signature
  // (tensor_params.cc), from its annotation and what the call gives (a -D
  // binding or the default: a tensor type, or a dtype alone); either may be
  // missing, not both. An `int` dimension or stride takes the given value,
  // else becomes the dynamic size `<name>_<d>` (`<name>_stride_<d>`), as a
  // `T.dyn` one always does; `Any` takes the given dtype. Fixed entries must
  // agree with what is given. INVALID_ARGUMENT at `loc` otherwise.
  absl::StatusOr<TensorTypeValue> SignatureTensor(const std::string& name,
                                                  const std::optional<Value>& annotation,
                                                  const std::optional<Value>& given,
                                                  SourceLoc loc);
  // The device the program is built for (nullptr: none given), and the
  // queries of it answered so far (tl_device.cc), each once, in order.
  const DeviceFacts* device() const { return device_ ? &*device_ : nullptr; }
  void set_device(std::optional<DeviceFacts> d) { device_ = std::move(d); }
  void RecordDeviceQuery(std::string answer) {
    if (std::find(device_queries_.begin(), device_queries_.end(), answer) == device_queries_.end())
      device_queries_.push_back(std::move(answer));
  }
  const std::vector<std::string>& device_queries() const { return device_queries_; }
  // Vector variables (T.alloc_var of a vector dtype): local buffers of one
  // element per lane, by buffer, with their lanes.
  std::map<const ir::BufferNode*, int64_t>& vector_vars() { return vector_vars_; }
  // The strided tensor parameters, by name (the buffer is tensor_params()'s).
  const std::unordered_map<std::string, ir::TensorView>& tensor_views() const {
    return tensor_views_;
  }
  const std::vector<ir::Buffer>& outputs() const { return outputs_; }
  // Asserts on dynamic sizes, checked at launch (ir::Requirement).
  const std::vector<ir::Requirement>& requirements() const { return requirements_; }
  // Eager style: tensor parameters whose `A: T.Tensor(...)` annotation has
  // not run yet.
  std::vector<std::string>& pending_tensors() { return pending_tensors_; }

  // Statements and expressions (builder_stmt.cc / builder_expr.cc).
 private:
  struct ModuleEntry {
    const Stmt* stmt = nullptr;  // the defining top-level statement
    std::optional<Value> value;
    bool evaluating = false;
  };

  absl::StatusOr<Value> EvalName(const NameExpr& e);
  absl::StatusOr<Value> EvalConstant(const ConstantExpr& e);
  absl::StatusOr<Value> EvalAttribute(const AttributeExpr& e);
  absl::StatusOr<Value> EvalSubscript(const SubscriptExpr& e);
  absl::StatusOr<Value> EvalCall(const CallExpr& e);
  absl::StatusOr<Value> EvalBoolOp(const BoolOpExpr& e);
  absl::StatusOr<Value> EvalCompare(const CompareExpr& e);
  absl::StatusOr<Value> EvalIfExp(const IfExpExpr& e);
  absl::StatusOr<Value> EvalComprehension(const ComprehensionExpr& e);
  absl::StatusOr<Value> EvalLambda(const LambdaExpr& e);
  absl::StatusOr<ValueList> EvalElements(const std::vector<ExprPtr>& elts);
  absl::StatusOr<std::string> FormatFString(const ConstantExpr& e);
  absl::StatusOr<Value> IndexBuffer(const ir::Buffer& b, const SubscriptExpr& e);
  absl::StatusOr<Value> IndexStaging(const Value& v, const SubscriptExpr& e);
  absl::StatusOr<CallArgs> EvalArgs(const CallExpr& e);

  absl::StatusOr<Flow> ExecAssign(const AssignStmt& s);
  absl::StatusOr<Flow> ExecAugAssign(const AugAssignStmt& s);
  absl::StatusOr<Flow> ExecAnnAssign(const AnnAssignStmt& s);
  absl::StatusOr<Flow> ExecFor(const ForStmt& s);
  absl::StatusOr<Flow> ExecIrLoop(const ForStmt& s, const LoopSpec& loop);
  // `dst = v` element by element for a region of at most 64 constant
  // elements and a region of as many (or a scalar); nullopt when it is not
  // one (builder_kernel.cc).
  std::optional<absl::Status> StoreSmallRegion(const ir::Region& dst, const Value& v,
                                               SourceLoc loc);
  absl::StatusOr<Flow> ExecPersistentLoop(const ForStmt& s, const LoopSpec& loop,
                                          const std::vector<const NameExpr*>& names);
  absl::StatusOr<Flow> ExecGeneratorLoop(const ForStmt& s, const Value& gen);
  absl::StatusOr<Flow> ExecStagingLoop(const ForStmt& s, const ValueList& items);
  absl::StatusOr<Flow> ExecWhile(const WhileStmt& s);
  absl::StatusOr<Flow> ExecRuntimeWhile(const WhileStmt& s, const Value& cond);
  absl::StatusOr<Flow> ExecIf(const IfStmt& s);
  absl::StatusOr<Flow> ExecIfParts(const Expr& test, const StmtList& body, const StmtList& orelse,
                                   SourceLoc loc);
  // TIR's frame-style branch: `with T.If(c), T.Then(): ...`, or `with
  // T.If(c):` around `with T.Then():` and an optional `with T.Else():`.
  std::optional<absl::StatusOr<Flow>> ExecIfFrame(const WithStmt& s);
  absl::StatusOr<Flow> ExecWith(const WithStmt& s);
  absl::StatusOr<Flow> ExecReturn(const ReturnStmt& s);
  absl::StatusOr<Flow> ExecAssert(const AssertStmt& s);
  absl::StatusOr<Flow> ExecImport(const Stmt& s);
  // Reads the runtime values of a tuple assignment into locals when one of
  // its targets is a store (Python evaluates the right side first).
  // `e` as a local of the kernel: a Let named `name` (trivial expressions,
  // variables and literals, stay as they are).
  absl::StatusOr<Value> LetBound(const std::string& name, const ir::Expr& e, SourceLoc loc);
  absl::Status SnapshotBeforeStores(const std::vector<ExprPtr>& targets, ValueList& values);
  absl::Status AssignTarget(const Expr& target, const Value& v);
  absl::StatusOr<Value> Iterable(const Value& v, SourceLoc loc, ValueList* items);

  void IndexModule();
  absl::StatusOr<Value> EvalModuleEntry(const std::string& name, ModuleEntry& entry, SourceLoc loc);
  absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> PipelineSchedule(
      SourceLoc loc, const LoopSpec& loop, size_t scheduled);
  absl::StatusOr<Value> ImportValue(const std::string& module, const std::string& name,
                                    SourceLoc loc);

  const Module& module_;
  const SourceFile& file_;
  std::unordered_map<std::string, ModuleEntry> module_entries_;

  std::vector<ParamInfo> params_;
  std::unordered_map<const ir::VarNode*, int> param_of_var_;
  std::vector<Frame> frames_;
  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<Block> blocks_;
  int next_block_id_ = 0;
  int kernel_depth_ = 0;
  int kernel_block_id_ = -1;  // the open T.Kernel's top-level block
  // Where T.sync_grid() cuts the open kernel: statement indices of its
  // top-level block, and the first call's location.
  std::vector<size_t> grid_syncs_;
  SourceLoc grid_sync_loc_;
  // The open T.Kernel's thread dimensions (x first; [n] for threads=n, [0]
  // when n is not a constant).
  std::vector<int64_t> kernel_thread_dims_;
  std::vector<ir::Var> kernel_block_vars_;
  std::vector<ir::Expr> kernel_grid_;
  std::map<const ir::VarNode*, ir::Expr> let_values_;
  // The let variables of let_values_, kept alive for the whole build so that
  // no later variable is allocated at a dropped one's address and inherits
  // its value (as the CUDA emitter pins the variables it has facts about).
  std::vector<ir::Var> let_vars_;
  std::vector<Value> reducers_;
  int warp_group_scopes_ = 0;
  ViewMap views_;
  SafeValues safe_values_;
  ReducerMap reducer_buffers_;
  bool eager_ = false;
  bool names_as_strings_ = false;
  std::string name_hint_;
  int depth_ = 0;
  std::optional<StagingBudget> own_budget_;
  std::unordered_map<std::string, ir::Buffer> tensor_params_;
  std::unordered_map<std::string, ir::Var> scalar_params_;
  std::unordered_map<std::string, ir::TensorView> tensor_views_;
  std::optional<DeviceFacts> device_;
  int parallel_depth_ = 0;  // T.Parallel loops open around the statement
  RngState rng_;
  int64_t parallel_draws_ = 0;
  std::map<const FunctionDefStmt*, std::vector<std::pair<std::string, Value>>> tuned_args_;
  std::map<const ir::BufferNode*, int64_t> vector_vars_;
  std::vector<std::string> device_queries_;
  std::vector<ir::Buffer> outputs_;
  std::vector<ir::Requirement> requirements_;
  std::vector<std::string> pending_tensors_;
};

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_BUILDER_H_
