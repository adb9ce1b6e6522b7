#include "compiler/inference/layout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/inference/index_expr.h"

namespace tilec::inference {
namespace {

using ir::BinaryOp;
using ir::Expr;

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// The constructors below build digits that satisfy the invariants by
// construction; a failure is a bug in them.
FragmentLayout MustMake(std::string kind, std::vector<int64_t> shape, int64_t threads,
                        std::vector<LayoutDigit> digits) {
  absl::StatusOr<FragmentLayout> l =
      MakeFragmentLayout(std::move(kind), std::move(shape), threads, std::move(digits));
  if (!l.ok()) {
    std::fprintf(stderr, "tilec: internal error (a compiler bug): %s\n",
                 std::string(l.status().message()).c_str());
    std::abort();
  }
  return *std::move(l);
}

LayoutDigit ThreadDigit(int dim, int64_t extent, int64_t stride) {
  return LayoutDigit{dim, extent, true, stride, 0};
}
LayoutDigit LocalDigit(int dim, int64_t extent, int64_t stride) {
  return LayoutDigit{dim, extent, false, stride, 0};
}

// Checks that the digits of one index (thread or local) form a mixed-radix
// numbering; returns the size of the numbered range.
absl::StatusOr<int64_t> CheckRadix(std::vector<const LayoutDigit*> digits, const char* what) {
  std::sort(digits.begin(), digits.end(),
            [](const LayoutDigit* a, const LayoutDigit* b) { return a->stride < b->stride; });
  int64_t expected = 1;
  for (const LayoutDigit* d : digits) {
    if (d->stride != expected) {
      return absl::InternalError(absl::StrCat("fragment layout: ", what, " digit of extent ",
                                              d->extent, " has stride ", d->stride, ", expected ",
                                              expected));
    }
    expected *= d->extent;
  }
  return expected;
}

std::string DigitString(const LayoutDigit& d) {
  return absl::StrCat(d.on_thread ? "t" : "l", d.extent, "@", d.stride);
}

// Digit value of `d` in a (thread, local) slot.
int64_t SlotDigit(const LayoutDigit& d, int64_t thread, int64_t local) {
  return ((d.on_thread ? thread : local) / d.stride) % d.extent;
}

}  // namespace

absl::StatusOr<FragmentLayout> MakeFragmentLayout(std::string kind, std::vector<int64_t> shape,
                                                  int64_t threads,
                                                  std::vector<LayoutDigit> digits) {
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) return absl::InternalError("fragment layout: empty shape");
  for (int64_t s : shape) {
    if (s < 1) return absl::InternalError("fragment layout: non-positive dimension");
  }
  if (threads < 1) return absl::InternalError("fragment layout: no threads");

  FragmentLayout l;
  l.kind = std::move(kind);
  l.shape = std::move(shape);
  l.threads = threads;
  for (const LayoutDigit& d : digits) {
    if (d.dim < -1 || d.dim >= rank || d.extent < 1 || d.stride < 1) {
      return absl::InternalError(absl::StrCat("fragment layout ", l.kind, ": bad digit ",
                                              DigitString(d), " of dim ", d.dim));
    }
    if (d.on_thread == false && d.dim == -1) {
      return absl::InternalError("fragment layout: replication digit on the local index");
    }
    if (d.extent > 1) l.digits.push_back(d);
  }
  // Order: dims in order (each most significant first), replication last.
  std::stable_sort(
      l.digits.begin(), l.digits.end(), [](const LayoutDigit& a, const LayoutDigit& b) {
        auto key = [](int dim) { return dim < 0 ? std::numeric_limits<int>::max() : dim; };
        return key(a.dim) < key(b.dim);
      });
  // Places: within each dim, the product of the extents of the later digits.
  std::vector<int64_t> product(rank + 1, 1);  // last slot: replication
  for (auto it = l.digits.rbegin(); it != l.digits.rend(); ++it) {
    int slot = it->dim < 0 ? rank : it->dim;
    it->place = product[slot];
    product[slot] *= it->extent;
  }
  for (int d = 0; d < rank; ++d) {
    if (product[d] < l.shape[d]) {
      return absl::InternalError(absl::StrCat("fragment layout ", l.kind, ": dim ", d,
                                              " has digits for ", product[d], " of ", l.shape[d],
                                              " elements"));
    }
  }
  l.replicate = product[rank];
  std::vector<const LayoutDigit*> thread_digits, local_digits;
  for (const LayoutDigit& d : l.digits) (d.on_thread ? thread_digits : local_digits).push_back(&d);
  absl::StatusOr<int64_t> t = CheckRadix(thread_digits, "thread");
  if (!t.ok()) return t.status();
  if (*t != threads) {
    return absl::InternalError(absl::StrCat("fragment layout ", l.kind, ": thread digits number ",
                                            *t, " threads, not ", threads));
  }
  absl::StatusOr<int64_t> s = CheckRadix(local_digits, "local");
  if (!s.ok()) return s.status();
  l.local_size = *s;

