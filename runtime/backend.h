// Device backends of the runtime: one per way of running an artifact.
//
//   cuda      the CUDA driver API, libcuda.so.1 loaded with dlopen (module
//             from memory, dynamic shared memory above 48 KiB, launch on a
//             stream, events); cuda_backend.cc
//   hip       the HIP runtime, libamdhip64.so loaded with dlopen (module load
//             and launch); hip_backend.cc
//   emulator  the artifact's generated source built for the host with clang
//             and run on the SIMT emulator; emulator_backend.cc
//
// Nothing here links a vendor library: a build without a GPU or a driver has
// every backend, and opening one whose library is missing is
// FAILED_PRECONDITION naming the library.
#ifndef TILEC_RUNTIME_BACKEND_H_
#define TILEC_RUNTIME_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/device/host/tl/abi.h"
#include "runtime/artifact.h"

namespace tilec::runtime {

// Where memory lives, with DLPack's device type codes.
enum class DeviceType : int32_t { kCpu = 1, kCuda = 2, kHip = 10 };

// "cuda:0", "hip:1", "emulator" (the emulator runs on host memory).
struct DeviceSpec {
  enum class Backend { kCuda, kHip, kEmulator };
  Backend backend = Backend::kEmulator;
  int ordinal = 0;

  static absl::StatusOr<DeviceSpec> Parse(std::string_view text);
  std::string ToString() const;
  // The device type of the memory kernels on this device read and write.
  DeviceType memory_type() const;
};

// What a backend knows of its device (workers announce it; bench prints it).
struct DeviceInfo {
  std::string name;             // "NVIDIA H100 80GB HBM3", "SIMT emulator"
  std::string arch;             // "sm_90", "gfx942", "host"
  int multiprocessors = 0;      // SMs / CUs
  int clock_khz = 0;            // SM clock
  int memory_clock_khz = 0;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  std::string driver_version;   // "12.8" (CUDA driver API version)
};

// One global buffer a launch touches, for the emulator's bounds checks.
struct LaunchBuffer {
  void* data = nullptr;
  size_t bytes = 0;
  std::string name;
};

struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  size_t smem_bytes = 0;
};

// An artifact loaded on a device: its kernels by index (Artifact::kernels).
class Module {
 public:
  virtual ~Module() = default;
  // `args` holds one pointer per kernel parameter, pointing at its value.
  virtual absl::Status Launch(int kernel, const LaunchConfig& config, void** args,
                              const std::vector<LaunchBuffer>& buffers, void* stream) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceSpec device() const = 0;
  virtual absl::StatusOr<DeviceInfo> Info() = 0;

  // FAILED_PRECONDITION when the artifact is not for this device (an sm_90a
  // cubin on an sm_80 device, a cubin on HIP) or lacks what the backend loads.
  virtual absl::StatusOr<std::unique_ptr<Module>> Load(const Artifact& artifact) = 0;

  virtual absl::StatusOr<void*> Alloc(size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  virtual absl::Status Zero(void* ptr, size_t bytes, void* stream) = 0;
  // Stream-ordered memory for a launch's workspaces: usable by work queued on
  // `stream` after the call, returned once that work is done (the CUDA
  // backend uses the driver's stream-ordered allocator; the default waits).
  virtual absl::StatusOr<void*> AllocOnStream(size_t bytes, void* stream) { return Alloc(bytes); }
  virtual absl::Status FreeOnStream(void* ptr, void* stream) {
    absl::Status st = Synchronize(stream);
    Free(ptr);
    return st;
  }
  virtual absl::Status CopyToDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual absl::Status CopyToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual absl::Status Synchronize(void* stream) = 0;

  // Checks that `ptr` is memory of this device that a kernel can read (the
  // CUDA backend asks the driver); `what` names the argument in the error.
  virtual absl::Status CheckPointer(const void* ptr, const std::string& what) = 0;

  // A TMA tensor map (128 bytes, 64-byte aligned at `out`) for `map` (the
  // geometry of tl/abi.h, checked by the caller): cuTensorMapEncodeTiled on
  // CUDA, the emulator's own encoding on the emulator; UNIMPLEMENTED where
  // the device has no TMA.
  virtual absl::Status EncodeTensorMap(const tl::host::TensorMapDesc& map, void* out) {
    return absl::UnimplementedError("this device has no TMA tensor maps");
  }

  // Device-side timing: a started event pair around work on `stream`.
  class Timer {
   public:
    virtual ~Timer() = default;
    virtual absl::Status Start(void* stream) = 0;
    virtual absl::Status Stop(void* stream) = 0;
    // Waits for the stop event; milliseconds between the two.
    virtual absl::StatusOr<double> ElapsedMs() = 0;
  };
  virtual absl::StatusOr<std::unique_ptr<Timer>> NewTimer() = 0;
  // Evicts the device's last-level cache (writes a buffer larger than it) so
  // the next run reads from memory; a no-op where there is none to flush.
  virtual absl::Status FlushCache(void* stream) = 0;
};

struct EmulatorBackendOptions {
  double time_limit_s = 600;  // per launch
  int os_threads = 1;         // blocks run concurrently on this many threads
  std::string clang = "clang++-19";
  std::string work_dir;  // where the host build goes; $TMPDIR or /tmp
};

absl::StatusOr<std::unique_ptr<Backend>> OpenCudaBackend(int ordinal);
absl::StatusOr<std::unique_ptr<Backend>> OpenHipBackend(int ordinal);
std::unique_ptr<Backend> OpenEmulatorBackend(const EmulatorBackendOptions& options = {});

// The backend of `device` ("cuda:0", "hip:0", "emulator").
absl::StatusOr<std::unique_ptr<Backend>> OpenBackend(const DeviceSpec& device,
                                                     const EmulatorBackendOptions& options = {});

}  // namespace tilec::runtime

#endif  // TILEC_RUNTIME_BACKEND_H_
