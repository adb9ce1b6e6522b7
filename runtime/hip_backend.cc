// The HIP backend: the HIP runtime from libamdhip64.so, loaded with dlopen at
// the first use (module load from memory and launch, events, memory). It is
// compiled everywhere and exercised only on an AMD GPU, which CI does not
// have. Only entry points whose signatures are stable across ROCm releases
// are used (no hipDeviceProp_t, whose layout changes between releases).
#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "runtime/backend.h"

namespace tilec::runtime {
namespace {

using hipError_t = int;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;

struct Hip {
  void* handle = nullptr;
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceCount)(int*);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipDeviceGetName)(char*, int, int);
  hipError_t (*hipDeviceTotalMem)(size_t*, int);
  hipError_t (*hipDriverGetVersion)(int*);
  hipError_t (*hipModuleLoadData)(hipModule_t*, const void*);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, hipStream_t, void**, void**);
  hipError_t (*hipMalloc)(void**, size_t);
  hipError_t (*hipFree)(void*);
  hipError_t (*hipMemsetAsync)(void*, int, size_t, hipStream_t);
  hipError_t (*hipMemcpyHtoD)(void*, const void*, size_t);
  hipError_t (*hipMemcpyDtoH)(void*, void*, size_t);
  hipError_t (*hipStreamSynchronize)(hipStream_t);
  hipError_t (*hipEventCreate)(hipEvent_t*);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventSynchronize)(hipEvent_t);
  hipError_t (*hipEventElapsedTime)(float*, hipEvent_t, hipEvent_t);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  const char* (*hipGetErrorString)(hipError_t);
};

absl::StatusOr<const Hip*> LoadHip() {
  static Hip hip;
  static absl::Status status = [] {
    for (const char* name : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}) {
      hip.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (hip.handle != nullptr) break;
    }
    if (hip.handle == nullptr) {
      return absl::FailedPreconditionError(
          "the HIP backend needs the ROCm runtime (libamdhip64.so), which cannot be loaded");
    }
    absl::Status missing;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(hip.handle, name));
      if (fn == nullptr && missing.ok())
        missing = absl::FailedPreconditionError(absl::StrCat("libamdhip64.so lacks ", name));
    };
#define TILEC_HIP(name) sym(hip.name, #name)
    TILEC_HIP(hipInit);
    TILEC_HIP(hipGetDeviceCount);
    TILEC_HIP(hipSetDevice);
    TILEC_HIP(hipDeviceGetName);
    TILEC_HIP(hipDeviceTotalMem);
    TILEC_HIP(hipDriverGetVersion);
    TILEC_HIP(hipModuleLoadData);
    TILEC_HIP(hipModuleUnload);
    TILEC_HIP(hipModuleGetFunction);
    TILEC_HIP(hipModuleLaunchKernel);
    TILEC_HIP(hipMalloc);
    TILEC_HIP(hipFree);
    TILEC_HIP(hipMemsetAsync);
    TILEC_HIP(hipMemcpyHtoD);
    TILEC_HIP(hipMemcpyDtoH);
    TILEC_HIP(hipStreamSynchronize);
    TILEC_HIP(hipEventCreate);
    TILEC_HIP(hipEventRecord);
    TILEC_HIP(hipEventSynchronize);
    TILEC_HIP(hipEventElapsedTime);
    TILEC_HIP(hipEventDestroy);
    TILEC_HIP(hipGetErrorString);
#undef TILEC_HIP
    if (!missing.ok()) return missing;
    if (hipError_t e = hip.hipInit(0); e != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("hipInit failed with HIP error ", e, ": no usable AMD GPU"));
    }
    return absl::OkStatus();
  }();
  if (!status.ok()) return status;
  return &hip;
}

absl::Status HipError(const Hip& h, hipError_t e, const std::string& what) {
  const char* text = h.hipGetErrorString(e);
  std::string message = absl::StrCat(what, ": HIP error ", e, text ? absl::StrCat(": ", text) : "");
  if (e == 2) return absl::ResourceExhaustedError(message);     // hipErrorOutOfMemory
  if (e == 209) return absl::FailedPreconditionError(message);  // no binary for this GPU
  return absl::InternalError(message);
}

#define HIP_RETURN_IF_ERROR(call, what)                                                            \
  do {                                                                                             \
    if (hipError_t hip_error_ = (call); hip_error_ != 0) return HipError(*hip_, hip_error_, what); \
  } while (false)

