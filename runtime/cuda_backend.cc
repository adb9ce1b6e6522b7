// The CUDA backend: the driver API from libcuda.so.1, loaded with dlopen at
// the first use, so that everything builds and the other backends run on a
// machine without a GPU or a driver. Work goes to the device's primary
// context (the one the CUDA runtime, and so PyTorch, uses): a module loaded
// here launches on torch's streams.
#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "runtime/backend.h"

namespace tilec::runtime {
namespace {

// The driver API's types and constants this file uses (cuda.h, by value).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
constexpr int kAttrClockRate = 13;
constexpr int kAttrMultiprocessors = 16;
constexpr int kAttrMemoryClockRate = 36;
constexpr int kAttrL2CacheSize = 38;
constexpr int kAttrMajor = 75;
constexpr int kAttrMinor = 76;
constexpr int kFuncAttrMaxDynamicSharedBytes = 8;
constexpr int kPointerAttrMemoryType = 2;
constexpr int kPointerAttrDeviceOrdinal = 9;
constexpr unsigned kMemoryTypeDevice = 2;
constexpr unsigned kMemoryTypeUnified = 4;

struct Driver {
  void* handle = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem_v2)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemAllocAsync)(CUdeviceptr*, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH_v2)(void*, CUdeviceptr, size_t);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy_v2)(CUevent);
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  // Optional (drivers before CUDA 12 lack it; only TMA artifacts need it).
  CUresult (*cuTensorMapEncodeTiled)(void* map, int dtype, uint32_t rank, void* base,
                                     const uint64_t* dims, const uint64_t* strides,
                                     const uint32_t* box, const uint32_t* element_strides,
                                     int interleave, int swizzle, int l2_promotion,
                                     int oob_fill);
};

// Loads libcuda.so.1 once; FAILED_PRECONDITION naming what is missing.
absl::StatusOr<const Driver*> LoadDriver() {
  static Driver driver;
  static absl::Status status = [] {
    driver.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver.handle == nullptr) {
      const char* e = dlerror();
      return absl::FailedPreconditionError(absl::StrCat(
          "the CUDA backend needs the NVIDIA driver (libcuda.so.1), which cannot be loaded: ",
          e ? e : "not found"));
    }
    absl::Status missing;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(driver.handle, name));
      if (fn == nullptr && missing.ok())
        missing = absl::FailedPreconditionError(
            absl::StrCat("libcuda.so.1 lacks ", name, ": the driver is too old for tilec"));
    };
    driver.cuTensorMapEncodeTiled =
        reinterpret_cast<decltype(driver.cuTensorMapEncodeTiled)>(
            dlsym(driver.handle, "cuTensorMapEncodeTiled"));
#define TILEC_CU(name) sym(driver.name, #name)
    TILEC_CU(cuInit);
    TILEC_CU(cuDriverGetVersion);
    TILEC_CU(cuDeviceGetCount);
    TILEC_CU(cuDeviceGet);
    TILEC_CU(cuDeviceGetName);
    TILEC_CU(cuDeviceGetAttribute);
    TILEC_CU(cuDeviceTotalMem_v2);
    TILEC_CU(cuDevicePrimaryCtxRetain);
    TILEC_CU(cuDevicePrimaryCtxRelease_v2);
    TILEC_CU(cuCtxSetCurrent);
    TILEC_CU(cuModuleLoadData);
    TILEC_CU(cuModuleUnload);
    TILEC_CU(cuModuleGetFunction);
    TILEC_CU(cuFuncSetAttribute);
    TILEC_CU(cuLaunchKernel);
    TILEC_CU(cuMemAlloc_v2);
    TILEC_CU(cuMemFree_v2);
    TILEC_CU(cuMemAllocAsync);
    TILEC_CU(cuMemFreeAsync);
    TILEC_CU(cuMemsetD8Async);
    TILEC_CU(cuMemcpyHtoD_v2);
    TILEC_CU(cuMemcpyDtoH_v2);
    TILEC_CU(cuStreamSynchronize);
    TILEC_CU(cuEventCreate);
    TILEC_CU(cuEventRecord);
    TILEC_CU(cuEventSynchronize);
    TILEC_CU(cuEventElapsedTime);
    TILEC_CU(cuEventDestroy_v2);
    TILEC_CU(cuPointerGetAttribute);
    TILEC_CU(cuGetErrorName);
    TILEC_CU(cuGetErrorString);
