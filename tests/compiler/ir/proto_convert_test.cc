#include "compiler/ir/proto_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/hash.h"
#include "compiler/ir/visitor.h"
#include "google/protobuf/stubs/logging.h"

namespace tilec::ir {
namespace {

// ---------------------------------------------------------------------------
// Structural equality that also checks identity: the vars and buffers of `a`
// must correspond one to one with those of `b` (a bijection), so a var used
// twice in `a` is one var in `b`, and two distinct vars (even with the same
// name) stay two.

class StructuralEq {
 public:
  testing::AssertionResult Programs(const Program& a, const Program& b) {
    Check(a.name == b.name, "program name");
    CheckSize(a.params.size(), b.params.size(), "params");
    for (size_t i = 0; ok_ && i < a.params.size(); ++i) {
      Check(!a.params[i].tensor == !b.params[i].tensor, "param kind");
      if (a.params[i].tensor) Buf(a.params[i].tensor, b.params[i].tensor);
      if (a.params[i].scalar || b.params[i].scalar) V(a.params[i].scalar, b.params[i].scalar);
    }
    CheckSize(a.dyn_dims.size(), b.dyn_dims.size(), "dyn_dims");
    for (size_t i = 0; ok_ && i < a.dyn_dims.size(); ++i) V(a.dyn_dims[i], b.dyn_dims[i]);
    CheckSize(a.tile_params.size(), b.tile_params.size(), "tile_params");
    for (size_t i = 0; ok_ && i < a.tile_params.size(); ++i) {
      V(a.tile_params[i].var, b.tile_params[i].var);
      Check(a.tile_params[i].value == b.tile_params[i].value, "tile param value");
      Check(a.tile_params[i].candidates == b.tile_params[i].candidates, "tile param candidates");
    }
    S(a.body, b.body);
    if (ok_) return testing::AssertionSuccess();
    return testing::AssertionFailure() << error_;
  }

  size_t num_vars() const { return vars_.size(); }
  size_t num_buffers() const { return buffers_.size(); }

 private:
  void Check(bool cond, const std::string& what) {
    if (ok_ && !cond) {
      ok_ = false;
      error_ = "mismatch in " + what;
    }
  }
  void CheckSize(size_t x, size_t y, const std::string& what) {
    Check(x == y, what + " count (" + std::to_string(x) + " vs " + std::to_string(y) + ")");
  }

  template <typename Node>
  void Bijection(const Node* x, const Node* y, std::unordered_map<const Node*, const Node*>& fwd,
                 std::unordered_map<const Node*, const Node*>& bwd, const std::string& what) {
    auto [f, fnew] = fwd.try_emplace(x, y);
    auto [b, bnew] = bwd.try_emplace(y, x);
    Check(f->second == y && b->second == x, what + " identity (sharing not preserved)");
  }

  void V(const Var& x, const Var& y) {
    Check(!x == !y, "var presence");
    if (!ok_ || !x) return;
    Check(x->name == y->name, "var name " + x->name);
    Check(x->dtype == y->dtype, "var dtype " + x->name);
    Bijection<VarNode>(x.get(), y.get(), vars_, vars_back_, "var " + x->name);
  }

  void Buf(const Buffer& x, const Buffer& y) {
    Check(!x == !y, "buffer presence");
    if (!ok_ || !x) return;
    bool seen = buffers_.count(x.get()) > 0;
    Bijection<BufferNode>(x.get(), y.get(), buffers_, buffers_back_, "buffer " + x->name);
    if (seen) return;
    Check(x->name == y->name, "buffer name " + x->name);
    Check(x->dtype == y->dtype, "buffer dtype " + x->name);
    Check(x->scope == y->scope, "buffer scope " + x->name);
    Es(x->shape, y->shape, "buffer shape " + x->name);
  }

  void Es(const std::vector<Expr>& x, const std::vector<Expr>& y, const std::string& what) {
    CheckSize(x.size(), y.size(), what);
    for (size_t i = 0; ok_ && i < x.size(); ++i) E(x[i], y[i]);
  }

  void R(const Region& x, const Region& y) {
    Buf(x.buffer, y.buffer);
    Es(x.mins, y.mins, "region mins");
    Es(x.extents, y.extents, "region extents");
  }

  void E(const Expr& x, const Expr& y) {
    Check(!x == !y, "expression presence");
    if (!ok_ || !x) return;
    Check(x->kind == y->kind, "expression kind");
    Check(x->dtype == y->dtype, "expression dtype");
    if (!ok_) return;
    switch (x->kind) {
      case ExprKind::kIntImm:
        Check(x->as<IntImmNode>()->value == y->as<IntImmNode>()->value, "int constant");
        return;
      case ExprKind::kFloatImm:
        Check(std::bit_cast<uint64_t>(x->as<FloatImmNode>()->value) ==
                  std::bit_cast<uint64_t>(y->as<FloatImmNode>()->value),
              "float constant bits");
        return;
      case ExprKind::kVar:
        V(std::static_pointer_cast<const VarNode>(x), std::static_pointer_cast<const VarNode>(y));
        return;
      case ExprKind::kBinary:
        Check(x->as<BinaryNode>()->op == y->as<BinaryNode>()->op, "binary op");
        E(x->as<BinaryNode>()->a, y->as<BinaryNode>()->a);
        E(x->as<BinaryNode>()->b, y->as<BinaryNode>()->b);
        return;
      case ExprKind::kUnary:
        Check(x->as<UnaryNode>()->op == y->as<UnaryNode>()->op, "unary op");
        E(x->as<UnaryNode>()->a, y->as<UnaryNode>()->a);
        return;
      case ExprKind::kSelect:
        E(x->as<SelectNode>()->cond, y->as<SelectNode>()->cond);
        E(x->as<SelectNode>()->t, y->as<SelectNode>()->t);
        E(x->as<SelectNode>()->f, y->as<SelectNode>()->f);
        return;
      case ExprKind::kCast: E(x->as<CastNode>()->value, y->as<CastNode>()->value); return;
      case ExprKind::kCall:
        Check(x->as<CallNode>()->fn == y->as<CallNode>()->fn, "call fn");
        Es(x->as<CallNode>()->args, y->as<CallNode>()->args, "call args");
        return;
      case ExprKind::kLoad:
        Buf(x->as<LoadNode>()->buffer, y->as<LoadNode>()->buffer);
        Es(x->as<LoadNode>()->indices, y->as<LoadNode>()->indices, "load indices");
        return;
    }
  }