class HipModule : public Module {
 public:
  HipModule(const Hip* hip, int ordinal, hipModule_t module, std::vector<hipFunction_t> fns,
            std::vector<std::string> names)
      : hip_(hip),
        ordinal_(ordinal),
        module_(module),
        fns_(std::move(fns)),
        names_(std::move(names)) {}
  ~HipModule() override {
    hip_->hipSetDevice(ordinal_);
    hip_->hipModuleUnload(module_);
  }
  absl::Status Launch(int kernel, const LaunchConfig& c, void** args,
                      const std::vector<LaunchBuffer>&, void* stream) override {
    HIP_RETURN_IF_ERROR(hip_->hipSetDevice(ordinal_), "hipSetDevice");
    HIP_RETURN_IF_ERROR(
        hip_->hipModuleLaunchKernel(fns_[kernel], c.grid[0], c.grid[1], c.grid[2], c.block[0],
                                    c.block[1], c.block[2], static_cast<unsigned>(c.smem_bytes),
                                    static_cast<hipStream_t>(stream), args, nullptr),
        "launch of kernel " + names_[kernel]);
    return absl::OkStatus();
  }

 private:
  const Hip* hip_;
  int ordinal_;
  hipModule_t module_;
  std::vector<hipFunction_t> fns_;
  std::vector<std::string> names_;
};

class HipTimer : public Backend::Timer {
 public:
  HipTimer(const Hip* hip, hipEvent_t start, hipEvent_t stop)
      : hip_(hip), start_(start), stop_(stop) {}
  ~HipTimer() override {
    hip_->hipEventDestroy(start_);
    hip_->hipEventDestroy(stop_);
  }
  absl::Status Start(void* stream) override {
    HIP_RETURN_IF_ERROR(hip_->hipEventRecord(start_, static_cast<hipStream_t>(stream)),
                        "hipEventRecord");
    return absl::OkStatus();
  }
  absl::Status Stop(void* stream) override {
    HIP_RETURN_IF_ERROR(hip_->hipEventRecord(stop_, static_cast<hipStream_t>(stream)),
                        "hipEventRecord");
    return absl::OkStatus();
  }
  absl::StatusOr<double> ElapsedMs() override {
    HIP_RETURN_IF_ERROR(hip_->hipEventSynchronize(stop_), "hipEventSynchronize");
    float ms = 0;
    HIP_RETURN_IF_ERROR(hip_->hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime");
    return static_cast<double>(ms);
  }

 private:
  const Hip* hip_;
  hipEvent_t start_, stop_;
};

class HipBackend : public Backend {
 public:
  HipBackend(const Hip* hip, int ordinal) : hip_(hip), ordinal_(ordinal) {}
  ~HipBackend() override {
    if (flush_ != nullptr) hip_->hipFree(flush_);
  }

  DeviceSpec device() const override { return {DeviceSpec::Backend::kHip, ordinal_}; }

  absl::StatusOr<DeviceInfo> Info() override {
    DeviceInfo info;
    char name[256] = {};
    HIP_RETURN_IF_ERROR(hip_->hipDeviceGetName(name, sizeof name - 1, ordinal_),
                        "hipDeviceGetName");
    info.name = name;
    info.arch = "gfx";  // the exact gfx target needs hipDeviceProp_t (see above)
    size_t total = 0;
    HIP_RETURN_IF_ERROR(hip_->hipDeviceTotalMem(&total, ordinal_), "hipDeviceTotalMem");
    info.memory_bytes = static_cast<int64_t>(total);
    int v = 0;
    HIP_RETURN_IF_ERROR(hip_->hipDriverGetVersion(&v), "hipDriverGetVersion");
    info.driver_version = std::to_string(v);
    info.l2_bytes = 256 << 20;  // MI300X's Infinity Cache; enough to flush smaller caches too
    return info;
  }