#undef TILEC_CU
    if (!missing.ok()) return missing;
    if (CUresult r = driver.cuInit(0); r != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cuInit failed with CUDA error ", r, ": no usable NVIDIA GPU"));
    }
    return absl::OkStatus();
  }();
  if (!status.ok()) return status;
  return &driver;
}

class CudaBackend;

// A driver error as a status: `what` failed, with the driver's name for it.
absl::Status DriverError(const Driver& d, CUresult r, const std::string& what) {
  const char* name = nullptr;
  const char* text = nullptr;
  d.cuGetErrorName(r, &name);
  d.cuGetErrorString(r, &text);
  std::string message = absl::StrCat(what, ": ", name ? name : "CUDA error", " (", r, ")",
                                     text ? absl::StrCat(": ", text) : "");
  // 2: out of memory; 1/400: invalid value/handle (the caller's arguments);
  // 209: no binary for the GPU.
  if (r == 2) return absl::ResourceExhaustedError(message);
  if (r == 209 || r == 218) return absl::FailedPreconditionError(message);
  return absl::InternalError(message);
}

#define CU_RETURN_IF_ERROR(call, what)                 \
  do {                                                 \
    if (CUresult cu_result_ = (call); cu_result_ != 0) \
      return DriverError(*driver_, cu_result_, what);  \
  } while (false)

class CudaModule : public Module {
 public:
  CudaModule(const Driver* driver, CUcontext ctx, CUmodule module, std::vector<CUfunction> fns,
             std::vector<std::string> names)
      : driver_(driver),
        ctx_(ctx),
        module_(module),
        fns_(std::move(fns)),
        names_(std::move(names)) {}
  ~CudaModule() override {
    driver_->cuCtxSetCurrent(ctx_);
    driver_->cuModuleUnload(module_);
  }

  absl::Status Launch(int kernel, const LaunchConfig& c, void** args,
                      const std::vector<LaunchBuffer>&, void* stream) override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CU_RETURN_IF_ERROR(
        driver_->cuLaunchKernel(fns_[kernel], c.grid[0], c.grid[1], c.grid[2], c.block[0],
                                c.block[1], c.block[2], static_cast<unsigned>(c.smem_bytes),
                                static_cast<CUstream>(stream), args, nullptr),
        "launch of kernel " + names_[kernel]);
    return absl::OkStatus();
  }

 private:
  const Driver* driver_;
  CUcontext ctx_;
  CUmodule module_;
  std::vector<CUfunction> fns_;
  std::vector<std::string> names_;
};

class CudaTimer : public Backend::Timer {
 public:
  CudaTimer(const Driver* driver, CUevent start, CUevent stop)
      : driver_(driver), start_(start), stop_(stop) {}
  ~CudaTimer() override {
    driver_->cuEventDestroy_v2(start_);
    driver_->cuEventDestroy_v2(stop_);
  }
  absl::Status Start(void* stream) override {
    CU_RETURN_IF_ERROR(driver_->cuEventRecord(start_, static_cast<CUstream>(stream)),
                       "cuEventRecord");
    return absl::OkStatus();
  }
  absl::Status Stop(void* stream) override {
    CU_RETURN_IF_ERROR(driver_->cuEventRecord(stop_, static_cast<CUstream>(stream)),
                       "cuEventRecord");
    return absl::OkStatus();
  }
  absl::StatusOr<double> ElapsedMs() override {
    CU_RETURN_IF_ERROR(driver_->cuEventSynchronize(stop_), "cuEventSynchronize");
    float ms = 0;
    CU_RETURN_IF_ERROR(driver_->cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
    return static_cast<double>(ms);
  }

 private:
  const Driver* driver_;
  CUevent start_, stop_;
};

class CudaBackend : public Backend {
 public:
  CudaBackend(const Driver* driver, int ordinal, CUdevice dev, CUcontext ctx)
      : driver_(driver), ordinal_(ordinal), dev_(dev), ctx_(ctx) {}
  ~CudaBackend() override {
    if (flush_ != 0) driver_->cuMemFree_v2(flush_);
    driver_->cuDevicePrimaryCtxRelease_v2(dev_);
  }

