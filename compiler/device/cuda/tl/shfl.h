// Warp shuffles for CUDA, over the full warp (member mask 0xffffffff): every
// lane of the warp must execute the call.
//
//   shfl_xor(v, lane_mask)  value of lane (lane ^ lane_mask)   shfl.sync.bfly.b32
//   shfl_sync(v, src_lane)  value of lane src_lane             shfl.sync.idx.b32
//
// Overloads for float and int (64-bit types: tl/shfl_wide.h). Other types fail with a message:
// convert 16-bit types to float first.
#ifndef TILEC_DEVICE_CUDA_TL_SHFL_H_
#define TILEC_DEVICE_CUDA_TL_SHFL_H_

#include "tl/types.h"

namespace tl {

__device__ __forceinline__ int shfl_xor(int v, int lane_mask) {
  int r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
               : "=r"(r)
               : "r"(v), "r"(lane_mask));
  return r;
}

__device__ __forceinline__ float shfl_xor(float v, int lane_mask) {
  return __int_as_float(shfl_xor(__float_as_int(v), lane_mask));
}

__device__ __forceinline__ int shfl_sync(int v, int src_lane) {
  int r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(src_lane));
  return r;
}

__device__ __forceinline__ float shfl_sync(float v, int src_lane) {
  return __int_as_float(shfl_sync(__float_as_int(v), src_lane));
}

template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
  static_assert(sizeof(T) == 0,
                "tl::shfl_xor takes float, int, double or a 64-bit integer; convert 16-bit types "
                "(e.g. float(x)) first");
  return v;
}

template <typename T>
__device__ __forceinline__ T shfl_sync(T v, int src_lane) {
  static_assert(sizeof(T) == 0,
                "tl::shfl_sync takes float, int, double or a 64-bit integer; convert 16-bit types "
                "(e.g. float(x)) first");
  return v;
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_SHFL_H_
