#include "compiler/inference/wgmma_plan.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

#include "compiler/inference/index_expr.h"
#include "compiler/ir/visitor.h"

namespace tilec::inference {
namespace {

using ir::DType;

// NVIDIA's float8 (e4m3, e5m2), which wgmma takes.
bool IsOcpFloat8(DType t) { return t == DType::kFloat8E4M3 || t == DType::kFloat8E5M2; }

// The [rows, cols] matrix a gemm operand region reads: the whole 2-D buffer,
// or one matrix X[b, :, :] of a higher-rank one whose matrices have 8k rows
// (so that each starts an 8-row swizzle period). nullopt otherwise.
struct Matrix {
  int64_t rows = 0, cols = 0, elem_bytes = 0;
};
std::optional<Matrix> OperandMatrix(const ir::Region& r) {
  const ir::Buffer& b = r.buffer;
  const size_t n = b->shape.size();
  if (b->scope != ir::Scope::kShared || n < 2 || r.mins.size() != n || r.extents.size() != n) {
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  for (const ir::Expr& e : b->shape) {
    std::optional<int64_t> v = EvalInt(e);
    if (!v) return std::nullopt;
    shape.push_back(*v);
  }
  for (size_t d = 0; d < n; ++d) {
    std::optional<int64_t> ext = EvalInt(r.extents[d]);
    if (d + 2 < n) {
      if (ext != 1) return std::nullopt;
      continue;
    }
    std::optional<int64_t> lo = EvalInt(r.mins[d]);
    if (lo != 0 || ext != shape[d]) return std::nullopt;
  }
  Matrix m{shape[n - 2], shape[n - 1], ir::DTypeBits(b->dtype) / 8};
  if (n > 2 && m.rows % 8 != 0) return std::nullopt;
  if (m.elem_bytes < 1 || !CanSwizzle(m.cols, m.elem_bytes)) return std::nullopt;
  return m;
}

// The [rows, cols] of a whole 2-D fragment operand, or nullopt.
std::optional<Matrix> FragmentMatrix(const ir::Region& r) {
  const ir::Buffer& b = r.buffer;
  if (b->shape.size() != 2 || r.mins.size() != 2 || r.extents.size() != 2) return std::nullopt;
  Matrix m{0, 0, ir::DTypeBits(b->dtype) / 8};
  for (size_t d = 0; d < 2; ++d) {
    std::optional<int64_t> n = EvalInt(b->shape[d]);
    if (!n || EvalInt(r.mins[d]) != 0 || EvalInt(r.extents[d]) != *n) return std::nullopt;
    (d == 0 ? m.rows : m.cols) = *n;
  }
  return m;
}

}  // namespace

std::optional<GemmWarpPartition> WgmmaPartition(const ir::GemmNode& g, int64_t threads) {
  const DType at = g.a.buffer->dtype, bt = g.b.buffer->dtype, ct = g.c.buffer->dtype;
  const bool f16 = at == DType::kFloat16 && bt == DType::kFloat16;
  const bool bf16 = at == DType::kBFloat16 && bt == DType::kBFloat16;
  const bool fp8 = IsOcpFloat8(at) && IsOcpFloat8(bt) && !g.transpose_a && g.transpose_b;
  if (!f16 && !bf16 && !fp8) return std::nullopt;
  if (g.c.buffer->scope != ir::Scope::kFragment ||
      (ct != DType::kFloat32 && ct != DType::kFloat16)) {
    return std::nullopt;
  }
  // A from registers (float16 / bfloat16): the whole [M, K] (or [K, M])
  // fragment, one m64 tile per warpgroup.
  const bool a_regs = g.a.buffer->scope == ir::Scope::kFragment;
  if (a_regs && fp8) return std::nullopt;
  std::optional<Matrix> a = a_regs ? FragmentMatrix(g.a) : OperandMatrix(g.a);
  std::optional<Matrix> b = OperandMatrix(g.b);
  if (!a || !b) return std::nullopt;
  // C is [M, N]: its two trailing extents.
  const std::vector<ir::Expr>& ce = g.c.extents;
  if (ce.size() < 2) return std::nullopt;
  std::optional<int64_t> m = EvalInt(ce[ce.size() - 2]), n = EvalInt(ce[ce.size() - 1]);
  for (size_t d = 0; d + 2 < ce.size(); ++d) {
    if (EvalInt(ce[d]) != 1) return std::nullopt;
  }
  if (!m || !n) return std::nullopt;
  const int64_t k = g.transpose_a ? a->rows : a->cols;
  if ((g.transpose_a ? a->cols : a->rows) != *m || (g.transpose_b ? b->rows : b->cols) != *n ||
      (g.transpose_b ? b->cols : b->rows) != k) {
    return std::nullopt;
  }
  if (k % (fp8 ? 32 : 16) != 0) return std::nullopt;
  // A B stored [K, N] is MN-major: a warpgroup's columns must start one of
  // its swizzle blocks (min(row bytes, 128) wide).
  int64_t n_align = 1;
  if (!g.transpose_b) n_align = std::min<int64_t>(b->cols * b->elem_bytes, 128) / b->elem_bytes;
  return ChooseWgmmaPartition(*m, *n, threads / 32, n_align, /*one_tile=*/a_regs);
}

std::map<const ir::GemmNode*, GemmWarpPartition> PlanWgmma(const ir::Stmt& body, int64_t threads) {
  struct Gemms : ir::IRVisitor {
    std::vector<const ir::GemmNode*> all;
    void Visit(const ir::Stmt& s) override {
      if (s == nullptr) return;
      if (const auto* g = s->as<ir::GemmNode>()) all.push_back(g);
      ir::IRVisitor::Visit(s);
    }
    using ir::IRVisitor::Visit;
  } v;
  v.Visit(body);
  std::map<const ir::GemmNode*, GemmWarpPartition> out;
  std::set<const ir::BufferNode*> mma_only;
  for (const ir::GemmNode* g : v.all) {
    std::optional<GemmWarpPartition> p = WgmmaPartition(*g, threads);
    if (p) {
      out[g] = *p;
    } else {
      mma_only.insert(g->c.buffer.get());
    }
  }
  // Gemms into one accumulator must agree on its layout.
  std::map<const ir::BufferNode*, GemmWarpPartition> first;
  for (const auto& [g, p] : out) {
    auto [it, added] = first.emplace(g->c.buffer.get(), p);
    if (!added && !(it->second == p)) mma_only.insert(g->c.buffer.get());
  }
  for (auto it = out.begin(); it != out.end();) {
    it = mma_only.count(it->first->c.buffer.get()) ? out.erase(it) : std::next(it);
  }
  return out;
}

}  // namespace tilec::inference