  DeviceSpec device() const override { return {DeviceSpec::Backend::kCuda, ordinal_}; }

  absl::StatusOr<DeviceInfo> Info() override {
    DeviceInfo info;
    char name[256] = {};
    CU_RETURN_IF_ERROR(driver_->cuDeviceGetName(name, sizeof name - 1, dev_), "cuDeviceGetName");
    info.name = name;
    int major = 0, minor = 0, v = 0;
    CU_RETURN_IF_ERROR(driver_->cuDeviceGetAttribute(&major, kAttrMajor, dev_), "attribute");
    CU_RETURN_IF_ERROR(driver_->cuDeviceGetAttribute(&minor, kAttrMinor, dev_), "attribute");
    info.arch = absl::StrCat("sm_", major, minor);
    CU_RETURN_IF_ERROR(
        driver_->cuDeviceGetAttribute(&info.multiprocessors, kAttrMultiprocessors, dev_),
        "attribute");
    CU_RETURN_IF_ERROR(driver_->cuDeviceGetAttribute(&info.clock_khz, kAttrClockRate, dev_),
                       "attribute");
    CU_RETURN_IF_ERROR(
        driver_->cuDeviceGetAttribute(&info.memory_clock_khz, kAttrMemoryClockRate, dev_),
        "attribute");
    CU_RETURN_IF_ERROR(driver_->cuDeviceGetAttribute(&v, kAttrL2CacheSize, dev_), "attribute");
    info.l2_bytes = v;
    size_t total = 0;
    CU_RETURN_IF_ERROR(driver_->cuDeviceTotalMem_v2(&total, dev_), "cuDeviceTotalMem");
    info.memory_bytes = static_cast<int64_t>(total);
    CU_RETURN_IF_ERROR(driver_->cuDriverGetVersion(&v), "cuDriverGetVersion");
    info.driver_version = absl::StrCat(v / 1000, ".", (v % 1000) / 10);
    return info;
  }

