#include "compiler/ir/proto_convert.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace tilec::ir {
namespace {

namespace v1 = ::tilec::v1;

// ---------------------------------------------------------------------------
// Enum tables. Each lists the IR enum in declaration order next to its wire
// value; the static_asserts keep them dense and complete, so conversion is by
// index.

template <typename Ir, typename Wire>
struct EnumPair {
  Ir ir;
  Wire wire;
};

template <typename Ir, typename Wire, size_t N>
constexpr bool IsDense(const EnumPair<Ir, Wire> (&table)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<size_t>(table[i].ir) != i) return false;
    if (static_cast<size_t>(table[i].wire) != i + 1) return false;
  }
  return true;
}

template <typename Ir, typename Wire, size_t N>
Wire ToWire(const EnumPair<Ir, Wire> (&table)[N], Ir v) {
  size_t i = static_cast<size_t>(v);
  return i < N ? table[i].wire : static_cast<Wire>(0);
}

template <typename Ir, typename Wire, size_t N>
std::optional<Ir> FromWire(const EnumPair<Ir, Wire> (&table)[N], int v) {
  if (v < 1 || static_cast<size_t>(v) > N) return std::nullopt;
  return table[v - 1].ir;
}

constexpr EnumPair<DType, v1::DType> kDTypes[] = {
    {DType::kBool, v1::DTYPE_BOOL},
    {DType::kInt4, v1::DTYPE_INT4},
    {DType::kInt8, v1::DTYPE_INT8},
    {DType::kUInt8, v1::DTYPE_UINT8},
    {DType::kInt16, v1::DTYPE_INT16},
    {DType::kInt32, v1::DTYPE_INT32},
    {DType::kInt64, v1::DTYPE_INT64},
    {DType::kFloat8E4M3, v1::DTYPE_FLOAT8_E4M3},
    {DType::kFloat8E5M2, v1::DTYPE_FLOAT8_E5M2},
    {DType::kFloat16, v1::DTYPE_FLOAT16},
    {DType::kBFloat16, v1::DTYPE_BFLOAT16},
    {DType::kFloat32, v1::DTYPE_FLOAT32},
    {DType::kFloat64, v1::DTYPE_FLOAT64},
};
static_assert(IsDense(kDTypes) && std::size(kDTypes) == std::size(kAllDTypes) &&
              v1::DType_MAX == std::size(kDTypes));

constexpr EnumPair<BinaryOp, v1::BinaryOp> kBinaryOps[] = {
    {BinaryOp::kAdd, v1::BINARY_OP_ADD},
    {BinaryOp::kSub, v1::BINARY_OP_SUB},
    {BinaryOp::kMul, v1::BINARY_OP_MUL},
    {BinaryOp::kDiv, v1::BINARY_OP_DIV},
    {BinaryOp::kMod, v1::BINARY_OP_MOD},
    {BinaryOp::kFloorDiv, v1::BINARY_OP_FLOOR_DIV},
    {BinaryOp::kFloorMod, v1::BINARY_OP_FLOOR_MOD},
    {BinaryOp::kMin, v1::BINARY_OP_MIN},
    {BinaryOp::kMax, v1::BINARY_OP_MAX},
    {BinaryOp::kEq, v1::BINARY_OP_EQ},
    {BinaryOp::kNe, v1::BINARY_OP_NE},
    {BinaryOp::kLt, v1::BINARY_OP_LT},
    {BinaryOp::kLe, v1::BINARY_OP_LE},
    {BinaryOp::kGt, v1::BINARY_OP_GT},
    {BinaryOp::kGe, v1::BINARY_OP_GE},
    {BinaryOp::kAnd, v1::BINARY_OP_AND},
    {BinaryOp::kOr, v1::BINARY_OP_OR},
    {BinaryOp::kBitAnd, v1::BINARY_OP_BIT_AND},
    {BinaryOp::kBitOr, v1::BINARY_OP_BIT_OR},
    {BinaryOp::kBitXor, v1::BINARY_OP_BIT_XOR},
    {BinaryOp::kShl, v1::BINARY_OP_SHL},
    {BinaryOp::kShr, v1::BINARY_OP_SHR},
};
static_assert(IsDense(kBinaryOps) && std::size(kBinaryOps) == kNumBinaryOps &&
              v1::BinaryOp_MAX == kNumBinaryOps);

constexpr EnumPair<UnaryOp, v1::UnaryOp> kUnaryOps[] = {
    {UnaryOp::kNeg, v1::UNARY_OP_NEG},
    {UnaryOp::kNot, v1::UNARY_OP_NOT},
    {UnaryOp::kBitNot, v1::UNARY_OP_BIT_NOT},
};
static_assert(IsDense(kUnaryOps) && std::size(kUnaryOps) == kNumUnaryOps &&
              v1::UnaryOp_MAX == kNumUnaryOps);

constexpr EnumPair<CallFn, v1::CallFn> kCallFns[] = {
    {CallFn::kAbs, v1::CALL_FN_ABS},   {CallFn::kCeilDiv, v1::CALL_FN_CEIL_DIV},
    {CallFn::kExp, v1::CALL_FN_EXP},   {CallFn::kExp2, v1::CALL_FN_EXP2},
    {CallFn::kLog, v1::CALL_FN_LOG},   {CallFn::kLog2, v1::CALL_FN_LOG2},
    {CallFn::kSqrt, v1::CALL_FN_SQRT}, {CallFn::kRsqrt, v1::CALL_FN_RSQRT},
    {CallFn::kTanh, v1::CALL_FN_TANH}, {CallFn::kSigmoid, v1::CALL_FN_SIGMOID},
    {CallFn::kSin, v1::CALL_FN_SIN},   {CallFn::kCos, v1::CALL_FN_COS},
    {CallFn::kErf, v1::CALL_FN_ERF},   {CallFn::kFloor, v1::CALL_FN_FLOOR},
    {CallFn::kCeil, v1::CALL_FN_CEIL}, {CallFn::kRound, v1::CALL_FN_ROUND},
    {CallFn::kPow, v1::CALL_FN_POW},
};
static_assert(IsDense(kCallFns) && std::size(kCallFns) == kNumCallFns &&
              v1::CallFn_MAX == kNumCallFns);

