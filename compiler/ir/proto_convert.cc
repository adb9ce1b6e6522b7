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
#include "compiler/ir/proto_tables.h"

namespace tilec::ir {
namespace {

namespace v1 = ::tilec::v1;
using namespace proto_internal;  // NOLINT: the enum tables

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
      case StmtKind::kWhile: {
        const auto* n = s->as<WhileNode>();
        v1::WhileStmt* w = out->mutable_while_loop();
        if (n->cond) WriteExpr(n->cond, w->mutable_cond());
        if (n->body) WriteStmt(n->body, w->mutable_body());
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
        if (n->disable_tma) c->set_disable_tma(true);
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
        if (n->op == AtomicOp::kMax) a->set_op(v1::ATOMIC_OP_MAX);
        if (n->op == AtomicOp::kMin) a->set_op(v1::ATOMIC_OP_MIN);
        if (n->result) a->set_result(BufferId(n->result));
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

}  // namespace

v1::Program ToProto(const Program& program) {
  v1::Program out;
  Writer w(&out);
  out.set_name(program.name);
  for (const Param& p : program.params) {
    v1::Param* param = out.add_params();
    if (p.tensor) {
      param->set_tensor(w.BufferId(p.tensor));
      if (p.view) {
        v1::TensorView* view = param->mutable_view();
        for (const Expr& d : p.view->shape) w.WriteExpr(d, view->add_shape());
        for (int32_t a : p.view->axes) view->add_axes(static_cast<uint32_t>(a));
      }
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
  for (const std::string& q : program.device_queries) out.add_device_queries(q);
  out.set_fast_math(program.fast_math);
  out.set_disable_warp_specialized(program.disable_warp_specialized);
  for (const Requirement& r : program.requirements) {
    v1::Requirement* req = out.add_requirements();
    w.WriteExpr(r.cond, req->mutable_cond());
    req->set_message(r.message);
  }
  return out;
}

}  // namespace tilec::ir
