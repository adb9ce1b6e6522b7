// Internals of the CUDA emitter (emitter.h), shared by its files:
//   emitter.cc          program and kernel structure, parameters, smem plan
//   emitter_expr.cc     expressions, element types, buffer addressing
//   emitter_stmt.cc     statements, T.Parallel nests, loops, barriers
//   emitter_slots.cc    fragment slots: partition loops and slot tables
//   emitter_copy.cc     T.copy and T.fill
//   emitter_gemm.cc     T.gemm
//   emitter_reduce.cc   T.reduce_* and T.cumsum
//   emitter_atomic.cc   T.atomic_add
//   emitter_vector.cc   vector loads and stores in T.Parallel nests
//   emitter_stmatrix.cc the accumulator epilogue with stmatrix (sm_90a)
// Not part of tilec's API.
#ifndef TILEC_COMPILER_TARGETS_CUDA_EMITTER_INTERNAL_H_
#define TILEC_COMPILER_TARGETS_CUDA_EMITTER_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "compiler/inference/layout.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/inference/tma_plan.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/thread_dependence.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/target.h"

namespace tilec::cuda {

struct WarpSpecialization;  // emitter_ws.cc

// Lines of generated code with indentation (two spaces per level).
class CodeWriter {
 public:
  void Line(absl::string_view text);
  void Open(absl::string_view head);        // "head {" and one level in
  void Close(absl::string_view tail = "");  // one level out and "}tail"
  void Else();                              // "} else {" between two levels
  void Blank();
  void Indent(int delta);
  // Appends text produced by another writer started at indent 0, re-indented
  // to this writer's level.
  void Splice(const CodeWriter& other);
  const std::string& text() const { return out_; }
  // Removes `const int name = ...;` and `const bool name = ...;` lines whose
  // name is used nowhere else in the text (index variables and conditions a
  // loop body turned out not to need).
  void DropUnusedConstLets();
  bool empty() const { return out_.empty(); }

 private:
  std::string out_;
  int indent_ = 0;
};

// C++ identifiers, unique within one kernel.
class NameTable {
 public:
  NameTable();
  // A fresh identifier from `hint` (non-identifier characters replaced; a
  // suffix _1, _2, ... when taken; keywords and reserved names avoided).
  std::string Fresh(absl::string_view hint);

 private:
  std::set<std::string> used_;
};

// Element types (docs/cuda_backend.md, "Element types").
std::string CType(ir::DType t);
// float16, bfloat16, float8: stored in tl types, computed in float.
bool IsNarrowFloat(ir::DType t);
// int8, uint8, int16, bool... whose C++ arithmetic promotes to int.
bool IsNarrowInt(ir::DType t);
int64_t ElemBytes(ir::DType t);

// An emitted C++ expression and its precedence (0 binds tightest: names,
// literals, calls; 2 unary; 3 * / %; 4 + -; 5 shifts; 6 relational;
// 7 equality; 8 &; 9 ^; 10 |; 11 &&; 12 ||; 13 ?:).
struct CExpr {
  std::string text;
  int prec = 0;
};

// What a shared buffer, fragment, local or variable is in the generated code.
struct BufferInfo {
  ir::Buffer buffer;
  std::string name;   // C++ name of the array / pointer / scalar
  std::string ctype;  // element type
  // kShared
  int64_t smem_offset = 0;
  int64_t bytes = 0;        // bytes of one copy of the buffer
  int64_t stages = 1;       // copies for a multi-stage T.Pipelined loop
  int64_t rows = 0;         // rows of its layout as allocated (padding included)
  std::string layout_type;  // C++ alias of the tl layout type
  const inference::SharedLayout* shared = nullptr;
  // kFragment
  const inference::FragmentLayout* fragment = nullptr;
  // kGlobal: flat shape expressions (the strides are derived from them)
};

// One per-thread loop over the slots of a partition: a T.Parallel nest or a
// tile operator's element loop. Fragment accesses inside it resolve to a slot
// of the accessed fragment, through a constant table when the slot differs
// from the loop's own.
struct SlotLoop {
  const inference::FragmentLayout* layout = nullptr;
  std::string slot;  // C++ name of the slot variable
  // IR variables bound to the logical index (nest variables; empty for
  // operator loops), with their constant loop mins (none: all zero).
  std::vector<const ir::VarNode*> vars;
  std::vector<int64_t> mins;
  int64_t Min(size_t d) const { return d < mins.size() ? mins[d] : 0; }
  // Lets met so far inside the loop body, in order (evaluated when building
  // slot tables).
  std::vector<std::pair<const ir::VarNode*, ir::Expr>> lets;
  // Declarations to place before the loop (slot tables).
  std::vector<std::string> decls;
  std::map<std::vector<int64_t>, std::string> tables;
  // Replica guard for side effects outside fragments ("" when unreplicated).
  std::string replica_guard;
};

class EmitContext {
 public:
  EmitContext(const ir::Program& program, const inference::LayoutPlan& plan,
              const CudaTarget& target);

