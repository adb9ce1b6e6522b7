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
#include "compiler/frontend/str_util.h"

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

}  // namespace tilec::frontend