  absl::Status EncodeTensorMap(const tl::host::TensorMapDesc& m, void* out) override {
    if (driver_->cuTensorMapEncodeTiled == nullptr) {
      return absl::FailedPreconditionError(
          "this artifact loads through TMA tensor maps, and libcuda.so.1 lacks "
          "cuTensorMapEncodeTiled (a driver for CUDA 12 or later has it)");
    }
    // CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32/64: TMA copies bits, converting nothing.
    int dtype = 0;
    switch (m.elem_bytes) {
      case 1: dtype = 0; break;
      case 2: dtype = 1; break;
      case 4: dtype = 2; break;
      case 8: dtype = 4; break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("a tensor map of ", m.elem_bytes,
                                                       "-byte elements"));
    }
    // CU_TENSOR_MAP_SWIZZLE_NONE/32B/64B/128B.
    const int swizzle = m.swizzle_bytes == 128 ? 3 : m.swizzle_bytes == 64 ? 2 : m.swizzle_bytes == 32 ? 1 : 0;
    const uint32_t element_strides[5] = {1, 1, 1, 1, 1};
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    // Interleave none, L2 promotion 128 bytes, out-of-bounds elements zero.
    CU_RETURN_IF_ERROR(driver_->cuTensorMapEncodeTiled(out, dtype, m.rank,
                                                       const_cast<void*>(m.base), m.dims,
                                                       m.strides + 1, m.box, element_strides, 0,
                                                       swizzle, 2, 0),
                       "cuTensorMapEncodeTiled");
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Module>> Load(const Artifact& artifact) override {
    if (artifact.vendor() != "cuda") {
      return absl::FailedPreconditionError(absl::StrCat(
          artifact.program, " is compiled for ", artifact.target, ", not for an NVIDIA GPU"));
    }
    if (artifact.binary.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("artifact ", artifact.program, " has no cubin"));
    }
    absl::StatusOr<DeviceInfo> info = Info();
    if (!info.ok()) return info.status();
    if (absl::Status st = CheckArch(artifact.target, info->arch, info->name); !st.ok()) return st;
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CUmodule module = nullptr;
    CU_RETURN_IF_ERROR(driver_->cuModuleLoadData(&module, artifact.binary.data()),
                       "loading the cubin of " + artifact.program);
    std::vector<CUfunction> fns;
    std::vector<std::string> names;
    auto fail = [&](absl::Status st) {
      driver_->cuModuleUnload(module);
      return st;
    };
    for (const KernelSpec& k : artifact.kernels) {
      CUfunction fn = nullptr;
      if (CUresult r = driver_->cuModuleGetFunction(&fn, module, k.name.c_str()); r != 0)
        return fail(DriverError(*driver_, r, "the cubin has no kernel " + k.name));
      // Above 48 KiB of dynamic shared memory a kernel must opt in.
      if (k.smem_bytes > 48 * 1024) {
        if (CUresult r = driver_->cuFuncSetAttribute(fn, kFuncAttrMaxDynamicSharedBytes,
                                                     static_cast<int>(k.smem_bytes));
            r != 0) {
          return fail(DriverError(
              *driver_, r,
              absl::StrCat("kernel ", k.name, " needs ", k.smem_bytes,
                           " bytes of dynamic shared memory, which ", info->name, " refuses")));
        }
      }
      fns.push_back(fn);
      names.push_back(k.name);
    }
    return std::make_unique<CudaModule>(driver_, ctx_, module, std::move(fns), std::move(names));
  }

