// Cross-lane moves over the 64-lane wavefront: every lane of the wavefront
// must execute the call.
//
//   shfl_xor(v, lane_mask)  value of lane (lane ^ lane_mask)
//   shfl_sync(v, src_lane)  value of lane src_lane (mod 64)
//
// shfl_sync and shfl_xor by 32 (or by a mask not known when inlined) use
// ds_bpermute (the LDS crossbar; no LDS storage). The xor masks a reduction
// uses otherwise take cheaper paths once the mask is a constant: 1 and 2 a
// DPP quad permutation on the moving instruction itself
// (quad_perm:[1,0,3,2] / [2,3,0,1]), 4, 8 and 16 ds_swizzle_b32 in its
// bit-mask mode (and 0x1f, or 0, xor the mask: lane ^ mask within each 32
// lanes, no address computation).
//
// Overloads for float and int, as on CUDA (64-bit types: tl/shfl_wide.h).
#ifndef TILEC_DEVICE_HIP_TL_SHFL_H_
#define TILEC_DEVICE_HIP_TL_SHFL_H_

#include "tl/types.h"

namespace tl {
namespace detail {

__device__ __forceinline__ int lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

}  // namespace detail

__device__ __forceinline__ int shfl_sync(int v, int src_lane) {
  return __builtin_amdgcn_ds_bpermute((src_lane & 63) << 2, v);
}
__device__ __forceinline__ float shfl_sync(float v, int src_lane) {
  return __builtin_bit_cast(float, shfl_sync(__builtin_bit_cast(int, v), src_lane));
}
__device__ __forceinline__ int shfl_xor(int v, int lane_mask) {
  switch (lane_mask) {
    case 1: return __builtin_amdgcn_update_dpp(v, v, 0xb1, 0xf, 0xf, false);  // quad_perm [1,0,3,2]
    case 2: return __builtin_amdgcn_update_dpp(v, v, 0x4e, 0xf, 0xf, false);  // quad_perm [2,3,0,1]
    case 4: return __builtin_amdgcn_ds_swizzle(v, 0x101f);  // xor 4, and 0x1f
    case 8: return __builtin_amdgcn_ds_swizzle(v, 0x201f);
    case 16: return __builtin_amdgcn_ds_swizzle(v, 0x401f);
    default: return shfl_sync(v, detail::lane_id() ^ lane_mask);
  }
}
__device__ __forceinline__ float shfl_xor(float v, int lane_mask) {
  return __builtin_bit_cast(float, shfl_xor(__builtin_bit_cast(int, v), lane_mask));
}

template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int) {
  static_assert(sizeof(T) == 0,
                "tl::shfl_xor takes float, int, double or a 64-bit integer; convert 16-bit types "
                "(e.g. float(x)) first");
  return v;
}
template <typename T>
__device__ __forceinline__ T shfl_sync(T v, int) {
  static_assert(sizeof(T) == 0,
                "tl::shfl_sync takes float, int, double or a 64-bit integer; convert 16-bit types "
                "(e.g. float(x)) first");
  return v;
}

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_SHFL_H_
