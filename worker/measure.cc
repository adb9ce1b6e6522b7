#include "worker/measure.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/artifact.h"
#include "runtime/tensor_data.h"

namespace tilec::worker {
namespace {

// Device buffers of one job, freed when it ends.
class DeviceBuffers {
 public:
  explicit DeviceBuffers(runtime::Backend* backend) : backend_(backend) {}
  ~DeviceBuffers() {
    for (void* p : buffers_) backend_->Free(p);
  }
  absl::StatusOr<void*> Upload(const std::string& bytes, const std::string& name) {
    // At least one byte: an empty tensor still needs a valid, aligned pointer.
    absl::StatusOr<void*> p = backend_->Alloc(std::max<size_t>(bytes.size(), 1));
    if (!p.ok()) {
      return absl::Status(p.status().code(),
                          absl::StrCat("allocating ", name, ": ", p.status().message()));
    }
    buffers_.push_back(*p);
    if (absl::Status st = backend_->CopyToDevice(*p, bytes.data(), bytes.size()); !st.ok()) {
      return absl::Status(st.code(),
                          absl::StrCat("copying ", name, " to the device: ", st.message()));
    }
    return *p;
  }

 private:
  runtime::Backend* backend_;
  std::vector<void*> buffers_;
};

absl::Status WithContext(const absl::Status& st, const std::string& what) {
  return absl::Status(st.code(), absl::StrCat(what, ": ", st.message()));
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string Measurer::TimingLabel() const {
  return backend_->device().backend == runtime::DeviceSpec::Backend::kEmulator
             ? "emulator wall time"
             : "device events";
}

absl::StatusOr<runtime::Kernel*> Measurer::KernelFor(const tilec::v1::MeasureJob& job,
                                                     const runtime::Artifact& parsed) {
  for (auto it = kernels_.begin(); it != kernels_.end(); ++it) {
    if (it->digest == job.artifact_digest() && it->metadata_json == job.metadata_json()) {
      kernels_.splice(kernels_.begin(), kernels_, it);
      return kernels_.front().kernel.get();
    }
  }
  if (options_.verifier != nullptr &&
      !options_.verifier->Verify(
          cache::ArtifactStatement(job.cache_key(), job.artifact_digest(), job.metadata_json()),
          job.signature())) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the artifact ", job.artifact_digest().substr(0, 80), " is ",
        job.signature().empty() ? "not signed (is tilecd run with --signing_key?)"
                                : "not signed by the key in --verify_key",
        "; refusing to load it"));
  }
  runtime::Artifact artifact = parsed;
  absl::StatusOr<std::string> binary = cache_->Get(job.artifact_digest());
  if (!binary.ok()) return binary.status();
  artifact.binary = *std::move(binary);
  absl::StatusOr<std::unique_ptr<runtime::Kernel>> kernel =
      runtime::Kernel::Load(artifact, backend_);
  if (!kernel.ok()) return WithContext(kernel.status(), "loading the artifact");
  kernels_.push_front(Loaded{job.artifact_digest(), job.metadata_json(), *std::move(kernel)});
  while (kernels_.size() > std::max<size_t>(options_.max_kernels, 1)) kernels_.pop_back();
  return kernels_.front().kernel.get();
}

