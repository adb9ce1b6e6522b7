// In-process CUDA C++ -> cubin compilation with NVRTC.
//
// libnvrtc is loaded with dlopen on first use (from $CUDA_HOME/lib64,
// $CUDA_PATH/lib64, /usr/local/cuda/lib64, then by soname), so tilec builds
// and runs without the CUDA toolkit; only compiling CUDA code needs it.
//
// CompileCuda compiles one translation unit of generated code for one real
// architecture. The tl device headers (device::DeviceHeaders(kCuda)) are
// given to NVRTC in memory, and the toolkit's include folder (for
// cuda_fp16.h & co.) is on the include path. The result carries the cubin,
// NVRTC's log, NVRTC's version and ptxas's resource report per kernel.
//
// Errors:
//   FAILED_PRECONDITION  NVRTC cannot be loaded (the message says where it
//                        looked and how to point tilec at a toolkit).
//   INTERNAL             the source does not compile. Generated code that
//                        fails to compile is a compiler bug; the message names
//                        the kernels the errors occur in and holds the log
//                        trimmed to its head and tail (TrimToolLog). The full
//                        log is attached as the payload kNvrtcLogPayload.
//   INVALID_ARGUMENT     bad options (e.g. a negative register limit).
//   other NVRTC API failures are INTERNAL with NVRTC's error string.
#ifndef TILEC_COMPILER_TARGETS_CUDA_NVRTC_H_
#define TILEC_COMPILER_TARGETS_CUDA_NVRTC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::cuda {

enum class CudaArch {
  kSm80,   // A100: mma.sync, ldmatrix, cp.async
  kSm90a,  // H100/H200: the sm_80 set plus wgmma, TMA, setmaxnreg
};

// "sm_80", "sm_90a".
std::string_view CudaArchName(CudaArch arch);
// Parses "sm_80" / "sm_90a"; INVALID_ARGUMENT naming the accepted values otherwise.
absl::StatusOr<CudaArch> ParseCudaArch(std::string_view name);

struct NvrtcOptions {
  // -lineinfo: source line information in the cubin (for profilers).
  bool line_info = false;
  // --maxrregcount; 0 leaves the limit to __launch_bounds__ and ptxas.
  int max_registers = 0;
  // -D definitions, "NAME" or "NAME=VALUE".
  std::vector<std::string> defines;
  // More include folders, searched after the in-memory tl headers.
  std::vector<std::string> include_dirs;
  // Passed through to NVRTC last (e.g. "-Xptxas=-O2").
  std::vector<std::string> extra_options;
};

// ptxas's report (--ptxas-options=-v) for one __global__ function.
struct PtxasKernelInfo {
  std::string name;
  int registers = 0;
  int barriers = 0;
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t shared_bytes = 0;  // static shared memory (generated code uses none)
};

struct NvrtcResult {
  std::string cubin;                     // ELF bytes
  std::string log;                       // NVRTC's full log (warnings and the ptxas report)
  std::string nvrtc_version;             // "13.0"
  std::vector<PtxasKernelInfo> kernels;  // in the order ptxas reports them
  double compile_seconds = 0;
};

// Payload type URL under which a failed compile attaches the full log.
inline constexpr char kNvrtcLogPayload[] = "tilec/nvrtc-log";

// Compiles `source`; `name` is the file name used in the log (e.g.
// "matmul.cu").
absl::StatusOr<NvrtcResult> CompileCuda(const std::string& source, const std::string& name,
                                        CudaArch arch, const NvrtcOptions& options = {});

// NVRTC's version as "major.minor", or "" when NVRTC cannot be loaded.
std::string NvrtcVersion();

// Parses the ptxas -v lines of an NVRTC log into per-kernel reports.
std::vector<PtxasKernelInfo> ParsePtxasReport(std::string_view log);

// Keeps the first `head` and last `tail` lines of a tool log, replacing the
// middle with a line saying how many were left out.
std::string TrimToolLog(std::string_view log, int head = 40, int tail = 20);

// The NVRTC log with only the diagnostics about `own_file` (the generated
// source) and tilec's device headers: a diagnostic about any other file
// (one a preprocessor directive reached) is replaced by a line saying it was
// left out, so that no other file's text is ever quoted back. Lines outside
// diagnostics (NVRTC's own, the error count) are kept.
std::string OwnDiagnosticsOnly(std::string_view log, std::string_view own_file);

// The lines of `own_file` that the log reports errors at, in log order.
std::vector<int> ErrorLines(std::string_view log, std::string_view own_file);

// Names of the __global__ functions of `source` that the errors in `log`
// point into: "<file>(<line>): error" lines (mapped to the kernel whose body
// holds the line) and ptxas messages quoting a kernel's name. Sorted, unique.
std::vector<std::string> KernelsWithErrors(std::string_view source, std::string_view file_name,
                                           std::string_view log);

}  // namespace tilec::cuda

#endif  // TILEC_COMPILER_TARGETS_CUDA_NVRTC_H_
