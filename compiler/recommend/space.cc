#include "compiler/recommend/space.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/visitor.h"

namespace tilec::recommend {
namespace {

constexpr int64_t kMaxSize = 256;  // largest default tile size

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// What the program says about each unbound tile parameter.
struct ParamFacts {
  bool threads = false;
  bool stages = false;
  bool gemm = false;    // sizes a T.gemm operand
  int64_t divisor = 1;  // required multiple (lcm of requirements)
  std::string divisor_reason;
  int64_t cap = 0;  // next pow2 of the global dims it tiles; 0 = none
  std::optional<int64_t> fixed;
  std::string fixed_reason;
};

class FactCollector : public ir::IRVisitor {
 public:
  explicit FactCollector(const ir::Program& program) {
    for (size_t i = 0; i < program.tile_params.size(); ++i) {
      const ir::TileParam& tp = program.tile_params[i];
      if (tp.value || !tp.var) continue;
      index_[tp.var.get()] = static_cast<int>(i);
    }
    facts_.resize(program.tile_params.size());
    parent_.assign(program.tile_params.size(), 0);
    std::iota(parent_.begin(), parent_.end(), 0);
  }

  absl::Status status() const { return status_; }
  std::vector<ParamFacts>& facts() { return facts_; }
  int Find(int i) { return parent_[i] == i ? i : parent_[i] = Find(parent_[i]); }
  std::map<int, std::string>& tie_reasons() { return tie_reasons_; }

  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    switch (s->kind) {
      case ir::StmtKind::kKernel: {
        if (int p = ParamOf(s->as<ir::KernelNode>()->threads); p >= 0) {
          facts_[p].threads = true;
        }
        break;
      }
      case ir::StmtKind::kFor: {
        const auto* f = s->as<ir::ForNode>();
        if (f->kind == ir::ForKind::kPipelined) {
          if (int p = ParamOf(f->num_stages); p >= 0) facts_[p].stages = true;
        }
        break;
      }
      case ir::StmtKind::kCopy: {
        const auto* c = s->as<ir::CopyNode>();
        EquateExtents(c->src.extents, c->dst.extents, "T.copy extents");
        Cap(c->src);
        Cap(c->dst);
        break;
      }
      case ir::StmtKind::kAtomicAdd: {
        const auto* a = s->as<ir::AtomicAddNode>();
        if (a->src) EquateExtents(a->src->extents, a->dst.extents, "T.atomic_add extents");
        break;
      }
      case ir::StmtKind::kGemm: Gemm(*s->as<ir::GemmNode>()); break;
      case ir::StmtKind::kReduce: {
        const auto* r = s->as<ir::ReduceNode>();
        if (r->src->shape.size() >= 2 && r->dst->shape.size() + 1 == r->src->shape.size()) {
          for (size_t d = 0, o = 0; d < r->src->shape.size(); ++d) {
            if (static_cast<int>(d) == r->dim) continue;
            Equate(r->src->shape[d], r->dst->shape[o++],
                   absl::StrCat("reduce ", r->src->name, " -> ", r->dst->name));
          }
        }
        break;
      }
      case ir::StmtKind::kCumsum: {
        const auto* c = s->as<ir::CumsumNode>();
        if (c->src->shape.size() == c->dst->shape.size()) {
          for (size_t d = 0; d < c->src->shape.size(); ++d) {
            Equate(c->src->shape[d], c->dst->shape[d],
                   absl::StrCat("cumsum ", c->src->name, " -> ", c->dst->name));
          }
        }
        break;
      }
      default: break;
    }
    IRVisitor::Visit(s);
  }

 private:
  // The parameter index when `e` is exactly an unbound tile parameter.
  int ParamOf(const ir::Expr& e) const {
    if (!e) return -1;
    const auto* v = e->as<ir::VarNode>();
    if (!v) return -1;
    auto it = index_.find(v);
    return it == index_.end() ? -1 : it->second;
  }

