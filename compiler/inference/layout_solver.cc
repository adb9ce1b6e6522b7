#include "compiler/inference/layout_solver.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tilec::inference {
namespace {

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

}  // namespace

void LayoutSolver::Access(int node, int64_t bytes) {
  int64_t& b = nodes_[node].access_bytes;
  b = b == 0 ? bytes : std::min(b, bytes);
}

int LayoutSolver::AddFragment(const ir::Buffer& buffer, std::vector<int64_t> shape) {
  Node n;
  n.name = absl::StrCat("fragment ", buffer->name);
  n.shape = std::move(shape);
  n.buffer = buffer;
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int LayoutSolver::AddNest(const ParallelNest* nest, std::string where) {
  Node n;
  n.name = absl::StrCat("the T.Parallel nest at ", where);
  n.shape = nest->extents;
  n.nest = nest;
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

void LayoutSolver::Strict(int node, FragmentLayout layout, std::string origin) {
  strict_.push_back({node, std::move(layout), std::move(origin)});
}

void LayoutSolver::Equal(int a, int b, std::string where, std::string what, Convertible weak) {
  if (a == b) return;
  constraints_.push_back({Kind::kEqual, a, b, {}, std::move(where), std::move(what), weak, false});
}

void LayoutSolver::Project(int dst, int src, std::vector<int> dims, std::string where,
                           std::string what, Convertible weak) {
  std::sort(dims.rbegin(), dims.rend());
  constraints_.push_back(
      {Kind::kProject, dst, src, std::move(dims), std::move(where), std::move(what), weak, false});
}

void LayoutSolver::Copy(int src, int dst, std::string where) {
  if (src == dst) return;
  constraints_.push_back({Kind::kCopy, src, dst, {}, std::move(where), "T.copy", {}, false});
}

FragmentLayout LayoutSolver::ProjectAll(const FragmentLayout& l,
                                        const std::vector<int>& dims) const {
  FragmentLayout out = l;
  for (int d : dims) out = Projected(out, d);  // descending, so indices stay valid
  return out;
}

absl::Status LayoutSolver::Conflict(const Constraint& c, const Node& from,
                                    const FragmentLayout& want, const Node& actual) const {
  std::string relation = c.kind == Kind::kProject ? absl::StrCat(from.name, " projected along dim",
                                                                 c.dims.size() > 1 ? "s " : " ",
                                                                 absl::StrJoin(c.dims, ", "))
                                                  : absl::StrCat("the layout of ", from.name);
  return absl::InvalidArgumentError(absl::StrCat(
      c.where, ": layout conflict between ", from.name, " and ", actual.name, ": ", c.what,
      " requires ", actual.name, " to have ", relation, ", which is ", want.ToString(), "; ",
      from.name, " is ", from.layout->ToString(), " (", from.origin, "), but ", actual.name, " is ",
      actual.layout->ToString(), " (", actual.origin, ")"));
}

absl::StatusOr<bool> LayoutSolver::Fire(const Constraint& c) {
  Node& a = nodes_[c.a];
  Node& b = nodes_[c.b];
  switch (c.kind) {
    case Kind::kEqual:
    case Kind::kCopy: {
      if (a.layout && b.layout) {
        if (c.kind == Kind::kCopy || SameLayout(*a.layout, *b.layout)) return false;
        return Conflict(c, a, *a.layout, b);
      }
      if (!a.layout && !b.layout) return false;
      Node& from = a.layout ? a : b;
      Node& to = a.layout ? b : a;
      to.layout = *from.layout;
      to.origin = absl::StrCat("the layout of ", from.name, " through ", c.what, " at ", c.where);
      return true;
    }
    case Kind::kProject: {
      if (!b.layout) return false;  // a layout is never lifted here; see DefaultOne
      FragmentLayout p = ProjectAll(*b.layout, c.dims);
      if (a.layout) {
        if (SameLayout(p, *a.layout)) return false;
        return Conflict(c, b, p, a);
      }
      a.layout = std::move(p);
      a.origin = absl::StrCat(b.name, " projected through ", c.what, " at ", c.where);
      return true;
    }
  }
  return false;
}

absl::StatusOr<FragmentLayout> LayoutSolver::Lift(const Constraint& c) const {
  const Node& dst = nodes_[c.a];
  const Node& nest = nodes_[c.b];
  const int rank = static_cast<int>(nest.shape.size());
  std::vector<bool> removed(rank, false);
  for (int d : c.dims) removed[d] = true;
  std::vector<int> kept;  // dst dim -> nest dim
  for (int d = 0; d < rank; ++d) {
    if (!removed[d]) kept.push_back(d);
  }
  std::vector<LayoutDigit> digits, replication;
  for (LayoutDigit g : dst.layout->digits) {
    if (g.dim < 0) {
      replication.push_back(g);
      continue;
    }
    g.dim = kept[g.dim];
    digits.push_back(g);
  }
  std::sort(replication.begin(), replication.end(),
            [](const LayoutDigit& x, const LayoutDigit& y) { return x.stride < y.stride; });
  int64_t local_size = dst.layout->local_size;
  for (int d = rank - 1; d >= 0; --d) {
    if (!removed[d]) continue;
    int64_t remaining = nest.shape[d];
    std::vector<LayoutDigit> threads;
    // Replicas of dst spread the dimension over threads where they divide it.
    for (auto it = replication.begin(); it != replication.end();) {
      if (remaining % it->extent == 0) {
        remaining /= it->extent;
        LayoutDigit t = *it;
        t.dim = d;
        threads.insert(threads.begin(), t);  // larger stride, more significant
        it = replication.erase(it);
      } else {
        ++it;
      }
    }
    digits.push_back(LayoutDigit{d, remaining, false, local_size, 0});
    local_size *= remaining;
    for (const LayoutDigit& t : threads) digits.push_back(t);
  }
  for (const LayoutDigit& r : replication) digits.push_back(r);
  return MakeFragmentLayout(absl::StrCat("lifted(", dst.layout->kind, ")"), nest.shape, threads_,
                            std::move(digits));
}

bool LayoutSolver::ProjectionDecides(const Constraint& copy) const {
  const Node& a = nodes_[copy.a];
  const Node& b = nodes_[copy.b];
  if (a.layout.has_value() == b.layout.has_value()) return false;
  const int to = a.layout ? copy.b : copy.a;
  for (const Constraint& c : constraints_) {
    if (c.kind == Kind::kProject && !c.dropped && c.a == to && !nodes_[c.b].layout) return true;
  }
  return false;
}

absl::StatusOr<bool> LayoutSolver::DefaultOne() {
  // A nest whose projection is already decided takes a layout that projects
  // to it.
  for (const Constraint& c : constraints_) {
    if (c.kind != Kind::kProject || c.dropped || nodes_[c.b].layout || !nodes_[c.a].layout)
      continue;
    absl::StatusOr<FragmentLayout> lifted = Lift(c);
    if (!lifted.ok()) return lifted.status();
    nodes_[c.b].layout = *std::move(lifted);
    nodes_[c.b].origin =
        absl::StrCat("lifted from ", nodes_[c.a].name, " (", c.what, " at ", c.where, ")");
    return true;
  }
  int best = -1;
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    const Node& n = nodes_[i];
    if (n.layout) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    const Node& b = nodes_[best];
    if (n.shape.size() != b.shape.size()) {
      if (n.shape.size() > b.shape.size()) best = i;
    } else if (Elements(n.shape) > Elements(b.shape)) {
      best = i;
    }
  }
  if (best < 0) return false;
  Node& n = nodes_[best];
  if (n.nest != nullptr) {
    n.layout = DefaultNestLayout(*n.nest, threads_, target_);
  } else {
    // Runs of 16 bytes of the memory side of its copies (8 float16 into a
    // float32 fragment: one 16-byte load each, and a 256-wide row within a
    // warp), else of its own elements.
    int64_t bytes = std::max(1, ir::DTypeBits(n.buffer->dtype) / 8);
    if (n.access_bytes > 0) bytes = std::min(bytes, n.access_bytes);
    n.layout = DefaultFragmentLayout(n.shape, bytes, threads_, target_);
  }
  n.origin = "the default for what nothing constrains";
  return true;
}

absl::Status LayoutSolver::FixedPoint(bool weak_too) {
  while (true) {
    bool fired = false;
    for (const Constraint& c : constraints_) {
      if (c.kind == Kind::kCopy || c.dropped || (c.weak.active() && !weak_too)) continue;
      absl::StatusOr<bool> f = Fire(c);
      if (!f.ok()) return f.status();
      fired = fired || *f;
    }
    if (!fired) return absl::OkStatus();
  }
}

absl::Status LayoutSolver::Solve(bool convert) {
  for (StrictEntry& s : strict_) {
    Node& n = nodes_[s.node];
    if (!n.layout) {
      n.layout = std::move(s.layout);
      n.origin = std::move(s.origin);
      continue;
    }
    if (SameLayout(*n.layout, s.layout)) continue;
    return absl::InvalidArgumentError(absl::StrCat("layout conflict for ", n.name, ": ", n.origin,
                                                   " requires ", n.layout->ToString(), ", but ",
                                                   s.origin, " requires ", s.layout.ToString()));
  }
  // With conversions: what the strong constraints decide first, then each
  // weak one on its own, rolled back and converted when it conflicts.
  auto weak_step = [&]() -> absl::StatusOr<bool> {
    bool any = false;
    for (Constraint& c : constraints_) {
      if (!c.weak.active() || c.dropped) continue;
      const std::vector<Node> saved = nodes_;
      absl::StatusOr<bool> f = Fire(c);
      absl::Status st = f.ok() ? FixedPoint(false) : f.status();
      if (st.ok()) {
        any = any || *f;
        continue;
      }
      nodes_ = saved;
      c.dropped = true;
      conversions_.push_back(c.weak);
      any = true;
    }
    return any;
  };
  if (convert) {
    if (absl::Status st = FixedPoint(false); !st.ok()) return st;
  }
  while (true) {
    if (convert) {
      absl::StatusOr<bool> w = weak_step();
      if (!w.ok()) return w.status();
      if (*w) continue;
    }
    absl::Status st = FixedPoint(!convert);  // hard constraints to a fixed point
    if (!st.ok()) return st;
    bool fired = false;
    for (const Constraint& c : constraints_) {  // then one soft step
      if (c.kind != Kind::kCopy || ProjectionDecides(c)) continue;
      absl::StatusOr<bool> f = Fire(c);
      if (!f.ok()) return f.status();
      if (*f) {
        fired = true;
        break;
      }
    }
    if (fired) continue;
    absl::StatusOr<bool> chose = DefaultOne();
    if (!chose.ok()) return chose.status();
    if (!*chose) break;
  }
  for (const Constraint& c : constraints_) {  // every hard constraint holds
    if (c.dropped) continue;
    absl::StatusOr<bool> f = Fire(c);
    if (!f.ok()) return f.status();
  }
  return absl::OkStatus();
}

}  // namespace tilec::inference
