// One OS thread's block executor: runs the threads of one block as fibers and
// implements the runtime table of tl/abi.h for them (barriers, warp
// collectives, deferred cp.async, bounds checks). Internal to the emulator;
// RunGrid (emulator.h) deals blocks to BlockRunners.
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATOR_BLOCK_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATOR_BLOCK_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/targets/host/emulator/emulator.h"

namespace tilec::host {

// What every block of a launch shares. Validated by RunGrid.
struct GridContext {
  std::string kernel_name;
  KernelEntry entry = nullptr;
  void** args = nullptr;
  Dim3 grid, block;
  size_t smem_bytes = 0;
  int warp_size = 32;
  size_t stack_bytes = 0;
  uint8_t smem_fill = 0xFF;
  std::vector<GlobalBuffer> buffers;  // sorted by address, non-overlapping
  double time_limit_s = 0;            // 0: none
  std::chrono::steady_clock::time_point deadline;
  bool check_uninit = false;
  bool tma_land_early = false;
  std::string symbolizer;
};

class BlockRunner {
 public:
  explicit BlockRunner(const GridContext& grid);
  ~BlockRunner();
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  // Runs block `block_idx` to completion or to its first fault.
  absl::Status Run(Dim3 block_idx);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATOR_BLOCK_H_