  // Expressions.
  l.thread_var = ir::MakeVar("tx");
  l.local_var = ir::MakeVar("local");
  l.replica_var = ir::MakeVar("replica");
  IndexBuilder b;
  b.SetBound(l.thread_var, threads);
  b.SetBound(l.local_var, l.local_size);
  b.SetBound(l.replica_var, l.replicate);
  for (int d = 0; d < rank; ++d) {
    l.index_vars.push_back(ir::MakeVar(absl::StrCat("i", d)));
    b.SetBound(l.index_vars.back(), l.shape[d]);
  }
  l.logical.assign(rank, b.Const(0));
  l.local = b.Const(0);
  l.thread = b.Const(0);
  l.replica = b.Const(0);
  for (const LayoutDigit& d : l.digits) {
    const ir::Var& slot_var = d.on_thread ? l.thread_var : l.local_var;
    Expr slot_value = b.Mod(b.Div(slot_var, d.stride), d.extent);
    const ir::Var& logical_var = d.dim < 0 ? l.replica_var : l.index_vars[d.dim];
    Expr logical_value = b.Mod(b.Div(logical_var, d.place), d.extent);
    if (d.dim < 0) {
      l.replica = b.Add(l.replica, b.Mul(slot_value, d.place));
    } else {
      l.logical[d.dim] = b.Add(l.logical[d.dim], b.Mul(slot_value, d.place));
    }
    if (d.on_thread) {
      l.thread = b.Add(l.thread, b.Mul(logical_value, d.stride));
    } else {
      l.local = b.Add(l.local, b.Mul(logical_value, d.stride));
    }
  }
  for (int d = 0; d < rank; ++d) {
    if (product[d] == l.shape[d]) continue;
    Expr in_range = ir::Binary(BinaryOp::kLt, l.logical[d], b.Const(l.shape[d]));
    l.valid = l.valid == nullptr ? in_range : ir::Binary(BinaryOp::kAnd, l.valid, in_range);
  }
  return l;
}

std::vector<int64_t> FragmentLayout::LogicalAt(int64_t thread, int64_t local) const {
  std::vector<int64_t> index(shape.size(), 0);
  for (const LayoutDigit& d : digits) {
    if (d.dim >= 0) index[d.dim] += SlotDigit(d, thread, local) * d.place;
  }
  return index;
}

bool FragmentLayout::ValidAt(int64_t thread, int64_t local) const {
  std::vector<int64_t> index = LogicalAt(thread, local);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (index[d] >= shape[d]) return false;
  }
  return true;
}

int64_t FragmentLayout::LocalOf(const std::vector<int64_t>& index) const {
  int64_t local = 0;
  for (const LayoutDigit& d : digits) {
    if (!d.on_thread) local += ((index[d.dim] / d.place) % d.extent) * d.stride;
  }
  return local;
}

int64_t FragmentLayout::ThreadOf(const std::vector<int64_t>& index, int64_t replica) const {
  int64_t thread = 0;
  for (const LayoutDigit& d : digits) {
    if (!d.on_thread) continue;
    int64_t v = d.dim < 0 ? replica : index[d.dim];
    thread += ((v / d.place) % d.extent) * d.stride;
  }
  return thread;
}

int64_t FragmentLayout::ReplicaOf(int64_t thread) const {
  int64_t replica = 0;
  for (const LayoutDigit& d : digits) {
    if (d.dim < 0) replica += ((thread / d.stride) % d.extent) * d.place;
  }
  return replica;
}