constexpr EnumPair<Scope, v1::Scope> kScopes[] = {
    {Scope::kGlobal, v1::SCOPE_GLOBAL},     {Scope::kShared, v1::SCOPE_SHARED},
    {Scope::kFragment, v1::SCOPE_FRAGMENT}, {Scope::kLocal, v1::SCOPE_LOCAL},
    {Scope::kVar, v1::SCOPE_VAR},
};
static_assert(IsDense(kScopes) && v1::Scope_MAX == std::size(kScopes));

constexpr EnumPair<ForKind, v1::ForKind> kForKinds[] = {
    {ForKind::kSerial, v1::FOR_KIND_SERIAL},         {ForKind::kParallel, v1::FOR_KIND_PARALLEL},
    {ForKind::kPipelined, v1::FOR_KIND_PIPELINED},   {ForKind::kUnrolled, v1::FOR_KIND_UNROLLED},
    {ForKind::kVectorized, v1::FOR_KIND_VECTORIZED},
};
static_assert(IsDense(kForKinds) && v1::ForKind_MAX == std::size(kForKinds));

constexpr EnumPair<GemmPolicy, v1::GemmPolicy> kGemmPolicies[] = {
    {GemmPolicy::kSquare, v1::GEMM_POLICY_SQUARE},
    {GemmPolicy::kFullRow, v1::GEMM_POLICY_FULL_ROW},
    {GemmPolicy::kFullCol, v1::GEMM_POLICY_FULL_COL},
};
static_assert(IsDense(kGemmPolicies) && v1::GemmPolicy_MAX == std::size(kGemmPolicies));

constexpr EnumPair<ReduceKind, v1::ReduceKind> kReduceKinds[] = {
    {ReduceKind::kSum, v1::REDUCE_KIND_SUM},        {ReduceKind::kMax, v1::REDUCE_KIND_MAX},
    {ReduceKind::kMin, v1::REDUCE_KIND_MIN},        {ReduceKind::kAbsSum, v1::REDUCE_KIND_ABS_SUM},
    {ReduceKind::kAbsMax, v1::REDUCE_KIND_ABS_MAX},
};
static_assert(IsDense(kReduceKinds) && v1::ReduceKind_MAX == std::size(kReduceKinds));

constexpr EnumPair<Layout::Kind, v1::LayoutKind> kLayoutKinds[] = {
    {Layout::Kind::kSwizzled, v1::LAYOUT_KIND_SWIZZLED},
    {Layout::Kind::kCustom, v1::LAYOUT_KIND_CUSTOM},
};
static_assert(IsDense(kLayoutKinds) && v1::LayoutKind_MAX == std::size(kLayoutKinds));

// ---------------------------------------------------------------------------
// ToProto

class Writer {
 public:
  explicit Writer(v1::Program* out) : out_(out) {}

  uint32_t VarId(const Var& v) {
    if (!v) return 0;
    auto [it, inserted] = var_ids_.try_emplace(v.get(), var_ids_.size() + 1);
    if (inserted) {
      v1::Var* entry = out_->add_vars();
      entry->set_id(it->second);
      entry->set_name(v->name);
      entry->set_dtype(ToWire(kDTypes, v->dtype));
    }
    return it->second;
  }

  uint32_t BufferId(const Buffer& b) {
    if (!b) return 0;
    auto [it, inserted] = buffer_ids_.try_emplace(b.get(), buffer_ids_.size() + 1);
    if (inserted) {
      // Elements of a repeated message field stay where they are when more are
      // added, so the shape may declare further buffers while we hold `entry`.
      v1::Buffer* entry = out_->add_buffers();
      entry->set_id(it->second);
      entry->set_name(b->name);
      entry->set_dtype(ToWire(kDTypes, b->dtype));
      entry->set_scope(ToWire(kScopes, b->scope));
      for (const Expr& d : b->shape) WriteExpr(d, entry->add_shape());
    }
    return it->second;
  }

  void WriteExpr(const Expr& e, v1::Expr* out) {
    if (!e) return;
    out->set_dtype(ToWire(kDTypes, e->dtype));
    switch (e->kind) {
      case ExprKind::kIntImm: out->set_int_imm(e->as<IntImmNode>()->value); return;
      case ExprKind::kFloatImm: out->set_float_imm(e->as<FloatImmNode>()->value); return;
      case ExprKind::kVar: out->set_var(VarId(std::static_pointer_cast<const VarNode>(e))); return;
      case ExprKind::kBinary: {
        const auto* n = e->as<BinaryNode>();
        v1::BinaryExpr* b = out->mutable_binary();
        b->set_op(ToWire(kBinaryOps, n->op));
        if (n->a) WriteExpr(n->a, b->mutable_a());
        if (n->b) WriteExpr(n->b, b->mutable_b());
        return;
      }
      case ExprKind::kUnary: {
        const auto* n = e->as<UnaryNode>();
        v1::UnaryExpr* u = out->mutable_unary();
        u->set_op(ToWire(kUnaryOps, n->op));
        if (n->a) WriteExpr(n->a, u->mutable_a());
        return;
      }
      case ExprKind::kSelect: {
        const auto* n = e->as<SelectNode>();
        v1::SelectExpr* s = out->mutable_select();
        if (n->cond) WriteExpr(n->cond, s->mutable_cond());
        if (n->t) WriteExpr(n->t, s->mutable_true_value());
        if (n->f) WriteExpr(n->f, s->mutable_false_value());
        return;
      }
      case ExprKind::kCast: {
        v1::CastExpr* c = out->mutable_cast();
        if (const Expr& v = e->as<CastNode>()->value) WriteExpr(v, c->mutable_value());
        return;
      }
      case ExprKind::kCall: {
        const auto* n = e->as<CallNode>();
        v1::CallExpr* c = out->mutable_call();
        c->set_fn(ToWire(kCallFns, n->fn));
        for (const Expr& a : n->args) WriteExpr(a, c->add_args());
        return;
      }
      case ExprKind::kLoad: {
        const auto* n = e->as<LoadNode>();
        v1::LoadExpr* l = out->mutable_load();
        l->set_buffer(BufferId(n->buffer));
        for (const Expr& i : n->indices) WriteExpr(i, l->add_indices());
        return;
      }
    }
  }

