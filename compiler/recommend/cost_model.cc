#include "compiler/recommend/cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tilec::recommend {

KernelCost PredictKernel(const KernelStats& k, const HardwareProfile& p) {
  KernelCost c;
  const double sms = p.sm_count();
  const double blocks = static_cast<double>(std::max<int64_t>(k.blocks, 1));
  c.blocks_per_sm = std::max<int64_t>(BlocksPerSm(k, p, &c.occupancy_limit), 1);
  const double busiest = std::ceil(blocks / sms);
  const double resident = std::min<double>(static_cast<double>(c.blocks_per_sm), busiest);
  c.waves = blocks / (sms * static_cast<double>(c.blocks_per_sm));
  c.sm_utilization = blocks / (busiest * sms);

  double matrix_peak = MatrixPeakTflops(p, k.matrix_dtype);
  if (matrix_peak <= 0) matrix_peak = p.vector_fp32_tflops();
  const double matrix_rate_sm = matrix_peak * 1e12 / sms;
  const double vector_rate_sm = p.vector_fp32_tflops() * 1e12 / sms;
  const double shared_rate_sm = p.shared_memory_bytes_per_clock() * p.boost_clock_mhz() * 1e6;
  const double t_matrix = k.matrix_flops / matrix_rate_sm;
  const double t_shared = k.shared_read_bytes / shared_rate_sm;
  const double t_vector = k.vector_flops / vector_rate_sm;
  const double t_loop = k.loop_trips * kIterationCycles / (p.boost_clock_mhz() * 1e6);
  const double warps = std::ceil(static_cast<double>(std::max<int64_t>(k.threads, 1)) /
                                 std::max(1.0, static_cast<double>(p.warp_size())));
  const double partitions_busy = std::min(1.0, resident * warps / kSchedulersPerSm);
  const double compute_s =
      busiest * (std::max(t_matrix, t_shared) + t_vector + t_loop) / partitions_busy;

  const double bandwidth = p.memory_bandwidth_gbps() * 1e9;
  const double stage_bytes = k.bytes_per_stage > 0 ? k.bytes_per_stage : k.global_bytes;
  const double stages = static_cast<double>(std::max<int64_t>(k.num_stages, 1));
  const double in_flight_sm = resident * stage_bytes * stages;
  const double active_sms = std::min(sms, blocks);
  const double latency_s = p.memory_latency_ns() * 1e-9;
  const double achieved = std::max(1.0, std::min(bandwidth, active_sms * in_flight_sm / latency_s));
  const double tile_bytes = blocks * k.global_bytes;
  const double unique = k.unique_bytes > 0 ? std::min(k.unique_bytes, tile_bytes) : tile_bytes;
  const double working_set = std::min(
      unique, sms * static_cast<double>(c.blocks_per_sm) * stage_bytes * std::max(stages, 2.0));
  const double hit =
      working_set > 0 ? std::min(1.0, static_cast<double>(p.l2_cache_bytes()) / working_set) : 1;
  const double dram_bytes = unique + (tile_bytes - unique) * (1 - hit);
  const double dram_s = dram_bytes / achieved;
  const double l2_s = tile_bytes / (kL2BandwidthFactor * bandwidth);
  const double memory_s = std::max(dram_s, l2_s);
  c.achieved_gbps = achieved / 1e9;

  const double overlap = stages * resident;
  const double time_s =
      std::max(compute_s, memory_s) + std::min(compute_s, memory_s) / std::max(overlap, 1.0);
  c.compute_us = compute_s * 1e6;
  c.memory_us = memory_s * 1e6;
  c.time_us = time_s * 1e6 + kLaunchOverheadUs;

  const std::string occupancy = absl::StrFormat("%d block%s/SM (%s), %d stage%s", c.blocks_per_sm,
                                                c.blocks_per_sm == 1 ? "" : "s", c.occupancy_limit,
                                                k.num_stages, k.num_stages == 1 ? "" : "s");
  if (c.sm_utilization < 0.8) {
    c.limiter = "waves";
    c.reason = absl::StrFormat(
        "%d blocks on %d SMs: the busiest SM runs %d, %.0f%% of SM slots used; %s", k.blocks,
        p.sm_count(), static_cast<int64_t>(busiest), 100 * c.sm_utilization, occupancy);
  } else if (memory_s >= compute_s && achieved < 0.6 * bandwidth) {
    c.limiter = "occupancy";
    c.reason = absl::StrFormat(
        "memory latency not hidden: %.0f KiB in flight per SM reach %.0f of %.0f GB/s; %s",
        in_flight_sm / 1024, c.achieved_gbps, p.memory_bandwidth_gbps(), occupancy);
  } else if (compute_s >= memory_s) {
    c.limiter = "compute";
    c.reason = absl::StrFormat("%s-bound: %.2f GFLOP/block, %.1f waves; %s",
                               t_shared > t_matrix ? "shared-memory" : "compute",
                               (k.matrix_flops + k.vector_flops) * 1e-9, c.waves, occupancy);
  } else {
    c.limiter = "memory";
    c.reason = absl::StrFormat(
        "%s-bound: %.1f MB tile traffic, %.1f MB from DRAM at %.0f GB/s, "
        "%.1f waves; %s",
        l2_s > dram_s ? "L2" : "DRAM", tile_bytes * 1e-6, dram_bytes * 1e-6, c.achieved_gbps,
        c.waves, occupancy);
  }
  return c;
}

ProgramCost PredictProgram(const std::vector<KernelStats>& kernels, const HardwareProfile& p) {
  ProgramCost out;
  size_t slowest = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    out.kernels.push_back(PredictKernel(kernels[i], p));
    out.time_us += out.kernels.back().time_us;
    if (out.kernels[i].time_us > out.kernels[slowest].time_us) slowest = i;
  }
  if (!out.kernels.empty()) {
    out.limiter = out.kernels[slowest].limiter;
    out.reason = kernels.size() == 1 ? out.kernels[slowest].reason
                                     : absl::StrCat("kernel ", slowest,
                                                    " (slowest): ", out.kernels[slowest].reason);
  }
  return out;
}

}  // namespace tilec::recommend
