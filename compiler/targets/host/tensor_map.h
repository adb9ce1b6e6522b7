// Tensor maps (TMA descriptors): the rules cuTensorMapEncodeTiled applies to
// a tiled map without interleave (CUDA driver API documentation), checked
// before a map is made for the GPU or for the emulator, and the emulator's
// own encoding (tl::host::TensorMapDesc in tl/abi.h). The runtime makes a
// map per launch from the artifact's description (box, swizzle, element
// size) and the tensor argument (address, shape, strides).
#ifndef TILEC_COMPILER_TARGETS_HOST_TENSOR_MAP_H_
#define TILEC_COMPILER_TARGETS_HOST_TENSOR_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/device/host/tl/abi.h"

namespace tilec::host {

// INVALID_ARGUMENT naming `what` (the tensor) and the rule broken, unless:
// rank 1..5; base 16-byte aligned; element size 1, 2, 4 or 8 bytes with
// strides[0] equal to it; every dim in [1, 2^32]; strides of dims >= 1
// multiples of 16 below 2^40; every box dim in [1, 256], box[0] times the
// element size a multiple of 16 and, with a swizzle, at most its span.
absl::Status CheckTensorMap(const tl::host::TensorMapDesc& map, const std::string& what);

// The map of a row-major tensor at `base` of `shape` (outermost first) with
// `box` (outermost first) and a swizzle of `swizzle_bytes`, checked by
// CheckTensorMap; not yet encoded for either device.
absl::StatusOr<tl::host::TensorMapDesc> DescribeTensorMap(const void* base,
                                                          const std::vector<int64_t>& shape,
                                                          int64_t elem_bytes,
                                                          const std::vector<int64_t>& box,
                                                          int64_t swizzle_bytes,
                                                          const std::string& what);

// `map` checked and marked encoded (magic set): the emulator's tensor map.
absl::StatusOr<tl::host::TensorMapDesc> EncodeHostTensorMap(tl::host::TensorMapDesc map,
                                                            const std::string& what);

// The shared-memory byte address TMA (and wgmma) use for `addr` under a
// swizzle of `swizzle_bytes` (0, 32, 64, 128): bits 4.. ^= bits 7.. .
inline uint32_t TmaSwizzle(uint32_t addr, uint32_t swizzle_bytes) {
  const uint32_t mask = swizzle_bytes == 128 ? 7u : swizzle_bytes == 64 ? 3u : swizzle_bytes == 32 ? 1u : 0u;
  return addr ^ (((addr >> 7) & mask) << 4);
}

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_TENSOR_MAP_H_
