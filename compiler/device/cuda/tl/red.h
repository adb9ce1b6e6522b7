// Atomic adds into global memory whose old value is not needed (PTX red):
//
//   red_add(addr, v)          red.global.add.{f32,f64,s32} / .noftz.f16; the
//                             other types of tl::atomic_add through it
//   red_add_vec<T, N>(addr, x)   adds x.v[i] to addr[i], i < N:
//       float, N = 2 or 4     red.global.add.v{2,4}.f32 on sm_90+, else N red_add
//       half_t, N even        red.global.add.noftz.f16x2 per pair
// Each element is added atomically (relaxed, GPU scope). `addr` must point
// into global memory (a generic address of a global buffer), and for
// red_add_vec be aligned to N * sizeof(T) bytes. Unlike tl::atomic_add (any
// state space), these compile to REDG with no shared-memory path.
#ifndef TILEC_DEVICE_CUDA_TL_RED_H_
#define TILEC_DEVICE_CUDA_TL_RED_H_

#include "tl/arith.h"
#include "tl/atomic.h"
#include "tl/types.h"

namespace tl {

__device__ __forceinline__ void red_add(float* addr, float v) {
  asm volatile("{\n .reg .u64 g;\n cvta.to.global.u64 g, %0;\n red.global.add.f32 [g], %1;\n}"
               :
               : "l"(addr), "f"(v)
               : "memory");
}

__device__ __forceinline__ void red_add(double* addr, double v) {
  asm volatile("{\n .reg .u64 g;\n cvta.to.global.u64 g, %0;\n red.global.add.f64 [g], %1;\n}"
               :
               : "l"(addr), "d"(v)
               : "memory");
}

__device__ __forceinline__ void red_add(int32_t* addr, int32_t v) {
  asm volatile("{\n .reg .u64 g;\n cvta.to.global.u64 g, %0;\n red.global.add.s32 [g], %1;\n}"
               :
               : "l"(addr), "r"(v)
               : "memory");
}

__device__ __forceinline__ void red_add(half_t* addr, half_t v) {
  asm volatile("{\n .reg .u64 g;\n cvta.to.global.u64 g, %0;\n red.global.add.noftz.f16 [g], %1;\n}"
               :
               : "l"(addr), "h"(static_cast<unsigned short>(v.bits()))
               : "memory");
}

// The other types tl::atomic_add takes: the atom's old value is unused.
__device__ __forceinline__ void red_add(uint32_t* addr, uint32_t v) { (void)atomic_add(addr, v); }
__device__ __forceinline__ void red_add(int64_t* addr, int64_t v) { (void)atomic_add(addr, v); }
__device__ __forceinline__ void red_add(uint64_t* addr, uint64_t v) { (void)atomic_add(addr, v); }
__device__ __forceinline__ void red_add(bfloat16_t* addr, bfloat16_t v) {
  (void)atomic_add(addr, v);
}

template <typename T, typename V>
__device__ __forceinline__ void red_add(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::red_add supports float, double, 32- and 64-bit integers, tl::half_t and "
                "tl::bfloat16_t, with a value of the same type as the destination");
}

namespace detail {

template <typename T, int N>
__device__ __forceinline__ void red_add_each(T* addr, const Vec<T, N>& x) {
#pragma unroll
  for (int i = 0; i < N; ++i) red_add(addr + i, x.v[i]);
}

// Adds (lo, hi) to addr[0], addr[1]; addr is 4-byte aligned.
__device__ __forceinline__ void red_add_f16x2(half_t* addr, half_t lo, half_t hi) {
  const uint32_t packed =
      static_cast<uint32_t>(lo.bits()) | (static_cast<uint32_t>(hi.bits()) << 16);
  asm volatile(
      "{\n .reg .u64 g;\n cvta.to.global.u64 g, %0;\n red.global.add.noftz.f16x2 [g], %1;\n}"
      :
      : "l"(addr), "r"(packed)
      : "memory");
}

}  // namespace detail

template <typename T, int N>
__device__ __forceinline__ void red_add_vec(T* addr, const Vec<T, N>& x) {
  detail::red_add_each(addr, x);
}

template <>
__device__ __forceinline__ void red_add_vec<float, 2>(float* addr, const Vec<float, 2>& x) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .u64 g;\n cvta.to.global.u64 g, %0;\n red.global.add.v2.f32 [g], {%1, %2};\n}"
      :
      : "l"(addr), "f"(x.v[0]), "f"(x.v[1])
      : "memory");
#else
  detail::red_add_each(addr, x);
#endif
}

template <>
__device__ __forceinline__ void red_add_vec<float, 4>(float* addr, const Vec<float, 4>& x) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .u64 g;\n cvta.to.global.u64 g, %0;\n"
      " red.global.add.v4.f32 [g], {%1, %2, %3, %4};\n}"
      :
      : "l"(addr), "f"(x.v[0]), "f"(x.v[1]), "f"(x.v[2]), "f"(x.v[3])
      : "memory");
#else
  detail::red_add_each(addr, x);
#endif
}

template <>
__device__ __forceinline__ void red_add_vec<half_t, 2>(half_t* addr, const Vec<half_t, 2>& x) {
  detail::red_add_f16x2(addr, x.v[0], x.v[1]);
}

template <>
__device__ __forceinline__ void red_add_vec<half_t, 4>(half_t* addr, const Vec<half_t, 4>& x) {
  detail::red_add_f16x2(addr, x.v[0], x.v[1]);
  detail::red_add_f16x2(addr + 2, x.v[2], x.v[3]);
}

template <>
__device__ __forceinline__ void red_add_vec<half_t, 8>(half_t* addr, const Vec<half_t, 8>& x) {
#pragma unroll
  for (int i = 0; i < 8; i += 2) detail::red_add_f16x2(addr + i, x.v[i], x.v[i + 1]);
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_RED_H_
