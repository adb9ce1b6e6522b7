// The reader half of proto_convert.h: tilec.v1 -> IR, validating as it goes.
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
#include "compiler/ir/names.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/proto_tables.h"
#include "compiler/ir/sv.h"

namespace tilec::ir {
namespace {

namespace v1 = ::tilec::v1;
using namespace proto_internal;  // NOLINT: the enum tables

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

absl::string_view StmtLabel(const v1::Stmt& s) {
  switch (s.node_case()) {
    case v1::Stmt::kSeq: return "seq";
    case v1::Stmt::kKernel: return "kernel";
    case v1::Stmt::kAllocate: return "allocate";
    case v1::Stmt::kForLoop: return "for";
    case v1::Stmt::kIfThenElse: return "if";
    case v1::Stmt::kWhileLoop: return "while";
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
          if (param.has_view()) {
            TensorView view;
            PC_ASSIGN_OR_RETURN(view.shape, ReadExprs(param.view().shape(), "view shape"));
            for (uint32_t a : param.view().axes()) {
              if (a >= (1u << 16)) return Error(absl::StrCat("view axis ", a, " is out of range"));
              view.axes.push_back(static_cast<int32_t>(a));
            }
            ir_param.view = std::move(view);
          }
          break;
        }
        case v1::Param::kScalar: {
          if (param.has_view()) return Error("a scalar param has a tensor view");
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
    for (const std::string& q : p_.device_queries()) out.device_queries.push_back(q);
    out.fast_math = p_.fast_math();
    out.disable_warp_specialized = p_.disable_warp_specialized();
    for (int i = 0; i < p_.requirements_size(); ++i) {
      At at(this, absl::StrCat("requirement ", i));
      Requirement r;
      PC_ASSIGN_OR_RETURN(r.cond, Operand(p_.requirements(i).has_cond(),
                                          p_.requirements(i).cond(), "its condition"));
      r.message = p_.requirements(i).message();
      out.requirements.push_back(std::move(r));
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
      At at(this,
            absl::StrCat("var table entry ", i, " (id ", v.id(), ", '", QuoteName(v.name()), "')"));
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
      At at(this, absl::StrCat("buffer table entry ", i, " (id ", b.id(), ", '",
                               QuoteName(b.name()), "')"));
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
    At at(this, absl::StrCat("buffer id ", b.id(), " ('", QuoteName(b.name()), "')"));
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
      case v1::Stmt::kWhileLoop: {
        const v1::WhileStmt& w = s.while_loop();
        PC_ASSIGN_OR_RETURN(Expr c, Field(w.has_cond(), w.cond(), "cond"));
        PC_ASSIGN_OR_RETURN(Stmt b, ReadChild(w.has_body(), w.body(), "body", true));
        return While(std::move(c), std::move(b));
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
        return Copy(std::move(src), std::move(dst), c.disable_tma());
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
        AtomicOp op = AtomicOp::kAdd;
        switch (a.op()) {
          case v1::ATOMIC_OP_ADD: break;
          case v1::ATOMIC_OP_MAX: op = AtomicOp::kMax; break;
          case v1::ATOMIC_OP_MIN: op = AtomicOp::kMin; break;
          default: return Error(absl::StrCat("unknown atomic op ", static_cast<int>(a.op())));
        }
        Buffer result;
        if (a.has_result()) {
          PC_ASSIGN_OR_RETURN(result, GetBuffer(a.result(), "atomic_add result"));
        }
        return std::make_shared<AtomicAddNode>(std::move(dst), std::move(src), std::move(v), op,
                                               std::move(result));
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

absl::StatusOr<Program> FromProto(const v1::Program& proto) { return Reader(proto).Read(); }

}  // namespace tilec::ir
