// The tl device library for CUDA: the one header generated code includes.
//
// It declares the primitives of docs/cuda_backend.md ("Primitives") as thin
// inline-PTX wrappers (this folder, compiled by NVRTC for sm_80 and sm_90a),
// then the target-neutral templates built on them (common/tl: integer
// arithmetic helpers, layouts, gemm, warp reductions). The host emulator's
// tl/tl.h declares the same API.
#ifndef TILEC_DEVICE_CUDA_TL_TL_H_
#define TILEC_DEVICE_CUDA_TL_TL_H_

// Primitives first, then the templates built on them (which expect the
// primitives declared: they are included only through tl.h).
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
#include "tl/buffer.h"
#include "tl/math.h"

#include "tl/arith.h"
#include "tl/shfl_wide.h"
#include "tl/layout.h"
#include "tl/reduce.h"
#include "tl/gemm.h"
#include "tl/gemm_fp8.h"
#include "tl/gemm_wgmma.h"
#include "tl/acc_store.h"
#include "tl/red.h"
// clang-format on

#endif  // TILEC_DEVICE_CUDA_TL_TL_H_