  // `e` as coeff * param (param -1 for a constant coeff).
  bool Linear(const ir::Expr& e, int64_t* coeff, int* param) const {
    if (auto c = ir::AsConstInt(e)) {
      *coeff = *c;
      *param = -1;
      return true;
    }
    if (int p = ParamOf(e); p >= 0) {
      *coeff = 1;
      *param = p;
      return true;
    }
    if (const auto* b = e->as<ir::BinaryNode>(); b && b->op == ir::BinaryOp::kMul) {
      auto ca = ir::AsConstInt(b->a), cb = ir::AsConstInt(b->b);
      int pa = ParamOf(b->a), pb = ParamOf(b->b);
      if (ca && pb >= 0) {
        *coeff = *ca;
        *param = pb;
        return true;
      }
      if (cb && pa >= 0) {
        *coeff = *cb;
        *param = pa;
        return true;
      }
    }
    return false;
  }

  void Fix(int p, int64_t value, const std::string& reason) {
    ParamFacts& f = facts_[p];
    if (f.fixed && *f.fixed != value) {
      if (status_.ok()) {
        status_ = absl::InvalidArgumentError(absl::StrCat("tile parameter ", NameOf(p), " must be ",
                                                          *f.fixed, " (", f.fixed_reason, ") and ",
                                                          value, " (", reason, ")"));
      }
      return;
    }
    f.fixed = value;
    f.fixed_reason = reason;
  }

  std::string NameOf(int p) const {
    for (const auto& [v, i] : index_) {
      if (i == p) return v->name;
    }
    return "?";
  }

  void Equate(const ir::Expr& a, const ir::Expr& b, const std::string& where) {
    int64_t ca = 0, cb = 0;
    int pa = -1, pb = -1;
    if (!Linear(a, &ca, &pa) || !Linear(b, &cb, &pb)) return;
    if (pa < 0 && pb < 0) return;
    if (pa >= 0 && pb >= 0) {
      if (ca != 1 || cb != 1) return;
      int ra = Find(pa), rb = Find(pb);
      if (ra == rb) return;
      // The later parameter follows the earlier one.
      if (ra > rb) std::swap(ra, rb);
      parent_[rb] = ra;
      tie_reasons_[rb] = where;
      return;
    }
    if (pa < 0) {
      std::swap(ca, cb);
      std::swap(pa, pb);
    }
    // ca * param == cb
    if (ca <= 0 || cb % ca != 0 || cb / ca < 1) {
      if (status_.ok()) {
        status_ = absl::InvalidArgumentError(
            absl::StrCat(where, ": ", ca, " * ", NameOf(pa), " == ", cb, " has no solution >= 1"));
      }
      return;
    }
    Fix(pa, cb / ca, absl::StrCat(where, ": ", NameOf(pa), " == ", cb / ca));
  }

  static std::vector<ir::Expr> DropOnes(const std::vector<ir::Expr>& es) {
    std::vector<ir::Expr> out;
    for (const ir::Expr& e : es) {
      if (ir::AsConstInt(e) != 1) out.push_back(e);
    }
    return out;
  }

  void EquateExtents(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b,
                     const std::string& where) {
    std::vector<ir::Expr> x = DropOnes(a), y = DropOnes(b);
    if (x.size() != y.size()) return;
    for (size_t i = 0; i < x.size(); ++i) Equate(x[i], y[i], where);
  }

  void Cap(const ir::Region& r) {
    if (r.buffer->scope != ir::Scope::kGlobal) return;
    for (size_t d = 0; d < r.extents.size() && d < r.buffer->shape.size(); ++d) {
      int p = ParamOf(r.extents[d]);
      auto dim = ir::AsConstInt(r.buffer->shape[d]);
      if (p < 0 || !dim) continue;
      facts_[p].cap = std::max(facts_[p].cap, NextPow2(*dim));
    }
  }

  void Require(const ir::Expr& e, int64_t divisor, const std::string& why) {
    int p = ParamOf(e);
    if (p < 0) return;
    ParamFacts& f = facts_[p];
    f.gemm = true;
    if (f.divisor % divisor != 0) {
      f.divisor = std::lcm(f.divisor, divisor);
      f.divisor_reason = why;
    }
  }

