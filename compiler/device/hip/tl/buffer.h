// Buffers for AMD GPUs: global tensors as restrict pointers, shared buffers
// as pointers into the workgroup's dynamic LDS (the same spellings as
// cuda/tl/buffer.h and cuda/tl/sync.h).
//
//   gptr<T>                          a global tensor parameter
//   dynamic_smem()                   the dynamic LDS of the workgroup
//   smem_buffer<T>(smem, off, n, name)   T* at byte offset `off`
#ifndef TILEC_DEVICE_HIP_TL_BUFFER_H_
#define TILEC_DEVICE_HIP_TL_BUFFER_H_

#include "tl/types.h"

namespace tl {

template <typename T>
using gptr = T* __restrict__;

__device__ __forceinline__ uint8_t* dynamic_smem() {
  extern __shared__ __attribute__((aligned(1024))) uint8_t tl_dynamic_smem_base[];
  return tl_dynamic_smem_base;
}

template <typename T>
__device__ __forceinline__ T* smem_buffer(uint8_t* smem, long long byte_offset,
                                          long long /*elements*/, const char* /*name*/) {
  return reinterpret_cast<T*>(smem + byte_offset);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_BUFFER_H_
