// The SIMT emulator: runs a kernel compiled for the host target (tl/abi.h) over
// a grid, each thread of a block a fiber (Boost.Context).
//
// Execution model:
// - Blocks run one after another on each of `os_threads` OS threads (blocks
//   are dealt from a shared counter, x fastest, or in a random order drawn
//   from `shuffle_seed` when `shuffle_blocks`: a kernel whose result depends
//   on the order of its blocks shows it). All threads of a block run on
//   one OS thread, switching only inside runtime calls (barriers, warp
//   collectives, mbarrier waits): between those, a thread runs alone.
// - syncthreads() is a barrier over all threads of the block. Warp collectives
//   (shuffles, ldmatrix, mma) wait until every lane of the warp (warp w holds
//   threads [w * warp_size, (w + 1) * warp_size) in linear thread order) has
//   arrived at the same collective, then compute all lanes' results at once.
//   Votes wait for the lanes of their member mask only.
// - mbarriers (tl/mbarrier.h) follow the PTX ISA: a waiting thread yields to
//   the block's other threads; a wait no thread can complete is a deadlock.
// - Generated code's loads and stores go through checked pointers
//   (tl/buffer.h): tl::gptr parameters against the registered buffer holding
//   them, tl::smem_buffer buffers against exactly their bytes.
// - cp.async copies are deferred until cp_async_wait retires their group.
// - Dynamic shared memory is allocated per block and filled with `smem_fill`.
//
// Errors (returned, never aborting the process; the first one wins and stops
// the launch), all naming the kernel and the block, and the line of the
// generated source where a code address is known (resolved with
// `symbolizer` from the module's debug info):
// - ABORTED: a device-side fault: barrier divergence (threads wait at
//   syncthreads while others have exited), a warp collective that some lanes
//   never reach (exited, at a barrier, or at a different collective), a vote
//   whose mask's lanes never all arrive, an mbarrier deadlock or misuse, an
//   out-of-bounds checked load or store (load or store, bytes, buffer, how
//   far out), a read of unwritten shared memory (check_uninit), shared or
//   registered-global bounds and alignment violations of the primitives, a
//   trap, a C++ exception escaping a thread.
// - DEADLINE_EXCEEDED: the launch ran past time_limit_s (the scheduler polls
//   at every switch, checked accesses every few thousand accesses).
// - INVALID_ARGUMENT: a launch configuration the GPU would reject (empty grid
//   or block, more than 1024 threads per block, too much shared memory, a warp
//   size other than 32 or 64, a negative time limit).
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATOR_EMULATOR_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATOR_EMULATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compiler/device/host/tl/abi.h"

namespace tilec::host {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// A global buffer the kernel may touch through checked primitives.
struct GlobalBuffer {
  const void* data = nullptr;
  size_t bytes = 0;
  std::string name;  // for messages
};

struct EmulatorOptions {
  int warp_size = 32;              // 32 (NVIDIA) or 64 (AMD wavefronts)
  size_t stack_bytes = 256 << 10;  // per thread fiber
  uint8_t smem_fill = 0xFF;        // poison: NaN in every float type
  int os_threads = 1;              // blocks run concurrently on this many threads
  size_t max_smem_bytes = 232448;  // the largest dynamic shared memory per block (sm_90)
  bool shuffle_blocks = false;     // run the blocks in a random order ...
  uint64_t shuffle_seed = 0;       // ... drawn from this seed
  // When non-empty, every global access of generated code (through its
  // tl::gptr parameters), cp_async sources, atomics and tl::check_global must
  // lie inside one of these (a tl::gptr parameter inside the one holding it).
  std::vector<GlobalBuffer> buffers;
  // The watchdog: a launch still running after this many seconds of wall
  // time stops with DEADLINE_EXCEEDED (0: no limit).
  double time_limit_s = 0;
  // Loads through tl::smem_buffer pointers of bytes no thread of the block
  // has written (stores through such pointers, cp.async landing) are errors.
  // Slower.
  bool check_uninit = false;
  // When TMA loads land: false, as late as the hardware may (when a thread
  // waits on the barrier: a read that does not wait sees old data); true, as
  // early (when issued: a load that overwrites a stage still being read
  // corrupts it). Running both exposes both kinds of race.
  bool tma_land_early = false;
  // Resolves code addresses to lines of the generated source in messages; a
  // name looked up on PATH, or a path; empty: no lines.
  std::string symbolizer = "llvm-symbolizer-19";
};

// The exported entry of one kernel (TILEC_HOST_ENTRY).
using KernelEntry = void (*)(tl::host::Thread* thread, void** args);

// Runs `entry` over the grid. `args` is passed to every thread unchanged (one
// pointer per kernel parameter, pointing at its value).
absl::Status RunGrid(absl::string_view kernel_name, KernelEntry entry, void** args, Dim3 grid,
                     Dim3 block, size_t smem_bytes, const EmulatorOptions& options);

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATOR_EMULATOR_H_
