// Running emitted CUDA C++ on the SIMT emulator, program-level: compiles the
// source for the host, allocates the global workspaces (zeroed), and
// launches every kernel in order over tensors the interpreter also uses, so
// the two executors can be compared on the same inputs.
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATE_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/toolchain.h"

namespace tilec::host {

// Runs `source` (emitted from `program`) with `args`, one tensor per program
// parameter in ABI order (scalars as 0-d tensors), updated in place.
// `dims` gives every dynamic dim by name. Global tensors and workspaces are
// registered with the emulator's bounds checks. Device faults come back as
// errors naming the kernel, block and threads.
absl::Status EmulateProgram(const ir::Program& program, const cuda::CudaSource& source,
                            std::vector<interp::Tensor>& args,
                            const std::map<std::string, int64_t>& dims = {},
                            LaunchOptions options = {});

// The same with `source` already built for the host (CompileHost) into
// `module`, for callers that choose their own HostOptions (optimisation
// level, debug info) or build several sources' kernels into one module (the
// module must define the kernels `source` names).
absl::Status EmulateProgram(const ir::Program& program, const cuda::CudaSource& source,
                            const HostModule& module, std::vector<interp::Tensor>& args,
                            const std::map<std::string, int64_t>& dims = {},
                            LaunchOptions options = {});

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATE_H_
