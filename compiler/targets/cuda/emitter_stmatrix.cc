// The epilogue store of a gemm accumulator on sm_90a: T.copy of a whole float
// fragment in an mma accumulator layout to a whole float16 / bfloat16 shared
// buffer of the same shape becomes one call of tl::store_acc_stmatrix
// (tl/acc_store.h), which converts the fragment to 16 bits in registers and
// stores each 8x8 quarter of an m16n8 tile with stmatrix. Other copies, and
// every copy on sm_80 (no stmatrix), take the ordinary path.
#include "absl/strings/str_cat.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {
namespace {

// Whether `r` covers the whole of its buffer, whose shape is {m, n}.
bool WholeRegion(const ir::Region& r, int64_t m, int64_t n) {
  const std::vector<ir::Expr>& shape = r.buffer->shape;
  if (shape.size() != 2 || r.mins.size() != 2 || r.extents.size() != 2) return false;
  const int64_t want[2] = {m, n};
  for (int d = 0; d < 2; ++d) {
    auto s = ConstValue(shape[d]);
    auto lo = ConstValue(r.mins[d]);
    auto e = ConstValue(r.extents[d]);
    if (!s || !lo || !e || *s != want[d] || *lo != 0 || *e != want[d]) return false;
  }
  return true;
}

}  // namespace

bool StmatrixFragmentCopy(EmitContext& ctx, const ir::CopyNode* c) {
  if (ctx.target().arch != CudaArch::kSm90a) return false;
  const ir::Buffer& src = c->src.buffer;
  const ir::Buffer& dst = c->dst.buffer;
  if (src->scope != ir::Scope::kFragment || dst->scope != ir::Scope::kShared ||
      src->dtype != ir::DType::kFloat32 ||
      (dst->dtype != ir::DType::kFloat16 && dst->dtype != ir::DType::kBFloat16)) {
    return false;
  }
  const inference::FragmentLayout* fl = ctx.FragmentOf(src.get());
  BufferInfo* si = ctx.Info(src.get());
  BufferInfo* di = ctx.Info(dst.get());
  if (!fl || !si || !di || !di->shared || fl->shape.size() != 2 || fl->valid) return false;
  const int64_t m = fl->shape[0], n = fl->shape[1];
  if (!WholeRegion(c->src, m, n) || !WholeRegion(c->dst, m, n)) return false;
  // Rows of 8 elements must be contiguous and 16-byte aligned in the layout.
  if (di->shared->cols != n || n % 8 != 0) return false;
  // The warp partition whose accumulator layout the fragment has (that of
  // the gemm writing it, or of one whose layout it inherited), unpadded.
  for (const auto& [stmt, p] : ctx.plan().gemms) {
    if (m % (16 * p.warps_m) != 0 || n % (8 * p.warps_n) != 0 ||
        32 * p.warps_m * p.warps_n * p.replicas != ctx.threads() ||
        !inference::SameLayout(*fl, inference::MmaAccumulator(m, n, p))) {
      continue;
    }
    ctx.w().Line(
        absl::StrCat("// ", src->name, " (", fl->kind, ") -> ", dst->name, " with stmatrix"));
    ctx.w().Line(absl::StrCat("tl::store_acc_stmatrix<", di->ctype, ", ", m, ", ", n, ", ",
                              p.warps_m, ", ", p.warps_n, ", ", di->layout_type,
                              p.wgmma ? ", true" : "", ">(", ctx.SharedBase(*di), ", ", si->name,
                              ");"));
    return true;
  }
  return false;
}

}  // namespace tilec::cuda
