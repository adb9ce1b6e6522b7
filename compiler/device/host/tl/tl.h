// The host twin of the device library, as generated code sees it:
// `#include "tl/tl.h"` with compiler/device/host and compiler/device/common
// on the include path. Same API as cuda/tl/tl.h (the primitives of
// docs/cuda_backend.md, then the target-neutral templates of common/tl), so
// the generated CUDA C++ compiles unchanged as C++20 into a shared object for
// the emulator (compiler/targets/host).
#ifndef TILEC_DEVICE_HOST_TL_TL_H_
#define TILEC_DEVICE_HOST_TL_TL_H_

// The order matters: the CUDA spellings (cuda_compat.h) are macros, defined
// after every standard header and before the common templates that use them.
// clang-format off
#include "tl/types.h"
#include "tl/sync.h"
#include "tl/shfl.h"
#include "tl/vote.h"
#include "tl/mma.h"
#include "tl/ldmatrix.h"
#include "tl/stmatrix.h"
#include "tl/cp_async.h"
#include "tl/atomic.h"
#include "tl/mbarrier.h"
#include "tl/wgmma.h"
#include "tl/tma.h"
#include "tl/math.h"
#include "tl/buffer.h"
#include "tl/entry.h"

#include "tl/cuda_compat.h"

#include "tl/arith.h"
#include "tl/shfl_wide.h"
#include "tl/layout.h"
#include "tl/reduce.h"
#include "tl/gemm.h"
#include "tl/gemm_fp8.h"
#include "tl/gemm_wgmma.h"
#if defined(TL_AMDGPU)
#include "tl/mfma.h"
#include "tl/gemm_mfma.h"
#endif
#include "tl/acc_store.h"
#include "tl/red.h"

// Checked-pointer overloads of the primitives and templates above.
#include "tl/buffer_ops.h"
// clang-format on

#endif  // TILEC_DEVICE_HOST_TL_TL_H_