absl::Status Measurer::Measure(const tilec::v1::MeasureJob& job, tilec::v1::MeasureResult* result,
                               std::string* config) {
  absl::StatusOr<runtime::Artifact> artifact = runtime::Artifact::Parse(job.metadata_json());
  if (!artifact.ok()) return WithContext(artifact.status(), "the job's artifact metadata");
  std::vector<std::string> bindings;
  bool corrupt = false;
  for (const auto& [name, value] : artifact->config) {
    bindings.push_back(absl::StrCat(name, "=", value));
    if (options_.corrupt_output && options_.corrupt_output->first == name &&
        options_.corrupt_output->second == value) {
      corrupt = true;
    }
  }
  *config = bindings.empty() ? "-" : absl::StrJoin(bindings, ",");
  std::map<std::string, int64_t> dims;
  for (const tilec::v1::NamedValue& d : job.dims()) dims[d.name()] = d.value();
  if (job.samples() < 0 || job.warmup() < 0 || job.iterations() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job ", job.job_id(), ": samples ", job.samples(), ", warmup ", job.warmup(),
        ", iterations ", job.iterations(), " (need samples, warmup >= 0, iterations >= 1)"));
  }

  absl::StatusOr<runtime::Kernel*> kernel = KernelFor(job, *artifact);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<std::vector<runtime::HostValue>> inputs =
      runtime::FillInputs(*artifact, dims, job.seed());
  if (!inputs.ok()) return WithContext(inputs.status(), "filling the inputs");

  DeviceBuffers buffers(backend_);
  const runtime::DeviceSpec device = backend_->device();
  std::vector<runtime::Arg> args;
  for (size_t i = 0; i < artifact->params.size(); ++i) {
    const runtime::ParamSpec& p = artifact->params[i];
    const runtime::HostValue& v = (*inputs)[i];
    if (p.kind == runtime::ParamSpec::Kind::kScalar) {
      args.push_back(p.dtype.is_float ? runtime::Arg::Float(v.f) : runtime::Arg::Int(v.i));
      continue;
    }
    absl::StatusOr<void*> data = buffers.Upload(v.bytes, p.name);
    if (!data.ok()) return data.status();
    args.push_back(
        runtime::Arg::Tensor(*data, p.dtype.name, v.shape, device.memory_type(), device.ordinal));
    args.back().strides = v.strides;
  }

  if (absl::Status st = (*kernel)->Launch(args); !st.ok()) return WithContext(st, "launch");
  if (absl::Status st = backend_->Synchronize(nullptr); !st.ok()) {
    return WithContext(st, "synchronizing after the launch");
  }
  for (size_t i = 0; i < artifact->params.size(); ++i) {
    const runtime::ParamSpec& p = artifact->params[i];
    if (p.kind != runtime::ParamSpec::Kind::kTensor) continue;
    const runtime::HostValue& v = (*inputs)[i];
    std::string host(v.bytes.size(), '\0');
    if (absl::Status st = backend_->CopyToHost(host.data(), args[i].data, host.size()); !st.ok()) {
      return WithContext(st, absl::StrCat("copying ", p.name, " back"));
    }
    int64_t count = 1;
    for (int64_t d : v.shape) count *= d;
    tilec::v1::TensorSample* sample = result->add_outputs();
    sample->set_name(p.name);
    for (int64_t pos : runtime::SamplePositions(job.seed() + i, count, job.samples())) {
      sample->add_values(
          runtime::ReadElement(p.dtype, host.data(), runtime::ElementOffset(v, pos)) +
          (corrupt ? 1.0 : 0.0));
    }
  }

  runtime::TimingOptions timing;
  timing.warmup = job.warmup();
  timing.iterations = job.iterations();
  timing.flush_cache = job.flush_cache();
  absl::StatusOr<std::vector<double>> ms = (*kernel)->Time(args, timing);
  if (!ms.ok()) return WithContext(ms.status(), "timing");
  for (double t : *ms) result->add_ms(t);
  result->set_timing(TimingLabel());
  return absl::OkStatus();
}

tilec::v1::MeasureResult Measurer::Run(const tilec::v1::MeasureJob& job) {
  if (options_.job_delay_s > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.job_delay_s));
  }
  tilec::v1::MeasureResult result;
  std::string config = "?";
  absl::Status st = Measure(job, &result, &config);
  if (!st.ok()) {
    result.Clear();
    result.set_code(static_cast<int>(st.code()));
    result.set_message(std::string(st.message()));
    std::fprintf(stderr, "tilec-worker: job %s config %s: error %s\n", job.job_id().c_str(),
                 config.c_str(), st.ToString().c_str());
  } else {
    std::fprintf(stderr, "tilec-worker: job %s config %s: median %.4f ms over %d runs (%s)\n",
                 job.job_id().c_str(), config.c_str(),
                 Median({result.ms().begin(), result.ms().end()}), result.ms_size(),
                 result.timing().c_str());
  }
  result.set_job_id(job.job_id());
  result.set_lease(job.lease());
  return result;
}

}  // namespace tilec::worker