  const ir::Program& program() const { return program_; }
  const inference::LayoutPlan& plan() const { return plan_; }
  const CudaTarget& target() const { return target_; }
  CodeWriter& w() { return *writer_; }
  // Redirects output to `w` until the returned writer is restored.
  CodeWriter* SetWriter(CodeWriter* w) {
    CodeWriter* old = writer_;
    writer_ = w;
    return old;
  }

  // --- errors: the first failure wins; emission goes on but its text is
  // dropped.
  void Fail(absl::Status s);
  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  absl::Status Unimplemented(absl::string_view what) const;  // "... is not supported on sm_80"
  absl::Status Internal(absl::string_view what) const;       // "... (a tilec bug)"

  // --- names
  NameTable& names() { return names_; }
  std::string Fresh(absl::string_view hint) { return names_.Fresh(hint); }
  // The C++ name of an IR variable (declared with DeclareVar, or a dyn dim /
  // scalar parameter / block variable).
  std::string VarName(const ir::VarNode* v);
  std::string DeclareVar(const ir::Var& v);
  // Makes `v` print as `text` (a literal or an existing C++ name).
  void BindVarText(const ir::Var& v, std::string text);

  // --- buffers
  BufferInfo* Info(const ir::BufferNode* b);
  BufferInfo& AddBuffer(const ir::Buffer& b, std::string name);
  const inference::FragmentLayout* FragmentOf(const ir::BufferNode* b);

