// Which T.gemm of a kernel run as Hopper's warpgroup mma (wgmma.mma_async)
// on a target that has it (docs/cuda_backend.md "wgmma").
//
// A gemm runs as wgmma when both operands are shared buffers the layout plan
// swizzles (tl::Swizzled: the 32-, 64- or 128-byte wgmma swizzle modes), each
// the whole buffer or one matrix X[b, :, :] of it (8k rows), of float16 or
// bfloat16 (float8 e4m3/e5m2 with A stored [M, K] and B stored [N, K]: the
// float8 wgmma is K-major only), the accumulator a float32 or float16
// fragment, K a multiple of the instruction's k (16, or 32 for float8), and a
// wgmma partition exists (ChooseWgmmaPartition; an MN-major B, stored
// [K, N], needs each warpgroup's columns to start a swizzle block). A may
// also be a whole float16/bfloat16 fragment (register A) when each
// warpgroup computes one m64 tile: its register-A layout is then that of
// the m16n8k16 templates, which is the ISA's wgmma A fragment. Every
// other gemm stays on mma.sync, and so does every gemm accumulating into the
// same fragment as one that must (an accumulator has one layout).
#ifndef TILEC_COMPILER_INFERENCE_WGMMA_PLAN_H_
#define TILEC_COMPILER_INFERENCE_WGMMA_PLAN_H_

#include <cstdint>
#include <map>
#include <optional>

#include "compiler/inference/layout.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

// The wgmma partition of one gemm in a block of `threads` threads, or nullopt
// when it cannot run as wgmma.
std::optional<GemmWarpPartition> WgmmaPartition(const ir::GemmNode& g, int64_t threads);

// The gemms of a kernel body that run as wgmma, with their partitions.
std::map<const ir::GemmNode*, GemmWarpPartition> PlanWgmma(const ir::Stmt& body, int64_t threads);

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_WGMMA_PLAN_H_