  void Gemm(const ir::GemmNode& g) {
    auto last2 = [](const ir::Region& r) -> std::optional<std::pair<ir::Expr, ir::Expr>> {
      std::vector<ir::Expr> x = DropOnes(r.extents);
      if (r.extents.size() < 2) return std::nullopt;
      if (x.size() < 2) x = {r.extents[r.extents.size() - 2], r.extents.back()};
      return std::make_pair(x[x.size() - 2], x.back());
    };
    auto a = last2(g.a), b = last2(g.b), c = last2(g.c);
    if (!a || !b || !c) return;
    ir::Expr am = g.transpose_a ? a->second : a->first, ak = g.transpose_a ? a->first : a->second;
    ir::Expr bk = g.transpose_b ? b->second : b->first, bn = g.transpose_b ? b->first : b->second;
    Equate(am, c->first, "T.gemm M");
    Equate(bn, c->second, "T.gemm N");
    Equate(ak, bk, "T.gemm K");
    for (const ir::Buffer& buf : {g.a.buffer, g.b.buffer, g.c.buffer}) {
      for (const ir::Expr& d : buf->shape) {
        if (int p = ParamOf(d); p >= 0) facts_[p].gemm = true;
      }
    }
    Require(c->first, 16, "T.gemm M is a multiple of 16 (m16n8k16)");
    Require(c->second, 8, "T.gemm N is a multiple of 8 (m16n8k16)");
    Require(ak, 16, "T.gemm K is a multiple of 16 (m16n8k16)");
  }

  std::map<const ir::VarNode*, int> index_;
  std::vector<ParamFacts> facts_;
  std::vector<int> parent_;
  std::map<int, std::string> tie_reasons_;
  absl::Status status_;
};

std::vector<int64_t> PowersOfTwo(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t v = NextPow2(lo); v <= hi; v *= 2) out.push_back(v);
  return out;
}

}  // namespace

std::string_view ParamRoleName(ParamRole role) {
  switch (role) {
    case ParamRole::kThreads: return "threads";
    case ParamRole::kStages: return "num_stages";
    case ParamRole::kSize: return "size";
  }
  return "?";
}

int64_t SearchSpace::Size() const {
  int64_t n = 1;
  for (const SearchedParam& p : searched) n *= static_cast<int64_t>(p.values.size());
  return n;
}

absl::Status SearchSpace::CheckSize(int64_t max_configs) const {
  int64_t n = 1;
  bool over = false;
  for (const SearchedParam& p : searched) {
    const int64_t k = static_cast<int64_t>(p.values.size());
    if (k != 0 && n > max_configs / k) {
      over = true;  // also stops the product before it overflows
      break;
    }
    n *= k;
  }
  if (!over && n <= max_configs) return absl::OkStatus();
  std::vector<std::string> counts;
  for (const SearchedParam& p : searched) {
    counts.push_back(absl::StrCat(p.name, " ", p.values.size()));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the search space is too large: the product of the candidate counts (",
                   absl::StrJoin(counts, " x "), ") is over the limit of ", max_configs,
                   " configs; bind some tile parameters or declare fewer candidates"));
}

Config SearchSpace::At(int64_t i) const {
  Config c;
  for (auto it = searched.rbegin(); it != searched.rend(); ++it) {
    const int64_t n = static_cast<int64_t>(it->values.size());
    c[it->name] = it->values[i % n];
    i /= n;
  }
  for (const DeducedParam& d : deduced) c[d.name] = d.value ? *d.value : c.at(d.equals);
  return c;
}