  void WriteRegion(const Region& r, v1::Region* out) {
    out->set_buffer(BufferId(r.buffer));
    for (const Expr& m : r.mins) WriteExpr(m, out->add_mins());
    for (const Expr& x : r.extents) WriteExpr(x, out->add_extents());
  }

  void WriteStmt(const Stmt& s, v1::Stmt* out) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kSeq: {
        v1::SeqStmt* q = out->mutable_seq();
        for (const Stmt& c : s->as<SeqNode>()->stmts) WriteStmt(c, q->add_stmts());
        return;
      }
      case StmtKind::kKernel: {
        const auto* n = s->as<KernelNode>();
        v1::KernelStmt* k = out->mutable_kernel();
        for (const Expr& g : n->grid) WriteExpr(g, k->add_grid());
        for (const Var& v : n->block_vars) k->add_block_vars(VarId(v));
        if (n->threads) WriteExpr(n->threads, k->mutable_threads());
        k->set_prelude(n->prelude);
        if (n->body) WriteStmt(n->body, k->mutable_body());
        return;
      }
      case StmtKind::kAllocate: {
        const auto* n = s->as<AllocateNode>();
        v1::AllocateStmt* a = out->mutable_allocate();
        a->set_buffer(BufferId(n->buffer));
        if (n->init) WriteExpr(n->init, a->mutable_init());
        return;
      }
      case StmtKind::kFor: {
        const auto* n = s->as<ForNode>();
        v1::ForStmt* f = out->mutable_for_loop();
        f->set_var(VarId(n->var));
        if (n->min) WriteExpr(n->min, f->mutable_min());
        if (n->extent) WriteExpr(n->extent, f->mutable_extent());
        f->set_kind(ToWire(kForKinds, n->kind));
        if (n->num_stages) WriteExpr(n->num_stages, f->mutable_num_stages());
        for (int64_t o : n->order) f->add_order(o);
        for (int64_t st : n->stage) f->add_stage(st);
        if (n->body) WriteStmt(n->body, f->mutable_body());
        return;
      }
      case StmtKind::kIf: {
        const auto* n = s->as<IfNode>();
        v1::IfStmt* i = out->mutable_if_then_else();
        if (n->cond) WriteExpr(n->cond, i->mutable_cond());
        if (n->then_case) WriteStmt(n->then_case, i->mutable_then_case());
        if (n->else_case) WriteStmt(n->else_case, i->mutable_else_case());
        return;
      }
      case StmtKind::kStore: {
        const auto* n = s->as<StoreNode>();
        v1::StoreStmt* st = out->mutable_store();
        st->set_buffer(BufferId(n->buffer));
        for (const Expr& i : n->indices) WriteExpr(i, st->add_indices());
        if (n->value) WriteExpr(n->value, st->mutable_value());
        return;
      }
      case StmtKind::kLet: {
        const auto* n = s->as<LetNode>();
        v1::LetStmt* l = out->mutable_let();
        l->set_var(VarId(n->var));
        if (n->value) WriteExpr(n->value, l->mutable_value());
        return;
      }
      case StmtKind::kCopy: {
        const auto* n = s->as<CopyNode>();
        v1::CopyStmt* c = out->mutable_copy();
        WriteRegion(n->src, c->mutable_src());
        WriteRegion(n->dst, c->mutable_dst());
        return;
      }
      case StmtKind::kGemm: {
        const auto* n = s->as<GemmNode>();
        v1::GemmStmt* g = out->mutable_gemm();
        WriteRegion(n->a, g->mutable_a());
        WriteRegion(n->b, g->mutable_b());
        WriteRegion(n->c, g->mutable_c());
        g->set_transpose_a(n->transpose_a);
        g->set_transpose_b(n->transpose_b);
        g->set_policy(ToWire(kGemmPolicies, n->policy));
        g->set_clear_accum(n->clear_accum);
        return;
      }
      case StmtKind::kFill: {
        const auto* n = s->as<FillNode>();
        v1::FillStmt* f = out->mutable_fill();
        WriteRegion(n->dst, f->mutable_dst());
        if (n->value) WriteExpr(n->value, f->mutable_value());
        return;
      }
      case StmtKind::kReduce: {
        const auto* n = s->as<ReduceNode>();
        v1::ReduceStmt* r = out->mutable_reduce();
        r->set_kind(ToWire(kReduceKinds, n->reduce_kind));
        r->set_src(BufferId(n->src));
        r->set_dst(BufferId(n->dst));
        r->set_dim(n->dim);
        r->set_clear(n->clear);
        return;
      }
      case StmtKind::kCumsum: {
        const auto* n = s->as<CumsumNode>();
        v1::CumsumStmt* c = out->mutable_cumsum();
        c->set_src(BufferId(n->src));
        c->set_dst(BufferId(n->dst));
        c->set_dim(n->dim);
        c->set_reverse(n->reverse);
        return;
      }
      case StmtKind::kAtomicAdd: {
        const auto* n = s->as<AtomicAddNode>();
        v1::AtomicAddStmt* a = out->mutable_atomic_add();
        WriteRegion(n->dst, a->mutable_dst());
        if (n->src) WriteRegion(*n->src, a->mutable_src());
        if (n->value) WriteExpr(n->value, a->mutable_value());
        return;
      }
      case StmtKind::kAnnotateLayout: {
        const auto* n = s->as<AnnotateLayoutNode>();
        v1::AnnotateLayoutStmt* a = out->mutable_annotate_layout();
        a->set_buffer(BufferId(n->buffer));
        v1::Layout* l = a->mutable_layout();
        l->set_kind(ToWire(kLayoutKinds, n->layout.kind));
        for (const Var& v : n->layout.vars) l->add_vars(VarId(v));
        for (const Expr& i : n->layout.indices) WriteExpr(i, l->add_indices());
        return;
      }
      case StmtKind::kUseSwizzle: {
        const auto* n = s->as<UseSwizzleNode>();
        v1::UseSwizzleStmt* u = out->mutable_use_swizzle();
        if (n->panel_size) WriteExpr(n->panel_size, u->mutable_panel_size());
        u->set_column_major(n->column_major);
        u->set_enable(n->enable);
        return;
      }
    }
  }

 private:
  v1::Program* out_;
  std::unordered_map<const VarNode*, uint32_t> var_ids_;
  std::unordered_map<const BufferNode*, uint32_t> buffer_ids_;
};

