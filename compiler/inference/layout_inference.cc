#include "compiler/inference/layout_inference.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/fragment_check.h"
#include "compiler/inference/fragment_staging.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/layout_solver.h"
#include "compiler/inference/loop_partition.h"
#include "compiler/inference/shared_plan.h"
#include "compiler/inference/wgmma_plan.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"

namespace tilec::inference {
namespace {

using ir::Expr;
using ir::Stmt;

// absl::StrCat takes absl::string_view, which is not std::string_view here.
std::string Str(std::string_view v) { return std::string(v); }

// Calls `fn` on every load inside an expression.
class LoadFinder : public ir::IRVisitor {
 public:
  explicit LoadFinder(std::function<void(const ir::LoadNode*)> fn) : fn_(std::move(fn)) {}
  void Visit(const Expr& e) override {
    if (e == nullptr) return;
    if (const auto* l = e->as<ir::LoadNode>()) fn_(l);
    ir::IRVisitor::Visit(e);
  }
  using ir::IRVisitor::Visit;

 private:
  std::function<void(const ir::LoadNode*)> fn_;
};

// Statement counters of one body, for position labels (`T.copy #2`).
struct Body {
  std::map<std::string, int> counts;
  std::string Label(const std::string& op) { return absl::StrCat(op, " #", ++counts[op]); }
};

// A T.copy or tile T.atomic_add, partitioned once the layouts are decided.
struct RegionOp {
  const ir::StmtNode* stmt;
  LoopPartition::Kind kind;
  ir::Region src, dst;
};

class KernelInference {
 public:
  KernelInference(int index, int64_t threads, const TargetInfo& target, LayoutPlan* plan,
                  bool convert = false)
      : threads_(threads),
        target_(target),
        plan_(plan),
        solver_(threads, target),
        convert_(convert) {
    path_.push_back(absl::StrCat("kernel ", index));
  }

  // With `convert`: the read-only accesses Solve chose to serve from a staged
  // copy instead (LayoutSolver::Solve).
  const std::vector<LayoutSolver::Convertible>& conversions() const {
    return solver_.conversions();
  }

