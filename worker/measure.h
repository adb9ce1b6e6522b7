// One measurement job on the worker's device (proto MeasureJob): the
// artifact from the cache, inputs from the job's seed
// (runtime::FillInputs), one launch whose every tensor is then sampled at
// runtime::SamplePositions(seed + i, elements, samples) for tensor
// parameter i, and then the timed runs (runtime::Kernel::Time).
//
// Loaded kernels are kept by digest (a few, least recently used dropped), so
// a candidate measured again is not rebuilt (the emulator compiles the
// source on load).
#ifndef TILEC_WORKER_MEASURE_H_
#define TILEC_WORKER_MEASURE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "proto/tilec/v1/service.pb.h"
#include "runtime/backend.h"
#include "compiler/cache/signing.h"
#include "runtime/kernel.h"
#include "worker/artifact_cache.h"

namespace tilec::worker {

// Runs jobs; the session loop calls it after sending MeasureStarted.
class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Never fails: a failure is the result's code and message.
  virtual tilec::v1::MeasureResult Run(const tilec::v1::MeasureJob& job) = 0;
};

struct MeasureOptions {
  // Test-only: jobs whose artifact config binds this name to this value
  // report every sampled value plus 1.0.
  std::optional<std::pair<std::string, int64_t>> corrupt_output;
  // Test-only: seconds to sleep before running a job.
  double job_delay_s = 0;
  size_t max_kernels = 8;  // loaded kernels kept
  // When set, a job's artifact is loaded only if the job carries a
  // signature by one of its keys (MeasureJob.signature); else the job fails
  // with PERMISSION_DENIED and nothing is fetched or loaded.
  const cache::Verifier* verifier = nullptr;
};

class Measurer : public JobRunner {
 public:
  // `backend` and `cache` must outlive the measurer.
  Measurer(runtime::Backend* backend, ArtifactCache* cache, MeasureOptions options)
      : backend_(backend), cache_(cache), options_(std::move(options)) {}

  // Logs one line to stderr: job id, config, median ms or the error.
  tilec::v1::MeasureResult Run(const tilec::v1::MeasureJob& job) override;

  // The timing label of results on this device.
  std::string TimingLabel() const;

 private:
  struct Loaded {
    std::string digest, metadata_json;
    std::unique_ptr<runtime::Kernel> kernel;
  };
  absl::Status Measure(const tilec::v1::MeasureJob& job, tilec::v1::MeasureResult* result,
                       std::string* config);
  absl::StatusOr<runtime::Kernel*> KernelFor(const tilec::v1::MeasureJob& job,
                                             const runtime::Artifact& parsed);

  runtime::Backend* backend_;
  ArtifactCache* cache_;
  const MeasureOptions options_;
  std::list<Loaded> kernels_;  // most recently used first
};

}  // namespace tilec::worker

#endif  // TILEC_WORKER_MEASURE_H_
