#include "compiler/inference/tma_plan.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tilec::inference {

namespace {

template <typename... T>
absl::Status No(const T&... why) {
  return absl::FailedPreconditionError(absl::StrCat(why...));
}

// The box of `global` (a region of a tensor parameter) that is the whole
// shared buffer `shared.buffer`, either way.
absl::StatusOr<TmaCopyPlan> PlanBox(const ir::Program& program, const ir::Region& global,
                                    const ir::Region& shared, const SharedLayout& layout,
                                    int64_t rows_allocated, int64_t smem_offset,
                                    int64_t stage_bytes) {
  const ir::Buffer& src = global.buffer;
  const ir::Buffer& dst = shared.buffer;
  if (src->dtype != dst->dtype) {
    return No("the copy converts ", std::string(ir::DTypeName(src->dtype)), " to ",
              std::string(ir::DTypeName(dst->dtype)));
  }
  TmaCopyPlan plan;
  for (size_t i = 0; i < program.params.size(); ++i) {
    if (program.params[i].tensor == src) plan.param = static_cast<int>(i);
  }
  if (plan.param < 0) return No(src->name, " is not a tensor parameter");
  if (program.params[plan.param].view) return No(src->name, " is a strided view");
  const size_t rank = src->shape.size();
  if (rank < 1 || rank > 5) return No(src->name, " has ", rank, " dimensions (TMA: 1 to 5)");
  const int bits = ir::DTypeBits(src->dtype);
  if (src->dtype == ir::DType::kBool || bits < 8 || bits % 8 != 0) {
    return No(std::string(ir::DTypeName(src->dtype)), " elements (TMA copies whole bytes)");
  }
  plan.elem_bytes = bits / 8;
  const int64_t e = plan.elem_bytes;
  // Strides of dimensions 1.. of the tensor map (the tensor's outer ones).
  int64_t stride = e;
  for (size_t j = rank; j-- > 1;) {
    std::optional<int64_t> n = ir::AsConstInt(src->shape[j]);
    if (!n) return No("dimension ", j, " of ", src->name, " is not a constant");
    stride *= *n;
    if (stride % 16 != 0) {
      return No("dimension ", j - 1, " of ", src->name, " has a stride of ", stride,
                " bytes, not a multiple of 16");
    }
  }
  std::vector<int64_t> extents;
  for (const ir::Expr& x : global.extents) {
    std::optional<int64_t> v = ir::AsConstInt(x);
    if (!v) return No("the copy's extents are not constants");
    extents.push_back(*v);
  }
  std::vector<int64_t> shape;
  for (size_t j = 0; j < dst->shape.size(); ++j) {
    std::optional<int64_t> n = ir::AsConstInt(dst->shape[j]);
    std::optional<int64_t> m = ir::AsConstInt(shared.mins[j]);
    std::optional<int64_t> x = ir::AsConstInt(shared.extents[j]);
    if (!n || m != 0 || x != n) return No("the copy moves part of ", dst->name);
    shape.push_back(*n);
  }
  std::vector<int64_t> a, b;
  for (int64_t x : extents)
    if (x != 1) a.push_back(x);
  for (int64_t x : shape)
    if (x != 1) b.push_back(x);
  if (a != b || extents.back() != shape.back()) {
    return No("the box [", absl::StrJoin(extents, ", "), "] is not laid out as ", dst->name, " [",
              absl::StrJoin(shape, ", "), "]");
  }
  const int64_t cols = shape.back();
  const int64_t row_bytes = cols * e;
  int64_t rows = 1;
  for (size_t j = 0; j + 1 < shape.size(); ++j) rows *= shape[j];
  if (rows_allocated != rows) return No(dst->name, " has padding rows");
  plan.box = extents;
  if (layout.kind == SharedLayout::Kind::kRowMajor) {
    if (row_bytes % 16 != 0) return No("rows of ", row_bytes, " bytes (TMA: multiples of 16)");
    plan.loads.push_back({0, 0});
  } else if (row_bytes == 32 || row_bytes == 64 || row_bytes == 128) {
    plan.swizzle_bytes = row_bytes;
    plan.loads.push_back({0, 0});
  } else if (row_bytes % 128 == 0) {
    if (layout.tile_rows != rows) return No(dst->name, " holds several swizzled matrices");
    plan.swizzle_bytes = 128;
    plan.box.back() = 128 / e;
    for (int64_t k = 0; k < row_bytes / 128; ++k) {
      plan.loads.push_back({k * rows * (128 / e), k * (128 / e)});
    }
  } else {
    return No("a swizzled layout TMA does not write");
  }
  for (int64_t x : plan.box) {
    if (x > 256) return No("a box of ", x, " elements along one dimension (TMA: at most 256)");
  }
  const int64_t period = plan.swizzle_bytes == 0 ? 128 : 8 * plan.swizzle_bytes;
  if (smem_offset % period != 0 || stage_bytes % period != 0) {
    return No(dst->name, " does not start on the ", period, "-byte period of its swizzle");
  }
  plan.bytes = rows * row_bytes;
  return plan;
}

}  // namespace

absl::StatusOr<TmaCopyPlan> PlanTmaCopy(const ir::Program& program, const ir::CopyNode& copy,
                                        const SharedLayout& layout, int64_t rows_allocated,
                                        int64_t smem_offset, int64_t stage_bytes) {
  if (copy.src.buffer->scope != ir::Scope::kGlobal ||
      copy.dst.buffer->scope != ir::Scope::kShared) {
    return No("not a global -> shared copy");
  }
  if (copy.disable_tma) return No("T.copy(..., disable_tma=True)");
  return PlanBox(program, copy.src, copy.dst, layout, rows_allocated, smem_offset, stage_bytes);
}

absl::StatusOr<TmaCopyPlan> PlanTmaStore(const ir::Program& program, const ir::CopyNode& copy,
                                         const SharedLayout& layout, int64_t rows_allocated,
                                         int64_t smem_offset) {
  if (copy.src.buffer->scope != ir::Scope::kShared ||
      copy.dst.buffer->scope != ir::Scope::kGlobal) {
    return No("not a shared -> global copy");
  }
  if (copy.disable_tma) return No("T.copy(..., disable_tma=True)");
  return PlanBox(program, copy.dst, copy.src, layout, rows_allocated, smem_offset, 0);
}

}  // namespace tilec::inference
