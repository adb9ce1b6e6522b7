// Host twin of cuda/tl/shfl.h: warp shuffles over the full warp. Every lane
// of the warp must make the same call; the emulator exchanges the values once
// all lanes have arrived (shfl.sync.bfly / shfl.sync.idx with c = 0x1f).
//
//   shfl_xor(v, lane_mask)  value of lane (lane ^ lane_mask)
//   shfl_sync(v, src_lane)  value of lane src_lane (taken modulo the warp size)
#ifndef TILEC_DEVICE_HOST_TL_SHFL_H_
#define TILEC_DEVICE_HOST_TL_SHFL_H_

#include <bit>

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

inline uint32_t shfl(uint32_t op, uint32_t value, int lane) {
  ShflIn in{value, lane};
  uint32_t out = 0;
  collective(op, &in, &out);
  return out;
}

}  // namespace host

inline int shfl_xor(int v, int lane_mask) {
  return static_cast<int>(host::shfl(host::kWarpShflBfly, static_cast<uint32_t>(v), lane_mask));
}

inline float shfl_xor(float v, int lane_mask) {
  return std::bit_cast<float>(
      host::shfl(host::kWarpShflBfly, std::bit_cast<uint32_t>(v), lane_mask));
}

inline int shfl_sync(int v, int src_lane) {
  return static_cast<int>(host::shfl(host::kWarpShflIdx, static_cast<uint32_t>(v), src_lane));
}

inline float shfl_sync(float v, int src_lane) {
  return std::bit_cast<float>(host::shfl(host::kWarpShflIdx, std::bit_cast<uint32_t>(v), src_lane));
}

template <typename T>
inline T shfl_xor(T v, int lane_mask) {
  static_assert(sizeof(T) == 0,
                "tl::shfl_xor takes float, int, double or a 64-bit integer; convert 16-bit types "
                "(e.g. float(x)) first");
  return v;
}

template <typename T>
inline T shfl_sync(T v, int src_lane) {
  static_assert(sizeof(T) == 0,
                "tl::shfl_sync takes float, int, double or a 64-bit integer; convert 16-bit types "
                "(e.g. float(x)) first");
  return v;
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_SHFL_H_
