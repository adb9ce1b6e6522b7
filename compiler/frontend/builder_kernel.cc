// Kernels in the builder: `with` blocks (T.Kernel, T.ws, T.attr), TIR's
// explicit thread loops, the tile-operator refusal Emit makes for per-thread
// operands, and the pipelined loop's schedule.
//
// TIR's explicit thread loops as a kernel: at the top of a prim_func,
//
//   for bx in T.thread_binding(8, thread="blockIdx.x"):
//       for tx in T.thread_binding(128, thread="threadIdx.x"):
//           body
//
// is `with T.Kernel(8, threads=128) as bx:` with `tx` the thread index
// along x: a perfect nest of such loops (blockIdx.x/.y/.z and
// threadIdx.x/.y/.z, each at most once, in any order) gives the grid and the
// block, and the innermost body runs as the kernel's body (per-thread code
// when it reads a thread index). A block axis missing below a present one
// has extent 1; a nest without block axes is one block.
#include "compiler/frontend/builder.h"
#include "compiler/frontend/grid_sync.h"
#include "compiler/frontend/index_simplify.h"
#include "compiler/frontend/str_util.h"
#include "compiler/frontend/tl_builtins.h"
#include "compiler/frontend/value_ops.h"
#include "compiler/ir/visitor.h"

