// RunGrid: validates the launch and deals its blocks to BlockRunners.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/targets/host/emulator/block.h"
#include "compiler/targets/host/emulator/emulator.h"

namespace tilec::host {
namespace {

absl::Status Validate(absl::string_view kernel, Dim3 grid, Dim3 block, size_t smem_bytes,
                      const EmulatorOptions& options) {
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("launch of kernel ", kernel, ": ", what));
  };
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) {
    return bad(absl::StrFormat("empty grid (%u, %u, %u)", grid.x, grid.y, grid.z));
  }
  if (block.x == 0 || block.y == 0 || block.z == 0) {
    return bad(absl::StrFormat("empty block (%u, %u, %u)", block.x, block.y, block.z));
  }
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  if (threads > 1024) return bad(absl::StrCat(threads, " threads per block (at most 1024)"));
  if (block.z > 64) return bad(absl::StrCat("block.z = ", block.z, " (at most 64)"));
  if (grid.x > 0x7fffffffu) {
    return bad(absl::StrFormat("grid (%u, %u, %u): x is at most 2^31 - 1", grid.x, grid.y, grid.z));
  }
  if (grid.y > 65535 || grid.z > 65535) {
    return bad(
        absl::StrFormat("grid (%u, %u, %u): y and z are at most 65535", grid.x, grid.y, grid.z));
  }
  if (smem_bytes > options.max_smem_bytes) {
    return bad(absl::StrCat(smem_bytes, " bytes of dynamic shared memory (at most ",
                            options.max_smem_bytes, ")"));
  }
  if (options.time_limit_s < 0) {
    return bad(absl::StrCat("a negative time limit (", options.time_limit_s, " s)"));
  }
  if (options.warp_size != 32 && options.warp_size != 64) {
    return bad(absl::StrCat("warp size ", options.warp_size, " (32 or 64)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunGrid(absl::string_view kernel_name, KernelEntry entry, void** args, Dim3 grid,
                     Dim3 block, size_t smem_bytes, const EmulatorOptions& options) {
  if (absl::Status s = Validate(kernel_name, grid, block, smem_bytes, options); !s.ok()) return s;
  GridContext ctx;
  ctx.kernel_name = std::string(kernel_name);
  ctx.entry = entry;
  ctx.args = args;
  ctx.grid = grid;
  ctx.block = block;
  ctx.smem_bytes = smem_bytes;
  ctx.warp_size = options.warp_size;
  ctx.stack_bytes = options.stack_bytes;
  ctx.smem_fill = options.smem_fill;
  ctx.buffers = options.buffers;
  ctx.time_limit_s = options.time_limit_s;
  ctx.deadline = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(std::max(options.time_limit_s, 0.0)));
  ctx.check_uninit = options.check_uninit;
  ctx.tma_land_early = options.tma_land_early;
  ctx.symbolizer = options.symbolizer;
  std::sort(ctx.buffers.begin(), ctx.buffers.end(),
            [](const GlobalBuffer& a, const GlobalBuffer& b) {
              return reinterpret_cast<uintptr_t>(a.data) < reinterpret_cast<uintptr_t>(b.data);
            });

  const uint64_t blocks = uint64_t{grid.x} * grid.y * grid.z;
  std::vector<uint64_t> order;  // block i runs as block order[i] (shuffled launches)
  if (options.shuffle_blocks) {
    order.resize(blocks);
    std::iota(order.begin(), order.end(), uint64_t{0});
    std::mt19937_64 rng(options.shuffle_seed);
    std::shuffle(order.begin(), order.end(), rng);
  }
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  absl::Status first_error;
  auto record = [&](absl::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.ok()) first_error = std::move(s);
    stop = true;
  };
  auto worker = [&] {
    try {
      BlockRunner runner(ctx);
      while (!stop) {
        const uint64_t n = next++;
        if (n >= blocks) break;
        const uint64_t i = order.empty() ? n : order[n];
        Dim3 b;
        b.x = static_cast<uint32_t>(i % grid.x);
        b.y = static_cast<uint32_t>((i / grid.x) % grid.y);
        b.z = static_cast<uint32_t>(i / (uint64_t{grid.x} * grid.y));
        if (absl::Status s = runner.Run(b); !s.ok()) record(std::move(s));
      }
    } catch (const std::bad_alloc&) {
      record(absl::ResourceExhaustedError(
          absl::StrCat("launch of kernel ", kernel_name, ": out of memory for the emulator")));
    }
  };
  const int workers = static_cast<int>(
      std::min<uint64_t>(blocks, static_cast<uint64_t>(std::max(options.os_threads, 1))));
  if (workers == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int i = 0; i < workers; ++i) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }
  return first_error;
}

}  // namespace tilec::host