// ---------------------------------------------------------------------------
// FromProto

#define PC_CONCAT_INNER(a, b) a##b
#define PC_CONCAT(a, b) PC_CONCAT_INNER(a, b)
#define PC_ASSIGN_OR_RETURN(lhs, rexpr) \
  PC_ASSIGN_OR_RETURN_IMPL(PC_CONCAT(pc_statusor_, __LINE__), lhs, rexpr)
#define PC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                             \
  if (!tmp.ok()) return tmp.status();             \
  lhs = *std::move(tmp)
#define PC_RETURN_IF_ERROR(expr)           \
  do {                                     \
    absl::Status pc_status = (expr);       \
    if (!pc_status.ok()) return pc_status; \
  } while (0)

using ExprList = google::protobuf::RepeatedPtrField<v1::Expr>;

// The IR's names are std::string_view; absl here has its own string_view.
absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::string_view StmtLabel(const v1::Stmt& s) {
  switch (s.node_case()) {
    case v1::Stmt::kSeq: return "seq";
    case v1::Stmt::kKernel: return "kernel";
    case v1::Stmt::kAllocate: return "allocate";
    case v1::Stmt::kForLoop: return "for";
    case v1::Stmt::kIfThenElse: return "if";
    case v1::Stmt::kStore: return "store";
    case v1::Stmt::kLet: return "let";
    case v1::Stmt::kCopy: return "copy";
    case v1::Stmt::kGemm: return "gemm";
    case v1::Stmt::kFill: return "fill";
    case v1::Stmt::kReduce: return "reduce";
    case v1::Stmt::kCumsum: return "cumsum";
    case v1::Stmt::kAtomicAdd: return "atomic_add";
    case v1::Stmt::kAnnotateLayout: return "annotate_layout";
    case v1::Stmt::kUseSwizzle: return "use_swizzle";
    case v1::Stmt::NODE_NOT_SET: return "empty";
  }
  return "unknown";
}

class Reader {
 public:
  explicit Reader(const v1::Program& p) : p_(p) {}

  absl::StatusOr<Program> Read() {
    PC_RETURN_IF_ERROR(ReadTables());
    Program out;
    out.name = p_.name();
    for (int i = 0; i < p_.params_size(); ++i) {
      At at(this, absl::StrCat("param ", i));
      const v1::Param& param = p_.params(i);
      Param ir_param;
      switch (param.kind_case()) {
        case v1::Param::kTensor: {
          PC_ASSIGN_OR_RETURN(ir_param.tensor, GetBuffer(param.tensor(), "tensor param"));
          break;
        }
        case v1::Param::kScalar: {
          PC_ASSIGN_OR_RETURN(ir_param.scalar, GetVar(param.scalar(), "scalar param"));
          break;
        }
        case v1::Param::KIND_NOT_SET: return Error("param is neither a tensor nor a scalar");
      }
      out.params.push_back(std::move(ir_param));
    }
    for (int i = 0; i < p_.dyn_dims_size(); ++i) {
      At at(this, absl::StrCat("dyn dim ", i));
      PC_ASSIGN_OR_RETURN(Var v, GetVar(p_.dyn_dims(i), "dyn dim"));
      out.dyn_dims.push_back(std::move(v));
    }
    for (int i = 0; i < p_.tile_params_size(); ++i) {
      At at(this, absl::StrCat("tile param ", i));
      const v1::TileParam& t = p_.tile_params(i);
      TileParam tp;
      PC_ASSIGN_OR_RETURN(tp.var, GetVar(t.var(), "tile param"));
      if (t.has_value()) tp.value = t.value();
      tp.candidates.assign(t.candidates().begin(), t.candidates().end());
      out.tile_params.push_back(std::move(tp));
    }
    if (!p_.has_body()) return Error("program has no body");
    if (p_.body().has_seq()) {
      // Top level: kernels are named by their launch order.
      std::vector<Stmt> stmts;
      int kernels = 0;
      const v1::SeqStmt& seq = p_.body().seq();
      for (int i = 0; i < seq.stmts_size(); ++i) {
        const v1::Stmt& c = seq.stmts(i);
        At at(this, c.has_kernel() ? absl::StrCat("kernel ", kernels++)
                                   : absl::StrCat("stmt ", i, " (", StmtLabel(c), ")"));
        PC_ASSIGN_OR_RETURN(Stmt s, ReadStmt(c));
        stmts.push_back(std::move(s));
      }
      out.body = Seq(std::move(stmts));
    } else {
      PC_ASSIGN_OR_RETURN(out.body, ReadChild(true, p_.body(), "body", true));
    }
    return out;
  }

