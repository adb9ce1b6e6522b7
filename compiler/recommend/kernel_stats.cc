#include "compiler/recommend/kernel_stats.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/layout.h"
#include "compiler/inference/shared_plan.h"
#include "compiler/ir/visitor.h"

namespace tilec::recommend {
namespace {

using VarValues = std::map<const ir::VarNode*, int64_t>;

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

double ElemBytes(ir::DType t) { return ir::DTypeBits(t) / 8.0; }

// 32-bit registers holding n elements of dtype t.
int64_t Words(int64_t n, ir::DType t) { return (n * ir::DTypeBits(t) + 31) / 32; }

// Buffers written by a T.copy inside a T.Pipelined loop (held once per stage).
class PipelinedDsts : public ir::IRVisitor {
 public:
  std::set<const ir::BufferNode*> dsts;
  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    if (const auto* f = s->as<ir::ForNode>(); f && f->kind == ir::ForKind::kPipelined) {
      ++depth_;
      IRVisitor::Visit(s);
      --depth_;
      return;
    }
    if (const auto* c = s->as<ir::CopyNode>(); c && depth_ > 0) dsts.insert(c->dst.buffer.get());
    IRVisitor::Visit(s);
  }
  using IRVisitor::Visit;

 private:
  int depth_ = 0;
};

class Analyzer {
 public:
  Analyzer(const HardwareProfile& profile, VarValues env, const inference::LayoutPlan* plan)
      : profile_(profile), env_(std::move(env)), plan_(plan) {}

  KernelStats Run(const ir::KernelNode& k, int index) {
    stats_ = KernelStats{};
    stats_.index = index;
    stats_.threads = Eval(k.threads, 1);
    for (size_t i = 0; i < k.grid.size(); ++i) {
      int64_t extent = Eval(k.grid[i], 1);
      stats_.blocks *= extent;
      env_[k.block_vars[i].get()] = (extent - 1) / 2;
    }
    PipelinedDsts pipelined;
    pipelined.Visit(k.body);
    pipelined_ = pipelined.dsts;
    Walk(k.body, 1.0, nullptr);
    for (const ir::BufferNode* b : globals_) {
      stats_.unique_bytes += static_cast<double>(Elements(b->shape)) * ElemBytes(b->dtype);
    }
    // Stage count known only after the walk: pipelined shared buffers,
    // placed as the emitter places them (inference/shared_plan.h), then the
    // exchange area.
    std::vector<inference::SharedRequest> requests;
    for (const auto& [buf, bytes] : shared_) {
      if (!buf) continue;
      int64_t copies = pipelined_.count(buf) ? stats_.num_stages : 1;
      requests.push_back({buf, RoundUp(bytes, 128) * copies});
    }
    stats_.shared_bytes =
        inference::PlanShared(requests, inference::SharedLiveRanges(k.body), 128).total_bytes;
    if (auto it = shared_.find(nullptr); it != shared_.end()) {
      stats_.shared_bytes += RoundUp(it->second, 128);
    }
    int64_t regs = kRegisterOverhead + fragment_words_ + local_words_ + gemm_operand_words_;
    if (!profile_.async_copy()) regs += staging_words_;
    stats_.registers = RoundUp(regs, 8);
    stats_.registers_from_plan = plan_ != nullptr;
    return stats_;
  }

 private:
  int64_t Eval(const ir::Expr& e, int64_t fallback) const {
    if (!e) return fallback;
    std::optional<int64_t> v = inference::EvalInt(e, env_);
    return v ? *v : fallback;
  }

  int64_t Elements(const std::vector<ir::Expr>& dims) const {
    int64_t n = 1;
    for (const ir::Expr& d : dims) n *= std::max<int64_t>(Eval(d, 1), 0);
    return n;
  }

  // Arithmetic operations and global loads in an expression.
  void CountExpr(const ir::Expr& e, double mult) {
    if (!e) return;
    switch (e->kind) {
      case ir::ExprKind::kBinary: {
        const auto* b = e->as<ir::BinaryNode>();
        if (ir::IsFloat(b->dtype)) stats_.vector_flops += mult;
        CountExpr(b->a, mult);
        CountExpr(b->b, mult);
        return;
      }
      case ir::ExprKind::kUnary: CountExpr(e->as<ir::UnaryNode>()->a, mult); return;
      case ir::ExprKind::kSelect: {
        const auto* s = e->as<ir::SelectNode>();
        CountExpr(s->cond, mult);
        CountExpr(s->t, mult);
        CountExpr(s->f, mult);
        return;
      }
      case ir::ExprKind::kCast: CountExpr(e->as<ir::CastNode>()->value, mult); return;
      case ir::ExprKind::kCall: {
        const auto* c = e->as<ir::CallNode>();
        if (ir::IsFloat(c->dtype)) stats_.vector_flops += mult;
        for (const ir::Expr& a : c->args) CountExpr(a, mult);
        return;
      }
      case ir::ExprKind::kLoad: {
        const auto* l = e->as<ir::LoadNode>();
        if (l->buffer->scope == ir::Scope::kGlobal) {
          globals_.insert(l->buffer.get());
          stats_.global_bytes += mult * ElemBytes(l->buffer->dtype);
        }
        for (const ir::Expr& i : l->indices) CountExpr(i, mult);
        return;
      }
      default: return;
    }
  }