  absl::StatusOr<void*> Alloc(size_t bytes) override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CUdeviceptr p = 0;
    CU_RETURN_IF_ERROR(driver_->cuMemAlloc_v2(&p, std::max<size_t>(bytes, 1)),
                       absl::StrCat("allocating ", bytes, " bytes"));
    return reinterpret_cast<void*>(p);
  }
  void Free(void* ptr) override {
    driver_->cuCtxSetCurrent(ctx_);
    driver_->cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr));
  }
  absl::StatusOr<void*> AllocOnStream(size_t bytes, void* stream) override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CUdeviceptr p = 0;
    CU_RETURN_IF_ERROR(
        driver_->cuMemAllocAsync(&p, std::max<size_t>(bytes, 1), static_cast<CUstream>(stream)),
        absl::StrCat("allocating a workspace of ", bytes, " bytes"));
    return reinterpret_cast<void*>(p);
  }
  absl::Status FreeOnStream(void* ptr, void* stream) override {
    CU_RETURN_IF_ERROR(
        driver_->cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), static_cast<CUstream>(stream)),
        "freeing a workspace");
    return absl::OkStatus();
  }
  absl::Status Zero(void* ptr, size_t bytes, void* stream) override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CU_RETURN_IF_ERROR(driver_->cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(ptr), 0, bytes,
                                                static_cast<CUstream>(stream)),
                       "cuMemsetD8Async");
    return absl::OkStatus();
  }
  absl::Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CU_RETURN_IF_ERROR(driver_->cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(dst), src, bytes),
                       "cuMemcpyHtoD");
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CU_RETURN_IF_ERROR(driver_->cuMemcpyDtoH_v2(dst, reinterpret_cast<CUdeviceptr>(src), bytes),
                       "cuMemcpyDtoH");
    return absl::OkStatus();
  }
  absl::Status Synchronize(void* stream) override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CU_RETURN_IF_ERROR(driver_->cuStreamSynchronize(static_cast<CUstream>(stream)),
                       "waiting for the stream (a kernel may have faulted)");
    return absl::OkStatus();
  }

  absl::Status CheckPointer(const void* ptr, const std::string& what) override {
    if (ptr == nullptr) return absl::InvalidArgumentError(what + " is a null pointer");
    unsigned type = 0;
    CUresult r = driver_->cuPointerGetAttribute(&type, kPointerAttrMemoryType,
                                                reinterpret_cast<CUdeviceptr>(ptr));
    if (r != 0 || (type != kMemoryTypeDevice && type != kMemoryTypeUnified)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is not CUDA device memory (host memory? move it to cuda:", ordinal_, ")"));
    }
    int ordinal = -1;
    r = driver_->cuPointerGetAttribute(&ordinal, kPointerAttrDeviceOrdinal,
                                       reinterpret_cast<CUdeviceptr>(ptr));
    if (r == 0 && ordinal != ordinal_ && type == kMemoryTypeDevice) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is on cuda:", ordinal, ", but the kernel runs on cuda:", ordinal_));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Timer>> NewTimer() override {
    CU_RETURN_IF_ERROR(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    CUevent start = nullptr, stop = nullptr;
    CU_RETURN_IF_ERROR(driver_->cuEventCreate(&start, 0), "cuEventCreate");
    if (CUresult r = driver_->cuEventCreate(&stop, 0); r != 0) {
      driver_->cuEventDestroy_v2(start);
      return DriverError(*driver_, r, "cuEventCreate");
    }
    return std::make_unique<CudaTimer>(driver_, start, stop);
  }

  absl::Status FlushCache(void* stream) override {
    if (flush_ == 0) {
      int l2 = 0;
      CU_RETURN_IF_ERROR(driver_->cuDeviceGetAttribute(&l2, kAttrL2CacheSize, dev_), "attribute");
      flush_bytes_ = std::max<size_t>(2 * static_cast<size_t>(l2), 1 << 20);
      absl::StatusOr<void*> p = Alloc(flush_bytes_);
      if (!p.ok()) return p.status();
      flush_ = reinterpret_cast<CUdeviceptr>(*p);
    }
    // Writing twice the L2 through it evicts what the last run left there.
    return Zero(reinterpret_cast<void*>(flush_), flush_bytes_, stream);
  }

 private:
  // An sm_XYa cubin runs on compute capability X.Y only; an sm_XY one on X.Y
  // and later minors of X.
  static absl::Status CheckArch(const std::string& target, const std::string& arch,
                                const std::string& device_name) {
    std::string t = target;
    const bool specific = !t.empty() && t.back() == 'a';
    if (specific) t.pop_back();
    auto cc = [](const std::string& sm) { return sm.size() > 3 ? std::stoi(sm.substr(3)) : 0; };
    const int want = cc(t), have = cc(arch);
    const bool ok = specific ? want == have : (want / 10 == have / 10 && have >= want);
    if (!ok) {
      return absl::FailedPreconditionError(absl::StrCat("the artifact is compiled for ", target,
                                                        ", which cannot run on ", device_name, " (",
                                                        arch, "); compile it for this GPU"));
    }
    return absl::OkStatus();
  }

  const Driver* driver_;
  int ordinal_;
  CUdevice dev_;
  CUcontext ctx_;
  CUdeviceptr flush_ = 0;
  size_t flush_bytes_ = 0;
};

#undef CU_RETURN_IF_ERROR

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> OpenCudaBackend(int ordinal) {
  absl::StatusOr<const Driver*> driver = LoadDriver();
  if (!driver.ok()) return driver.status();
  const Driver& d = **driver;
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != 0) return DriverError(d, r, "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count) {
    return absl::FailedPreconditionError(absl::StrCat("cuda:", ordinal,
                                                      " does not exist: this machine has ", count,
                                                      " CUDA device", count == 1 ? "" : "s"));
  }
  CUdevice dev = 0;
  if (CUresult r = d.cuDeviceGet(&dev, ordinal); r != 0) return DriverError(d, r, "cuDeviceGet");
  CUcontext ctx = nullptr;
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&ctx, dev); r != 0)
    return DriverError(d, r, "retaining the primary context of cuda:" + std::to_string(ordinal));
  return std::make_unique<CudaBackend>(&d, ordinal, dev, ctx);
}

}  // namespace tilec::runtime