 private:
  // Names where the reader is, for error messages.
  class At {
   public:
    At(Reader* r, std::string segment) : r_(r) { r_->path_.push_back(std::move(segment)); }
    ~At() { r_->path_.pop_back(); }
    At(const At&) = delete;
    At& operator=(const At&) = delete;

   private:
    Reader* r_;
  };

  // Bounds recursion; release with --depth_ through Leave.
  struct Leave {
    int* depth;
    ~Leave() { --*depth; }
  };

  absl::Status Error(absl::string_view msg) const {
    std::string where = path_.empty() ? "program" : absl::StrJoin(path_, " / ");
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", msg));
  }

  absl::Status Enter() {
    if (++depth_ > kMaxProtoNesting) {
      --depth_;
      return Error(absl::StrCat("statements and expressions nest deeper than ", kMaxProtoNesting));
    }
    return absl::OkStatus();
  }

  template <typename Ir, typename Wire, size_t N>
  absl::StatusOr<Ir> Enum(const EnumPair<Ir, Wire> (&table)[N], int v, absl::string_view what) {
    if (std::optional<Ir> r = FromWire(table, v)) return *r;
    if (v == 0) return Error(absl::StrCat(what, " is unspecified"));
    return Error(absl::StrCat(what, " has unknown value ", v));
  }

  absl::Status ReadTables() {
    for (int i = 0; i < p_.vars_size(); ++i) {
      const v1::Var& v = p_.vars(i);
      At at(this, absl::StrCat("var table entry ", i, " (id ", v.id(), ", '", v.name(), "')"));
      if (v.id() == 0) return Error("var id 0 is reserved for 'not set'");
      PC_ASSIGN_OR_RETURN(DType t, Enum(kDTypes, v.dtype(), "var dtype"));
      if (!vars_.try_emplace(v.id(), MakeVar(v.name(), t)).second) {
        return Error(absl::StrCat("var id ", v.id(), " appears twice in the var table"));
      }
    }
    buffers_.resize(p_.buffers_size());
    resolving_.resize(p_.buffers_size());
    for (int i = 0; i < p_.buffers_size(); ++i) {
      const v1::Buffer& b = p_.buffers(i);
      At at(this, absl::StrCat("buffer table entry ", i, " (id ", b.id(), ", '", b.name(), "')"));
      if (b.id() == 0) return Error("buffer id 0 is reserved for 'not set'");
      if (!buffer_index_.try_emplace(b.id(), i).second) {
        return Error(absl::StrCat("buffer id ", b.id(), " appears twice in the buffer table"));
      }
    }
    for (int i = 0; i < p_.buffers_size(); ++i) PC_RETURN_IF_ERROR(ResolveBuffer(i));
    return absl::OkStatus();
  }

  // Builds buffer table entry i, and first the buffers its shape loads from.
  absl::Status ResolveBuffer(int i) {
    if (buffers_[i]) return absl::OkStatus();
    const v1::Buffer& b = p_.buffers(i);
    At at(this, absl::StrCat("buffer id ", b.id(), " ('", b.name(), "')"));
    if (resolving_[i]) return Error("the buffer's shape refers to the buffer itself");
    resolving_[i] = true;
    PC_ASSIGN_OR_RETURN(DType t, Enum(kDTypes, b.dtype(), "buffer dtype"));
    PC_ASSIGN_OR_RETURN(Scope scope, Enum(kScopes, b.scope(), "buffer scope"));
    PC_ASSIGN_OR_RETURN(std::vector<Expr> shape, ReadExprs(b.shape(), "shape"));
    buffers_[i] = MakeBuffer(b.name(), t, std::move(shape), scope);
    resolving_[i] = false;
    return absl::OkStatus();
  }

  absl::StatusOr<Var> GetVar(uint32_t id, absl::string_view what) {
    if (id == 0) return Error(absl::StrCat(what, " references no var (id 0)"));
    auto it = vars_.find(id);
    if (it == vars_.end()) {
      return Error(
          absl::StrCat(what, " references var id ", id, ", which is not in the var table"));
    }
    return it->second;
  }

  absl::StatusOr<Buffer> GetBuffer(uint32_t id, absl::string_view what) {
    if (id == 0) return Error(absl::StrCat(what, " references no buffer (id 0)"));
    auto it = buffer_index_.find(id);
    if (it == buffer_index_.end()) {
      return Error(
          absl::StrCat(what, " references buffer id ", id, ", which is not in the buffer table"));
    }
    PC_RETURN_IF_ERROR(ResolveBuffer(it->second));
    return buffers_[it->second];
  }

  static std::string Describe(const Buffer& b, uint32_t id) {
    return absl::StrCat("buffer id ", id, " ('", b->name, "') of rank ", b->shape.size());
  }

  // An operand inside an expression: errors name the expression, not a path.
  absl::StatusOr<Expr> Operand(bool present, const v1::Expr& e, absl::string_view what) {
    if (!present) return Error(absl::StrCat(what, " is missing"));
    return ReadExpr(e);
  }