  void GlobalRegion(const ir::Region& r, double mult, double factor, double* stage_bytes) {
    if (r.buffer->scope != ir::Scope::kGlobal) return;
    globals_.insert(r.buffer.get());
    double bytes = static_cast<double>(Elements(r.extents)) * ElemBytes(r.buffer->dtype);
    stats_.global_bytes += mult * bytes * factor;
    if (stage_bytes) *stage_bytes += bytes;
  }

  void Allocate(const ir::AllocateNode& a) {
    const ir::Buffer& b = a.buffer;
    const int64_t n = Elements(b->shape);
    switch (b->scope) {
      case ir::Scope::kShared:
        shared_[b.get()] = static_cast<int64_t>(n * ElemBytes(b->dtype) + 0.999);
        break;
      case ir::Scope::kFragment: {
        int64_t slots = (n + stats_.threads - 1) / std::max<int64_t>(stats_.threads, 1);
        if (plan_) {
          auto it = plan_->fragments.find(b.get());
          if (it != plan_->fragments.end()) slots = it->second.local_size;
        }
        fragment_words_ += Words(slots, b->dtype);
        break;
      }
      case ir::Scope::kLocal:
      case ir::Scope::kVar: local_words_ += Words(n, b->dtype); break;
      case ir::Scope::kGlobal: break;
    }
  }

  void Gemm(const ir::GemmNode& g, double mult) {
    auto last2 = [this](const ir::Region& r) {
      int64_t x = Eval(r.extents[r.extents.size() - 2], 1), y = Eval(r.extents.back(), 1);
      return std::make_pair(x, y);
    };
    auto [a0, a1] = last2(g.a);
    auto [c0, c1] = last2(g.c);
    const int64_t m = c0, n = c1, k = g.transpose_a ? a0 : a1;
    stats_.matrix_flops += mult * 2.0 * m * n * k;
    stats_.matrix_dtype = g.a.buffer->dtype;
    ++stats_.gemms;
    inference::GemmWarpPartition p;
    bool found = false;
    if (plan_) {
      for (const auto& [node, part] : plan_->gemms) {
        if (node == current_) {
          p = part;
          found = true;
        }
      }
    }
    if (!found) {
      p = inference::ChooseWarpPartition(g.policy, m, n, std::max<int64_t>(stats_.threads / 32, 1));
    }
    const double eb = ElemBytes(g.a.buffer->dtype);
    if (g.a.buffer->scope == ir::Scope::kShared) {
      stats_.shared_read_bytes += mult * m * k * eb * p.warps_n * p.replicas;
    }
    if (g.b.buffer->scope == ir::Scope::kShared) {
      // mma.sync: each warp row reads B's columns. wgmma: each m64 row of
      // instructions reads its warpgroup's columns once, whatever the
      // number of warps in it (docs/cuda_backend.md "wgmma").
      const int64_t readers = p.wgmma ? (m + 63) / 64 : p.warps_m;
      stats_.shared_read_bytes += mult * k * n * eb * readers * p.replicas;
    }
    const int64_t wm = (m + p.warps_m - 1) / p.warps_m, wn = (n + p.warps_n - 1) / p.warps_n;
    const int64_t operand = (wm + 15) / 16 * 4 + (wn + 7) / 8 * 2;
    gemm_operand_words_ = std::max(gemm_operand_words_, operand);
  }

