// Launching a kernel of a host module on the SIMT emulator: the emulator's
// counterpart of cuLaunchKernel.
//
//   Launch(module, "matmul_k0", grid, block, smem_bytes, {&A, &B, &C}, options)
//
// `args` holds one pointer per kernel parameter, pointing at the value (for a
// tensor parameter, at the device pointer variable), in the kernel's parameter
// order. The emulator runs every block (emulator/emulator.h describes the
// execution model and the checks). Register the launch's buffers in
// options.buffers to have generated code's global loads and stores (through
// its tl::gptr parameters), cp_async sources, atomics and tl::check_global
// checked against them; shared buffers declared with tl::smem_buffer are
// always checked. options.time_limit_s bounds the launch's wall time.
//
// Errors: NOT_FOUND for an unknown kernel; INVALID_ARGUMENT for a parameter
// count that does not match the kernel's or a launch configuration the GPU
// would reject; ABORTED for a device-side fault (barrier divergence, a warp
// collective some lanes miss, an mbarrier deadlock, out-of-bounds shared or
// registered global access, misaligned async copies, an exception escaping a
// thread), naming the kernel, block and threads and, when known, the source
// line; DEADLINE_EXCEEDED when the launch runs past options.time_limit_s.
#ifndef TILEC_COMPILER_TARGETS_HOST_LAUNCH_H_
#define TILEC_COMPILER_TARGETS_HOST_LAUNCH_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/targets/host/emulator/emulator.h"
#include "compiler/targets/host/toolchain.h"

namespace tilec::host {

using LaunchOptions = EmulatorOptions;

absl::Status Launch(const HostModule& module, const std::string& kernel, Dim3 grid, Dim3 block,
                    size_t smem_bytes, std::vector<void*> args,
                    const LaunchOptions& options = LaunchOptions());

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_LAUNCH_H_
