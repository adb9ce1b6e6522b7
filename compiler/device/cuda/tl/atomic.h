// Atomic adds on global or shared memory (generic addresses), relaxed, GPU
// scope. Each returns the value stored at addr before the add.
//
//   float    atom.add.f32        double   atom.add.f64
//   int32_t  atom.add.s32        half_t   atom.add.noftz.f16
#ifndef TILEC_DEVICE_CUDA_TL_ATOMIC_H_
#define TILEC_DEVICE_CUDA_TL_ATOMIC_H_

#include "tl/types.h"

namespace tl {

__device__ __forceinline__ float atomic_add(float* addr, float v) {
  float old;
  asm volatile("atom.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(addr), "f"(v) : "memory");
  return old;
}

__device__ __forceinline__ double atomic_add(double* addr, double v) {
  double old;
  asm volatile("atom.add.f64 %0, [%1], %2;" : "=d"(old) : "l"(addr), "d"(v) : "memory");
  return old;
}

__device__ __forceinline__ int32_t atomic_add(int32_t* addr, int32_t v) {
  int32_t old;
  asm volatile("atom.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(v) : "memory");
  return old;
}

__device__ __forceinline__ half_t atomic_add(half_t* addr, half_t v) {
  unsigned short old;
  asm volatile("atom.add.noftz.f16 %0, [%1], %2;"
               : "=h"(old)
               : "l"(addr), "h"(static_cast<unsigned short>(v.bits()))
               : "memory");
  return half_t::from_bits(old);
}

template <typename T, typename V>
__device__ __forceinline__ T atomic_add(T* addr, V v) {
  static_assert(sizeof(T) == 0,
                "tl::atomic_add supports float, double, int32_t and tl::half_t, with a value of "
                "the same type as the destination");
  return *addr;
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_ATOMIC_H_
