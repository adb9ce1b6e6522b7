// What the target-neutral passes need to know about a target.
//
// Inference and lowering ask this record, never vendor code. A target folder
// (compiler/targets/...) or a hardware profile fills it in; the presets below
// are the architectures tilec compiles for.
#ifndef TILEC_COMPILER_INFERENCE_TARGET_INFO_H_
#define TILEC_COMPILER_INFERENCE_TARGET_INFO_H_

#include <cstdint>
#include <string>
#include <utility>

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
  bool supports_mfma = false;           // AMD matrix cores (T.gemm as v_mfma, wave64)
  bool supports_fp8_fnuz = false;       // AMD's float8 (e4m3fnuz, e5m2fnuz): conversions, MFMA

  // NVIDIA A100 class (compute capability 8.0): 163 KiB of shared memory per
  // block.
  static TargetInfo Sm80() {
    return TargetInfo{"sm_80", 32, 1024, 163 * 1024, 16, true, true, true};
  }
  // NVIDIA H100/H200 class (9.0a): 227 KiB of shared memory per block.
  static TargetInfo Sm90a() {
    return TargetInfo{"sm_90a", 32, 1024, 227 * 1024, 16, true, true, true, true, true};
  }
  // AMD CDNA3 (MI300X, gfx942) and CDNA2 (MI250X, gfx90a): 64-lane
  // wavefronts, 64 KiB of LDS per workgroup, MFMA.
  // gfx942 also has the float8 (fnuz) conversions and MFMAs.
  static TargetInfo Gfx942() {
    TargetInfo t = Amd("gfx942");
    t.supports_fp8_fnuz = true;
    return t;
  }
  static TargetInfo Gfx90a() { return Amd("gfx90a"); }

 private:
  static TargetInfo Amd(std::string name) {
    TargetInfo t{std::move(name), 64, 1024, 64 * 1024, 16};
    t.supports_mfma = true;
    return t;
  }
};

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_TARGET_INFO_H_