int64_t FragmentLayout::ContiguousRun() const {
  const int last = static_cast<int>(shape.size()) - 1;
  for (const LayoutDigit& d : digits) {
    if (d.dim == last && !d.on_thread && d.place == 1 && d.stride == 1) return d.extent;
  }
  return 1;
}

std::string FragmentLayout::ToString() const {
  std::vector<std::string> dims;
  for (int d = -1; d < static_cast<int>(shape.size()); ++d) {
    std::vector<std::string> ds;
    for (const LayoutDigit& g : digits) {
      if (g.dim == d) ds.push_back(DigitString(g));
    }
    if (d < 0 && ds.empty()) continue;
    dims.push_back(
        absl::StrCat(d < 0 ? "rep" : absl::StrCat("d", d), "(", absl::StrJoin(ds, " "), ")"));
  }
  return absl::StrCat(kind, " [", absl::StrJoin(shape, ", "), "] threads=", threads,
                      " local=", local_size, " replicate=", replicate, " ",
                      absl::StrJoin(dims, " "));
}

bool SameLayout(const FragmentLayout& a, const FragmentLayout& b) {
  if (a.shape != b.shape || a.threads != b.threads || a.local_size != b.local_size ||
      a.replicate != b.replicate) {
    return false;
  }
  for (int64_t t = 0; t < a.threads; ++t) {
    for (int64_t l = 0; l < a.local_size; ++l) {
      bool va = a.ValidAt(t, l);
      if (va != b.ValidAt(t, l)) return false;
      if (va && a.LogicalAt(t, l) != b.LogicalAt(t, l)) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------

namespace {

// ChooseWarpPartition for tiles of gm x gn elements per warp step.
GemmWarpPartition Partition(ir::GemmPolicy policy, int64_t m, int64_t n, int64_t warps,
                            int64_t gm, int64_t gn) {
  auto divides = [&](int64_t wm, int64_t wn) { return m % (gm * wm) == 0 && n % (gn * wn) == 0; };
  // Square over the factorisations of w (only the exact ones, or all ranked
  // by padded tile size first); warps_m == 0 when there is none.
  auto square = [&](int64_t w, bool exact_only) {
    GemmWarpPartition best{0, 0, 1, exact_only};
    double best_area = 0, best_diff = 0;
    for (int64_t wm = 1; wm <= w; ++wm) {
      if (w % wm != 0) continue;
      const int64_t wn = w / wm;
      if (exact_only && !divides(wm, wn)) continue;
      double area = exact_only ? 0.0
                               : static_cast<double>(RoundUp(m, gm * wm)) *
                                     static_cast<double>(RoundUp(n, gn * wn));
      double diff = std::fabs(static_cast<double>(m) / wm - static_cast<double>(n) / wn);
      // wm grows, so replacing on a tie gives ties to the larger warps_m.
      if (best.warps_m == 0 || area < best_area || (area == best_area && diff <= best_diff)) {
        best.warps_m = wm;
        best.warps_n = wn;
        best_area = area;
        best_diff = diff;
      }
    }
    return best;
  };
  for (int64_t w = warps; w >= 1; --w) {
    if (warps % w != 0) continue;
    const int64_t replicas = warps / w;
    if (policy == ir::GemmPolicy::kFullRow && divides(w, 1)) return {w, 1, replicas, true};
    if (policy == ir::GemmPolicy::kFullCol && divides(1, w)) return {1, w, replicas, true};
    GemmWarpPartition p = square(w, /*exact_only=*/true);
    if (p.warps_m != 0) {
      p.replicas = replicas;
      return p;
    }
  }
  if (policy == ir::GemmPolicy::kFullRow && m % (gm * warps) == 0) return {warps, 1, 1, false};
  if (policy == ir::GemmPolicy::kFullCol && n % (gn * warps) == 0) return {1, warps, 1, false};
  return square(warps, /*exact_only=*/false);
}

}  // namespace

GemmWarpPartition ChooseWarpPartition(ir::GemmPolicy policy, int64_t m, int64_t n, int64_t warps) {
  return Partition(policy, m, n, warps, 16, 8);
}

GemmWarpPartition ChooseMfmaPartition(ir::GemmPolicy policy, int64_t m, int64_t n, int64_t waves) {
  GemmWarpPartition big = Partition(policy, m, n, waves, 32, 32);
  GemmWarpPartition small = Partition(policy, m, n, waves, 16, 16);
  const bool use_big = big.exact && big.replicas <= small.replicas;
  GemmWarpPartition p = use_big ? big : small;
  p.mfma = use_big ? 32 : 16;
  return p;
}

std::optional<GemmWarpPartition> ChooseWgmmaPartition(int64_t m, int64_t n, int64_t warps,
                                                      int64_t n_align, bool one_tile) {
  if (warps < 4 || warps % 4 != 0) return std::nullopt;
  const int64_t groups = warps / 4;
  for (int64_t g = groups; g >= 1; --g) {
    if (groups % g != 0) continue;
    for (int64_t wg_m = g; wg_m >= 1; --wg_m) {
      if (g % wg_m != 0) continue;
      const int64_t wg_n = g / wg_m;
      if (m % (64 * wg_m) != 0 || n % (8 * wg_n) != 0 || n / wg_n > 256) continue;
      if (one_tile && m != 64 * wg_m) continue;
      if (wg_n > 1 && (n / wg_n) % n_align != 0) continue;
      GemmWarpPartition p;
      p.warps_m = 4 * wg_m;
      p.warps_n = wg_n;
      p.replicas = groups / g;
      p.wgmma = true;
      return p;
    }
  }
  return std::nullopt;
}

namespace {

std::string PartitionName(const char* what, const GemmWarpPartition& p) {
  return absl::StrCat(what, "(waves=", p.warps_m, "x", p.warps_n,
                      p.replicas > 1 ? absl::StrCat("x", p.replicas) : "", ", mfma", p.mfma, ")");
}

// The MFMA D registers of an [M, N] output (layout.h, MmaAccumulator).
FragmentLayout MfmaAccumulator(int64_t m, int64_t n, const GemmWarpPartition& p) {
  const int64_t t = p.mfma;
  const int64_t wm_tile = RoundUp(m, t * p.warps_m) / p.warps_m;
  const int64_t wn_tile = RoundUp(n, t * p.warps_n) / p.warps_n;
  const int64_t mi = wm_tile / t, ni = wn_tile / t;
  // gemm_mfma.h computes C^T = B^T A^T (B as the instruction's A operand),
  // so that the D registers of a lane run along a row of C.
  std::vector<LayoutDigit> digits;
  if (t == 32) {
    // row = wm * WM + mi * 32 + lane % 32
    digits = {ThreadDigit(0, p.warps_m, 64), LocalDigit(0, mi, 16 * ni), ThreadDigit(0, 32, 1),
              // col = wn * WN + ni * 32 + 8 * (r / 4) + 4 * (lane / 32) + r % 4
              ThreadDigit(1, p.warps_n, 64 * p.warps_m), LocalDigit(1, ni, 16), LocalDigit(1, 4, 4),
              ThreadDigit(1, 2, 32), LocalDigit(1, 4, 1)};
  } else {
    // row = wm * WM + mi * 16 + lane % 16
    digits = {ThreadDigit(0, p.warps_m, 64), LocalDigit(0, mi, 4 * ni), ThreadDigit(0, 16, 1),
              // col = wn * WN + ni * 16 + 4 * (lane / 16) + r
              ThreadDigit(1, p.warps_n, 64 * p.warps_m), LocalDigit(1, ni, 4),
              ThreadDigit(1, 4, 16), LocalDigit(1, 4, 1)};
  }
  digits.push_back(ThreadDigit(-1, p.replicas, 64 * p.warps_m * p.warps_n));
  return MustMake(PartitionName("mfma_accumulator", p), {m, n},
                  64 * p.warps_m * p.warps_n * p.replicas, std::move(digits));
}

// The MFMA A operand of an [M, K] tile (layout.h, RegisterA).
FragmentLayout MfmaRegisterA(int64_t m, int64_t k, const GemmWarpPartition& p, bool transposed) {
  const int64_t t = p.mfma, kstep = t == 32 ? 8 : 16;
  const int64_t wm_tile = RoundUp(m, t * p.warps_m) / p.warps_m;
  const int64_t mi = wm_tile / t, ki = RoundUp(k, kstep) / kstep;
  const int row = transposed ? 1 : 0, col = transposed ? 0 : 1;
  std::vector<LayoutDigit> digits = {
      // row = wm * WM + mi * T + lane % T
      ThreadDigit(row, p.warps_m, 64), LocalDigit(row, mi, 4 * ki), ThreadDigit(row, t, 1),
      // k = kk * kstep + 4 * (lane / T) + j
      LocalDigit(col, ki, 4), ThreadDigit(col, 64 / t, t), LocalDigit(col, 4, 1),
      // every wave column (and every replica group) holds the same A
      ThreadDigit(-1, p.warps_n * p.replicas, 64 * p.warps_m)};
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  return MustMake(PartitionName(transposed ? "mfma_a_transposed" : "mfma_a", p), std::move(shape),
                  64 * p.warps_m * p.warps_n * p.replicas, std::move(digits));
}

}  // namespace

FragmentLayout MmaAccumulator(int64_t m, int64_t n, const GemmWarpPartition& p) {
  if (p.mfma != 0) return MfmaAccumulator(m, n, p);
  if (p.wgmma) {
    const int64_t wg_m = p.warps_m / 4, wg_n = p.warps_n;
    const int64_t mi = m / wg_m / 64, ni = n / wg_n / 8;
    std::vector<LayoutDigit> digits = {
        // row = wgm * WGM + mi * 64 + (w % 4) * 16 + h * 8 + g
        ThreadDigit(0, wg_m, 128), LocalDigit(0, mi, 4 * ni), ThreadDigit(0, 4, 32),
        LocalDigit(0, 2, 2), ThreadDigit(0, 8, 4),
        // col = wgn * WGN + ni * 8 + 2 * q + e
        ThreadDigit(1, wg_n, 128 * wg_m), LocalDigit(1, ni, 4), ThreadDigit(1, 4, 1),
        LocalDigit(1, 2, 1),
        // warpgroups computing the same tile
        ThreadDigit(-1, p.replicas, 128 * wg_m * wg_n)};
    return MustMake(absl::StrCat("wgmma_accumulator(warpgroups=", wg_m, "x", wg_n,
                                 p.replicas > 1 ? absl::StrCat("x", p.replicas) : "", ")"),
                    {m, n}, 32 * p.warps_m * p.warps_n * p.replicas, std::move(digits));
  }
  const int64_t wm_tile = RoundUp(m, 16 * p.warps_m) / p.warps_m;
  const int64_t wn_tile = RoundUp(n, 8 * p.warps_n) / p.warps_n;
  const int64_t mi = wm_tile / 16, ni = wn_tile / 8;
  std::vector<LayoutDigit> digits = {// row = wm * WM + mi * 16 + h * 8 + g
                                     ThreadDigit(0, p.warps_m, 32), LocalDigit(0, mi, 4 * ni),
                                     LocalDigit(0, 2, 2), ThreadDigit(0, 8, 4),
                                     // col = wn * WN + ni * 8 + 2 * q + e
                                     ThreadDigit(1, p.warps_n, 32 * p.warps_m),
                                     LocalDigit(1, ni, 4), ThreadDigit(1, 4, 1),
                                     LocalDigit(1, 2, 1),
                                     // warp groups computing the same tile
                                     ThreadDigit(-1, p.replicas, 32 * p.warps_m * p.warps_n)};
  return MustMake(absl::StrCat("mma_accumulator(warps=", p.warps_m, "x", p.warps_n,
                               p.replicas > 1 ? absl::StrCat("x", p.replicas) : "", ")"),
                  {m, n}, 32 * p.warps_m * p.warps_n * p.replicas, std::move(digits));
}

FragmentLayout RegisterA(int64_t m, int64_t k, const GemmWarpPartition& p, bool transposed) {
  if (p.mfma != 0) return MfmaRegisterA(m, k, p, transposed);
  const int64_t wm_tile = RoundUp(m, 16 * p.warps_m) / p.warps_m;
  const int64_t mi = wm_tile / 16, ki = RoundUp(k, 8) / 8;
  const int row = transposed ? 1 : 0, col = transposed ? 0 : 1;
  std::vector<LayoutDigit> digits = {
      // row = wm * WM + mi * 16 + h * 8 + g
      ThreadDigit(row, p.warps_m, 32), LocalDigit(row, mi, 4 * ki), LocalDigit(row, 2, 2),
      ThreadDigit(row, 8, 4),
      // k = kk * 8 + 2 * q + e
      LocalDigit(col, ki, 4), ThreadDigit(col, 4, 1), LocalDigit(col, 2, 1),
      // every warp_n column of warps (and every replica group) holds the same A
      ThreadDigit(-1, p.warps_n * p.replicas, 32 * p.warps_m)};
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  return MustMake(absl::StrCat("register_a(warps=", p.warps_m, "x", p.warps_n,
                               p.replicas > 1 ? absl::StrCat("x", p.replicas) : "",
                               transposed ? ", transposed)" : ")"),
                  std::move(shape), 32 * p.warps_m * p.warps_n * p.replicas, std::move(digits));
}

FragmentLayout Blocked(const std::vector<int64_t>& shape, int64_t threads, int64_t vector) {
  const int rank = static_cast<int>(shape.size());
  if (vector < 1 || shape.back() % vector != 0) vector = 1;
  std::vector<LayoutDigit> digits;
  int64_t thread_stride = 1, local_stride = 1;
  int64_t remaining = threads;
  digits.push_back(LocalDigit(rank - 1, vector, local_stride));  // least significant of last dim
  local_stride *= vector;
  std::vector<std::vector<LayoutDigit>> per_dim(rank);
  for (int d = rank - 1; d >= 0; --d) {
    int64_t extent = d == rank - 1 ? shape[d] / vector : shape[d];
    int64_t t = 1;
    for (int64_t c = std::min(remaining, extent); c >= 1; --c) {
      if (remaining % c == 0) {
        t = c;
        break;
      }
    }
    int64_t outer = (extent + t - 1) / t;
    per_dim[d].push_back(LocalDigit(d, outer, local_stride));
    per_dim[d].push_back(ThreadDigit(d, t, thread_stride));
    local_stride *= outer;
    thread_stride *= t;
    remaining /= t;
  }
  // Digits per dim, most significant first; the vector digit last in its dim.
  std::vector<LayoutDigit> ordered;
  for (int d = 0; d < rank; ++d) {
    for (const LayoutDigit& g : per_dim[d]) ordered.push_back(g);
    if (d == rank - 1) ordered.push_back(digits[0]);
  }
  ordered.push_back(ThreadDigit(-1, remaining, thread_stride));
  return MustMake(absl::StrCat("blocked(vector=", vector, ")"), shape, threads, std::move(ordered));
}

FragmentLayout Replicated(const std::vector<int64_t>& shape, int64_t threads) {
  std::vector<LayoutDigit> digits;
  int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    digits.insert(digits.begin(), LocalDigit(d, shape[d], stride));
    stride *= shape[d];
  }
  digits.push_back(ThreadDigit(-1, threads, 1));
  return MustMake("replicated", shape, threads, std::move(digits));
}

FragmentLayout Projected(const FragmentLayout& parent, int dim) {
  std::vector<int64_t> shape = parent.shape;
  shape.erase(shape.begin() + dim);
  if (shape.empty()) shape.push_back(1);
  std::vector<LayoutDigit> digits;
  std::vector<LayoutDigit> new_replication;
  for (LayoutDigit d : parent.digits) {
    if (d.dim == dim) {
      if (d.on_thread) new_replication.push_back(ThreadDigit(-1, d.extent, d.stride));
      continue;  // local digits of the reduced dim are summed away
    }
    if (d.dim > dim) --d.dim;
    digits.push_back(d);
  }
  for (const LayoutDigit& d : new_replication) digits.push_back(d);
  // Renumber the local slots that remain, keeping their order.
  std::vector<LayoutDigit*> locals;
  for (LayoutDigit& d : digits) {
    if (!d.on_thread) locals.push_back(&d);
  }
  std::sort(locals.begin(), locals.end(),
            [](const LayoutDigit* a, const LayoutDigit* b) { return a->stride < b->stride; });
  int64_t stride = 1;
  for (LayoutDigit* d : locals) {
    d->stride = stride;
    stride *= d->extent;
  }
  return MustMake(absl::StrCat("projected(dim=", dim, ", ", parent.kind, ")"), std::move(shape),
                  parent.threads, std::move(digits));
}

// ---------------------------------------------------------------------------

bool CanSwizzle(int64_t cols, int64_t elem_bytes) {
  if (elem_bytes < 1 || 16 % elem_bytes != 0) return false;
  int64_t rb = cols * elem_bytes;
  return rb == 32 || rb == 64 || (rb >= 128 && rb % 128 == 0);
}

namespace {

SharedLayout MakeShared(SharedLayout::Kind kind, const std::vector<int64_t>& shape,
                        int64_t elem_bytes) {
  SharedLayout s;
  s.kind = kind;
  s.shape = shape;
  s.elem_bytes = elem_bytes;
  s.cols = shape.back();
  s.tile_rows = shape.size() >= 2 ? std::max<int64_t>(shape[shape.size() - 2], 1) : 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) s.rows *= shape[d];
  return s;
}

}  // namespace

SharedLayout RowMajorLayout(const std::vector<int64_t>& shape, int64_t elem_bytes) {
  return MakeShared(SharedLayout::Kind::kRowMajor, shape, elem_bytes);
}

SharedLayout SwizzledLayout(const std::vector<int64_t>& shape, int64_t elem_bytes) {
  return MakeShared(SharedLayout::Kind::kSwizzled, shape, elem_bytes);
}

int64_t SharedLayout::Offset(int64_t r, int64_t c) const {
  if (kind == Kind::kRowMajor) return r * cols + c;
  const int64_t per_chunk = 16 / elem_bytes;
  const int64_t rb = cols * elem_bytes;
  const int64_t k = c / per_chunk, e = c % per_chunk;
  if (rb > 128) {
    const int64_t t = r / tile_rows, i = r % tile_rows;
    const int64_t bytes =
        t * tile_rows * rb + (k / 8) * tile_rows * 128 + i * 128 + ((k % 8) ^ (i % 8)) * 16;
    return bytes / elem_bytes + e;
  }
  const int64_t swizzled = k ^ ((r / (128 / rb)) % (rb / 16));
  return r * cols + swizzled * per_chunk + e;
}

ir::Expr SharedLayout::OffsetExpr(const ir::Expr& r, const ir::Expr& c) const {
  IndexBuilder b;
  if (kind == Kind::kRowMajor) return b.Add(b.Mul(r, cols), c);
  const int64_t per_chunk = 16 / elem_bytes;
  const int64_t rb = cols * elem_bytes;
  Expr k = b.Div(c, per_chunk);
  if (rb > 128) {
    // t * TR * C + (k / 8) * TR * (128 / E) + i * (128 / E) + ((k % 8) ^ (i % 8)) * (16 / E) + e
    Expr i = b.Mod(r, tile_rows);
    Expr chunk = ir::Binary(BinaryOp::kBitXor, b.Mod(k, 8), b.Mod(i, 8));
    Expr out = b.Mul(b.Div(r, tile_rows), tile_rows * cols);
    out = b.Add(out, b.Mul(b.Div(k, 8), tile_rows * 128 / elem_bytes));
    out = b.Add(out, b.Mul(i, 128 / elem_bytes));
    out = b.Add(out, b.Mul(chunk, per_chunk));
    return b.Add(out, b.Mod(c, per_chunk));
  }
  Expr mask = b.Mod(b.Div(r, 128 / rb), rb / 16);
  Expr swizzled = ir::Binary(BinaryOp::kBitXor, k, mask);
  return b.Add(b.Add(b.Mul(r, cols), b.Mul(swizzled, per_chunk)), b.Mod(c, per_chunk));
}

ir::Expr SharedLayout::IndexExpr(const std::vector<ir::Expr>& indices) const {
  IndexBuilder b;
  Expr r = b.Const(0);
  for (size_t d = 0; d + 1 < indices.size(); ++d) r = b.Add(b.Mul(r, shape[d]), indices[d]);
  return OffsetExpr(r, indices.back());
}

std::string SharedLayout::ToString() const {
  return absl::StrCat(kind == Kind::kRowMajor ? "row_major" : "swizzled", "[",
                      absl::StrJoin(shape, ", "), "] x", elem_bytes, "B");
}

}  // namespace tilec::inference