namespace tilec::frontend {
namespace {

struct Binding {
  std::string name;
  int64_t start = 0, stop = 0;
  bool block = false;  // blockIdx, else threadIdx
  int dim = 0;         // x, y, z
  SourceLoc loc;
};

}  // namespace

bool Builder::IsThreadBindingLoop(const ForStmt& s) {
  const auto* call = s.iter ? s.iter->as<CallExpr>() : nullptr;
  if (!call) return false;
  absl::StatusOr<Value> fn = Eval(*call->func);
  return fn.ok() && fn->kind == ValueKind::kBuiltin && fn->builtin->name == "T.thread_binding";
}

absl::StatusOr<Flow> Builder::ExecThreadBindingKernel(const ForStmt& s) {
  std::vector<Binding> chain;
  const ForStmt* f = &s;
  while (true) {
    const auto& call = *f->iter->as<CallExpr>();
    const auto* target = f->target->as<NameExpr>();
    if (!target) return Err(f->target->loc, "a thread binding loop binds one plain name");
    if (!f->orelse.empty()) return Err(f->loc, "`for ... else` is not supported for thread loops");
    std::vector<Value> pos;
    for (const ExprPtr& a : call.args) {
      absl::StatusOr<Value> v = Eval(*a);
      if (!v.ok()) return v.status();
      pos.push_back(*v);
    }
    std::optional<Value> thread;
    for (const Keyword& k : call.keywords) {
      absl::StatusOr<Value> v = Eval(*k.value);
      if (!v.ok()) return v.status();
      if (k.name == "thread") {
        thread = *v;
      } else if (k.name == "start" || k.name == "stop") {
        pos.push_back(*v);
      } else if (k.name != "annotations") {
        return Err(call.loc,
                   Cat("T.thread_binding() got an unexpected keyword argument '", k.name, "'"));
      }
    }
    if (!thread && pos.size() == 3) {
      thread = pos.back();
      pos.pop_back();
    }
    if (!thread || pos.empty() || pos.size() > 2) {
      return Err(call.loc, "T.thread_binding takes ([start,] stop, thread=\"...\")");
    }
    Binding bnd;
    bnd.name = target->id;
    bnd.loc = call.loc;
    for (size_t i = 0; i < pos.size(); ++i) {
      absl::StatusOr<int64_t> n = StaticInt(pos[i], call.loc, "a thread loop bound");
      if (!n.ok()) return n.status();
      (pos.size() == 2 && i == 0 ? bnd.start : bnd.stop) = *n;
    }
    absl::StatusOr<std::string> axis = StaticStr(*thread, call.loc, "thread");
    if (!axis.ok()) return axis.status();
    static constexpr std::string_view kAxes[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                 "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    int which = -1;
    for (int i = 0; i < 6; ++i) {
      if (*axis == kAxes[i]) which = i;
    }
    if (which < 0) {
      return Err(call.loc, Cat("T.thread_binding(thread=\"", *axis,
                               "\") is not supported; tilec binds blockIdx.x/.y/.z and "
                               "threadIdx.x/.y/.z"));
    }
    bnd.block = which < 3;
    bnd.dim = which % 3;
    if (bnd.stop - bnd.start < 1) return Err(call.loc, "a thread loop must run at least once");
    for (const Binding& o : chain) {
      if (o.block == bnd.block && o.dim == bnd.dim) {
        return Err(call.loc, Cat("`", *axis, "` is bound twice"));
      }
    }
    chain.push_back(bnd);
    if (f->body.size() != 1 || f->body[0]->kind != StmtKind::kFor ||
        !IsThreadBindingLoop(*f->body[0]->as<ForStmt>())) {
      break;
    }
    f = f->body[0]->as<ForStmt>();
  }
  // The grid and the block, x fastest; a block axis the nest names starts
  // at 0 (a shifted one would not cover the grid).
  std::vector<int64_t> grid(3, 1), threads(3, 1);
  int grid_rank = 1, thread_rank = 1;
  for (const Binding& b : chain) {
    if (b.block && b.start != 0) {
      return Err(b.loc, "a blockIdx loop must start at 0 (it runs over the whole grid)");
    }
    (b.block ? grid : threads)[b.dim] = b.stop - b.start;
    (b.block ? grid_rank : thread_rank) = std::max(b.block ? grid_rank : thread_rank, b.dim + 1);
  }
  KernelSpec spec;
  int64_t total = 1;
  for (int d = 0; d < grid_rank; ++d) spec.grid.push_back(ir::IntImm(grid[d]));
  for (int d = 0; d < thread_rank; ++d) {
    spec.thread_dims.push_back(threads[d]);
    total *= threads[d];
  }
  if (thread_rank == 1) spec.thread_dims.clear();
  spec.threads = ir::IntImm(total);
  std::vector<std::string> names;
  for (int d = 0; d < grid_rank; ++d) names.push_back(Cat("_block", d));
  for (const Binding& b : chain) {
    if (b.block) names[b.dim] = b.name;
  }
  absl::Status bound = absl::OkStatus();
  absl::StatusOr<Flow> flow =
      RunKernel(spec, names, f->body, s.loc, [&](const ValueList& block_values) {
        for (const Binding& b : chain) {
          if (b.block) {
            BindName(b.name, block_values[b.dim]);
            continue;
          }
          CallArgs args;
          args.loc = b.loc;
          args.positional.push_back(Arg{Value::Int(b.dim), b.loc});
          absl::StatusOr<Value> t = CallValue(Value::Builtin("T.get_thread_binding"), args);
          if (!t.ok()) {
            bound = t.status();
            return;
          }
          Value v = *t;
          if (b.start != 0) {
            absl::StatusOr<ir::Expr> e = ExprOf(v, b.loc);
            if (!e.ok()) {
              bound = e.status();
              return;
            }
            v = Value::Runtime(ir::Binary(ir::BinaryOp::kAdd, *e, ir::IntImm(b.start)));
          }
          BindName(b.name, v);
        }
      });
  if (!bound.ok()) return bound;
  return flow;
}

namespace {

// `T.<name>(...)` as written (T.If, T.Then, T.Else): the call, or null.
const CallExpr* FrameCall(const ExprPtr& e, std::string_view name) {
  const auto* call = e ? e->as<CallExpr>() : nullptr;
  const auto* attr = call ? call->func->as<AttributeExpr>() : nullptr;
  const auto* base = attr ? attr->value->as<NameExpr>() : nullptr;
  if (!base || base->id != "T" || attr->attr != name) return nullptr;
  return call;
}

const WithStmt* FrameBlock(const StmtPtr& s, std::string_view name) {
  const auto* w = s ? s->as<WithStmt>() : nullptr;
  if (!w || w->items.size() != 1 || !FrameCall(w->items[0].context, name)) return nullptr;
  return w;
}

}  // namespace

absl::StatusOr<Value> Builder::LetBound(const std::string& name, const ir::Expr& e, SourceLoc loc) {
  if (e->kind == ir::ExprKind::kVar || e->kind == ir::ExprKind::kIntImm ||
      e->kind == ir::ExprKind::kFloatImm) {
    return Value::Runtime(e);
  }
  ir::Var var = ir::MakeVar(name, e->dtype);
  absl::Status s = Emit(ir::Let(var, e), loc, "a local variable");
  if (!s.ok()) return s;
  let_values_[var.get()] = e;
  let_vars_.push_back(var);
  return Value::Runtime(var);
}

std::optional<absl::StatusOr<Flow>> Builder::ExecIfFrame(const WithStmt& s) {
  const CallExpr* cond = FrameCall(s.items[0].context, "If");
  if (!cond) return std::nullopt;
  if (cond->args.size() != 1 || !cond->keywords.empty()) {
    return absl::StatusOr<Flow>(Err(cond->loc, "T.If takes one condition"));
  }
  static const StmtList kNone;
  if (s.items.size() == 2 && FrameCall(s.items[1].context, "Then")) {
    return ExecIfParts(*cond->args[0], s.body, kNone, s.loc);
  }
  if (s.items.size() != 1) return std::nullopt;
  const WithStmt* then_block = !s.body.empty() ? FrameBlock(s.body[0], "Then") : nullptr;
  const WithStmt* else_block = s.body.size() == 2 ? FrameBlock(s.body[1], "Else") : nullptr;
  if (!then_block || s.body.size() > 2 || (s.body.size() == 2 && !else_block)) {
    return absl::StatusOr<Flow>(
        Err(s.loc, "`with T.If(c):` holds `with T.Then():` and optionally `with T.Else():`"));
  }
  return ExecIfParts(*cond->args[0], then_block->body, else_block ? else_block->body : kNone,
                     s.loc);
}

absl::StatusOr<Flow> Builder::ExecWith(const WithStmt& s) {
  if (s.is_async) return Err(s.loc, "async with is not supported");
  if (std::optional<absl::StatusOr<Flow>> frame = ExecIfFrame(s)) return *frame;
  if (s.items.size() != 1) return Err(s.loc, "only one context manager per `with` is supported");
  const WithItem& item = s.items[0];
  absl::StatusOr<Value> ctx = Eval(*item.context);
  if (!ctx.ok()) return ctx.status();
  if (IsAttr(*ctx)) {
    const Value* reducer = nullptr;
    if (!IsReduceScope(*ctx, &reducer)) {
      return Err(item.context->loc,
                 "`with T.attr(...)` is only supported as T.attr(T.comm_reducer(...), "
                 "\"reduce_scope\", ...) around T.tvm_thread_allreduce");
    }
    if (item.target) return Err(item.target->loc, "`with T.attr(...)` binds no name");
    reducers_.push_back(*reducer);
    absl::StatusOr<Flow> flow = ExecBlock(s.body);
    reducers_.pop_back();
    return flow;
  }
  if (IsWarpGroupScope(*ctx)) {
    if (item.target) return Err(item.target->loc, "`with T.ws(...)` binds no name");
    ++warp_group_scopes_;
    absl::StatusOr<Flow> flow = ExecBlock(s.body);
    --warp_group_scopes_;
    return flow;
  }
  if (ctx->kind != ValueKind::kKernel) {
    return Err(item.context->loc,
               Cat("`with` is only supported with T.Kernel(...), got ", DescribeValue(*ctx)));
  }
  const KernelSpec& spec = *ctx->kernel;
  if (!InPrimFunc()) {
    return Err(item.context->loc,
               "T.Kernel is only allowed inside a @T.prim_func or an eager "
               "@tilelang.jit function");
  }
  if (InKernel()) return Err(item.context->loc, kNestedKernel);
  if (spec.no_grid && item.target) {
    return Err(item.target->loc,
               "T.Kernel without grid extents has no block index to bind; give the grid "
               "(T.Kernel(1, threads=...))");
  }
  size_t n = spec.grid.size();
  static constexpr const char* kDefaultNames[] = {"bx", "by", "bz"};
  std::vector<std::string> names;
  const NameExpr* single = nullptr;
  if (!item.target) {
    for (size_t d = 0; d < n; ++d) names.push_back(kDefaultNames[d]);
  } else if ((single = item.target->as<NameExpr>())) {
    if (n == 1) {
      names.push_back(single->id);
    } else {
      for (size_t d = 0; d < n; ++d) names.push_back(kDefaultNames[d]);
    }
  } else if (const auto* tup = item.target->as<TupleExpr>()) {
    for (const ExprPtr& elt : tup->elts) {
      const auto* en = elt->as<NameExpr>();
      if (!en) return Err(elt->loc, "a block index must be bound to a plain name");
      names.push_back(en->id);
    }
    if (names.size() != n) {
      return Err(item.target->loc, Cat("T.Kernel has ", n, " grid dimension", n == 1 ? "" : "s",
                                       " but ", names.size(), " block indices are bound"));
    }
  } else {
    return Err(item.target->loc, "a block index must be bound to a plain name");
  }
  return RunKernel(spec, names, s.body, s.loc, [&](const ValueList& block_values) {
    for (size_t d = 0; d < names.size(); ++d) {
      if ((!single || n == 1) && !spec.no_grid) BindName(names[d], block_values[d]);
    }
    if (single && n > 1) BindName(single->id, Value::Tuple(block_values));
  });
}

absl::StatusOr<Flow> Builder::RunKernel(const KernelSpec& spec,
                                        const std::vector<std::string>& names, const StmtList& body,
                                        SourceLoc loc,
                                        const std::function<void(const ValueList&)>& bind) {
  auto kernel = std::make_shared<ir::KernelNode>();
  kernel->grid = spec.grid;
  kernel->threads = spec.threads;
  kernel_thread_dims_ = spec.thread_dims;
  if (kernel_thread_dims_.empty()) {
    std::optional<int64_t> n = ir::AsConstInt(spec.threads);
    kernel_thread_dims_.push_back(n.value_or(0));  // 0: not a constant
  }
  kernel->prelude = spec.prelude;
  PushBlock();
  ++kernel_depth_;
  kernel_block_id_ = CurrentBlockId();
  grid_syncs_.clear();
  rng_ = RngState{};
  ValueList block_values;
  for (const std::string& name : names) {
    ir::Var var = ir::MakeVar(name, ir::DType::kInt32);
    kernel->block_vars.push_back(var);
    block_values.push_back(Value::Runtime(var));
  }
  kernel_block_vars_ = kernel->block_vars;
  kernel_grid_ = spec.grid;
  bind(block_values);
  frame().loops.push_back(Enclosing::kKernel);
  absl::StatusOr<Flow> flow = ExecBlock(body);
  frame().loops.pop_back();
  --kernel_depth_;
  std::vector<ir::Stmt> stmts = PopBlock();
  kernel_block_id_ = -1;
  rng_ = RngState{};
  if (!flow.ok()) return flow;
  if (!grid_syncs_.empty()) {
    absl::StatusOr<std::vector<std::shared_ptr<ir::KernelNode>>> parts =
        SplitAtGridSyncs(*kernel, stmts, grid_syncs_);
    if (!parts.ok()) return Err(grid_sync_loc_, std::string(parts.status().message()));
    for (std::shared_ptr<ir::KernelNode>& part : *parts) {
      absl::Status st = Emit(std::move(part), loc, "T.Kernel");
      if (!st.ok()) return st;
    }
    return Flow::kNormal;
  }
  kernel->body = ir::Seq(std::move(stmts));
  absl::Status st = Emit(std::move(kernel), loc, "T.Kernel");
  if (!st.ok()) return st;
  return Flow::kNormal;
}

absl::Status Builder::EmitAtKernelTop(ir::Stmt s, SourceLoc loc, std::string_view what) {
  if (!InKernel()) return Err(loc, Cat(what, " must be inside a T.Kernel block"));
  for (Block& block : blocks_) {
    if (block.id != kernel_block_id_) continue;
    block.stmts.insert(block.stmts.begin(), std::move(s));
    for (size_t& at : grid_syncs_) ++at;
    return absl::OkStatus();
  }
  return Err(loc, Cat(what, ": the kernel's top-level block is not open (a tilec bug)"));
}

absl::Status Builder::GridSync(SourceLoc loc) {
  if (!InKernel()) return Err(loc, "T.sync_grid() outside a T.Kernel");
  if (CurrentBlockId() != kernel_block_id_) {
    return Err(loc,
               "T.sync_grid() inside a loop or a branch is not supported: tilec cuts the kernel "
               "at a T.sync_grid() at the top level of T.Kernel into kernels that run in order");
  }
  if (grid_syncs_.empty()) grid_sync_loc_ = loc;
  grid_syncs_.push_back(blocks_.back().stmts.size());
  return absl::OkStatus();
}

std::optional<std::string> Builder::CollectiveReadsThreadIndex(const ir::Stmt& s,
                                                               std::string_view what) const {
  switch (s->kind) {
    case ir::StmtKind::kCopy:
    case ir::StmtKind::kFill:
    case ir::StmtKind::kGemm:
    case ir::StmtKind::kReduce:
    case ir::StmtKind::kCumsum: break;
    case ir::StmtKind::kAtomicAdd:
      if (s->as<ir::AtomicAddNode>()->src) break;
      return std::nullopt;
    default: return std::nullopt;
  }
  // The thread index, directly or through the values of locals.
  struct Find : ir::IRVisitor {
    const Builder* b;
    bool found = false;
    void Visit(const ir::Expr& e) override {
      if (!e || found) return;
      if (const auto* c = e->as<ir::CallNode>(); c && c->fn == ir::CallFn::kThreadIndex) {
        found = true;
        return;
      }
      if (const auto* v = e->as<ir::VarNode>()) {
        if (const ir::Expr* value = b->LetValue(v)) Visit(*value);
        return;
      }
      ir::IRVisitor::Visit(e);
    }
    using ir::IRVisitor::Visit;
  } find;
  find.b = this;
  find.Visit(s);
  if (!find.found) return std::nullopt;
  return Cat("in a kernel that reads the thread index (T.get_thread_binding), ", what,
             " reads a per-thread value; tile operators run once for the whole block, so they "
             "cannot depend on per-thread values (thread indices, T.alloc_local / T.alloc_var "
             "buffers, names bound from them)");
}

// The loop's order= and stage= with one entry per scheduled statement
// (group= spread), checked against the `scheduled` statements of its body.
absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> Builder::PipelineSchedule(
    SourceLoc loc, const LoopSpec& loop, size_t scheduled) {
  std::vector<int64_t> order = loop.order, stage = loop.stage;
  if (!loop.group.empty()) {
    // group= gives each order/stage entry the statements it stands for:
    // every statement in exactly one group; spread to one entry each.
    std::vector<int64_t> owner(scheduled, -1);
    for (size_t g = 0; g < loop.group.size(); ++g) {
      for (int64_t i : loop.group[g]) {
        if (i < 0 || static_cast<size_t>(i) >= scheduled) {
          return Err(loc, Cat("T.Pipelined group= names statement ", i, " but the loop body has ",
                              scheduled, scheduled == 1 ? " statement" : " statements"));
        }
        if (owner[i] >= 0) {
          return Err(loc, Cat("T.Pipelined group= puts statement ", i, " in groups ", owner[i],
                              " and ", g));
        }
        owner[i] = static_cast<int64_t>(g);
      }
    }
    for (size_t i = 0; i < scheduled; ++i) {
      if (owner[i] < 0) {
        return Err(loc, Cat("T.Pipelined group= leaves statement ", i, " out of every group"));
      }
    }
    for (auto [list, name] : {std::pair{&order, "order"}, {&stage, "stage"}}) {
      if (list->empty()) continue;
      if (list->size() != loop.group.size()) {
        return Err(loc, Cat("T.Pipelined ", name, "= has ", list->size(),
                            " entries but group= has ", loop.group.size(), " groups"));
      }
      std::vector<int64_t> spread;
      for (size_t i = 0; i < scheduled; ++i) spread.push_back((*list)[owner[i]]);
      *list = std::move(spread);
    }
  }
  for (const auto& [list, name] : {std::pair{&order, "order"}, {&stage, "stage"}}) {
    if (!list->empty() && list->size() != scheduled) {
      return Err(
          loc, Cat("T.Pipelined ", name, "= has ", list->size(), " entries but the loop body has ",
                   scheduled, scheduled == 1 ? " statement" : " statements",
                   " (one entry per statement; a local bound in the body is not one)"));
    }
  }
  return std::pair{std::move(order), std::move(stage)};
}

// T.Persistent(domain, wave_size, index, group_size): a serial loop over the
// waves; in wave w the block visits tile w * wave_size + index of the
// domain, if there is one. Tiles map to domain indices row-major, except that
// a 2-D domain goes down groups of group_size rows column by column (the
// grouped order that keeps operands in L2); every tile is visited once either
// way.
absl::StatusOr<Flow> Builder::ExecPersistentLoop(const ForStmt& s, const LoopSpec& loop,
                                                 const std::vector<const NameExpr*>& names) {
  using ir::BinaryOp;
  auto bin = [](BinaryOp op, ir::Expr a, ir::Expr b) {
    return ir::Binary(op, std::move(a), CastTo(ir::DType::kInt32, std::move(b)));
  };
  const size_t n = loop.extents.size();
  ir::Expr total = CastTo(ir::DType::kInt32, loop.extents[0]);
  for (size_t d = 1; d < n; ++d) total = bin(BinaryOp::kMul, total, loop.extents[d]);
  const ir::Expr wave = CastTo(ir::DType::kInt32, loop.wave_size);
  ir::Var w = ir::MakeVar("wave", ir::DType::kInt32);
  ir::Expr tile =
      SimplifyIndex(ir::Binary(BinaryOp::kAdd, ir::Binary(BinaryOp::kMul, w, wave), loop.index));
  std::vector<ir::Expr> idx(n);
  if (n == 2) {
    const ir::Expr g = ir::IntImm(loop.group_size);
    const ir::Expr per_group = bin(BinaryOp::kMul, g, loop.extents[1]);
    const ir::Expr first =
        ir::Binary(BinaryOp::kMul, ir::Binary(BinaryOp::kFloorDiv, tile, per_group), g);
    const ir::Expr rows = ir::Binary(
        BinaryOp::kMin, bin(BinaryOp::kSub, CastTo(ir::DType::kInt32, loop.extents[0]), first), g);
    const ir::Expr in_group = ir::Binary(BinaryOp::kFloorMod, tile, per_group);
    idx[0] = ir::Binary(BinaryOp::kAdd, first, ir::Binary(BinaryOp::kFloorMod, in_group, rows));
    idx[1] = ir::Binary(BinaryOp::kFloorDiv, in_group, rows);
  } else {
    ir::Expr rest = tile;
    for (size_t d = n; d-- > 0;) {
      idx[d] = d == 0 ? rest : bin(BinaryOp::kFloorMod, rest, loop.extents[d]);
      rest = bin(BinaryOp::kFloorDiv, rest, loop.extents[d]);
    }
  }
  PushBlock();
  std::vector<ir::Var> vars;
  for (size_t d = 0; d < n; ++d) {
    ir::Var v = ir::MakeVar(names[d]->id, ir::DType::kInt32);
    absl::Status st = Emit(ir::Let(v, SimplifyIndex(idx[d])), s.loc, "a T.Persistent index");
    if (!st.ok()) {
      PopBlock();
      return st;
    }
    BindName(names[d]->id, Value::Runtime(v));
  }
  OpenIrLoop("a T.Persistent loop");
  absl::StatusOr<Flow> flow = ExecBlock(s.body);
  CloseIrLoop();
  std::vector<ir::Stmt> stmts = PopBlock();
  if (!flow.ok()) return flow;
  ir::Stmt body = ir::If(ir::Binary(BinaryOp::kLt, tile, total), ir::Seq(std::move(stmts)));
  const ir::Expr waves =
      ir::Binary(BinaryOp::kFloorDiv,
                 ir::Binary(BinaryOp::kAdd, total, bin(BinaryOp::kSub, wave, ir::IntImm(1))), wave);
  absl::Status st =
      Emit(ir::For(w, ir::IntImm(0), SimplifyIndex(waves), ir::ForKind::kSerial, body), s.loc,
           "a T.Persistent loop");
  if (!st.ok()) return st;
  return Flow::kNormal;
}

std::optional<absl::Status> Builder::StoreSmallRegion(const ir::Region& dst, const Value& v,
                                                      SourceLoc loc) {
  constexpr int64_t kMaxElements = 64;
  // The region's constant extents, unit dims kept; its element count.
  auto shape_of = [&](const ir::Region& r) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> ext;
    int64_t n = 1;
    for (const ir::Expr& e : r.extents) {
      std::optional<int64_t> c = ir::AsConstInt(e);
      if (!c || *c < 1) return std::nullopt;
      ext.push_back(*c);
      n *= *c;
      if (n > kMaxElements) return std::nullopt;
    }
    return ext;
  };
  auto non_unit = [](const std::vector<int64_t>& ext) {
    std::vector<int64_t> out;
    for (int64_t e : ext) {
      if (e != 1) out.push_back(e);
    }
    return out;
  };
  std::optional<std::vector<int64_t>> de = shape_of(dst);
  if (!de) return std::nullopt;
  std::optional<ir::Region> src;
  if (v.kind == ValueKind::kRegion) src = *v.region;
  if (v.kind == ValueKind::kBuffer) src = ir::FullRegion(v.buffer);
  std::optional<std::vector<int64_t>> se;
  if (src) {
    se = shape_of(*src);
    if (!se || non_unit(*se) != non_unit(*de)) return std::nullopt;
  }
  // Row-major offsets over a region's extents.
  auto indices = [](const ir::Region& r, const std::vector<int64_t>& ext, int64_t k) {
    std::vector<ir::Expr> idx(ext.size());
    for (size_t d = ext.size(); d-- > 0;) {
      idx[d] = SimplifyIndex(
          ir::Binary(ir::BinaryOp::kAdd, r.mins[d], ir::IntImm(k % ext[d], r.mins[d]->dtype)));
      k /= ext[d];
    }
    return idx;
  };
  int64_t count = 1;
  for (int64_t e : *de) count *= e;
  for (int64_t k = 0; k < count; ++k) {
    Value x = v;
    if (src) x = Value::Runtime(ir::Load(src->buffer, indices(*src, *se, k)));
    absl::Status st = StoreElement(dst.buffer, indices(dst, *de, k), x, loc);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace tilec::frontend