  // --- expressions (emitter_expr.cc)
  // Variables known to be >= 0 (thread and slot indices, block and loop
  // variables with non-negative mins, dynamic dims).
  std::set<const ir::VarNode*>& nonneg_vars() { return nonneg_vars_; }
  // Whether an integer expression is known to be >= 0 (constants, such
  // variables, and + * / % min max of such, or a known range).
  bool NonNegative(const ir::Expr& e);
  // Inclusive value ranges of integer variables (block indices of constant
  // grids, loops with constant bounds, iteration indices of partitions).
  // Facts about a variable (nonneg_vars_, ranges_, var_names_ are keyed by
  // its node): every variable given one is kept alive (pinned_) until
  // Reset, so that no later variable is allocated at a dead temporary's
  // address and inherits its facts or its name. (A lane value of a
  // vectorised loop once took a dead loop index's non-negativity, and a
  // floormod of it was emitted as C's %, wrong for negative values, in some
  // builds only.)
  void MarkNonNegative(const ir::Var& v);
  void SetRange(const ir::Var& v, int64_t lo, int64_t hi);
  // The range of the variable of a loop from `min` over `extent`
  // iterations, from their ranges (an extent known only at launch may
  // still be bounded: min(n, ceildiv((bx + 1) * 128, 128)) with bx's).
  void SetLoopRange(const ir::Var& v, const ir::Expr& min, const ir::Expr& extent);
  // The value of a bool expression when the ranges of its integers decide
  // it (k * 128 + j < 4096 with k <= 31 and j <= 127: true); nullopt
  // otherwise. Comparisons, and/or/not of them.
  std::optional<bool> Decide(const ir::Expr& e);
  // The inclusive range of an integer expression, when every variable in it
  // has one (+ - * / % min max ceildiv and casts) and every value it takes
  // is one its type holds (no wrap or overflow in the emitted C).
  std::optional<std::pair<int64_t, int64_t>> Range(const ir::Expr& e);
  CExpr Emit(const ir::Expr& e);
  std::string Expr(const ir::Expr& e) { return Emit(e).text; }
  // `e` as an operand of an operator of precedence `prec` (see CExpr):
  // parenthesized when it binds more loosely. RelOperand: of <, >=, ...
  std::string Operand(const ir::Expr& e, int prec) {
    CExpr c = Emit(e);
    return c.prec < prec ? c.text : "(" + c.text + ")";
  }
  std::string RelOperand(const ir::Expr& e) { return Operand(e, 6); }
  // `text` (of dtype `from`) converted to `to`.
  CExpr Convert(CExpr value, ir::DType from, ir::DType to);
  // An lvalue for buffer[indices] (fragments resolve through the innermost
  // slot loop, or directly when replicated everywhere).
  std::string Access(const ir::Buffer& b, const std::vector<ir::Expr>& indices);
  // Global/local: the row-major flat index; shared: the layout offset.
  std::string FlatIndex(const ir::Buffer& b, const std::vector<ir::Expr>& indices);
  // The row-major flat index of a global or local buffer element, as IR.
  static ir::Expr RowMajorIndex(const ir::Buffer& b, const std::vector<ir::Expr>& indices);
  // The pointer to element `indices` of a global or shared buffer.
  std::string Address(const ir::Buffer& b, const std::vector<ir::Expr>& indices);
  // `buf[ofs]` for a shared buffer: the current stage's base.
  std::string SharedBase(const BufferInfo& info);
  // Literal text of a constant of dtype t.
  static std::string Literal(double v, ir::DType t);
  static std::string IntLiteral(int64_t v, ir::DType t);

  // --- statements (emitter_stmt.cc)
  absl::Status EmitStmt(const ir::Stmt& s);

  // --- slot loops (emitter_slots.cc)
  SlotLoop* slot_loop() { return slot_loops_.empty() ? nullptr : slot_loops_.back(); }
  // Emits `for (slot...) { <bind logical index> body }` over `layout`'s slots
  // of this thread. `bind` receives the C++ expressions of the logical
  // index; `body` emits the loop body (the SlotLoop is active meanwhile).
  // Invalid (padding) slots are skipped.
  void SlotLoopOver(const inference::FragmentLayout& layout, SlotLoop& loop,
                    const std::function<void(const std::vector<std::string>&)>& body);
  // The slot of fragment `frag` holding element `indices` in the current
  // slot loop, as C++ text (the loop's slot, a table lookup or an
  // expression).
  std::string FragmentSlot(const ir::Buffer& frag, const std::vector<ir::Expr>& indices);
  // The C++ condition "this thread is replica 0 of the partition's
  // iteration", or "" when the partition is not replicated.
  std::string ReplicaGuard(const inference::FragmentLayout& layout);
  // `layout`'s inverse map for thread `tx` and slot `slot`, as C++.
  std::vector<std::string> LogicalText(const inference::FragmentLayout& layout,
                                       const std::string& slot);
  std::string LayoutExprText(const inference::FragmentLayout& layout, const ir::Expr& e,
                             const std::string& slot);

  // --- barriers (emitter_stmt.cc)
  // Keys of what a statement reads and writes among the block-shared state
  // (shared buffers, the scratch area).
  struct Access2 {
    std::set<const void*> reads, writes;
  };
  // Inserts a barrier when `a` reads what another thread may have written
  // since the last barrier, or writes what others may still read or write.
  void BeforeShared(const Access2& a);
  void AfterShared(const Access2& a);
  void Barrier();  // commits and waits for pending cp.async, then syncthreads
  // Shared buffers that share bytes (the kernel's shared-memory plan): an
  // access to one is an access to all of them when barriers are placed.
  void SetSharedAliases(std::map<const void*, std::set<const void*>> aliases) {
    aliases_ = std::move(aliases);
  }
  // `keys` and every buffer sharing bytes with one of them.
  std::set<const void*> SharingBytes(const std::set<const void*>& keys) const;
  // Set while emitting a kernel that reads the thread index: its per-thread
  // statements are emitted as units, with one barrier decision before each
  // and none inside (their control may diverge between threads).
  void set_thread_dependence(const ir::ThreadDependence* d) { thread_dependence_ = d; }
  bool in_per_thread() const { return per_thread_depth_ > 0; }
  // The barrier-tracking key of scratch area 0 or 1.
  static const void* ScratchKey(int area);
  // Shared buffers read and written by a statement (recursively).
  Access2 SharedAccesses(const ir::Stmt& s);

