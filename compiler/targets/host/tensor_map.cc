#include "compiler/targets/host/tensor_map.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tilec::host {

absl::Status CheckTensorMap(const tl::host::TensorMapDesc& m, const std::string& what) {
  auto bad = [&](const std::string& rule) {
    return absl::InvalidArgumentError(absl::StrCat("a TMA tensor map of ", what, ": ", rule));
  };
  if (m.rank < 1 || m.rank > static_cast<uint32_t>(tl::host::kTensorMapMaxRank)) {
    return bad(absl::StrCat("rank ", m.rank, " (TMA takes 1 to 5 dimensions)"));
  }
  if (m.elem_bytes != 1 && m.elem_bytes != 2 && m.elem_bytes != 4 && m.elem_bytes != 8) {
    return bad(absl::StrCat("elements of ", m.elem_bytes, " bytes"));
  }
  if (reinterpret_cast<uintptr_t>(m.base) % 16 != 0) {
    return bad(absl::StrCat("the address ", absl::Hex(reinterpret_cast<uintptr_t>(m.base)),
                            " is not 16-byte aligned (TMA needs it; pass an aligned tensor, "
                            "not a view at an odd offset)"));
  }
  if (m.swizzle_bytes != 0 && m.swizzle_bytes != 32 && m.swizzle_bytes != 64 &&
      m.swizzle_bytes != 128) {
    return bad(absl::StrCat("a swizzle of ", m.swizzle_bytes, " bytes (0, 32, 64 or 128)"));
  }
  if (m.strides[0] != m.elem_bytes) {
    return bad(absl::StrCat("dimension 0 has a stride of ", m.strides[0],
                            " bytes; TMA reads it contiguously"));
  }
  for (uint32_t d = 0; d < m.rank; ++d) {
    if (m.dims[d] < 1 || m.dims[d] > (uint64_t{1} << 32)) {
      return bad(absl::StrCat("dimension ", d, " has ", m.dims[d], " elements (1 to 2^32)"));
    }
    if (d >= 1 && (m.strides[d] % 16 != 0 || m.strides[d] >= (uint64_t{1} << 40))) {
      return bad(absl::StrCat("dimension ", d, " has a stride of ", m.strides[d],
                              " bytes; TMA needs a multiple of 16 below 2^40"));
    }
    if (m.box[d] < 1 || m.box[d] > 256) {
      return bad(absl::StrCat("a box of ", m.box[d], " along dimension ", d, " (1 to 256)"));
    }
  }
  const uint64_t inner = uint64_t{m.box[0]} * m.elem_bytes;
  if (inner % 16 != 0) {
    return bad(absl::StrCat("the box's rows are ", inner, " bytes, not a multiple of 16"));
  }
  if (m.swizzle_bytes != 0 && inner > m.swizzle_bytes) {
    return bad(absl::StrCat("the box's rows are ", inner, " bytes, wider than the ",
                            m.swizzle_bytes, "-byte swizzle"));
  }
  return absl::OkStatus();
}

absl::StatusOr<tl::host::TensorMapDesc> DescribeTensorMap(const void* base,
                                                          const std::vector<int64_t>& shape,
                                                          int64_t elem_bytes,
                                                          const std::vector<int64_t>& box,
                                                          int64_t swizzle_bytes,
                                                          const std::string& what) {
  tl::host::TensorMapDesc m{};
  if (shape.empty() || shape.size() > static_cast<size_t>(tl::host::kTensorMapMaxRank) ||
      box.size() != shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat("a TMA tensor map of ", what, ": ",
                                                   shape.size(), " dimensions and a box of ",
                                                   box.size()));
  }
  const size_t rank = shape.size();
  m.rank = static_cast<uint32_t>(rank);
  m.elem_bytes = static_cast<uint32_t>(elem_bytes);
  m.swizzle_bytes = static_cast<uint32_t>(swizzle_bytes);
  m.base = base;
  uint64_t stride = static_cast<uint64_t>(elem_bytes);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t n = shape[rank - 1 - d];
    const int64_t b = box[rank - 1 - d];
    m.dims[d] = n < 0 ? 0 : static_cast<uint64_t>(n);
    m.box[d] = b < 0 || b > (int64_t{1} << 20) ? 0 : static_cast<uint32_t>(b);
    m.strides[d] = stride;
    stride *= m.dims[d];
  }
  if (absl::Status s = CheckTensorMap(m, what); !s.ok()) return s;
  return m;
}

absl::StatusOr<tl::host::TensorMapDesc> EncodeHostTensorMap(tl::host::TensorMapDesc map,
                                                            const std::string& what) {
  map.magic = 0;
  if (absl::Status s = CheckTensorMap(map, what); !s.ok()) return s;
  map.magic = tl::host::kTensorMapMagic;
  return map;
}

}  // namespace tilec::host