  void Walk(const ir::Stmt& s, double mult, double* stage_bytes) {
    if (!s) return;
    current_ = s.get();
    switch (s->kind) {
      case ir::StmtKind::kSeq:
        for (const ir::Stmt& c : s->as<ir::SeqNode>()->stmts) Walk(c, mult, stage_bytes);
        return;
      case ir::StmtKind::kAllocate: Allocate(*s->as<ir::AllocateNode>()); return;
      case ir::StmtKind::kLet: {
        const auto* l = s->as<ir::LetNode>();
        if (auto v = inference::EvalInt(l->value, env_)) env_[l->var.get()] = *v;
        CountExpr(l->value, mult);
        return;
      }
      case ir::StmtKind::kFor: {
        const auto* f = s->as<ir::ForNode>();
        const int64_t extent = std::max<int64_t>(Eval(f->extent, 1), 0);
        env_[f->var.get()] = Eval(f->min, 0) + (extent > 0 ? (extent - 1) / 2 : 0);
        if (f->kind == ir::ForKind::kPipelined) {
          stats_.num_stages = std::max(stats_.num_stages, Eval(f->num_stages, 1));
          stats_.loop_trips += mult * extent;
          double bytes = 0;
          Walk(f->body, mult * extent, &bytes);
          stats_.bytes_per_stage = std::max(stats_.bytes_per_stage, bytes);
          return;
        }
        if (stage_bytes == nullptr && f->kind == ir::ForKind::kSerial) {
          stats_.loop_trips += mult * extent;
          double bytes = 0;
          Walk(f->body, mult * extent, &bytes);
          stats_.bytes_per_stage = std::max(stats_.bytes_per_stage, bytes);
          return;
        }
        Walk(f->body, mult * extent, stage_bytes);
        return;
      }
      case ir::StmtKind::kIf: {
        const auto* n = s->as<ir::IfNode>();
        CountExpr(n->cond, mult);
        const double share = n->else_case ? 0.5 : 1.0;
        Walk(n->then_case, mult * share, stage_bytes);
        Walk(n->else_case, mult * share, stage_bytes);
        return;
      }
      case ir::StmtKind::kWhile: {
        // The trip count is a run-time value: counted as one iteration.
        const auto* n = s->as<ir::WhileNode>();
        CountExpr(n->cond, mult);
        Walk(n->body, mult, stage_bytes);
        return;
      }
      case ir::StmtKind::kStore: {
        const auto* n = s->as<ir::StoreNode>();
        if (n->buffer->scope == ir::Scope::kGlobal) {
          globals_.insert(n->buffer.get());
          stats_.global_bytes += mult * ElemBytes(n->buffer->dtype);
        }
        CountExpr(n->value, mult);
        return;
      }
      case ir::StmtKind::kCopy: {
        const auto* c = s->as<ir::CopyNode>();
        double* sb = stage_bytes ? stage_bytes : &top_level_bytes_;
        GlobalRegion(c->src, mult, 1, sb);
        GlobalRegion(c->dst, mult, 1, nullptr);
        if (c->src.buffer->scope == ir::Scope::kGlobal &&
            c->dst.buffer->scope == ir::Scope::kShared) {
          const int64_t bytes =
              static_cast<int64_t>(Elements(c->src.extents) * ElemBytes(c->src.buffer->dtype));
          staging_words_ =
              std::max(staging_words_, (bytes / std::max<int64_t>(stats_.threads, 1) + 3) / 4);
        }
        if (plan_) {
          auto it = plan_->loops.find(s.get());
          if (it != plan_->loops.end() && it->second.exchange) {
            const int64_t bytes =
                static_cast<int64_t>(Elements(c->dst.extents) * ElemBytes(c->dst.buffer->dtype));
            exchange_bytes_ = std::max(exchange_bytes_, bytes);
            shared_[nullptr] = exchange_bytes_;
          }
        }
        return;
      }
      case ir::StmtKind::kGemm: Gemm(*s->as<ir::GemmNode>(), mult); return;
      case ir::StmtKind::kFill: GlobalRegion(s->as<ir::FillNode>()->dst, mult, 1, nullptr); return;
      case ir::StmtKind::kReduce: {
        const auto* r = s->as<ir::ReduceNode>();
        stats_.vector_flops += mult * static_cast<double>(Elements(r->src->shape));
        return;
      }
      case ir::StmtKind::kCumsum: {
        const auto* c = s->as<ir::CumsumNode>();
        stats_.vector_flops += mult * static_cast<double>(Elements(c->src->shape));
        return;
      }
      case ir::StmtKind::kAtomicAdd: {
        const auto* a = s->as<ir::AtomicAddNode>();
        if (a->src) {
          GlobalRegion(*a->src, mult, 1, stage_bytes);
          GlobalRegion(a->dst, mult, 2, nullptr);
          stats_.vector_flops += mult * static_cast<double>(Elements(a->dst.extents));
        } else {
          if (a->dst.buffer->scope == ir::Scope::kGlobal) {
            globals_.insert(a->dst.buffer.get());
            stats_.global_bytes += mult * 2 * ElemBytes(a->dst.buffer->dtype);
          }
          CountExpr(a->value, mult);
        }
        return;
      }
      default: return;
    }
  }

