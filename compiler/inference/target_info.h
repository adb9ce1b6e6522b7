// What the target-neutral passes need to know about a target.
//
// Inference and lowering ask this record, never vendor code. A target folder
// (compiler/targets/...) or a hardware profile fills it in; the presets below
// are the CUDA architectures tilec compiles for.
#ifndef TILEC_COMPILER_INFERENCE_TARGET_INFO_H_
#define TILEC_COMPILER_INFERENCE_TARGET_INFO_H_

#include <cstdint>
#include <string>

namespace tilec::inference {

struct TargetInfo {
  std::string name;        // "sm_80", "sm_90a", ...
  int64_t warp_size = 32;  // threads per warp / wavefront
  int64_t max_threads_per_block = 1024;
  int64_t shared_memory_per_block = 0;  // bytes usable by one block
  int64_t vector_bytes = 16;            // widest vector load/store
  bool supports_cp_async = false;       // asynchronous global->shared copies
  bool supports_ldmatrix = false;       // ldmatrix shared->register loads
  bool supports_mma = false;            // m16n8k16 mma.sync (T.gemm)
  bool supports_wgmma = false;          // warpgroup wgmma.mma_async (Hopper)
  bool supports_tma = false;            // cp.async.bulk.tensor through tensor maps (Hopper)

  // NVIDIA A100 class (compute capability 8.0): 163 KiB of shared memory per
  // block.
  static TargetInfo Sm80() {
    return TargetInfo{"sm_80", 32, 1024, 163 * 1024, 16, true, true, true};
  }
  // NVIDIA H100/H200 class (9.0a): 227 KiB of shared memory per block.
  static TargetInfo Sm90a() {
    return TargetInfo{"sm_90a", 32, 1024, 227 * 1024, 16, true, true, true, true, true};
  }
};

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_TARGET_INFO_H_
