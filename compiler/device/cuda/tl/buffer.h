// How generated code declares its global tensors and shared buffers:
//
//   tl::gptr<T>     a global tensor parameter: `T* __restrict__`
//   tl::smem_buffer<T>(smem, byte_offset, elements, "name")
//                   one shared buffer: `elements` elements of T at
//                   `byte_offset` in the block's dynamic shared memory
//                   (smem = tl::dynamic_smem()); returns a plain T*
//
// On CUDA these are exactly the raw pointers (the element count and the name
// compile away, the SASS is what `T* __restrict__` and a reinterpret_cast
// give). The host twin (host/tl/buffer.h) makes them bounds-checked pointers,
// so the emulator checks every load and store of generated code against the
// one buffer it addresses.
#ifndef TILEC_DEVICE_CUDA_TL_BUFFER_H_
#define TILEC_DEVICE_CUDA_TL_BUFFER_H_

#include "tl/types.h"

namespace tl {

template <typename T>
using gptr = T* __restrict__;

template <typename T>
__device__ __forceinline__ T* smem_buffer(uint8_t* smem, long long byte_offset,
                                          long long /*elements*/, const char* /*name*/) {
  return reinterpret_cast<T*>(smem + byte_offset);
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_BUFFER_H_