  const HardwareProfile& profile_;
  VarValues env_;
  const inference::LayoutPlan* plan_;
  KernelStats stats_;
  std::set<const ir::BufferNode*> pipelined_;
  std::set<const ir::BufferNode*> globals_;
  std::map<const ir::BufferNode*, int64_t> shared_;
  const ir::StmtNode* current_ = nullptr;
  int64_t fragment_words_ = 0, local_words_ = 0, gemm_operand_words_ = 0, staging_words_ = 0;
  int64_t exchange_bytes_ = 0;
  double top_level_bytes_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<KernelStats>> AnalyzeKernels(
    const ir::Program& program, const HardwareProfile& profile,
    const std::map<std::string, int64_t>& dyn_dims, const inference::LayoutPlan* plan) {
  for (const ir::TileParam& tp : program.tile_params) {
    if (!tp.value) {
      return absl::FailedPreconditionError(absl::StrCat(
          "internal: AnalyzeKernels needs every tile parameter bound; ", tp.var->name, " is not"));
    }
  }
  VarValues env;
  for (const ir::Var& d : program.dyn_dims) {
    auto it = dyn_dims.find(d->name);
    env[d.get()] = it == dyn_dims.end() ? kDefaultDynDim : it->second;
  }
  for (const ir::Param& p : program.params) {
    if (p.scalar) env[p.scalar.get()] = 1;
  }
  std::vector<KernelStats> out;
  const auto* seq = program.body ? program.body->as<ir::SeqNode>() : nullptr;
  std::vector<ir::Stmt> top = seq ? seq->stmts : std::vector<ir::Stmt>{program.body};
  for (const ir::Stmt& s : top) {
    const auto* k = s ? s->as<ir::KernelNode>() : nullptr;
    if (!k) continue;
    Analyzer a(profile, env, plan);
    out.push_back(a.Run(*k, static_cast<int>(out.size())));
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("program ", program.name, " has no T.Kernel"));
  }
  return out;
}

int64_t BlocksPerSm(const KernelStats& k, const HardwareProfile& p, std::string* limit) {
  int64_t best = p.max_blocks_per_sm();
  std::string why = "blocks";
  auto take = [&](int64_t v, const char* name) {
    if (v < best) {
      best = v;
      why = name;
    }
  };
  take(p.max_threads_per_sm() / std::max<int64_t>(k.threads, 1), "threads");
  if (k.shared_bytes > 0) {
    take(p.shared_memory_per_sm_bytes() /
             (k.shared_bytes + p.shared_memory_reserved_per_block_bytes()),
         "shared memory");
  }
  take(p.registers_per_sm() / std::max<int64_t>(k.registers * k.threads, 1), "registers");
  if (limit) *limit = why;
  return std::max<int64_t>(best, 0);
}

int64_t SpillFreeRegisters(const HardwareProfile& profile, const KernelStats& k) {
  const int64_t max = profile.max_registers_per_thread();
  return k.gemms > 1 ? max * 3 / 4 : max;
}

absl::Status CheckLimits(const KernelStats& k, const HardwareProfile& p) {
  auto over = [&](std::string what) {
    return absl::ResourceExhaustedError(
        absl::StrCat("kernel ", k.index, ": ", what, " on ", p.id()));
  };
  if (k.threads > p.max_threads_per_block()) {
    return over(
        absl::StrCat("threads ", k.threads, " > ", p.max_threads_per_block(), " per block"));
  }
  if (k.threads % p.warp_size() != 0) {
    return over(absl::StrCat("threads ", k.threads, " is not a whole number of ", p.warp_size(),
                             "-lane warps"));
  }
  if (k.shared_bytes > p.shared_memory_per_block_bytes()) {
    return over(absl::StrCat("shared memory ", k.shared_bytes, " bytes > ",
                             p.shared_memory_per_block_bytes(), " per block"));
  }
  if (const int64_t cap = SpillFreeRegisters(p, k); k.registers > cap) {
    return over(absl::StrCat("~", k.registers, " registers per thread > ", cap,
                             cap < p.max_registers_per_thread()
                                 ? " (three quarters of the maximum, for a chain of T.gemms)"
                                 : "",
                             " (would spill)"));
  }
  if (k.registers * k.threads > p.max_registers_per_block()) {
    return over(absl::StrCat("~", k.registers, " registers x ", k.threads, " threads > ",
                             p.max_registers_per_block(), " per block"));
  }
  std::string limit;
  if (BlocksPerSm(k, p, &limit) < 1) {
    return over(absl::StrCat("no block fits on one SM (", limit, ")"));
  }
  return absl::OkStatus();
}

}  // namespace tilec::recommend