  absl::StatusOr<Expr> ReadExpr(const v1::Expr& e) {
    PC_RETURN_IF_ERROR(Enter());
    Leave leave{&depth_};
    if (e.node_case() == v1::Expr::NODE_NOT_SET) return Error("expression is empty");
    PC_ASSIGN_OR_RETURN(DType t, Enum(kDTypes, e.dtype(), "expression dtype"));
    switch (e.node_case()) {
      case v1::Expr::kIntImm: return std::make_shared<IntImmNode>(t, e.int_imm());
      case v1::Expr::kFloatImm: return std::make_shared<FloatImmNode>(t, e.float_imm());
      case v1::Expr::kVar: {
        PC_ASSIGN_OR_RETURN(Var v, GetVar(e.var(), "variable reference"));
        if (v->dtype != t) {
          return Error(absl::StrCat("reference to var id ", e.var(), " ('", v->name,
                                    "') has dtype ", Sv(DTypeName(t)), " but the var is ",
                                    Sv(DTypeName(v->dtype))));
        }
        return Expr(std::move(v));
      }
      case v1::Expr::kBinary: {
        const v1::BinaryExpr& b = e.binary();
        PC_ASSIGN_OR_RETURN(BinaryOp op, Enum(kBinaryOps, b.op(), "binary op"));
        std::string what(BinaryOpName(op));
        PC_ASSIGN_OR_RETURN(Expr a, Operand(b.has_a(), b.a(), what + " operand a"));
        PC_ASSIGN_OR_RETURN(Expr c, Operand(b.has_b(), b.b(), what + " operand b"));
        return std::make_shared<BinaryNode>(t, op, std::move(a), std::move(c));
      }
      case v1::Expr::kUnary: {
        const v1::UnaryExpr& u = e.unary();
        PC_ASSIGN_OR_RETURN(UnaryOp op, Enum(kUnaryOps, u.op(), "unary op"));
        PC_ASSIGN_OR_RETURN(
            Expr a, Operand(u.has_a(), u.a(), absl::StrCat(Sv(UnaryOpName(op)), " operand")));
        return std::make_shared<UnaryNode>(t, op, std::move(a));
      }
      case v1::Expr::kSelect: {
        const v1::SelectExpr& s = e.select();
        PC_ASSIGN_OR_RETURN(Expr c, Operand(s.has_cond(), s.cond(), "select condition"));
        PC_ASSIGN_OR_RETURN(Expr x,
                            Operand(s.has_true_value(), s.true_value(), "select true value"));
        PC_ASSIGN_OR_RETURN(Expr y,
                            Operand(s.has_false_value(), s.false_value(), "select false value"));
        return std::make_shared<SelectNode>(t, std::move(c), std::move(x), std::move(y));
      }
      case v1::Expr::kCast: {
        PC_ASSIGN_OR_RETURN(Expr v,
                            Operand(e.cast().has_value(), e.cast().value(), "cast operand"));
        return std::make_shared<CastNode>(t, std::move(v));
      }
      case v1::Expr::kCall: {
        const v1::CallExpr& c = e.call();
        PC_ASSIGN_OR_RETURN(CallFn fn, Enum(kCallFns, c.fn(), "call function"));
        if (c.args_size() != CallArity(fn)) {
          return Error(absl::StrCat("call to ", Sv(CallFnName(fn)), " has ", c.args_size(),
                                    " arguments; it takes ", CallArity(fn)));
        }
        std::vector<Expr> args;
        for (const v1::Expr& a : c.args()) {
          PC_ASSIGN_OR_RETURN(Expr x, ReadExpr(a));
          args.push_back(std::move(x));
        }
        return std::make_shared<CallNode>(t, fn, std::move(args));
      }
      case v1::Expr::kLoad: {
        const v1::LoadExpr& l = e.load();
        PC_ASSIGN_OR_RETURN(Buffer b, GetBuffer(l.buffer(), "load"));
        if (static_cast<size_t>(l.indices_size()) != b->shape.size()) {
          return Error(absl::StrCat("load has ", l.indices_size(), " indices for ",
                                    Describe(b, l.buffer())));
        }
        std::vector<Expr> indices;
        for (const v1::Expr& i : l.indices()) {
          PC_ASSIGN_OR_RETURN(Expr x, ReadExpr(i));
          indices.push_back(std::move(x));
        }
        return std::make_shared<LoadNode>(t, std::move(b), std::move(indices));
      }
      case v1::Expr::NODE_NOT_SET: break;
    }
    return Error("expression is empty");
  }

  // A statement field's expression: errors are placed at `field`.
  absl::StatusOr<Expr> Field(bool present, const v1::Expr& e, absl::string_view field,
                             bool required = true) {
    if (!present) {
      if (required) return Error(absl::StrCat(field, " is missing"));
      return Expr();
    }
    At at(this, std::string(field));
    return ReadExpr(e);
  }

  absl::StatusOr<std::vector<Expr>> ReadExprs(const ExprList& es, absl::string_view field) {
    std::vector<Expr> out;
    out.reserve(es.size());
    for (int i = 0; i < es.size(); ++i) {
      At at(this, absl::StrCat(field, " ", i));
      PC_ASSIGN_OR_RETURN(Expr e, ReadExpr(es.Get(i)));
      out.push_back(std::move(e));
    }
    return out;
  }

  absl::StatusOr<Region> ReadRegion(bool present, const v1::Region& r, absl::string_view field) {
    if (!present) return Error(absl::StrCat(field, " region is missing"));
    At at(this, absl::StrCat(field, " region"));
    Region out;
    PC_ASSIGN_OR_RETURN(out.buffer, GetBuffer(r.buffer(), "region"));
    size_t rank = out.buffer->shape.size();
    if (static_cast<size_t>(r.mins_size()) != rank ||
        static_cast<size_t>(r.extents_size()) != rank) {
      return Error(absl::StrCat("region has ", r.mins_size(), " mins and ", r.extents_size(),
                                " extents for ", Describe(out.buffer, r.buffer())));
    }
    PC_ASSIGN_OR_RETURN(out.mins, ReadExprs(r.mins(), "min"));
    PC_ASSIGN_OR_RETURN(out.extents, ReadExprs(r.extents(), "extent"));
    return out;
  }

  // A statement-valued field. A seq adds no path segment of its own: its
  // statements are named "stmt i".
  absl::StatusOr<Stmt> ReadChild(bool present, const v1::Stmt& s, absl::string_view field,
                                 bool required) {
    if (!present) {
      if (required) return Error(absl::StrCat(field, " is missing"));
      return Stmt();
    }
    if (s.has_seq()) return ReadStmt(s);
    At at(this, absl::StrCat(field, " (", StmtLabel(s), ")"));
    return ReadStmt(s);
  }