  // --- kernel state
  int64_t threads() const { return threads_; }
  bool in_pipeline() const { return pipeline_depth_ > 0; }
  // While set, global->shared copies are producers of a multi-stage pipeline:
  // cp.async whose groups the pipeline commits and waits for itself.
  bool& staged_copy() { return staged_copy_; }
  // Inside a pipelined loop whose gemms run as asynchronous wgmma: the name
  // of the loop's tl::WgmmaGroup (each T.gemm issues its group and retires
  // the previous one); empty elsewhere.
  std::string& wgmma_group() { return wgmma_group_; }
  // The body of the kernel being emitted.
  const ir::Stmt& kernel_body() const { return kernel_body_; }
  void set_kernel_body(ir::Stmt body) { kernel_body_ = std::move(body); }
  void set_pending_async() { pending_async_ = true; }
  // Records a tensor-core instruction the kernel uses (CudaKernel::mma).
  void NoteMma(const std::string& instruction);
  const std::vector<std::string>& mma() const { return mma_; }
  // The N of the wgmma instructions the program uses (each is compiled in
  // from tl/wgmma_ops.h by a TL_WGMMA_N<N> define, TL_WGMMA_RS_N<N> with A
  // from registers); kept across kernels.
  void NoteWgmmaN(int64_t n, bool a_in_registers) {
    (a_in_registers ? wgmma_rs_n_ : wgmma_n_).insert(n);
  }
  const std::set<int64_t>& wgmma_n() const { return wgmma_n_; }
  const std::set<int64_t>& wgmma_rs_n() const { return wgmma_rs_n_; }
  // Whether the program runs a gemm as wgmma: shared buffers are then
  // 1024-byte aligned (the 128-byte swizzle's period), and every block
  // barrier is preceded by fence.proxy.async so that what the threads wrote
  // to shared memory is visible to wgmma.
  bool uses_wgmma() const;
  // Writes "tl::syncthreads();" (in a warp-specialised kernel the
  // consumers' named barrier), after tl::fence_proxy_async() when
  // uses_wgmma().
  void WriteBarrier();
  // The C++ name of the thread index (`tx`; the producer warpgroup's part of
  // a copy planned for the consumers names the consumer thread it stands
  // for otherwise).
  const std::string& thread_index() const { return thread_index_; }
  void set_thread_index(std::string name) { thread_index_ = std::move(name); }
  // The kernel's warp specialisation, or null.
  const WarpSpecialization* ws() const { return ws_; }
  void set_ws(const WarpSpecialization* ws) { ws_ = ws; }
  // Scratch shared memory for one operator: at least `bytes` bytes in one of
  // two areas that alternate between consecutive operators, so an operator
  // writing its area never waits for the previous operator's readers (whose
  // own barrier already separates them from the one before).
  struct ScratchArea {
    const void* key;      // barrier-tracking key of the area
    std::string pointer;  // C++ expression: the area as a `ctype*`
  };
  ScratchArea Scratch(int64_t bytes, absl::string_view ctype);

