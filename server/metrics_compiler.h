// A Compiler decorator that measures the compiles it passes on: duration by
// target, count by target and status code, and compiles in flight
// (ServerMetrics), plus plain counters for the Stats RPC. Placed directly
// above the compiler that does the work, so cache hits and joined requests
// are not counted as compiles.
#ifndef TILEC_SERVER_METRICS_COMPILER_H_
#define TILEC_SERVER_METRICS_COMPILER_H_

#include <atomic>
#include <memory>

#include "compiler/cache/clock.h"
#include "compiler/cache/compiler.h"
#include "server/metrics.h"

namespace tilec::server {

class MetricsCompiler : public cache::Compiler {
 public:
  MetricsCompiler(std::unique_ptr<cache::Compiler> inner, ServerMetrics* metrics,
                  cache::Clock* clock = cache::RealClock::Get())
      : inner_(std::move(inner)), metrics_(metrics), clock_(clock) {}

  absl::StatusOr<cache::Artifact> Compile(const cache::CompileJob& job) override;

  int64_t compiles() const { return compiles_.load(); }
  int64_t failures() const { return failures_.load(); }
  int64_t in_flight() const { return in_flight_.load(); }

 private:
  std::unique_ptr<cache::Compiler> inner_;
  ServerMetrics* metrics_;
  cache::Clock* clock_;
  std::atomic<int64_t> compiles_{0}, failures_{0}, in_flight_{0};
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_METRICS_COMPILER_H_