  absl::StatusOr<std::vector<Expr>> ReadIndices(const ExprList& es, const Buffer& b, uint32_t id,
                                                absl::string_view what) {
    if (static_cast<size_t>(es.size()) != b->shape.size()) {
      return Error(absl::StrCat(what, " has ", es.size(), " indices for ", Describe(b, id)));
    }
    return ReadExprs(es, "index");
  }

  absl::StatusOr<Stmt> ReadStmt(const v1::Stmt& s) {
    PC_RETURN_IF_ERROR(Enter());
    Leave leave{&depth_};
    switch (s.node_case()) {
      case v1::Stmt::kSeq: {
        std::vector<Stmt> stmts;
        const v1::SeqStmt& seq = s.seq();
        for (int i = 0; i < seq.stmts_size(); ++i) {
          At at(this, absl::StrCat("stmt ", i, " (", StmtLabel(seq.stmts(i)), ")"));
          PC_ASSIGN_OR_RETURN(Stmt c, ReadStmt(seq.stmts(i)));
          stmts.push_back(std::move(c));
        }
        return Seq(std::move(stmts));
      }
      case v1::Stmt::kKernel: {
        const v1::KernelStmt& k = s.kernel();
        if (k.grid_size() < 1 || k.grid_size() > 3) {
          return Error(
              absl::StrCat("kernel has ", k.grid_size(), " grid extents; it takes 1 to 3"));
        }
        if (k.block_vars_size() != k.grid_size()) {
          return Error(absl::StrCat("kernel has ", k.block_vars_size(), " block vars for ",
                                    k.grid_size(), " grid extents"));
        }
        auto n = std::make_shared<KernelNode>();
        PC_ASSIGN_OR_RETURN(n->grid, ReadExprs(k.grid(), "grid"));
        for (int i = 0; i < k.block_vars_size(); ++i) {
          PC_ASSIGN_OR_RETURN(Var v, GetVar(k.block_vars(i), absl::StrCat("block var ", i)));
          n->block_vars.push_back(std::move(v));
        }
        PC_ASSIGN_OR_RETURN(n->threads, Field(k.has_threads(), k.threads(), "threads"));
        n->prelude = k.prelude();
        PC_ASSIGN_OR_RETURN(n->body, ReadChild(k.has_body(), k.body(), "body", true));
        return n;
      }
      case v1::Stmt::kAllocate: {
        const v1::AllocateStmt& a = s.allocate();
        PC_ASSIGN_OR_RETURN(Buffer b, GetBuffer(a.buffer(), "allocate"));
        PC_ASSIGN_OR_RETURN(Expr init, Field(a.has_init(), a.init(), "init", false));
        return Allocate(std::move(b), std::move(init));
      }
      case v1::Stmt::kForLoop: {
        const v1::ForStmt& f = s.for_loop();
        auto n = std::make_shared<ForNode>();
        PC_ASSIGN_OR_RETURN(n->var, GetVar(f.var(), "loop var"));
        PC_ASSIGN_OR_RETURN(n->min, Field(f.has_min(), f.min(), "min"));
        PC_ASSIGN_OR_RETURN(n->extent, Field(f.has_extent(), f.extent(), "extent"));
        PC_ASSIGN_OR_RETURN(n->kind, Enum(kForKinds, f.kind(), "loop kind"));
        PC_ASSIGN_OR_RETURN(n->num_stages,
                            Field(f.has_num_stages(), f.num_stages(), "num_stages", false));
        n->order.assign(f.order().begin(), f.order().end());
        n->stage.assign(f.stage().begin(), f.stage().end());
        PC_ASSIGN_OR_RETURN(n->body, ReadChild(f.has_body(), f.body(), "body", true));
        return n;
      }
      case v1::Stmt::kIfThenElse: {
        const v1::IfStmt& i = s.if_then_else();
        PC_ASSIGN_OR_RETURN(Expr c, Field(i.has_cond(), i.cond(), "cond"));
        PC_ASSIGN_OR_RETURN(Stmt t, ReadChild(i.has_then_case(), i.then_case(), "then", true));
        PC_ASSIGN_OR_RETURN(Stmt e, ReadChild(i.has_else_case(), i.else_case(), "else", false));
        return If(std::move(c), std::move(t), std::move(e));
      }
      case v1::Stmt::kStore: {
        const v1::StoreStmt& st = s.store();
        PC_ASSIGN_OR_RETURN(Buffer b, GetBuffer(st.buffer(), "store"));
        PC_ASSIGN_OR_RETURN(std::vector<Expr> idx,
                            ReadIndices(st.indices(), b, st.buffer(), "store"));
        PC_ASSIGN_OR_RETURN(Expr v, Field(st.has_value(), st.value(), "value"));
        return Store(std::move(b), std::move(idx), std::move(v));
      }
      case v1::Stmt::kLet: {
        const v1::LetStmt& l = s.let();
        PC_ASSIGN_OR_RETURN(Var v, GetVar(l.var(), "let"));
        PC_ASSIGN_OR_RETURN(Expr x, Field(l.has_value(), l.value(), "value"));
        return Let(std::move(v), std::move(x));
      }
      case v1::Stmt::kCopy: {
        const v1::CopyStmt& c = s.copy();
        PC_ASSIGN_OR_RETURN(Region src, ReadRegion(c.has_src(), c.src(), "src"));
        PC_ASSIGN_OR_RETURN(Region dst, ReadRegion(c.has_dst(), c.dst(), "dst"));
        return Copy(std::move(src), std::move(dst));
      }
      case v1::Stmt::kGemm: {
        const v1::GemmStmt& g = s.gemm();
        auto n = std::make_shared<GemmNode>();
        PC_ASSIGN_OR_RETURN(n->a, ReadRegion(g.has_a(), g.a(), "A"));
        PC_ASSIGN_OR_RETURN(n->b, ReadRegion(g.has_b(), g.b(), "B"));
        PC_ASSIGN_OR_RETURN(n->c, ReadRegion(g.has_c(), g.c(), "C"));
        n->transpose_a = g.transpose_a();
        n->transpose_b = g.transpose_b();
        PC_ASSIGN_OR_RETURN(n->policy, Enum(kGemmPolicies, g.policy(), "gemm policy"));
        n->clear_accum = g.clear_accum();
        return n;
      }
      case v1::Stmt::kFill: {
        const v1::FillStmt& f = s.fill();
        PC_ASSIGN_OR_RETURN(Region dst, ReadRegion(f.has_dst(), f.dst(), "dst"));
        PC_ASSIGN_OR_RETURN(Expr v, Field(f.has_value(), f.value(), "value"));
        return Fill(std::move(dst), std::move(v));
      }
      case v1::Stmt::kReduce: {
        const v1::ReduceStmt& r = s.reduce();
        PC_ASSIGN_OR_RETURN(ReduceKind kind, Enum(kReduceKinds, r.kind(), "reduce kind"));
        PC_ASSIGN_OR_RETURN(Buffer src, GetBuffer(r.src(), "reduce src"));
        PC_ASSIGN_OR_RETURN(Buffer dst, GetBuffer(r.dst(), "reduce dst"));
        return std::make_shared<ReduceNode>(kind, std::move(src), std::move(dst), r.dim(),
                                            r.clear());
      }
      case v1::Stmt::kCumsum: {
        const v1::CumsumStmt& c = s.cumsum();
        PC_ASSIGN_OR_RETURN(Buffer src, GetBuffer(c.src(), "cumsum src"));
        PC_ASSIGN_OR_RETURN(Buffer dst, GetBuffer(c.dst(), "cumsum dst"));
        return std::make_shared<CumsumNode>(std::move(src), std::move(dst), c.dim(), c.reverse());
      }
      case v1::Stmt::kAtomicAdd: {
        const v1::AtomicAddStmt& a = s.atomic_add();
        if (a.has_src() == a.has_value()) {
          return Error(
              "atomic_add needs exactly one of a source region (tile form) and a value "
              "(scalar form)");
        }
        PC_ASSIGN_OR_RETURN(Region dst, ReadRegion(a.has_dst(), a.dst(), "dst"));
        std::optional<Region> src;
        if (a.has_src()) {
          PC_ASSIGN_OR_RETURN(src, ReadRegion(true, a.src(), "src"));
        }
        PC_ASSIGN_OR_RETURN(Expr v, Field(a.has_value(), a.value(), "value", false));
        return std::make_shared<AtomicAddNode>(std::move(dst), std::move(src), std::move(v));
      }
      case v1::Stmt::kAnnotateLayout: {
        const v1::AnnotateLayoutStmt& a = s.annotate_layout();
        PC_ASSIGN_OR_RETURN(Buffer b, GetBuffer(a.buffer(), "annotate_layout"));
        if (!a.has_layout()) return Error("layout is missing");
        const v1::Layout& l = a.layout();
        Layout layout;
        PC_ASSIGN_OR_RETURN(layout.kind, Enum(kLayoutKinds, l.kind(), "layout kind"));
        for (int i = 0; i < l.vars_size(); ++i) {
          PC_ASSIGN_OR_RETURN(Var v, GetVar(l.vars(i), absl::StrCat("layout var ", i)));
          layout.vars.push_back(std::move(v));
        }
        PC_ASSIGN_OR_RETURN(layout.indices, ReadExprs(l.indices(), "layout index"));
        return std::make_shared<AnnotateLayoutNode>(std::move(b), std::move(layout));
      }
      case v1::Stmt::kUseSwizzle: {
        const v1::UseSwizzleStmt& u = s.use_swizzle();
        PC_ASSIGN_OR_RETURN(Expr p, Field(u.has_panel_size(), u.panel_size(), "panel_size"));
        return std::make_shared<UseSwizzleNode>(std::move(p), u.column_major(), u.enable());
      }
      case v1::Stmt::NODE_NOT_SET: break;
    }
    return Error("statement is empty");
  }