absl::StatusOr<SearchSpace> BuildSearchSpace(const ir::Program& program,
                                             const HardwareProfile& profile) {
  FactCollector facts(program);
  facts.VisitProgram(program);
  if (!facts.status().ok()) return facts.status();
  const auto& tps = program.tile_params;
  const int n = static_cast<int>(tps.size());
  // Merge the facts of tied parameters into their class root.
  std::vector<ParamFacts>& f = facts.facts();
  for (int i = 0; i < n; ++i) {
    if (tps[i].value || !tps[i].var) continue;
    int r = facts.Find(i);
    if (r == i) continue;
    ParamFacts& root = f[r];
    root.threads |= f[i].threads;
    root.stages |= f[i].stages;
    root.gemm |= f[i].gemm;
    if (f[i].divisor > 1 && root.divisor % f[i].divisor != 0) {
      root.divisor = std::lcm(root.divisor, f[i].divisor);
      root.divisor_reason = f[i].divisor_reason;
    }
    if (f[i].cap > 0) root.cap = root.cap > 0 ? std::min(root.cap, f[i].cap) : f[i].cap;
    if (f[i].fixed) {
      if (root.fixed && *root.fixed != *f[i].fixed) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tile parameters ", tps[r].var->name, " and ", tps[i].var->name, " must be equal (",
            facts.tie_reasons()[i], ") but are ", *root.fixed, " (", root.fixed_reason, ") and ",
            *f[i].fixed, " (", f[i].fixed_reason, ")"));
      }
      root.fixed = f[i].fixed;
      root.fixed_reason = f[i].fixed_reason;
    }
  }
  SearchSpace space;
  for (int i = 0; i < n; ++i) {
    const ir::TileParam& tp = tps[i];
    if (tp.value || !tp.var) continue;
    const std::string& name = tp.var->name;
    int r = facts.Find(i);
    if (r != i) {
      DeducedParam d{name, std::nullopt, tps[r].var->name,
                     absl::StrCat(facts.tie_reasons()[i], ": ", name, " == ", tps[r].var->name)};
      if (f[r].fixed) {
        d.value = f[r].fixed;
        d.equals.clear();
        d.reason = f[r].fixed_reason;
      }
      space.deduced.push_back(std::move(d));
      continue;
    }
    const ParamFacts& pf = f[i];
    if (pf.fixed) {
      space.deduced.push_back({name, pf.fixed, "", pf.fixed_reason});
      continue;
    }
    SearchedParam sp;
    sp.name = name;
    sp.role = pf.threads ? ParamRole::kThreads : pf.stages ? ParamRole::kStages : ParamRole::kSize;
    int64_t divisor = pf.divisor;
    std::string divisor_reason = pf.divisor_reason;
    if (sp.role == ParamRole::kThreads) {
      divisor = profile.warp_size();
      divisor_reason = absl::StrCat("threads are whole warps of ", profile.warp_size());
    }
    if (!tp.candidates.empty()) {
      std::set<int64_t> cands(tp.candidates.begin(), tp.candidates.end());
      for (int64_t v : cands) {
        if (v >= 1 && v % divisor == 0) sp.values.push_back(v);
      }
      sp.origin = "declared candidates";
      if (sp.values.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("no declared candidate of tile parameter ",
                                                       name, " is valid: ", divisor_reason));
      }
      if (sp.values.size() == 1 && cands.size() > 1) {
        space.deduced.push_back(
            {name, sp.values[0], "",
             absl::StrCat("the only declared candidate where ", divisor_reason)});
        continue;
      }
    } else if (sp.role == ParamRole::kThreads) {
      sp.values = PowersOfTwo(profile.warp_size(), profile.max_threads_per_block());
      sp.origin = absl::StrCat("powers of two in [", profile.warp_size(), ", ",
                               profile.max_threads_per_block(), "]");
    } else if (sp.role == ParamRole::kStages) {
      for (int64_t s = 1; s <= profile.max_pipeline_stages(); ++s) sp.values.push_back(s);
      sp.origin = absl::StrCat("1 to ", profile.max_pipeline_stages(), " stages");
    } else {
      int64_t lo = pf.gemm ? 16 : 1, hi = kMaxSize;
      if (pf.cap > 0) hi = std::max(lo, std::min(hi, pf.cap));
      for (int64_t v : PowersOfTwo(lo, hi)) {
        if (v % divisor == 0) sp.values.push_back(v);
      }
      sp.origin = absl::StrCat("powers of two in [", lo, ", ", hi, "]");
      if (sp.values.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("no power of two in [", lo, ", ", hi,
                                                       "] suits tile parameter ", name, ": ",
                                                       divisor_reason));
      }
    }
    space.searched.push_back(std::move(sp));
  }
  // A tie to a parameter that was itself deduced to a value takes the value.
  for (DeducedParam& d : space.deduced) {
    if (d.value) continue;
    for (const DeducedParam& o : space.deduced) {
      if (o.name == d.equals && o.value) d.value = o.value;
    }
    if (d.value) d.equals.clear();
  }
  return space;
}

}  // namespace tilec::recommend
