// The C API (c_api.h) over runtime/kernel.h.
#include "runtime/c_api.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/cache/signing.h"
#include "runtime/kernel.h"

struct tilec_device {
  std::unique_ptr<tilec::runtime::Backend> backend;
  std::string info_json;
};

struct tilec_kernel {
  std::unique_ptr<tilec::runtime::Kernel> kernel;
};

namespace {

using tilec::runtime::Arg;

thread_local std::string last_error;

int Fail(const absl::Status& status) {
  last_error = std::string(status.message());
  return static_cast<int>(status.code());
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrCat("\\u00", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

absl::StatusOr<std::vector<Arg>> ToArgs(const tilec_arg* args, int32_t nargs) {
  if (nargs < 0 || (nargs > 0 && args == nullptr))
    return absl::InvalidArgumentError("the argument array is null");
  std::vector<Arg> out;
  for (int32_t i = 0; i < nargs; ++i) {
    const tilec_arg& a = args[i];
    switch (a.kind) {
      case TILEC_ARG_INT: out.push_back(Arg::Int(a.int_value)); break;
      case TILEC_ARG_FLOAT: out.push_back(Arg::Float(a.float_value)); break;
      case TILEC_ARG_TENSOR: {
        if (a.dtype == nullptr)
          return absl::InvalidArgumentError(absl::StrCat("argument ", i + 1, " has no dtype"));
        if (a.ndim < 0 || a.ndim > 16 || (a.ndim > 0 && a.shape == nullptr))
          return absl::InvalidArgumentError(absl::StrCat("argument ", i + 1, " has a bad shape"));
        Arg t = Arg::Tensor(a.data, a.dtype, std::vector<int64_t>(a.shape, a.shape + a.ndim),
                            static_cast<tilec::runtime::DeviceType>(a.device_type), a.device_id);
        if (a.strides != nullptr) t.strides.assign(a.strides, a.strides + a.ndim);
        out.push_back(std::move(t));
        break;
      }
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("argument ", i + 1, " has an unknown kind ", a.kind));
    }
  }
  return out;
}

}  // namespace

extern "C" {

int tilec_c_api_version(void) { return TILEC_C_API_VERSION; }

const char* tilec_last_error(void) { return last_error.c_str(); }

int tilec_device_open(const char* device, tilec_device** out) {
  if (device == nullptr || out == nullptr) return Fail(absl::InvalidArgumentError("null argument"));
  absl::StatusOr<tilec::runtime::DeviceSpec> spec = tilec::runtime::DeviceSpec::Parse(device);
  if (!spec.ok()) return Fail(spec.status());
  absl::StatusOr<std::unique_ptr<tilec::runtime::Backend>> backend =
      tilec::runtime::OpenBackend(*spec);
  if (!backend.ok()) return Fail(backend.status());
  *out = new tilec_device{*std::move(backend), ""};
  return 0;
}

const char* tilec_device_info(tilec_device* device) {
  absl::StatusOr<tilec::runtime::DeviceInfo> info = device->backend->Info();
  if (!info.ok()) {
    Fail(info.status());
    return nullptr;
  }
  device->info_json = absl::StrCat(
      "{\"name\": ", Quote(info->name), ", \"arch\": ", Quote(info->arch),
      ", \"multiprocessors\": ", info->multiprocessors, ", \"clock_khz\": ", info->clock_khz,
      ", \"memory_clock_khz\": ", info->memory_clock_khz,
      ", \"memory_bytes\": ", info->memory_bytes, ", \"l2_bytes\": ", info->l2_bytes,
      ", \"driver_version\": ", Quote(info->driver_version),
      ", \"device\": ", Quote(device->backend->device().ToString()), "}");
  return device->info_json.c_str();
}

int tilec_device_alloc(tilec_device* device, uint64_t bytes, void** out) {
  absl::StatusOr<void*> p = device->backend->Alloc(bytes);
  if (!p.ok()) return Fail(p.status());
  *out = *p;
  return 0;
}

int tilec_device_free(tilec_device* device, void* ptr) {
  device->backend->Free(ptr);
  return 0;
}

int tilec_device_copy_to_device(tilec_device* device, void* dst, const void* src, uint64_t bytes) {
  absl::Status st = device->backend->CopyToDevice(dst, src, bytes);
  return st.ok() ? 0 : Fail(st);
}

int tilec_device_copy_to_host(tilec_device* device, void* dst, const void* src, uint64_t bytes) {
  absl::Status st = device->backend->CopyToHost(dst, src, bytes);
  return st.ok() ? 0 : Fail(st);
}

int tilec_device_synchronize(tilec_device* device, void* stream) {
  absl::Status st = device->backend->Synchronize(stream);
  return st.ok() ? 0 : Fail(st);
}

void tilec_device_close(tilec_device* device) { delete device; }

int tilec_kernel_open(tilec_device* device, const char* json_path, tilec_kernel** out) {
  if (device == nullptr || json_path == nullptr || out == nullptr)
    return Fail(absl::InvalidArgumentError("null argument"));
  absl::StatusOr<tilec::runtime::Artifact> artifact =
      tilec::runtime::Artifact::ReadFiles(json_path);
  if (!artifact.ok()) return Fail(artifact.status());
  absl::StatusOr<std::unique_ptr<tilec::runtime::Kernel>> kernel =
      tilec::runtime::Kernel::Load(*artifact, device->backend.get());
  if (!kernel.ok()) return Fail(kernel.status());
  *out = new tilec_kernel{*std::move(kernel)};
  return 0;
}

int tilec_kernel_open_verified(tilec_device* device, const char* json_path, const char* key_path,
                               tilec_kernel** out) {
  if (device == nullptr || json_path == nullptr || key_path == nullptr || out == nullptr)
    return Fail(absl::InvalidArgumentError("null argument"));
  absl::StatusOr<std::unique_ptr<tilec::cache::Verifier>> verifier =
      tilec::cache::Verifier::FromFiles({key_path});
  if (!verifier.ok()) return Fail(verifier.status());
  absl::StatusOr<tilec::runtime::Artifact> artifact =
      tilec::runtime::Artifact::ReadFilesVerified(json_path, **verifier);
  if (!artifact.ok()) return Fail(artifact.status());
  absl::StatusOr<std::unique_ptr<tilec::runtime::Kernel>> kernel =
      tilec::runtime::Kernel::Load(*artifact, device->backend.get());
  if (!kernel.ok()) return Fail(kernel.status());
  *out = new tilec_kernel{*std::move(kernel)};
  return 0;
}

const char* tilec_kernel_metadata(tilec_kernel* kernel) {
  return kernel->kernel->artifact().metadata_json.c_str();
}

int tilec_kernel_launch(tilec_kernel* kernel, const tilec_arg* args, int32_t nargs, void* stream) {
  absl::StatusOr<std::vector<Arg>> a = ToArgs(args, nargs);
  if (!a.ok()) return Fail(a.status());
  absl::Status st = kernel->kernel->Launch(*a, stream);
  return st.ok() ? 0 : Fail(st);
}

int tilec_kernel_time(tilec_kernel* kernel, const tilec_arg* args, int32_t nargs, void* stream,
                      int32_t warmup, int32_t iterations, int32_t flush_cache, double* ms) {
  absl::StatusOr<std::vector<Arg>> a = ToArgs(args, nargs);
  if (!a.ok()) return Fail(a.status());
  if (ms == nullptr) return Fail(absl::InvalidArgumentError("null output array"));
  tilec::runtime::TimingOptions options;
  options.warmup = warmup;
  options.iterations = iterations;
  options.flush_cache = flush_cache != 0;
  absl::StatusOr<std::vector<double>> t = kernel->kernel->Time(*a, options, stream);
  if (!t.ok()) return Fail(t.status());
  for (size_t i = 0; i < t->size(); ++i) ms[i] = (*t)[i];
  return 0;
}

void tilec_kernel_close(tilec_kernel* kernel) { delete kernel; }

}  // extern "C"
