#include "server/metrics_compiler.h"

namespace tilec::server {

absl::StatusOr<cache::Artifact> MetricsCompiler::Compile(const cache::CompileJob& job) {
  absl::Time start = clock_->Now();
  in_flight_.fetch_add(1);
  metrics_->compiles_in_flight().Increment();
  absl::StatusOr<cache::Artifact> result = inner_->Compile(job);
  metrics_->compiles_in_flight().Decrement();
  in_flight_.fetch_sub(1);
  compiles_.fetch_add(1);
  if (!result.ok()) failures_.fetch_add(1);
  metrics_->CompileFinished(job.target, result.status().code(),
                            absl::ToDoubleSeconds(clock_->Now() - start));
  return result;
}

}  // namespace tilec::server