  // TMA (emitter_pipeline.cc): the tensor maps the kernel takes, as
  // parameters after the others, and its mbarriers (an array of 8-byte
  // objects after everything else in shared memory).
  struct TensorMapParam {
    std::string name;  // C++ name of the `const __grid_constant__ tl::TmaMap` parameter
    int param = -1;    // Program.params index of the tensor
    std::vector<int64_t> box;  // outermost first
    int64_t swizzle_bytes = 0;
    int64_t elem_bytes = 0;
  };
  // The map for `plan`'s tensor, box and swizzle (one per distinct triple).
  std::string TensorMap(const inference::TmaCopyPlan& plan);
  const std::vector<TensorMapParam>& tensor_maps() const { return tensor_maps_; }
  // Reserves `count` mbarriers: the C++ expression of the first's address.
  std::string Mbarriers(int64_t count);
  int64_t mbarrier_count() const { return mbarrier_count_; }
  const std::string& mbarrier_array() const { return mbarrier_array_; }

  // Kernel-level state, managed by emitter.cc.
  // Starts a kernel: `where` names it in messages.
  void BeginKernel(std::string where, int64_t threads, std::string scratch0, std::string scratch1);
  // Forgets the previous kernel's names, buffers and variables.
  void Reset();
  // Bytes of each scratch area, and whether area 1 is used.
  int64_t scratch_bytes() const { return scratch_bytes_; }
  bool scratch_area1_used() const { return scratch_used_[1]; }
  // Every operator takes scratch area 0 (a barrier then separates an
  // operator's writes from the previous one's reads): for kernels whose
  // shared memory does not fit with two areas.
  void set_one_scratch_area(bool one) { one_scratch_area_ = one; }

  // IR variables the emitter makes for itself, kept alive until emission ends
  // so that their addresses (keys of the maps here) are never reused.
  void KeepAlive(ir::Var v) { own_vars_.push_back(std::move(v)); }

  std::vector<SlotLoop*>& slot_loops() { return slot_loops_; }
  // A block-uniform loop's body: what a previous iteration loaded counts as
  // loaded since the last barrier (loaded_since_barrier_).
  void NoteLoadsIn(const ir::Stmt& s);
  std::set<const void*>& written() { return written_; }
  std::set<const void*>& read() { return read_; }
  int& pipeline_depth() { return pipeline_depth_; }
  std::map<const ir::VarNode*, std::string>& var_names() { return var_names_; }
  // The C++ pointer to the stage of a multi-staged shared buffer that
  // accesses use, set while emitting a multi-stage loop.
  std::map<const ir::BufferNode*, std::string>& stage_index() { return stage_index_; }

