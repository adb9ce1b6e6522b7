// Warp reductions (docs/cuda_backend.md, "Reductions"). Target-neutral: built
// only on tl::shfl_xor and tl::fmax/fmin, so the emulator runs this very code.
// Included by the target's tl/tl.h after those primitives.
//
// warp_allreduce<Op, Lanes>(v) combines v over each group of Lanes
// consecutive lanes (Lanes a power of two, 1..tl::warp_lanes: 32 on NVIDIA,
// 64 on AMD; groups aligned to Lanes)
// with shfl_xor masks Lanes/2, Lanes/4, ..., 1 in that order; every lane
// receives its group's result, the same value on every lane of a group
// (each step combines a value with its partner's by a commutative op). All
// lanes of the warp must call it. T is float or int (what shfl_xor moves).
//
// Ops: SumOp (a + b), MaxOp, MinOp (on float/double with the fmax/fmin NaN
// rule: a NaN operand is ignored).
#ifndef TILEC_DEVICE_COMMON_TL_REDUCE_H_
#define TILEC_DEVICE_COMMON_TL_REDUCE_H_

namespace tl {

struct SumOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};

struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return tl::fmax(a, b); }
  __device__ __forceinline__ double operator()(double a, double b) const { return tl::fmax(a, b); }
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

struct MinOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return tl::fmin(a, b); }
  __device__ __forceinline__ double operator()(double a, double b) const { return tl::fmin(a, b); }
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};

template <typename Op, int Lanes, typename T>
__device__ __forceinline__ T warp_allreduce(T v) {
  static_assert(Lanes >= 1 && Lanes <= warp_lanes && (Lanes & (Lanes - 1)) == 0,
                "tl::warp_allreduce<Op, Lanes>: Lanes must be a power of two from 1 to the "
                "warp size");
#pragma unroll
  for (int mask = Lanes / 2; mask > 0; mask /= 2) {
    v = Op()(v, shfl_xor(v, mask));
  }
  return v;
}

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_REDUCE_H_