  absl::Status Run(const ir::KernelNode& kernel) {
    if (target_.supports_wgmma) wgmma_ = PlanWgmma(kernel.body, threads_);
    absl::Status st = WalkBody(kernel.body);
    if (!st.ok()) return st;
    // The buffers' own bytes, placed as the emitter will (reusing the bytes
    // of buffers whose lifetimes do not overlap); pipeline stages and
    // padding come on top, and the emitter checks the final figure.
    std::vector<SharedRequest> requests;
    for (const auto& [b, bytes] : shared_bytes_) requests.push_back({b, bytes});
    const int64_t shared_bytes = PlanShared(requests, SharedLiveRanges(kernel.body), 1).total_bytes;
    if (target_.shared_memory_per_block > 0 && shared_bytes > target_.shared_memory_per_block) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_[0], ": the shared buffers take ", shared_bytes, " bytes, more than the ",
          target_.shared_memory_per_block, " bytes of shared memory per block on ", target_.name));
    }
    st = solver_.Solve(convert_);
    if (!st.ok()) return st;
    if (!solver_.conversions().empty()) return absl::OkStatus();  // the caller stages them
    return Record();
  }

 private:
  std::string Where() const { return absl::StrJoin(path_, " > "); }

  absl::Status WalkBody(const Stmt& s) {
    Body body;
    return WalkIn(s, body);
  }

  absl::Status WalkIn(const Stmt& s, Body& body) {
    if (s == nullptr) return absl::OkStatus();
    if (const auto* seq = s->as<ir::SeqNode>()) {
      for (const Stmt& c : seq->stmts) {
        absl::Status st = WalkIn(c, body);
        if (!st.ok()) return st;
      }
      return absl::OkStatus();
    }
    path_.push_back(LabelOf(s, body));
    absl::Status st = VisitStmt(s);
    path_.pop_back();
    return st;
  }

  static std::string LabelOf(const Stmt& s, Body& body) {
    switch (s->kind) {
      case ir::StmtKind::kFor: return absl::StrCat("for ", s->as<ir::ForNode>()->var->name);
      case ir::StmtKind::kLet: return absl::StrCat("let ", s->as<ir::LetNode>()->var->name);
      case ir::StmtKind::kAllocate: {
        const ir::Buffer& b = s->as<ir::AllocateNode>()->buffer;
        return absl::StrCat("T.alloc_", Str(ir::ScopeName(b->scope)), " ", b->name);
      }
      case ir::StmtKind::kIf: return body.Label("if");
      case ir::StmtKind::kWhile: return body.Label("while");
      case ir::StmtKind::kStore: return body.Label("store");
      case ir::StmtKind::kCopy: return body.Label("T.copy");
      case ir::StmtKind::kGemm: return body.Label("T.gemm");
      case ir::StmtKind::kFill: return body.Label("T.fill");
      case ir::StmtKind::kReduce:
        return body.Label(absl::StrCat(
            "T.reduce_", Str(ir::ReduceKindName(s->as<ir::ReduceNode>()->reduce_kind))));
      case ir::StmtKind::kCumsum: return body.Label("T.cumsum");
      case ir::StmtKind::kAtomicAdd: return body.Label("T.atomic_add");
      case ir::StmtKind::kAnnotateLayout: return body.Label("T.annotate_layout");
      case ir::StmtKind::kUseSwizzle: return body.Label("T.use_swizzle");
      case ir::StmtKind::kKernel: return body.Label("T.Kernel");
      case ir::StmtKind::kSeq: return "seq";
    }
    return "?";
  }

  absl::Status VisitStmt(const Stmt& s) {
    switch (s->kind) {
      case ir::StmtKind::kAllocate: return VisitAllocate(*s->as<ir::AllocateNode>());
      case ir::StmtKind::kFor: return VisitFor(*s->as<ir::ForNode>());
      case ir::StmtKind::kIf: {
        const auto* n = s->as<ir::IfNode>();
        ScanExpr(n->cond);
        absl::Status st = WalkBody(n->then_case);
        if (!st.ok() || n->else_case == nullptr) return st;
        path_.push_back("else");
        st = WalkBody(n->else_case);
        path_.pop_back();
        return st;
      }
      case ir::StmtKind::kWhile: {
        const auto* n = s->as<ir::WhileNode>();
        ScanExpr(n->cond);
        return WalkBody(n->body);
      }
      case ir::StmtKind::kStore: {
        const auto* n = s->as<ir::StoreNode>();
        if (n->buffer->scope == ir::Scope::kFragment) FragmentAccess(n->buffer, n->indices);
        for (const Expr& i : n->indices) ScanExpr(i);
        ScanExpr(n->value);
        return absl::OkStatus();
      }
      case ir::StmtKind::kLet: ScanExpr(s->as<ir::LetNode>()->value); return absl::OkStatus();
      case ir::StmtKind::kCopy: {
        const auto* n = s->as<ir::CopyNode>();
        ScanRegion(n->src);
        ScanRegion(n->dst);
        // An accumulator tile stored to a 16-bit shared buffer (the GEMM
        // epilogue, stmatrix on sm_90a): swizzled, so that the stores of 8
        // rows at one column hit distinct banks.
        if (n->src.buffer->scope == ir::Scope::kFragment &&
            n->src.buffer->dtype == ir::DType::kFloat32 &&
            n->dst.buffer->scope == ir::Scope::kShared && ir::DTypeBits(n->dst.buffer->dtype) == 16) {
          swizzle_.insert(n->dst.buffer.get());
        }
        AccessHint(n->src, n->dst);
        AccessHint(n->dst, n->src);
        int src = WholeFragmentNode(n->src, "T.copy"), dst = WholeFragmentNode(n->dst, "T.copy");
        if (src >= 0 && dst >= 0 && solver_.nodes()[src].shape == solver_.nodes()[dst].shape) {
          solver_.Copy(src, dst, Where());
        }
        region_ops_.push_back({s.get(), LoopPartition::Kind::kCopy, n->src, n->dst});
        return absl::OkStatus();
      }
      case ir::StmtKind::kGemm: return VisitGemm(*s->as<ir::GemmNode>());
      case ir::StmtKind::kFill: {
        const auto* n = s->as<ir::FillNode>();
        ScanRegion(n->dst);
        ScanExpr(n->value);
        return absl::OkStatus();
      }
      case ir::StmtKind::kReduce: {
        const auto* n = s->as<ir::ReduceNode>();
        auto src = frag_node_.find(n->src.get()), dst = frag_node_.find(n->dst.get());
        if (src != frag_node_.end() && dst != frag_node_.end()) {
          // When dst cannot be src's projection, the reduction can go to a
          // fresh fragment that is then copied into dst (a conversion).
          solver_.Project(dst->second, src->second, {n->dim}, Where(),
                          absl::StrCat("T.reduce_", Str(ir::ReduceKindName(n->reduce_kind))),
                          LayoutSolver::Convertible{nullptr, nullptr, n});
        }
        return absl::OkStatus();
      }
      case ir::StmtKind::kCumsum: {
        const auto* n = s->as<ir::CumsumNode>();
        auto src = frag_node_.find(n->src.get()), dst = frag_node_.find(n->dst.get());
        if (src != frag_node_.end() && dst != frag_node_.end()) {
          solver_.Equal(src->second, dst->second, Where(), "T.cumsum");
        }
        return absl::OkStatus();
      }
      case ir::StmtKind::kAtomicAdd: {
        const auto* n = s->as<ir::AtomicAddNode>();
        ScanRegion(n->dst);
        ScanExpr(n->value);
        if (n->src) {
          ScanRegion(*n->src);
          WholeFragmentNode(*n->src, "T.atomic_add");
          region_ops_.push_back({s.get(), LoopPartition::Kind::kAtomicAdd, *n->src, n->dst});
        }
        return absl::OkStatus();
      }
      case ir::StmtKind::kAnnotateLayout: {
        const auto* n = s->as<ir::AnnotateLayoutNode>();
        if (n->layout.kind == ir::Layout::Kind::kCustom) {
          return absl::UnimplementedError(
              absl::StrCat(Where(), ": T.annotate_layout with a custom layout (for ",
                           n->buffer->name, ") is not supported; make_swizzled_layout is"));
        }
        if (n->buffer->scope != ir::Scope::kShared) {
          return absl::UnimplementedError(absl::StrCat(
              Where(), ": make_swizzled_layout applies to shared buffers; ", n->buffer->name,
              " is a ", Str(ir::ScopeName(n->buffer->scope)), " buffer"));
        }
        swizzle_.insert(n->buffer.get());
        return absl::OkStatus();
      }
      case ir::StmtKind::kUseSwizzle: return absl::OkStatus();
      case ir::StmtKind::kKernel:
        return absl::InvalidArgumentError(absl::StrCat(Where(), ": kernels do not nest"));
      case ir::StmtKind::kSeq: return WalkBody(s);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<int64_t>> ConstShape(const ir::Buffer& b) {
    std::vector<int64_t> shape;
    for (const Expr& e : b->shape) {
      std::optional<int64_t> v = EvalInt(e);
      if (!v || *v < 1) {
        return absl::UnimplementedError(
            absl::StrCat(Where(), ": the ", Str(ir::ScopeName(b->scope)), " buffer ", b->name,
                         " has the non-constant dimension ", ir::PrintExpr(e),
                         "; fragment and shared shapes must be constants"));
      }
      shape.push_back(*v);
    }
    return shape;
  }

  absl::Status VisitAllocate(const ir::AllocateNode& n) {
    const ir::Buffer& b = n.buffer;
    if (b->scope == ir::Scope::kFragment || b->scope == ir::Scope::kShared) {
      absl::StatusOr<std::vector<int64_t>> shape = ConstShape(b);
      if (!shape.ok()) return shape.status();
      if (b->scope == ir::Scope::kFragment) {
        frag_node_[b.get()] = solver_.AddFragment(b, *shape);
      } else {
        int64_t elems = 1;
        for (int64_t s : *shape) elems *= s;
        shared_bytes_.emplace_back(b.get(), (elems * ir::DTypeBits(b->dtype) + 7) / 8);
        shared_.push_back({b, *std::move(shape)});
      }
    }
    ScanExpr(n.init);
    return absl::OkStatus();
  }

  absl::Status VisitFor(const ir::ForNode& f) {
    if (f.kind != ir::ForKind::kParallel) {
      ScanExpr(f.min);
      ScanExpr(f.extent);
      return WalkBody(f.body);
    }
    if (nest_ != nullptr) {
      return absl::UnimplementedError(
          absl::StrCat(Where(),
                       ": a T.Parallel loop inside the body of another T.Parallel loop is not "
                       "supported; write the loops as one T.Parallel(...) nest"));
    }
    auto nest = std::make_unique<ParallelNest>();
    nest->outer = &f;
    const ir::ForNode* cur = &f;
    size_t pushed = 0;
    while (true) {
      std::optional<int64_t> min = EvalInt(cur->min), extent = EvalInt(cur->extent);
      if (!min || *min != 0 || !extent || *extent < 1) {
        path_.resize(path_.size() - pushed);
        return absl::UnimplementedError(absl::StrCat(
            Where(), ": T.Parallel loops need a constant extent and start at 0; the loop over ",
            cur->var->name, " runs from ", ir::PrintExpr(cur->min), " for ",
            ir::PrintExpr(cur->extent)));
      }
      nest->vars.push_back(cur->var);
      nest->extents.push_back(*extent);
      Stmt body = cur->body;
      if (const auto* seq = body->as<ir::SeqNode>(); seq != nullptr && seq->stmts.size() == 1) {
        body = seq->stmts[0];
      }
      const auto* inner = body->as<ir::ForNode>();
      if (inner == nullptr || inner->kind != ir::ForKind::kParallel) {
        nest->body = cur->body;
        break;
      }
      cur = inner;
      path_.push_back(absl::StrCat("for ", cur->var->name));
      ++pushed;
    }
    nest_ = nest.get();
    nest_node_ = solver_.AddNest(nest_, Where());
    nest_stores_ = FragmentsStoredIn(nest->body);
    absl::Status st = WalkBody(nest->body);
    nest_ = nullptr;
    path_.resize(path_.size() - pushed);
    nests_.push_back({std::move(nest), nest_node_});
    return st;
  }

  absl::Status VisitGemm(const ir::GemmNode& g) {
    if (!target_.supports_mma && !target_.supports_mfma) {
      return absl::UnimplementedError(
          absl::StrCat(Where(), ": T.gemm is not supported on ", target_.name));
    }
    const int64_t wave = target_.supports_mfma ? 64 : 32;
    if (target_.supports_mfma && threads_ % wave != 0 && g.a.buffer->scope == ir::Scope::kShared &&
        g.b.buffer->scope == ir::Scope::kShared && g.c.buffer->scope == ir::Scope::kFragment &&
        g.c.buffer->dtype != ir::DType::kFloat16 && g.c.buffer->dtype != ir::DType::kBFloat16) {
      // Blocks that are not whole wavefronts cannot run MFMA: the CUDA-core
      // gemm (every thread computes the elements of C it holds, in C's type)
      // takes them, with C in whatever layout its other uses give it.
      plan_->gemms[&g] = GemmWarpPartition{};
      return absl::OkStatus();
    }
    if (target_.warp_size != wave || threads_ % wave != 0) {
      return absl::UnimplementedError(absl::StrCat(Where(), ": T.gemm needs whole ", wave,
                                                   wave == 64 ? "-lane wavefronts" : "-thread warps",
                                                   "; the kernel has ", threads_, " threads"));
    }
    auto dims2 = [&](const ir::Region& r,
                     const char* what) -> absl::StatusOr<std::vector<int64_t>> {
      std::vector<int64_t> ext;
      for (const Expr& e : r.extents) {
        std::optional<int64_t> v = EvalInt(e);
        if (!v) {
          return absl::UnimplementedError(absl::StrCat(Where(), ": T.gemm operand ", what, " (",
                                                       r.buffer->name,
                                                       ") has a non-constant extent"));
        }
        ext.push_back(*v);
      }
      while (ext.size() > 2 && ext.front() == 1) ext.erase(ext.begin());
      if (ext.size() != 2) {
        return absl::UnimplementedError(
            absl::StrCat(Where(), ": T.gemm operand ", what, " (", r.buffer->name, ") is not 2-D"));
      }
      return ext;
    };
    absl::StatusOr<std::vector<int64_t>> c = dims2(g.c, "C");
    if (!c.ok()) return c.status();
    absl::StatusOr<std::vector<int64_t>> a = dims2(g.a, "A");
    if (!a.ok()) return a.status();
    const int64_t m = (*c)[0], n = (*c)[1], k = g.transpose_a ? (*a)[0] : (*a)[1];
    auto wg = wgmma_.find(&g);
    GemmWarpPartition p =
        wg != wgmma_.end()       ? wg->second
        : target_.supports_mfma ? ChooseMfmaPartition(g.policy, m, n, threads_ / 64)
                                : ChooseWarpPartition(g.policy, m, n, threads_ / 32);
    plan_->gemms[&g] = p;
    const std::string where = Where();
    if (g.c.buffer->scope == ir::Scope::kFragment) {
      int node = WholeFragmentNode(g.c, nullptr);
      if (node < 0 || solver_.nodes()[node].shape.size() != 2) {
        return absl::UnimplementedError(
            absl::StrCat(where, ": the T.gemm accumulator must be a whole 2-D fragment; ",
                         g.c.buffer->name, " is not"));
      }
      solver_.Strict(node, MmaAccumulator(m, n, p),
                     absl::StrCat("the accumulator of T.gemm at ", where));
    }
    if (g.a.buffer->scope == ir::Scope::kFragment) {
      int node = WholeFragmentNode(g.a, nullptr);
      if (node < 0 || solver_.nodes()[node].shape.size() != 2) {
        return absl::UnimplementedError(
            absl::StrCat(where, ": a T.gemm A operand in registers must be a whole 2-D fragment; ",
                         g.a.buffer->name, " is not"));
      }
      solver_.Strict(node, RegisterA(m, k, p, g.transpose_a),
                     absl::StrCat("the register A operand of T.gemm at ", where));
    } else if (g.a.buffer->scope == ir::Scope::kShared) {
      gemm_operands_.insert(g.a.buffer.get());
    }
    if (g.b.buffer->scope == ir::Scope::kFragment) {
      return absl::UnimplementedError(absl::StrCat(where, ": T.gemm with B in a fragment (",
                                                   g.b.buffer->name,
                                                   ") is not supported; put B in shared memory"));
    }
    if (g.b.buffer->scope == ir::Scope::kShared) gemm_operands_.insert(g.b.buffer.get());
    return absl::OkStatus();
  }

  // The node of a fragment region covering its whole buffer, or -1. A
  // fragment region that covers only part of its buffer makes the fragment
  // replicated (when `op` is given: every thread can then reach any part).
  // A T.copy between fragment `frag` and global or shared `mem`.
  void AccessHint(const ir::Region& frag, const ir::Region& mem) {
    auto it = frag_node_.find(frag.buffer.get());
    if (it == frag_node_.end() || frag.buffer->scope != ir::Scope::kFragment) return;
    if (mem.buffer->scope != ir::Scope::kGlobal && mem.buffer->scope != ir::Scope::kShared) return;
    if (mem.buffer->dtype == ir::DType::kInt4) return;
    solver_.Access(it->second, std::max(1, ir::DTypeBits(mem.buffer->dtype) / 8));
  }

  int WholeFragmentNode(const ir::Region& r, const char* op) {
    if (r.buffer->scope != ir::Scope::kFragment) return -1;
    auto it = frag_node_.find(r.buffer.get());
    if (it == frag_node_.end()) return -1;
    const std::vector<int64_t>& shape = solver_.nodes()[it->second].shape;
    bool whole = r.mins.size() == shape.size() && r.extents.size() == shape.size();
    for (size_t d = 0; whole && d < shape.size(); ++d) {
      std::optional<int64_t> lo = EvalInt(r.mins[d]), ext = EvalInt(r.extents[d]);
      whole = lo && *lo == 0 && ext && *ext == shape[d];
    }
    if (whole) return it->second;
    if (op != nullptr) {
      solver_.Strict(it->second, Replicated(shape, threads_),
                     absl::StrCat(op, " of a part of ", r.buffer->name, " at ", Where()));
    }
    return -1;
  }

  void ScanRegion(const ir::Region& r) {
    for (const Expr& e : r.mins) ScanExpr(e);
    for (const Expr& e : r.extents) ScanExpr(e);
  }

  void ScanExpr(const Expr& e) {
    if (e == nullptr) return;
    LoadFinder finder([this](const ir::LoadNode* l) {
      if (l->buffer->scope == ir::Scope::kFragment) FragmentAccess(l->buffer, l->indices);
    });
    finder.Visit(e);
  }

  // A load or store of a fragment element.
  void FragmentAccess(const ir::Buffer& b, const std::vector<Expr>& indices) {
    auto it = frag_node_.find(b.get());
    if (it == frag_node_.end()) return;
    const int node = it->second;
    const std::vector<int64_t>& shape = solver_.nodes()[node].shape;
    if (nest_ != nullptr) {
      const std::vector<int> dims = OwnedDims(*nest_, indices, shape);
      const bool match = !dims.empty();
      if (match) {
        const int kind = dims.size() == nest_->vars.size() ? 0 : 1;
        if (!seen_.insert({kind, node, nest_node_}).second) return;
        // A fragment the nest only reads can be read from a staged copy
        // when its layout cannot be the nest's.
        LayoutSolver::Convertible weak;
        if (!nest_stores_.count(b.get())) weak = {nest_->outer, b.get()};
        if (kind == 0) {
          solver_.Equal(nest_node_, node, Where(), "T.Parallel", weak);
          if (!follows_.count(nest_node_)) follows_[nest_node_] = b;
        } else {
          std::vector<int> removed;
          for (int d = 0; d < static_cast<int>(nest_->vars.size()); ++d) {
            if (std::find(dims.begin(), dims.end(), d) == dims.end()) removed.push_back(d);
          }
          solver_.Project(node, nest_node_, removed, Where(), "T.Parallel", weak);
        }
        return;
      }
    }
    if (!seen_.insert({2, node, 0}).second) return;
    solver_.Strict(node, Replicated(shape, threads_),
                   absl::StrCat(Where(), ", where ", b->name,
                                nest_ != nullptr ? " is indexed by other than the loop variables"
                                                 : " is used outside a T.Parallel loop",
                                " (every thread needs every element)"));
  }

  absl::Status Record() {
    for (size_t i = 0; i < solver_.nodes().size(); ++i) {
      const LayoutSolver::Node& n = solver_.nodes()[i];
      if (n.buffer != nullptr) plan_->fragments[n.buffer.get()] = *n.layout;
    }
    for (auto& [nest, node] : nests_) {
      auto f = follows_.find(node);
      plan_->loops[nest->outer] = NestPartition(*nest, *solver_.nodes()[node].layout,
                                                f == follows_.end() ? nullptr : f->second, target_);
    }
    for (const auto& [b, shape] : shared_) {
      const int64_t elem = std::max(1, ir::DTypeBits(b->dtype) / 8);
      bool swizzle = (gemm_operands_.count(b.get()) || swizzle_.count(b.get())) &&
                     ir::DTypeBits(b->dtype) >= 8 && CanSwizzle(shape.back(), elem);
      plan_->shared[b.get()] = swizzle ? SwizzledLayout(shape, elem) : RowMajorLayout(shape, elem);
    }
    for (const RegionOp& op : region_ops_) {
      const FragmentLayout* src = Whole(op.src);
      const FragmentLayout* dst = Whole(op.dst);
      absl::StatusOr<LoopPartition> p;
      if (dst == nullptr && op.dst.buffer->scope == ir::Scope::kFragment) {
        // Part of a (replicated) fragment: every thread writes all of it.
        absl::StatusOr<LoopPartition> base =
            RegionPartition(op.kind, op.src, op.dst, nullptr, nullptr, threads_, target_);
        if (!base.ok()) return base.status();
        base->layout = Replicated(base->layout.shape, threads_);
        base->vector = 1;
        base->follows = op.dst.buffer;
        p = *std::move(base);
      } else {
        p = RegionPartition(op.kind, op.src, op.dst, src, dst, threads_, target_);
      }
      if (!p.ok()) return p.status();
      p->exchange = src != nullptr && dst != nullptr && !SameLayout(*src, *dst);
      plan_->loops[op.stmt] = *std::move(p);
    }
    return absl::OkStatus();
  }

  // The decided layout of a region's fragment when the region is all of it.
  const FragmentLayout* Whole(const ir::Region& r) {
    if (r.buffer->scope != ir::Scope::kFragment) return nullptr;
    auto it = frag_node_.find(r.buffer.get());
    if (it == frag_node_.end()) return nullptr;
    const LayoutSolver::Node& n = solver_.nodes()[it->second];
    for (size_t d = 0; d < n.shape.size(); ++d) {
      std::optional<int64_t> lo = EvalInt(r.mins[d]), ext = EvalInt(r.extents[d]);
      if (!lo || *lo != 0 || !ext || *ext != n.shape[d]) return nullptr;
    }
    return &*n.layout;
  }

  const int64_t threads_;
  const TargetInfo& target_;
  LayoutPlan* plan_;
  LayoutSolver solver_;
  std::vector<std::string> path_;
  std::map<const ir::BufferNode*, int> frag_node_;
  std::vector<std::pair<ir::Buffer, std::vector<int64_t>>> shared_;
  std::vector<std::pair<const ir::BufferNode*, int64_t>> shared_bytes_;
  std::set<const ir::BufferNode*> gemm_operands_, swizzle_;
  std::map<const ir::GemmNode*, GemmWarpPartition> wgmma_;  // the gemms that run as wgmma
  std::vector<std::pair<std::unique_ptr<ParallelNest>, int>> nests_;
  std::map<int, ir::Buffer> follows_;  // nest node -> first fragment indexed by all its vars
  std::set<std::tuple<int, int, int>> seen_;
  std::vector<RegionOp> region_ops_;
  const ParallelNest* nest_ = nullptr;
  int nest_node_ = -1;
  std::set<const ir::BufferNode*> nest_stores_;  // fragments the current nest stores to
  bool convert_ = false;

  static std::set<const ir::BufferNode*> FragmentsStoredIn(const Stmt& body) {
    struct V : ir::IRVisitor {
      std::set<const ir::BufferNode*> out;
      void Visit(const Stmt& s) override {
        if (s == nullptr) return;
        if (const auto* st = s->as<ir::StoreNode>();
            st != nullptr && st->buffer->scope == ir::Scope::kFragment) {
          out.insert(st->buffer.get());
        }
        ir::IRVisitor::Visit(s);
      }
    } v;
    v.Visit(body);
    return v.out;
  }
};

void CollectKernels(const Stmt& s, std::vector<const ir::KernelNode*>* out) {
  if (s == nullptr) return;
  if (const auto* seq = s->as<ir::SeqNode>()) {
    for (const Stmt& c : seq->stmts) CollectKernels(c, out);
  } else if (const auto* k = s->as<ir::KernelNode>()) {
    out->push_back(k);
  }
}

}  // namespace

