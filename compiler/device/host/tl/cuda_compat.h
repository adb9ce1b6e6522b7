// The CUDA spellings generated code uses (docs/cuda_backend.md "Generated code
// shape"), defined so that the same source compiles as C++20 for the host:
// function qualifiers vanish, `__launch_bounds__(...)` is dropped, and the
// built-in index variables read the current emulated thread. `__restrict__`
// is a clang keyword already.
#ifndef TILEC_DEVICE_HOST_TL_CUDA_COMPAT_H_
#define TILEC_DEVICE_HOST_TL_CUDA_COMPAT_H_

#include "tl/thread.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ __attribute__((always_inline)) inline
#define __launch_bounds__(...)
#define __grid_constant__

#define threadIdx (::tl::host::self()->thread_idx)
#define blockIdx (::tl::host::self()->block_idx)
#define blockDim (::tl::host::self()->block_dim)
#define gridDim (::tl::host::self()->grid_dim)

#endif  // TILEC_DEVICE_HOST_TL_CUDA_COMPAT_H_