  absl::StatusOr<std::unique_ptr<Module>> Load(const Artifact& artifact) override {
    if (artifact.vendor() != "hip") {
      return absl::FailedPreconditionError(absl::StrCat(artifact.program, " is compiled for ",
                                                        artifact.target, ", not for an AMD GPU"));
    }
    if (artifact.binary.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("artifact ", artifact.program, " has no code object (.hsaco)"));
    }
    HIP_RETURN_IF_ERROR(hip_->hipSetDevice(ordinal_), "hipSetDevice");
    hipModule_t module = nullptr;
    HIP_RETURN_IF_ERROR(hip_->hipModuleLoadData(&module, artifact.binary.data()),
                        "loading the code object of " + artifact.program);
    std::vector<hipFunction_t> fns;
    std::vector<std::string> names;
    for (const KernelSpec& k : artifact.kernels) {
      hipFunction_t fn = nullptr;
      if (hipError_t e = hip_->hipModuleGetFunction(&fn, module, k.name.c_str()); e != 0) {
        hip_->hipModuleUnload(module);
        return HipError(*hip_, e, "the code object has no kernel " + k.name);
      }
      fns.push_back(fn);
      names.push_back(k.name);
    }
    return std::make_unique<HipModule>(hip_, ordinal_, module, std::move(fns), std::move(names));
  }

  absl::StatusOr<void*> Alloc(size_t bytes) override {
    HIP_RETURN_IF_ERROR(hip_->hipSetDevice(ordinal_), "hipSetDevice");
    void* p = nullptr;
    HIP_RETURN_IF_ERROR(hip_->hipMalloc(&p, std::max<size_t>(bytes, 1)),
                        absl::StrCat("allocating ", bytes, " bytes"));
    return p;
  }
  void Free(void* ptr) override {
    hip_->hipSetDevice(ordinal_);
    hip_->hipFree(ptr);
  }
  absl::Status Zero(void* ptr, size_t bytes, void* stream) override {
    HIP_RETURN_IF_ERROR(hip_->hipMemsetAsync(ptr, 0, bytes, static_cast<hipStream_t>(stream)),
                        "hipMemsetAsync");
    return absl::OkStatus();
  }
  absl::Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    HIP_RETURN_IF_ERROR(hip_->hipMemcpyHtoD(dst, src, bytes), "hipMemcpyHtoD");
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    HIP_RETURN_IF_ERROR(hip_->hipMemcpyDtoH(dst, const_cast<void*>(src), bytes), "hipMemcpyDtoH");
    return absl::OkStatus();
  }
  absl::Status Synchronize(void* stream) override {
    HIP_RETURN_IF_ERROR(hip_->hipStreamSynchronize(static_cast<hipStream_t>(stream)),
                        "waiting for the stream (a kernel may have faulted)");
    return absl::OkStatus();
  }
  absl::Status CheckPointer(const void* ptr, const std::string& what) override {
    if (ptr == nullptr) return absl::InvalidArgumentError(what + " is a null pointer");
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<Timer>> NewTimer() override {
    hipEvent_t start = nullptr, stop = nullptr;
    HIP_RETURN_IF_ERROR(hip_->hipEventCreate(&start), "hipEventCreate");
    if (hipError_t e = hip_->hipEventCreate(&stop); e != 0) {
      hip_->hipEventDestroy(start);
      return HipError(*hip_, e, "hipEventCreate");
    }
    return std::make_unique<HipTimer>(hip_, start, stop);
  }
  absl::Status FlushCache(void* stream) override {
    if (flush_ == nullptr) {
      absl::StatusOr<DeviceInfo> info = Info();
      if (!info.ok()) return info.status();
      flush_bytes_ = 2 * static_cast<size_t>(info->l2_bytes);
      absl::StatusOr<void*> p = Alloc(flush_bytes_);
      if (!p.ok()) return p.status();
      flush_ = *p;
    }
    return Zero(flush_, flush_bytes_, stream);
  }

 private:
  const Hip* hip_;
  int ordinal_;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
};

#undef HIP_RETURN_IF_ERROR

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> OpenHipBackend(int ordinal) {
  absl::StatusOr<const Hip*> hip = LoadHip();
  if (!hip.ok()) return hip.status();
  int count = 0;
  if (hipError_t e = (*hip)->hipGetDeviceCount(&count); e != 0)
    return HipError(**hip, e, "hipGetDeviceCount");
  if (ordinal < 0 || ordinal >= count) {
    return absl::FailedPreconditionError(absl::StrCat("hip:", ordinal,
                                                      " does not exist: this machine has ", count,
                                                      " HIP device", count == 1 ? "" : "s"));
  }
  return std::make_unique<HipBackend>(*hip, ordinal);
}

}  // namespace tilec::runtime