  const v1::Program& p_;
  std::vector<std::string> path_;
  int depth_ = 0;
  std::unordered_map<uint32_t, Var> vars_;
  std::unordered_map<uint32_t, int> buffer_index_;  // id -> index in p_.buffers()
  std::vector<Buffer> buffers_;                     // by index, once resolved
  std::vector<bool> resolving_;
};

#undef PC_RETURN_IF_ERROR
#undef PC_ASSIGN_OR_RETURN_IMPL
#undef PC_ASSIGN_OR_RETURN
#undef PC_CONCAT
#undef PC_CONCAT_INNER

}  // namespace

v1::Program ToProto(const Program& program) {
  v1::Program out;
  Writer w(&out);
  out.set_name(program.name);
  for (const Param& p : program.params) {
    v1::Param* param = out.add_params();
    if (p.tensor) {
      param->set_tensor(w.BufferId(p.tensor));
    } else {
      param->set_scalar(w.VarId(p.scalar));
    }
  }
  for (const Var& d : program.dyn_dims) out.add_dyn_dims(w.VarId(d));
  for (const TileParam& t : program.tile_params) {
    v1::TileParam* tp = out.add_tile_params();
    tp->set_var(w.VarId(t.var));
    if (t.value) tp->set_value(*t.value);
    for (int64_t c : t.candidates) tp->add_candidates(c);
  }
  if (program.body) w.WriteStmt(program.body, out.mutable_body());
  return out;
}

absl::StatusOr<Program> FromProto(const v1::Program& proto) { return Reader(proto).Read(); }

}  // namespace tilec::ir