  void S(const Stmt& x, const Stmt& y) {
    Check(!x == !y, "statement presence");
    if (!ok_ || !x) return;
    Check(x->kind == y->kind, "statement kind");
    if (!ok_) return;
    switch (x->kind) {
      case StmtKind::kSeq: {
        const auto &p = x->as<SeqNode>()->stmts, &q = y->as<SeqNode>()->stmts;
        CheckSize(p.size(), q.size(), "seq");
        for (size_t i = 0; ok_ && i < p.size(); ++i) S(p[i], q[i]);
        return;
      }
      case StmtKind::kKernel: {
        const auto *p = x->as<KernelNode>(), *q = y->as<KernelNode>();
        Es(p->grid, q->grid, "grid");
        CheckSize(p->block_vars.size(), q->block_vars.size(), "block vars");
        for (size_t i = 0; ok_ && i < p->block_vars.size(); ++i)
          V(p->block_vars[i], q->block_vars[i]);
        E(p->threads, q->threads);
        Check(p->prelude == q->prelude, "prelude");
        S(p->body, q->body);
        return;
      }
      case StmtKind::kAllocate:
        Buf(x->as<AllocateNode>()->buffer, y->as<AllocateNode>()->buffer);
        E(x->as<AllocateNode>()->init, y->as<AllocateNode>()->init);
        return;
      case StmtKind::kFor: {
        const auto *p = x->as<ForNode>(), *q = y->as<ForNode>();
        V(p->var, q->var);
        E(p->min, q->min);
        E(p->extent, q->extent);
        Check(p->kind == q->kind, "loop kind");
        E(p->num_stages, q->num_stages);
        Check(p->order == q->order, "pipeline order");
        Check(p->stage == q->stage, "pipeline stage");
        S(p->body, q->body);
        return;
      }
      case StmtKind::kIf:
        E(x->as<IfNode>()->cond, y->as<IfNode>()->cond);
        S(x->as<IfNode>()->then_case, y->as<IfNode>()->then_case);
        S(x->as<IfNode>()->else_case, y->as<IfNode>()->else_case);
        return;
      case StmtKind::kWhile:
        E(x->as<WhileNode>()->cond, y->as<WhileNode>()->cond);
        S(x->as<WhileNode>()->body, y->as<WhileNode>()->body);
        return;
      case StmtKind::kStore:
        Buf(x->as<StoreNode>()->buffer, y->as<StoreNode>()->buffer);
        Es(x->as<StoreNode>()->indices, y->as<StoreNode>()->indices, "store indices");
        E(x->as<StoreNode>()->value, y->as<StoreNode>()->value);
        return;
      case StmtKind::kLet:
        V(x->as<LetNode>()->var, y->as<LetNode>()->var);
        E(x->as<LetNode>()->value, y->as<LetNode>()->value);
        return;
      case StmtKind::kCopy:
        R(x->as<CopyNode>()->src, y->as<CopyNode>()->src);
        R(x->as<CopyNode>()->dst, y->as<CopyNode>()->dst);
        return;
      case StmtKind::kGemm: {
        const auto *p = x->as<GemmNode>(), *q = y->as<GemmNode>();
        R(p->a, q->a);
        R(p->b, q->b);
        R(p->c, q->c);
        Check(p->transpose_a == q->transpose_a && p->transpose_b == q->transpose_b, "transpose");
        Check(p->policy == q->policy, "gemm policy");
        Check(p->clear_accum == q->clear_accum, "clear_accum");
        return;
      }
      case StmtKind::kFill:
        R(x->as<FillNode>()->dst, y->as<FillNode>()->dst);
        E(x->as<FillNode>()->value, y->as<FillNode>()->value);
        return;
      case StmtKind::kReduce: {
        const auto *p = x->as<ReduceNode>(), *q = y->as<ReduceNode>();
        Check(p->reduce_kind == q->reduce_kind, "reduce kind");
        Buf(p->src, q->src);
        Buf(p->dst, q->dst);
        Check(p->dim == q->dim && p->clear == q->clear, "reduce dim/clear");
        return;
      }
      case StmtKind::kCumsum: {
        const auto *p = x->as<CumsumNode>(), *q = y->as<CumsumNode>();
        Buf(p->src, q->src);
        Buf(p->dst, q->dst);
        Check(p->dim == q->dim && p->reverse == q->reverse, "cumsum dim/reverse");
        return;
      }
      case StmtKind::kAtomicAdd: {
        const auto *p = x->as<AtomicAddNode>(), *q = y->as<AtomicAddNode>();
        R(p->dst, q->dst);
        Check(p->src.has_value() == q->src.has_value(), "atomic_add form");
        if (ok_ && p->src) R(*p->src, *q->src);
        E(p->value, q->value);
        return;
      }
      case StmtKind::kAnnotateLayout: {
        const auto *p = x->as<AnnotateLayoutNode>(), *q = y->as<AnnotateLayoutNode>();
        Buf(p->buffer, q->buffer);
        Check(p->layout.kind == q->layout.kind, "layout kind");
        CheckSize(p->layout.vars.size(), q->layout.vars.size(), "layout vars");
        for (size_t i = 0; ok_ && i < p->layout.vars.size(); ++i) {
          V(p->layout.vars[i], q->layout.vars[i]);
        }
        Es(p->layout.indices, q->layout.indices, "layout indices");
        return;
      }
      case StmtKind::kUseSwizzle: {
        const auto *p = x->as<UseSwizzleNode>(), *q = y->as<UseSwizzleNode>();
        E(p->panel_size, q->panel_size);
        Check(p->column_major == q->column_major && p->enable == q->enable, "use_swizzle flags");
        return;
      }
    }
  }

