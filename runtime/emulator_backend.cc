// The emulator backend: an artifact's generated CUDA C++ built for the host
// (compiler/targets/host/toolchain.h) and run on the SIMT emulator, over host
// memory. Every path of a launch except the driver call itself runs here, so
// CI exercises the runtime without a GPU. Times are CPU wall times.
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "compiler/targets/host/launch.h"
#include "compiler/targets/host/tensor_map.h"
#include "compiler/targets/host/toolchain.h"
#include "runtime/backend.h"

namespace tilec::runtime {
namespace {

class EmulatorModule : public Module {
 public:
  EmulatorModule(host::HostModule module, std::vector<std::string> kernels,
                 const EmulatorBackendOptions& options, int warp_size)
      : module_(std::move(module)),
        kernels_(std::move(kernels)),
        options_(options),
        warp_size_(warp_size) {}

  absl::Status Launch(int kernel, const LaunchConfig& config, void** args,
                      const std::vector<LaunchBuffer>& buffers, void* stream) override {
    host::LaunchOptions options;
    options.time_limit_s = options_.time_limit_s;
    options.os_threads = options_.os_threads;
    options.warp_size = warp_size_;
    for (const LaunchBuffer& b : buffers) options.buffers.push_back({b.data, b.bytes, b.name});
    host::Dim3 grid{config.grid[0], config.grid[1], config.grid[2]};
    host::Dim3 block{config.block[0], config.block[1], config.block[2]};
    std::vector<void*> arg_list;
    absl::StatusOr<int> arity = module_.Arity(kernels_[kernel]);
    if (!arity.ok()) return arity.status();
    arg_list.assign(args, args + *arity);
    return host::Launch(module_, kernels_[kernel], grid, block, config.smem_bytes, arg_list,
                        options);
  }

 private:
  host::HostModule module_;
  std::vector<std::string> kernels_;
  EmulatorBackendOptions options_;
  int warp_size_;  // 64 for AMD code (wavefronts)
};

class EmulatorBackend : public Backend {
 public:
  explicit EmulatorBackend(const EmulatorBackendOptions& options) : options_(options) {}

  DeviceSpec device() const override { return {DeviceSpec::Backend::kEmulator, 0}; }

  absl::StatusOr<DeviceInfo> Info() override {
    DeviceInfo info;
    info.name = "tilec SIMT emulator (CPU)";
    info.arch = "host";
    info.multiprocessors = options_.os_threads;
    info.driver_version = "none";
    return info;
  }

  absl::Status EncodeTensorMap(const tl::host::TensorMapDesc& m, void* out) override {
    absl::StatusOr<tl::host::TensorMapDesc> encoded = host::EncodeHostTensorMap(m, "a tensor");
    if (!encoded.ok()) return encoded.status();
    std::memcpy(out, &*encoded, sizeof *encoded);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Module>> Load(const Artifact& artifact) override {
    // CUDA and AMD artifacts alike: the generated source is built for the
    // host; AMD code runs with 64-lane wavefronts.
    const bool amd = artifact.vendor() == "hip";
    if (artifact.source.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "artifact ", artifact.program,
          " carries no generated source (metadata \"source\" or a .cu file beside it), which the "
          "emulator builds; recompile it with this version of tilec"));
    }
    host::HostOptions options;
    options.clang = options_.clang;
    options.work_dir = options_.work_dir;
    options.source_name = artifact.program + (amd ? ".hip" : ".cu");
    absl::StatusOr<host::HostModule> module = host::CompileHost(artifact.source, options);
    if (!module.ok()) return module.status();
    std::vector<std::string> kernels;
    for (const KernelSpec& k : artifact.kernels) {
      if (absl::StatusOr<int> arity = module->Arity(k.name); !arity.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat("the artifact's source does not define kernel ", k.name, ": ",
                         arity.status().message()));
      } else if (*arity != static_cast<int>(k.args.size())) {
        return absl::FailedPreconditionError(absl::StrCat("kernel ", k.name, " takes ", *arity,
                                                          " parameters in the source but ",
                                                          k.args.size(), " in the metadata"));
      }
      kernels.push_back(k.name);
    }
    return std::make_unique<EmulatorModule>(*std::move(module), std::move(kernels), options_,
                                            amd ? 64 : 32);
  }

  absl::StatusOr<void*> Alloc(size_t bytes) override {
    void* p = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) / 256 * 256);
    if (p == nullptr)
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes, " bytes of host memory"));
    return p;
  }
  void Free(void* ptr) override { std::free(ptr); }
  absl::Status Zero(void* ptr, size_t bytes, void*) override {
    std::memset(ptr, 0, bytes);
    return absl::OkStatus();
  }
  absl::Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  }
  absl::Status Synchronize(void*) override { return absl::OkStatus(); }
  absl::Status CheckPointer(const void* ptr, const std::string& what) override {
    if (ptr == nullptr) return absl::InvalidArgumentError(what + " is a null pointer");
    return absl::OkStatus();
  }

  class WallTimer : public Timer {
   public:
    absl::Status Start(void*) override {
      start_ = std::chrono::steady_clock::now();
      return absl::OkStatus();
    }
    absl::Status Stop(void*) override {
      stop_ = std::chrono::steady_clock::now();
      return absl::OkStatus();
    }
    absl::StatusOr<double> ElapsedMs() override {
      return std::chrono::duration<double, std::milli>(stop_ - start_).count();
    }

   private:
    std::chrono::steady_clock::time_point start_, stop_;
  };
  absl::StatusOr<std::unique_ptr<Timer>> NewTimer() override {
    return std::make_unique<WallTimer>();
  }
  absl::Status FlushCache(void*) override { return absl::OkStatus(); }

 private:
  EmulatorBackendOptions options_;
};

}  // namespace

std::unique_ptr<Backend> OpenEmulatorBackend(const EmulatorBackendOptions& options) {
  return std::make_unique<EmulatorBackend>(options);
}

}  // namespace tilec::runtime
