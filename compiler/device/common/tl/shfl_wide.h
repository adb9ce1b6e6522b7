// 64-bit warp shuffles: int64_t, uint64_t and double move as two 32-bit
// shuffles of their halves. Target-neutral: built only on the target's
// tl::shfl_xor / tl::shfl_sync for int and on tl::bit_cast, so the emulator
// runs this very code. Included by the target's tl/tl.h after tl/arith.h.
//
//   shfl_xor(v, lane_mask)  value of lane (lane ^ lane_mask)
//   shfl_sync(v, src_lane)  value of lane src_lane
//
// Every lane of the warp must make the same call, as for the 32-bit ones.
#ifndef TILEC_DEVICE_COMMON_TL_SHFL_WIDE_H_
#define TILEC_DEVICE_COMMON_TL_SHFL_WIDE_H_

#include "tl/arith.h"
#include "tl/types.h"

namespace tl {
namespace detail {

__device__ __forceinline__ int low_half(uint64_t v) {
  return static_cast<int>(static_cast<uint32_t>(v));
}
__device__ __forceinline__ int high_half(uint64_t v) {
  return static_cast<int>(static_cast<uint32_t>(v >> 32));
}
__device__ __forceinline__ uint64_t join_halves(int lo, int hi) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(hi)) << 32) | static_cast<uint32_t>(lo);
}

}  // namespace detail

__device__ __forceinline__ uint64_t shfl_xor(uint64_t v, int lane_mask) {
  const int lo = shfl_xor(detail::low_half(v), lane_mask);
  const int hi = shfl_xor(detail::high_half(v), lane_mask);
  return detail::join_halves(lo, hi);
}
__device__ __forceinline__ uint64_t shfl_sync(uint64_t v, int src_lane) {
  const int lo = shfl_sync(detail::low_half(v), src_lane);
  const int hi = shfl_sync(detail::high_half(v), src_lane);
  return detail::join_halves(lo, hi);
}
__device__ __forceinline__ int64_t shfl_xor(int64_t v, int lane_mask) {
  return static_cast<int64_t>(shfl_xor(static_cast<uint64_t>(v), lane_mask));
}
__device__ __forceinline__ int64_t shfl_sync(int64_t v, int src_lane) {
  return static_cast<int64_t>(shfl_sync(static_cast<uint64_t>(v), src_lane));
}
__device__ __forceinline__ double shfl_xor(double v, int lane_mask) {
  return bit_cast<double>(shfl_xor(bit_cast<uint64_t>(v), lane_mask));
}
__device__ __forceinline__ double shfl_sync(double v, int src_lane) {
  return bit_cast<double>(shfl_sync(bit_cast<uint64_t>(v), src_lane));
}

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_SHFL_WIDE_H_