 private:
  const ir::Program& program_;
  const inference::LayoutPlan& plan_;
  const CudaTarget& target_;
  CodeWriter* writer_ = nullptr;
  absl::Status status_;
  std::string where_;
  NameTable names_;
  std::map<const ir::VarNode*, std::string> var_names_;
  std::map<const ir::BufferNode*, BufferInfo> buffers_;
  std::vector<SlotLoop*> slot_loops_;
  std::set<const void*> written_, read_;
  // Buffers any emitted expression loaded from since the last barrier: a
  // block-level store to one of them waits for every thread's read.
  std::set<const ir::BufferNode*> loaded_since_barrier_;
  std::map<const void*, std::set<const void*>> aliases_;
  const ir::ThreadDependence* thread_dependence_ = nullptr;
  int per_thread_depth_ = 0;
  bool pending_async_ = false;
  bool staged_copy_ = false;
  ir::Stmt kernel_body_;
  int pipeline_depth_ = 0;
  int64_t threads_ = 0;
  int64_t scratch_bytes_ = 0;
  std::string scratch_names_[2];
  bool scratch_used_[2] = {false, false};
  int next_scratch_ = 0;
  bool one_scratch_area_ = false;
  std::map<const ir::BufferNode*, std::string> stage_index_;
  std::vector<TensorMapParam> tensor_maps_;
  const WarpSpecialization* ws_ = nullptr;
  std::string thread_index_ = "tx";
  int64_t mbarrier_count_ = 0;
  std::string mbarrier_array_;
  std::vector<std::string> mma_;
  std::set<int64_t> wgmma_n_, wgmma_rs_n_;
  std::string wgmma_group_;
  // Range before the type check: the mathematical values.
  std::optional<std::pair<int64_t, int64_t>> RangeInMath(const ir::Expr& e);
  std::vector<ir::Var> pinned_;
  std::set<const ir::VarNode*> nonneg_vars_;
  std::map<const ir::VarNode*, std::pair<int64_t, int64_t>> ranges_;
  std::vector<ir::Var> own_vars_;
};

// A multi-stage T.Pipelined loop (emitter_pipeline.cc): its stage count, the
// top-level T.copy statements of the body that run ahead ("producers"), the
// shared buffers they fill (kept `stages` times), and the pure lets of the
// body the producers may use.
struct PipelineInfo {
  int64_t stages = 1;
  std::set<const ir::StmtNode*> producers;
  // In the order of their producers in the body (emission follows this
  // order, so it must not depend on where the nodes live in memory).
  std::vector<const ir::BufferNode*> staged;
  std::vector<std::pair<const ir::VarNode*, ir::Expr>> lets;
};
// nullopt when the loop runs with the one-stage scheme.
std::optional<PipelineInfo> AnalyzePipeline(const ir::ForNode& loop, const ir::Stmt& kernel_body,
                                            const CudaTarget& target);
absl::Status EmitPipelinedLoop(EmitContext& ctx, const ir::ForNode* f, const PipelineInfo& info);
// Variables an expression uses, and whether it loads from a buffer.
struct ExprUses : ir::IRVisitor {
  std::set<const ir::VarNode*> vars;
  bool loads = false;
  using IRVisitor::Visit;
  void Visit(const ir::Expr& e) override;
};
// The statements of a (nested) sequence, in order.
void FlattenBody(const ir::Stmt& s, std::vector<ir::Stmt>& out);
// The producers of `body` that TMA loads (inference/tma_plan.h) on a target
// with TMA; with `explain`, a comment in the generated code says why each
// other producer is not one.
std::map<const ir::StmtNode*, inference::TmaCopyPlan> PlanTmaProducers(
    EmitContext& ctx, const std::vector<ir::Stmt>& body, const PipelineInfo& info, bool explain);
// The coordinates of one TMA box (inference::TmaCopyPlan::Load) whose
// region starts at `mins` (outermost first): innermost first, C++ text.
std::string TmaCoords(EmitContext& ctx, const std::vector<ir::Expr>& mins,
                      const inference::TmaCopyPlan::Load& load);
// One thread's TMA loads of a stage (under `guard` when not empty): arrive on
// `bar` expecting every load's bytes, then the loads of the producers in
// `plans`, their regions with `map` applied (the loop variable for the
// iteration), into the stage pointers ctx.stage_index() names.
absl::Status EmitTmaLoads(EmitContext& ctx, const std::vector<ir::Stmt>& body,
                          const std::map<const ir::StmtNode*, inference::TmaCopyPlan>& plans,
                          const std::map<const ir::VarNode*, ir::Expr>& map, const std::string& bar,
                          const std::string& guard);
// The loop's gemms that run as asynchronous wgmma (one group in flight), or
// none (see emitter_pipeline.cc).
std::vector<const ir::GemmNode*> AsyncWgmmaGemms(EmitContext& ctx,
                                                 const std::vector<ir::Stmt>& body,
                                                 const PipelineInfo& info, int64_t min_stages);

// Declares `<buffer><suffix> = <buffer> + <stage> * <elements per stage>`
// for every staged buffer and makes accesses use it (ctx.stage_index()).
void DeclareStagePointers(EmitContext& ctx, const std::vector<const ir::BufferNode*>& staged,
                          const std::string& stage, absl::string_view suffix);
// After a loop of asynchronous wgmma: waits for the last group and fences
// the accumulators before anything reads them.
void FinishAsyncWgmma(EmitContext& ctx, const std::vector<const ir::GemmNode*>& async_gemms);

// Warp specialisation (emitter_ws.cc): on sm_90a a kernel whose one
// T.Pipelined loop loads every producer with TMA gets a producer warpgroup
// after its threads; see PlanWarpSpecialization.
struct WarpSpecialization {
  const ir::ForNode* loop = nullptr;
  PipelineInfo info;
  std::map<const ir::StmtNode*, inference::TmaCopyPlan> tma;
  int64_t consumers = 0;      // the T.Kernel's threads (whole warpgroups)
  int64_t producer_regs = 0;  // setmaxnreg of the producer / consumer
  int64_t consumer_regs = 0;  // warpgroups (0: none)
  int64_t blocks_per_sm = 1;  // __launch_bounds__'s minimum resident blocks
  // One "loaded" barrier array (one barrier per stage) per TMA producer
  // copy, in the body's order: the consumers wait for each copy right
  // before the first statement that reads what it loads (QK^T need not
  // wait for V). One "read" array: the consumers release a whole stage.
  struct Full {
    const ir::CopyNode* copy = nullptr;
    std::string name;
    // Loaded by the producer warpgroup with cp.async (TMA cannot: rows
    // narrower than 16 bytes), 128 arrivals; otherwise one TMA load.
    bool cp_async = false;
  };
  std::vector<Full> full;
  std::string empty;
  // Copies before the loop the producer loads with TMA (attention's Q),
  // first, on one barrier (1 arrival + bytes) the consumers wait for where
  // each copy stood (WaitForPrologueCopy).
  std::map<const ir::StmtNode*, inference::TmaCopyPlan> prologue;
  std::string prologue_full;
  // The kernel's top-level lets before the loop that the producer thread
  // computes too (inlined: it runs none of the kernel's statements).
  std::vector<std::pair<const ir::VarNode*, ir::Expr>> top_lets;
};
// The registers a thread of a warp-specialised kernel has: `launch`, what
// __launch_bounds__((consumer_groups + 1) * 128, blocks_per_sm) leaves it
// (ptxas allocates that much with setmaxnreg in the kernel), and `consumer`,
// what a consumer warpgroup can take with setmaxnreg.inc once the producer
// is down to 40: the block's pool, (groups + 1) * 128 * launch, never less
// than what the warpgroups ask for.
struct WsRegisters {
  int64_t launch = 0;
  int64_t consumer = 0;
};
WsRegisters WarpSpecializedRegisters(int64_t consumer_groups, int64_t blocks_per_sm);
// nullopt unless the kernel qualifies; then `why` says which condition
// failed.
std::optional<WarpSpecialization> PlanWarpSpecialization(EmitContext& ctx, const ir::KernelNode& k,
                                                         int64_t threads, int64_t shared_bytes,
                                                         std::string& why);
// "warp-specialised: ..." in words: what the producer loads, and how.
std::string DescribeWarpSpecialization(const WarpSpecialization& ws);
// The barriers' initialisation and the producer branch, ending in
// `} else {` (the consumer branch: the kernel body, then one Close()).
absl::Status EmitProducerBranch(EmitContext& ctx, WarpSpecialization& ws);
// In place of a copy the producer loaded before the loop (ws.prologue):
// the consumers wait for its barrier. False for any other statement.
bool WaitForPrologueCopy(EmitContext& ctx, const ir::StmtNode* s);
// The consumer side of the specialised loop.
absl::Status EmitConsumerLoop(EmitContext& ctx, const ir::ForNode* f,
                              const WarpSpecialization& ws);

// Tile operator lowerings (registered in target.cc).
absl::Status LowerCopy(EmitContext& ctx, const ir::Stmt& s);
// Lowers `copy` with the loop partition the plan gives `plan_key` (a copy
// the emitter rewrote, e.g. shifted to a later pipeline iteration).
absl::Status LowerCopyAs(EmitContext& ctx, const ir::CopyNode& copy, const ir::StmtNode* plan_key);
absl::Status LowerFill(EmitContext& ctx, const ir::Stmt& s);
absl::Status LowerGemm(EmitContext& ctx, const ir::Stmt& s);
absl::Status LowerReduce(EmitContext& ctx, const ir::Stmt& s);
absl::Status LowerCumsum(EmitContext& ctx, const ir::Stmt& s);
absl::Status LowerAtomicAdd(EmitContext& ctx, const ir::Stmt& s);
// A copy between a whole fragment and global or shared memory that follows
// the fragment's layout, in runs of `p.vector` consecutive slots: one
// tl::load_vec / tl::store_vec per run when it lies inside the tensor and is
// aligned, else element by element (emitter_copy.cc). With `atomic_add` the
// fragment is added into global memory instead (tl::red_add_vec per run,
// tl::red_add at borders). Returns false (nothing emitted) when the copy
// does not qualify.
bool VectorFragmentCopy(EmitContext& ctx, const ir::CopyNode* c, const inference::LoopPartition& p,
                        bool atomic_add);
// On sm_90a, a T.copy of a whole float fragment in an unpadded mma
// accumulator layout to a whole float16/bfloat16 shared buffer of the same
// shape: one tl::store_acc_stmatrix call (emitter_stmatrix.cc). Returns
// false (nothing emitted) when the copy does not qualify.
bool StmatrixFragmentCopy(EmitContext& ctx, const ir::CopyNode* c);
// A T.Parallel nest (partition `p`, constant loop mins `mins`) whose
// partition gives each thread runs of `p.vector` consecutive elements of the
// innermost loop variable, emitted run by run: the global and shared
// accesses of the body that are contiguous along the run move as one
// tl::load_vec / tl::store_vec when the body's guards hold on the whole run
// and the run is aligned, else the run goes element by element
// (emitter_vector.cc). Returns false (nothing emitted) when no access
// qualifies; else `status` is the emission's.
bool VectorParallelNest(EmitContext& ctx, const inference::LoopPartition& p,
                        const std::vector<int64_t>& mins, absl::Status* status);

// --- helpers shared by the files

// Substitutes variables in an expression.
ir::Expr Substitute(const ir::Expr& e, const std::map<const ir::VarNode*, ir::Expr>& map);
// The constant value of an integer expression (constant folding), if any.
std::optional<int64_t> ConstValue(const ir::Expr& e);
// Product of constant extents; nullopt when one is symbolic.
std::optional<int64_t> ConstProduct(const std::vector<ir::Expr>& extents);
// The dims of a region whose extent is not the constant 1, in order.
std::vector<int> NonUnitDims(const ir::Region& r);
// Region indices for an iteration index over `iter_shape`: the region's
// non-unit dims take the iteration's non-unit dims in order (both aligned
// from the first), unit dims take their min. Empty when the shapes do not
// align.
std::vector<ir::Expr> RegionIndex(const ir::Region& r, const std::vector<ir::Expr>& iter_index,
                                  const std::vector<int64_t>& iter_shape);
// The pragma before a loop over a thread's elements of `trips` iterations:
// full unrolling (register arrays indexed by constants stay in registers)
// up to kFullUnrollTrips, else unrolled by 8. A longer loop touches more
// elements than a thread has registers, so its arrays live in local memory
// either way, and unrolling it fully only makes NVRTC slow (a replicated
// 64x16 float32 fragment's three 512-trip loops took 65 s to compile).
inline constexpr int64_t kFullUnrollTrips = 256;
std::string UnrollPragma(int64_t trips);
// The non-empty conditions joined with " && " ("" when none is left).
std::string JoinConds(const std::vector<std::string>& conds);
// C++ condition that `indices` lie inside buffer `b`, and also the last index
// plus `extra_last` ("" when always true, "false" when never).
std::string InBounds(EmitContext& ctx, const ir::Buffer& b, const std::vector<ir::Expr>& indices,
                     int64_t extra_last = 0);
// Folding integer builders (constants fold, x + 0, x * 1, x * 0 vanish).
ir::Expr AddI(const ir::Expr& a, const ir::Expr& b);
ir::Expr SubI(const ir::Expr& a, const ir::Expr& b);
ir::Expr MulI(const ir::Expr& a, const ir::Expr& b);
// A C++ `int` variable name for the IR expression `e` placed in the current
// writer: `const int name = e;` (or the text itself when trivial).
std::string Hoist(EmitContext& ctx, absl::string_view hint, const std::string& text);

using ir::IsFloat8;
using ir::IsFnuz;


}  // namespace tilec::cuda

#endif  // TILEC_COMPILER_TARGETS_CUDA_EMITTER_INTERNAL_H_