const ir::Program& PlannedProgram(const LayoutPlan& plan, const ir::Program& input) {
  return plan.program != nullptr ? *plan.program : input;
}

absl::StatusOr<LayoutPlan> InferLayouts(const ir::Program& input, const TargetInfo& target) {
  std::vector<std::string> unbound;
  for (const ir::TileParam& tp : input.tile_params) {
    if (!tp.value) unbound.push_back(tp.var->name);
  }
  if (!unbound.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(unbound.size() == 1 ? "tile parameter " : "tile parameters ",
                     absl::StrJoin(unbound, ", "), unbound.size() == 1 ? " is" : " are",
                     " unbound; bind ", unbound.size() == 1 ? "it" : "them", " with -D"));
  }
  if (absl::Status st = CheckThreadPrivateBuffers(input); !st.ok()) return st;
  if (absl::Status st = CheckParallelAccumulation(input); !st.ok()) return st;
  bool staged = false;
  absl::StatusOr<ir::Program> converted = StageFragmentStores(input, &staged, {});
  if (!converted.ok()) return converted.status();
  std::shared_ptr<const ir::Program> current =
      staged ? std::make_shared<const ir::Program>(*std::move(converted)) : nullptr;
  // First as written; on a layout conflict, again with conversions: a nest
  // that only reads a fragment whose layout cannot be the nest's reads a
  // staged copy of it (fragment_staging.h), and inference runs on the
  // converted program, until no conversion is left (each round converts at
  // least one access, so this ends).
  absl::Status first_error;
  for (int round = 0;; ++round) {
    LayoutPlan plan;
    plan.program = current;
    const ir::Program& program = PlannedProgram(plan, input);
    std::vector<const ir::KernelNode*> kernels;
    CollectKernels(program.body, &kernels);
    std::set<std::pair<const ir::ForNode*, const ir::BufferNode*>> conversions;
    std::set<const ir::ReduceNode*> reductions;
    absl::Status failed;
    for (size_t i = 0; i < kernels.size() && failed.ok(); ++i) {
      const ir::KernelNode& k = *kernels[i];
      std::optional<int64_t> threads = EvalInt(k.threads);
      if (!threads || *threads < 1) {
        return absl::UnimplementedError(absl::StrCat(
            "kernel ", i, ": the thread count ", ir::PrintExpr(k.threads), " is not a constant"));
      }
      if (*threads > target.max_threads_per_block) {
        return absl::InvalidArgumentError(
            absl::StrCat("kernel ", i, ": ", *threads, " threads per block is more than the ",
                         target.max_threads_per_block, " that ", target.name, " allows"));
      }
      KernelInference inference(static_cast<int>(i), *threads, target, &plan, round > 0);
      failed = inference.Run(k);
      for (const LayoutSolver::Convertible& c : inference.conversions()) {
        if (c.reduce != nullptr) {
          reductions.insert(c.reduce);
        } else {
          conversions.insert({c.nest, c.buffer});
        }
      }
    }
    if (!failed.ok()) {
      const bool conflict = absl::StrContains(failed.message(), "layout conflict");
      if (round == 0 && conflict) {
        first_error = failed;
        continue;  // again, with conversions
      }
      return first_error.ok() ? failed : first_error;
    }
    if (!conversions.empty() || !reductions.empty()) {
      if (round > 16)
        return first_error.ok() ? absl::InternalError(
                                      "compiler bug: layout conversions do not "
                                      "converge")
                                : first_error;
      bool changed = false;
      // One kind per round: each rewrite keeps the other kind's nodes, but
      // the next round finds what is left anyway.
      absl::StatusOr<ir::Program> next = !reductions.empty()
                                             ? ConvertReductions(program, reductions, &changed)
                                             : StageFragmentStores(program, &changed, conversions);
      if (!next.ok()) return first_error.ok() ? next.status() : first_error;
      if (!changed)
        return first_error.ok() ? absl::InternalError(
                                      "compiler bug: a layout conversion changed "
                                      "nothing")
                                : first_error;
      current = std::make_shared<const ir::Program>(*std::move(next));
      continue;
    }
    if (absl::Status st = CheckFragmentAccesses(program, plan); !st.ok()) return st;
    return plan;
  }
}

}  // namespace tilec::inference
