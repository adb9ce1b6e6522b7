// The analytic cost model: predicted time of a bound program on a hardware
// profile, from the per-kernel statistics of kernel_stats.h.
//
// Per kernel, with S SMs, B blocks, R resident blocks per SM (BlocksPerSm)
// and W = ceil(B / S) blocks on the busiest SM (wave quantization over the
// SM count):
//   compute = W * (max(matrix flops / per-SM matrix peak of A's dtype,
//                      shared operand bytes / per-SM shared bandwidth)
//                  + vector flops / per-SM FP32 rate
//                  + loop trips * kIterationCycles / clock) / U
//             where U = min(1, min(R, W) * warps per block / kSchedulersPerSm):
//             an SM's matrix and vector units sit in kSchedulersPerSm
//             partitions (NVIDIA's SM sub-partitions, AMD's SIMDs), each
//             fed by its own warps, so a block of one warp alone uses a
//             quarter of them
//   memory  = max(DRAM bytes / achieved bandwidth, B * global bytes / L2
//             bandwidth). Tile traffic beyond the kernel's unique bytes
//             (re-reads of the same tensors by other blocks) hits L2 with
//             rate min(1, L2 size / working set), the working set being
//             the smaller of the unique bytes and what the resident blocks
//             stream through their pipelines (S * R * bytes per stage *
//             max(num_stages, 2)); DRAM bytes = unique + missed re-reads. Achieved = min(DRAM
//             bandwidth, active SMs * bytes in flight per SM / memory latency) (Little's law),
//             bytes in flight per SM = min(R, W) * bytes per stage * num_stages. L2 bandwidth is
//             modelled as kL2BandwidthFactor * DRAM's.
//   time    = max(compute, memory) + min(compute, memory) / (num_stages *
//             min(R, W)) + kLaunchOverheadUs
// (pipelining and co-resident blocks overlap the smaller part with the
// larger). A program's time is the sum over its kernels.
//
// The limiting resource of a kernel: "waves" when fewer than 80% of the SM
// slots of the busiest wave count are used (B / (W * S) < 0.8, e.g. fewer
// blocks than SMs), else "occupancy" when memory dominates and the achieved
// bandwidth is under 60% of the DRAM bandwidth (too few bytes in flight),
// else "compute" or "memory", whichever part is larger. A program's is that
// of its slowest kernel.
#ifndef TILEC_COMPILER_RECOMMEND_COST_MODEL_H_
#define TILEC_COMPILER_RECOMMEND_COST_MODEL_H_

#include <string>
#include <vector>

#include "compiler/recommend/kernel_stats.h"
#include "compiler/recommend/profile.h"

namespace tilec::recommend {

inline constexpr double kLaunchOverheadUs = 2.0;
inline constexpr double kL2BandwidthFactor = 3.0;
// Cost of one main-loop iteration beyond its work (barriers, waits on the
// pipeline, address arithmetic), in SM clock cycles.
inline constexpr double kIterationCycles = 100.0;
// Partitions of an SM / CU that each issue from their own warps.
inline constexpr double kSchedulersPerSm = 4.0;

struct KernelCost {
  double time_us = 0;
  double compute_us = 0;
  double memory_us = 0;
  int64_t blocks_per_sm = 0;
  std::string occupancy_limit;  // what bounds blocks_per_sm
  double waves = 0;             // B / (S * R)
  double sm_utilization = 0;    // B / (W * S)
  double achieved_gbps = 0;
  std::string limiter;  // "compute" | "memory" | "occupancy" | "waves"
  std::string reason;   // one line
};

struct ProgramCost {
  double time_us = 0;
  std::string limiter;
  std::string reason;
  std::vector<KernelCost> kernels;
};

KernelCost PredictKernel(const KernelStats& k, const HardwareProfile& profile);
ProgramCost PredictProgram(const std::vector<KernelStats>& kernels, const HardwareProfile& profile);

}  // namespace tilec::recommend

#endif  // TILEC_COMPILER_RECOMMEND_COST_MODEL_H_