  bool ok_ = true;
  std::string error_;
  std::unordered_map<const VarNode*, const VarNode*> vars_, vars_back_;
  std::unordered_map<const BufferNode*, const BufferNode*> buffers_, buffers_back_;
};

// ---------------------------------------------------------------------------
// A program that uses every node kind, operator, dtype, scope, loop kind and
// layout kind, with optional fields both present and absent.

Stmt MakeKernel(std::vector<Expr> grid, std::vector<Var> block_vars, Expr threads,
                std::string prelude, Stmt body) {
  auto k = std::make_shared<KernelNode>();
  k->grid = std::move(grid);
  k->block_vars = std::move(block_vars);
  k->threads = std::move(threads);
  k->prelude = std::move(prelude);
  k->body = std::move(body);
  return k;
}

Stmt Pipelined(Var v, Expr extent, Expr stages, std::vector<int64_t> order,
               std::vector<int64_t> stage, Stmt body) {
  auto f = std::make_shared<ForNode>(
      *For(std::move(v), IntImm(0), std::move(extent), ForKind::kPipelined, std::move(body))
           ->as<ForNode>());
  f->num_stages = std::move(stages);
  f->order = std::move(order);
  f->stage = std::move(stage);
  return f;
}

Stmt MakeGemm(Region a, Region b, Region c, bool ta, bool tb, GemmPolicy p, bool clear) {
  auto g = std::make_shared<GemmNode>();
  g->a = std::move(a);
  g->b = std::move(b);
  g->c = std::move(c);
  g->transpose_a = ta;
  g->transpose_b = tb;
  g->policy = p;
  g->clear_accum = clear;
  return g;
}

Program KitchenSink() {
  Program p;
  p.name = "kitchen_sink";
  Var m = MakeVar("M");
  Var n = MakeVar("n", DType::kInt64);
  p.dyn_dims = {m, n};
  Var block_m = MakeVar("block_M");    // bound: substituted below, kept for the record
  Var stages = MakeVar("num_stages");  // unbound: appears in the body
  p.tile_params = {{block_m, 64, {32, 64, 128}}, {stages, std::nullopt, {}}};

  Buffer a = MakeBuffer("A", DType::kFloat16, {m, IntImm(256)}, Scope::kGlobal);
  Buffer b = MakeBuffer("B", DType::kBFloat16, {IntImm(256), IntImm(128)}, Scope::kGlobal);
  Buffer c = MakeBuffer("C", DType::kFloat32, {m, IntImm(128)}, Scope::kGlobal);
  Buffer q = MakeBuffer("Q", DType::kInt4, {Cast(DType::kInt32, n)}, Scope::kGlobal);
  Var scale = MakeVar("scale", DType::kFloat32);
  p.params = {{a, nullptr}, {b, nullptr}, {c, nullptr}, {q, nullptr}, {nullptr, scale}};

  std::vector<Stmt> k0;
  Var bx = MakeVar("bx"), by = MakeVar("by");
  Buffer a_s = MakeBuffer("A_shared", DType::kFloat16, {IntImm(64), IntImm(32)}, Scope::kShared);
  Buffer b_s = MakeBuffer("B_shared", DType::kBFloat16, {IntImm(32), IntImm(128)}, Scope::kShared);
  Buffer c_f = MakeBuffer("C_frag", DType::kFloat32, {IntImm(64), IntImm(128)}, Scope::kFragment);
  Buffer rmax = MakeBuffer("row_max", DType::kFloat32, {IntImm(64)}, Scope::kFragment);
  Buffer acc = MakeBuffer("acc", DType::kFloat64, {IntImm(4)}, Scope::kLocal);
  Buffer cnt = MakeBuffer("cnt", DType::kInt32, {IntImm(1)}, Scope::kVar);
  // A buffer whose shape loads from another buffer, to exercise table order.
  Buffer ragged = MakeBuffer("ragged", DType::kUInt8, {Load(cnt, {IntImm(0)})}, Scope::kLocal);
  k0.push_back(Allocate(a_s));
  k0.push_back(Allocate(b_s));
  k0.push_back(Allocate(c_f));
  k0.push_back(Allocate(rmax));
  k0.push_back(Allocate(acc));
  k0.push_back(Allocate(cnt, IntImm(0)));
  k0.push_back(Allocate(ragged));
  k0.push_back(std::make_shared<AnnotateLayoutNode>(a_s, Layout{}));
  Var li = MakeVar("i"), lj = MakeVar("j");
  k0.push_back(std::make_shared<AnnotateLayoutNode>(
      c_f, Layout{Layout::Kind::kCustom,
                  {li, lj},
                  {Binary(BinaryOp::kAdd, Binary(BinaryOp::kMul, li, IntImm(128)), lj)}}));
  k0.push_back(std::make_shared<UseSwizzleNode>(IntImm(8), true, false));
  k0.push_back(Fill(FullRegion(c_f), FloatImm(0.0)));

  Var k = MakeVar("k");
  Region a_tile{a,
                {Binary(BinaryOp::kMul, bx, IntImm(64)), Binary(BinaryOp::kMul, k, IntImm(32))},
                {IntImm(64), IntImm(32)}};
  Region b_tile{b, {Binary(BinaryOp::kMul, k, IntImm(32)), IntImm(0)}, {IntImm(32), IntImm(128)}};
  k0.push_back(Pipelined(k, IntImm(8), stages, {0, 1, 2}, {0, 0, 1},
                         Seq({Copy(a_tile, FullRegion(a_s)), Copy(b_tile, FullRegion(b_s)),
                              MakeGemm(FullRegion(a_s), FullRegion(b_s), FullRegion(c_f), false,
                                       true, GemmPolicy::kFullRow, false)})));
  k0.push_back(MakeGemm(FullRegion(a_s), FullRegion(b_s), FullRegion(c_f), true, false,
                        GemmPolicy::kFullCol, true));
  k0.push_back(MakeGemm(FullRegion(a_s), FullRegion(b_s), FullRegion(c_f), false, false,
                        GemmPolicy::kSquare, false));

  // Two distinct loop vars that share the name "i" with the layout var.
  Var i = MakeVar("i"), j = MakeVar("j");
  Expr special = Binary(BinaryOp::kAdd,
                        Binary(BinaryOp::kAdd, Infinity(DType::kFloat32),
                               FloatImm(-std::numeric_limits<double>::infinity())),
                        Binary(BinaryOp::kAdd, FloatImm(std::numeric_limits<double>::quiet_NaN()),
                               Binary(BinaryOp::kAdd, FloatImm(-0.0),
                                      FloatImm(std::numeric_limits<double>::denorm_min()))));
  k0.push_back(For(i, IntImm(0), IntImm(64), ForKind::kParallel,
                   For(j, IntImm(0), IntImm(128), ForKind::kVectorized,
                       Store(c_f, {i, j},
                             Binary(BinaryOp::kMul, Load(c_f, {i, j}),
                                    Binary(BinaryOp::kAdd, scale, special))))));

  // Every binary op, unary op and call, bound by lets; every dtype by casts.
  std::vector<Stmt> lets;
  Var x = MakeVar("x"), y = MakeVar("y", DType::kFloat32);
  lets.push_back(Let(x, Binary(BinaryOp::kAdd, bx, by)));
  lets.push_back(Let(y, Cast(DType::kFloat32, x)));
  for (int o = 0; o < kNumBinaryOps; ++o) {
    BinaryOp op = static_cast<BinaryOp>(o);
    Expr lhs = IsLogical(op) ? Binary(BinaryOp::kLt, x, IntImm(3)) : Expr(x);
    Expr rhs = IsLogical(op) ? BoolImm(o % 2 == 0) : IntImm(o + 1);
    lets.push_back(
        Let(MakeVar("b" + std::to_string(o), Binary(op, lhs, rhs)->dtype), Binary(op, lhs, rhs)));
  }
  for (int o = 0; o < kNumUnaryOps; ++o) {
    UnaryOp op = static_cast<UnaryOp>(o);
    Expr arg = op == UnaryOp::kNot ? BoolImm(true) : Expr(x);
    lets.push_back(Let(MakeVar("u" + std::to_string(o), Unary(op, arg)->dtype), Unary(op, arg)));
  }
  for (int f = 0; f < kNumCallFns; ++f) {
    CallFn fn = static_cast<CallFn>(f);
    std::vector<Expr> args(CallArity(fn), Expr(y));
    lets.push_back(Let(MakeVar("f" + std::to_string(f), DType::kFloat32), Call(fn, args)));
  }
  for (DType t : kAllDTypes) {
    lets.push_back(Let(MakeVar(std::string("c_") + std::string(DTypeName(t)), t), Cast(t, y)));
  }
  lets.push_back(Store(acc, {IntImm(0)},
                       Select(Binary(BinaryOp::kGt, y, FloatImm(0.5)), Cast(DType::kFloat64, y),
                              FloatImm(1e300, DType::kFloat64))));
  // If with and without else; an else that is not a seq.
  lets.push_back(If(Binary(BinaryOp::kEq, x, IntImm(0)), Seq({Store(cnt, {IntImm(0)}, x)}),
                    Store(cnt, {IntImm(0)}, IntImm(-1))));
  lets.push_back(If(Binary(BinaryOp::kNe, x, IntImm(0)),
                    Store(cnt, {IntImm(0)}, IntImm(int64_t{1} << 40, DType::kInt64))));
  Var u = MakeVar("u"), s = MakeVar("s");
  lets.push_back(For(u, IntImm(0), IntImm(4), ForKind::kUnrolled,
                     Store(acc, {u}, Cast(DType::kFloat64, Load(c_f, {u, u})))));
  lets.push_back(For(s, IntImm(1), Binary(BinaryOp::kSub, m, IntImm(1)), ForKind::kSerial,
                     Seq({Store(ragged, {s}, Cast(DType::kUInt8, s))})));
  k0.push_back(Seq(std::move(lets)));

  k0.push_back(std::make_shared<ReduceNode>(ReduceKind::kMax, c_f, rmax, 1, true));
  k0.push_back(std::make_shared<ReduceNode>(ReduceKind::kSum, c_f, rmax, 1, false));
  k0.push_back(std::make_shared<ReduceNode>(ReduceKind::kMin, c_f, rmax, 0, true));
  k0.push_back(std::make_shared<ReduceNode>(ReduceKind::kAbsSum, c_f, rmax, 1, true));
  k0.push_back(std::make_shared<ReduceNode>(ReduceKind::kAbsMax, c_f, rmax, -1, false));
  k0.push_back(std::make_shared<CumsumNode>(c_f, c_f, 1, true));
  k0.push_back(std::make_shared<CumsumNode>(rmax, rmax, 0, false));
  Region c_tile{c, {Binary(BinaryOp::kMul, bx, IntImm(64)), IntImm(0)}, {IntImm(64), IntImm(128)}};
  k0.push_back(std::make_shared<AtomicAddNode>(c_tile, FullRegion(c_f), nullptr));
  k0.push_back(std::make_shared<AtomicAddNode>(Region{c, {bx, by}, {IntImm(1), IntImm(1)}},
                                               std::nullopt, Load(rmax, {IntImm(0)})));
  k0.push_back(Copy(FullRegion(c_f), c_tile));

  Buffer ws = MakeBuffer("workspace", DType::kFloat32, {m}, Scope::kGlobal);
  Var bx2 = MakeVar("bx");
  Stmt kernel1 =
      MakeKernel({Call(CallFn::kCeilDiv, {m, IntImm(64)}), IntImm(2)}, {bx, by}, IntImm(128),
                 "#define TILEC_PRELUDE 1  // 5 \xb5s, not UTF-8\n", Seq(std::move(k0)));
  Stmt kernel2 = MakeKernel(
      {IntImm(1)}, {bx2}, IntImm(32), "",
      Seq({Allocate(MakeBuffer("flags", DType::kBool, {IntImm(8)}, Scope::kShared)),
           Store(ws, {bx2}, Cast(DType::kFloat32, Load(q, {bx2}))),
           Store(c, {bx2, IntImm(0)},
                 Cast(DType::kFloat32,
                      Binary(BinaryOp::kAdd, Cast(DType::kInt8, IntImm(1)),
                             Cast(DType::kInt16, Cast(DType::kFloat8E4M3, FloatImm(0.25)))))),
           Store(ws, {bx2}, Cast(DType::kFloat32, Cast(DType::kFloat8E5M2, FloatImm(2.0))))}));
  p.body = Seq({Allocate(ws), kernel1, kernel2});
  return p;
}

// Collects which kinds a program uses, to prove KitchenSink covers them all.
class Coverage : public IRVisitor {
 public:
  using IRVisitor::Visit;
  void Visit(const Expr& e) override {
    if (e) {
      exprs.insert(static_cast<int>(e->kind));
      dtypes.insert(static_cast<int>(e->dtype));
      if (auto* b = e->as<BinaryNode>()) binary.insert(static_cast<int>(b->op));
      if (auto* u = e->as<UnaryNode>()) unary.insert(static_cast<int>(u->op));
      if (auto* c = e->as<CallNode>()) calls.insert(static_cast<int>(c->fn));
    }
    IRVisitor::Visit(e);
  }
  void Visit(const Stmt& s) override {
    if (s) {
      stmts.insert(static_cast<int>(s->kind));
      if (auto* f = s->as<ForNode>()) loops.insert(static_cast<int>(f->kind));
      if (auto* g = s->as<GemmNode>()) policies.insert(static_cast<int>(g->policy));
      if (auto* r = s->as<ReduceNode>()) reduces.insert(static_cast<int>(r->reduce_kind));
      if (auto* l = s->as<AnnotateLayoutNode>()) layouts.insert(static_cast<int>(l->layout.kind));
    }
    IRVisitor::Visit(s);
  }
  void VisitBuffer(const Buffer& b) override {
    if (b) {
      scopes.insert(static_cast<int>(b->scope));
      dtypes.insert(static_cast<int>(b->dtype));
    }
    IRVisitor::VisitBuffer(b);
  }
  std::set<int> exprs, stmts, dtypes, binary, unary, calls, loops, policies, reduces, layouts,
      scopes;
};

TEST(ProtoConvertTest, KitchenSinkCoversEveryKind) {
  Program p = KitchenSink();
  Coverage cov;
  cov.VisitProgram(p);
  EXPECT_EQ(cov.exprs.size(), 9u);
  EXPECT_EQ(cov.stmts.size(), 15u);
  EXPECT_EQ(cov.dtypes.size(), std::size(kAllDTypes));
  EXPECT_EQ(cov.binary.size(), static_cast<size_t>(kNumBinaryOps));
  EXPECT_EQ(cov.unary.size(), static_cast<size_t>(kNumUnaryOps));
  EXPECT_EQ(cov.calls.size(), static_cast<size_t>(kNumCallFns));
  EXPECT_EQ(cov.loops.size(), 5u);
  EXPECT_EQ(cov.policies.size(), 3u);
  EXPECT_EQ(cov.reduces.size(), 5u);
  EXPECT_EQ(cov.layouts.size(), 2u);
  EXPECT_EQ(cov.scopes.size(), 5u);
}

TEST(ProtoConvertTest, RoundTripIsStructurallyEqualWithSharing) {
  Program p = KitchenSink();
  v1::Program proto = ToProto(p);
  absl::StatusOr<Program> back = FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  StructuralEq eq;
  EXPECT_TRUE(eq.Programs(p, *back));
  // One table entry per distinct node: the three vars named "i"/"j" and the
  // two kernels' "bx" stay distinct, and nothing is duplicated.
  EXPECT_EQ(static_cast<size_t>(proto.vars_size()), eq.num_vars());
  EXPECT_EQ(static_cast<size_t>(proto.buffers_size()), eq.num_buffers());
  int named_i = 0;
  for (const v1::Var& v : proto.vars()) named_i += v.name() == "i";
  EXPECT_EQ(named_i, 2);
  EXPECT_EQ(ProgramHash(*back), ProgramHash(p));
}

TEST(ProtoConvertTest, RoundTripThroughBytes) {
  Program p = KitchenSink();
  std::string bytes;
  ASSERT_TRUE(ToProto(p).SerializeToString(&bytes));
  v1::Program parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  absl::StatusOr<Program> back = FromProto(parsed);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(StructuralEq().Programs(p, *back));
  EXPECT_EQ(ProgramHash(*back), ProgramHash(p));
  // Converting again gives the same wire form.
  std::string again;
  ASSERT_TRUE(ToProto(*back).SerializeToString(&again));
  EXPECT_EQ(again, bytes);
}

TEST(ProtoConvertTest, StructuralEqDetectsLostSharing) {
  // The checker itself must notice when two uses of one var become two vars.
  Var i = MakeVar("i");
  Buffer buf = MakeBuffer("X", DType::kInt32, {IntImm(4)}, Scope::kLocal);
  Program a;
  a.body = Seq({Allocate(buf), Store(buf, {i}, i)});
  Program b;
  b.body = Seq({Allocate(buf), Store(buf, {i}, MakeVar("i"))});
  EXPECT_FALSE(StructuralEq().Programs(a, b));
  EXPECT_TRUE(StructuralEq().Programs(a, a));
}

// B[i] = cast(cast(float32, (A[i] >> 3) ^ ~(A[i] // 7))) over 77 elements of t.
Program BitsProgram(DType t) {
  Program p;
  p.name = "bits";
  Buffer a = MakeBuffer("A", t, {IntImm(77)}, Scope::kGlobal);
  Buffer b = MakeBuffer("B", t, {IntImm(77)}, Scope::kGlobal);
  p.params = {{a, nullptr}, {b, nullptr}};
  Var bx = MakeVar("bx"), i = MakeVar("i");
  Expr x = Load(a, {i});
  Expr v = Binary(BinaryOp::kBitXor, Binary(BinaryOp::kShr, x, IntImm(3, t)),
                  Unary(UnaryOp::kBitNot, Binary(BinaryOp::kFloorDiv, x, IntImm(7, t))));
  p.body = Seq({MakeKernel({IntImm(1)}, {bx}, IntImm(128), "",
                           For(i, IntImm(0), IntImm(77), ForKind::kParallel,
                               Store(b, {i}, Cast(t, Cast(DType::kFloat32, v)))))});
  return p;
}

// The unsigned types on the wire: fixed enum numbers (the existing ones
// unchanged), and a program over each that round-trips with its hash.
TEST(ProtoConvertTest, UnsignedTypesRoundTrip) {
  EXPECT_EQ(v1::DTYPE_UINT8, 4);
  EXPECT_EQ(v1::DTYPE_FLOAT64, 13);
  struct Case {
    DType t, same_width_signed;
    v1::DType wire;
  };
  for (Case c : {Case{DType::kUInt16, DType::kInt16, v1::DTYPE_UINT16},
                 Case{DType::kUInt32, DType::kInt32, v1::DTYPE_UINT32},
                 Case{DType::kUInt64, DType::kInt64, v1::DTYPE_UINT64}}) {
    SCOPED_TRACE(DTypeName(c.t));
    Program p = BitsProgram(c.t);
    v1::Program proto = ToProto(p);
    ASSERT_EQ(proto.buffers_size(), 2);
    EXPECT_EQ(proto.buffers(0).dtype(), c.wire);
    std::string bytes;
    ASSERT_TRUE(proto.SerializeToString(&bytes));
    v1::Program parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    absl::StatusOr<Program> back = FromProto(parsed);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(StructuralEq().Programs(p, *back));
    EXPECT_EQ(ProgramHash(*back), ProgramHash(p));
    EXPECT_EQ(back->params[0].tensor->dtype, c.t);
    EXPECT_NE(ProgramHash(BitsProgram(c.same_width_signed)), ProgramHash(p));
  }
}

// ---------------------------------------------------------------------------
// Malformed input

// kernel 0: stmt 0 allocate A_s; stmt 1 copy; stmt 2 parallel loop storing
// A_s[i] * 2 into B.
Program Small() {
  Program p;
  p.name = "scale";
  Var n = MakeVar("N");
  p.dyn_dims = {n};
  Buffer a = MakeBuffer("A", DType::kFloat32, {n}, Scope::kGlobal);
  Buffer b = MakeBuffer("B", DType::kFloat32, {n}, Scope::kGlobal);
  p.params = {{a, nullptr}, {b, nullptr}};
  Var bx = MakeVar("bx"), i = MakeVar("i");
  Buffer a_s = MakeBuffer("A_shared", DType::kFloat32, {IntImm(128)}, Scope::kShared);
  Expr base = Binary(BinaryOp::kMul, bx, IntImm(128));
  p.body =
      Seq({MakeKernel({Call(CallFn::kCeilDiv, {n, IntImm(128)})}, {bx}, IntImm(128), "",
                      Seq({Allocate(a_s), Copy(Region{a, {base}, {IntImm(128)}}, FullRegion(a_s)),
                           For(i, IntImm(0), IntImm(128), ForKind::kParallel,
                               Store(b, {Binary(BinaryOp::kAdd, base, i)},
                                     Binary(BinaryOp::kMul, Load(a_s, {i}), FloatImm(2.0))))}))});
  return p;
}

v1::StoreStmt* SmallStore(v1::Program& proto) {
  return proto.mutable_body()
      ->mutable_seq()
      ->mutable_stmts(0)
      ->mutable_kernel()
      ->mutable_body()
      ->mutable_seq()
      ->mutable_stmts(2)
      ->mutable_for_loop()
      ->mutable_body()
      ->mutable_store();
}

std::string ErrorOf(const v1::Program& proto) {
  absl::StatusOr<Program> r = FromProto(proto);
  if (r.ok()) return "OK";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

TEST(ProtoConvertMalformedTest, SmallProgramIsValid) {
  v1::Program proto = ToProto(Small());
  EXPECT_EQ(ErrorOf(proto), "OK");
  ASSERT_TRUE(SmallStore(proto)->value().has_binary());
}

TEST(ProtoConvertMalformedTest, DanglingBufferId) {
  v1::Program proto = ToProto(Small());
  SmallStore(proto)->mutable_value()->mutable_binary()->mutable_a()->mutable_load()->set_buffer(17);
  EXPECT_EQ(ErrorOf(proto),
            "kernel 0 / stmt 2 (for) / body (store) / value: load references buffer id 17, which "
            "is not in the buffer table");
}

TEST(ProtoConvertMalformedTest, DanglingVarId) {
  v1::Program proto = ToProto(Small());
  proto.mutable_body()
      ->mutable_seq()
      ->mutable_stmts(0)
      ->mutable_kernel()
      ->mutable_body()
      ->mutable_seq()
      ->mutable_stmts(2)
      ->mutable_for_loop()
      ->set_var(99);
  EXPECT_EQ(ErrorOf(proto),
            "kernel 0 / stmt 2 (for): loop var references var id 99, which is not in the var "
            "table");
}

TEST(ProtoConvertMalformedTest, UnknownAndUnspecifiedEnums) {
  v1::Program proto = ToProto(Small());
  SmallStore(proto)->mutable_value()->set_dtype(static_cast<v1::DType>(99));
  EXPECT_EQ(
      ErrorOf(proto),
      "kernel 0 / stmt 2 (for) / body (store) / value: expression dtype has unknown value 99");

  proto = ToProto(Small());
  SmallStore(proto)->mutable_value()->mutable_binary()->set_op(v1::BINARY_OP_UNSPECIFIED);
  EXPECT_EQ(ErrorOf(proto),
            "kernel 0 / stmt 2 (for) / body (store) / value: binary op is unspecified");

  proto = ToProto(Small());
  proto.mutable_buffers(0)->set_scope(static_cast<v1::Scope>(-3));
  EXPECT_EQ(ErrorOf(proto), "buffer id 1 ('A'): buffer scope has unknown value -3");
}

TEST(ProtoConvertMalformedTest, MissingOperands) {
  v1::Program proto = ToProto(Small());
  SmallStore(proto)->mutable_value()->mutable_binary()->clear_b();
  EXPECT_EQ(ErrorOf(proto),
            "kernel 0 / stmt 2 (for) / body (store) / value: mul operand b is missing");

  proto = ToProto(Small());
  SmallStore(proto)->clear_value();
  EXPECT_EQ(ErrorOf(proto), "kernel 0 / stmt 2 (for) / body (store): value is missing");

  proto = ToProto(Small());
  proto.mutable_body()->mutable_seq()->mutable_stmts(0)->mutable_kernel()->clear_threads();
  EXPECT_EQ(ErrorOf(proto), "kernel 0: threads is missing");

  proto = ToProto(Small());
  proto.mutable_body()
      ->mutable_seq()
      ->mutable_stmts(0)
      ->mutable_kernel()
      ->mutable_body()
      ->mutable_seq()
      ->mutable_stmts(1)
      ->mutable_copy()
      ->clear_dst();
  EXPECT_EQ(ErrorOf(proto), "kernel 0 / stmt 1 (copy): dst region is missing");

  proto = ToProto(Small());
  proto.mutable_body()->mutable_seq()->add_stmts();
  EXPECT_EQ(ErrorOf(proto), "stmt 1 (empty): statement is empty");

  proto = ToProto(Small());
  proto.clear_body();
  EXPECT_EQ(ErrorOf(proto), "program: program has no body");
}

TEST(ProtoConvertMalformedTest, WrongArity) {
  v1::Program proto = ToProto(Small());
  // ceildiv takes two arguments.
  v1::KernelStmt* k = proto.mutable_body()->mutable_seq()->mutable_stmts(0)->mutable_kernel();
  k->mutable_grid(0)->mutable_call()->mutable_args()->RemoveLast();
  EXPECT_EQ(ErrorOf(proto), "kernel 0 / grid 0: call to ceildiv has 1 arguments; it takes 2");

  proto = ToProto(Small());
  *SmallStore(proto)->add_indices() = SmallStore(proto)->indices(0);
  EXPECT_EQ(ErrorOf(proto),
            "kernel 0 / stmt 2 (for) / body (store): store has 2 indices for buffer id 2 ('B') "
            "of rank 1");

  proto = ToProto(Small());
  k = proto.mutable_body()->mutable_seq()->mutable_stmts(0)->mutable_kernel();
  *k->add_grid() = k->grid(0);
  EXPECT_EQ(ErrorOf(proto), "kernel 0: kernel has 1 block vars for 2 grid extents");
}

TEST(ProtoConvertMalformedTest, TableProblems) {
  v1::Program proto = ToProto(Small());
  proto.mutable_vars(1)->set_id(proto.vars(0).id());
  EXPECT_EQ(ErrorOf(proto),
            "var table entry 1 (id 1, 'bx'): var id 1 appears twice in the var table");

  proto = ToProto(Small());
  proto.mutable_buffers(2)->set_id(0);
  EXPECT_EQ(ErrorOf(proto),
            "buffer table entry 2 (id 0, 'A_shared'): buffer id 0 is reserved for 'not set'");

  // A buffer whose shape loads from itself.
  proto = ToProto(Small());
  v1::Expr* dim = proto.mutable_buffers(2)->mutable_shape(0);
  dim->Clear();
  dim->set_dtype(v1::DTYPE_FLOAT32);
  dim->mutable_load()->set_buffer(3);
  dim->mutable_load()->add_indices()->set_int_imm(0);
  dim->mutable_load()->mutable_indices(0)->set_dtype(v1::DTYPE_INT32);
  EXPECT_EQ(ErrorOf(proto),
            "buffer id 3 ('A_shared') / shape 0 / buffer id 3 ('A_shared'): the buffer's shape "
            "refers to the buffer itself");
}

TEST(ProtoConvertMalformedTest, AtomicAddNeedsExactlyOneForm) {
  Program p = Small();
  Buffer b = p.params[1].tensor;
  p.body = Seq({std::make_shared<AtomicAddNode>(FullRegion(b), FullRegion(b), nullptr)});
  v1::Program proto = ToProto(p);
  EXPECT_EQ(ErrorOf(proto), "OK");
  proto.mutable_body()
      ->mutable_seq()
      ->mutable_stmts(0)
      ->mutable_atomic_add()
      ->mutable_value()
      ->set_int_imm(1);
  EXPECT_EQ(ErrorOf(proto),
            "stmt 0 (atomic_add): atomic_add needs exactly one of a source region (tile form) "
            "and a value (scalar form)");
}

TEST(ProtoConvertMalformedTest, VarReferenceDtypeMustMatch) {
  v1::Program proto = ToProto(Small());
  SmallStore(proto)->mutable_indices(0)->mutable_binary()->mutable_b()->set_dtype(v1::DTYPE_INT64);
  EXPECT_EQ(ErrorOf(proto),
            "kernel 0 / stmt 2 (for) / body (store) / index 0: reference to var id 3 ('i') has "
            "dtype int64 but the var is int32");
}

TEST(ProtoConvertMalformedTest, DeepNestingIsRejectedNotFatal) {
  v1::Program proto = ToProto(Small());
  v1::Expr* e = SmallStore(proto)->mutable_value();
  for (int d = 0; d < kMaxProtoNesting + 10; ++d) {
    e->set_dtype(v1::DTYPE_FLOAT32);
    v1::UnaryExpr* u = e->mutable_unary();
    u->set_op(v1::UNARY_OP_NEG);
    e = u->mutable_a();
  }
  e->set_dtype(v1::DTYPE_FLOAT32);
  e->set_float_imm(1.0);
  std::string err = ErrorOf(proto);
  EXPECT_NE(err.find("nest deeper than 1000"), std::string::npos) << err;
}

// Random byte corruption of a valid program: parsing may fail, but whatever
// parses converts to OK or INVALID_ARGUMENT, never a crash, and what converts
// can be hashed and written back.
TEST(ProtoConvertMalformedTest, CorruptedBytesNeverCrash) {
  std::string bytes;
  ASSERT_TRUE(ToProto(KitchenSink()).SerializeToString(&bytes));
  // TILEC_TEST_SEED reproduces a run.
  const char* fixed = std::getenv("TILEC_TEST_SEED");
  uint32_t seed =
      fixed ? static_cast<uint32_t>(std::strtoul(fixed, nullptr, 10)) : std::random_device{}();
  std::cout << "CorruptedBytesNeverCrash seed: " << seed << "\n";
  std::mt19937 rng(seed);
  // Corrupted names fail protobuf's UTF-8 check, which it logs; keep quiet.
  google::protobuf::LogSilencer silence;
  int parsed = 0, accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string mutated = bytes;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      size_t pos = rng() % mutated.size();
      mutated[pos] = static_cast<char>(static_cast<uint8_t>(mutated[pos]) ^ (1u << (rng() % 8)));
    }
    v1::Program proto;
    if (!proto.ParseFromString(mutated)) continue;
    ++parsed;
    absl::StatusOr<Program> r = FromProto(proto);
    if (!r.ok()) {
      ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
          << "seed " << seed << ": " << r.status();
      ASSERT_FALSE(r.status().message().empty());
      continue;
    }
    ++accepted;
    EXPECT_EQ(ProgramHash(*r).size(), 64u);
    absl::StatusOr<Program> again = FromProto(ToProto(*r));
    ASSERT_TRUE(again.ok()) << "seed " << seed << ": " << again.status();
    EXPECT_EQ(ProgramHash(*again), ProgramHash(*r)) << "seed " << seed;
  }
  std::cout << "parsed " << parsed << ", accepted " << accepted << "\n";
  EXPECT_GT(parsed, 0);
}

}  // namespace
}  // namespace tilec::ir
