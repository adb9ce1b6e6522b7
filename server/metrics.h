// tilecd's Prometheus metrics (prometheus-cpp), served on their own HTTP
// port by the caller's prometheus::Exposer.
//
//   grpc_server_started_total{grpc_service,grpc_method,grpc_type}
//   grpc_server_handled_total{grpc_service,grpc_method,grpc_type,grpc_code}
//   grpc_server_handling_seconds{grpc_service,grpc_method,grpc_type} histogram
//   tilec_compile_duration_seconds{target} histogram   (MetricsCompiler)
//   tilec_compiles_total{target,code}                  (MetricsCompiler)
//   tilec_compiles_in_flight                           (MetricsCompiler)
//   tilec_cache_{hits,misses,evictions,corrupt}_total, tilec_cache_bytes,
//   tilec_cache_store_errors_total, tilec_cache_orphans_swept_total,
//   tilec_cache_entries, tilec_queue_depth, tilec_single_flight_joined_total,
//   tilec_workers, tilec_workers_busy, tilec_workers_lost_total,
//   tilec_jobs_{submitted,completed,requeued,poisoned}_total, tilec_jobs_queued,
//   tilec_leases_expired_total, tilec_compile_memo_hits_total
//   tilec_shared_tier_up (1 up, 0 degraded; absent without --redis),
//   tilec_shared_tier_{hits,misses,corrupt,rejected,errors,stores,locks_taken,
//   waits,wakeups}_total
//                    read at scrape time through SetSnapshot's callback.
// gRPC codes are spelled as in the gRPC spec ("OK", "INVALID_ARGUMENT").
#ifndef TILEC_SERVER_METRICS_H_
#define TILEC_SERVER_METRICS_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/shared_tier.h"

namespace tilec::server {

// Values read from the server's parts at scrape time.
struct Snapshot {
  int64_t cache_hits = 0, cache_misses = 0, cache_evictions = 0, cache_corrupt = 0;
  int64_t cache_bytes = 0, cache_entries = 0;
  int64_t cache_store_errors = 0, cache_orphans_swept = 0;
  int64_t queue_depth = 0, single_flight_joined = 0;
  int64_t memo_hits = 0;  // Compile requests answered from remembered responses
  // The hit path (server/hit_path.h): requests, and those answered from memory.
  int64_t hit_path_requests = 0, hit_path_from_memory = 0;
  // GPU workers (WorkerPool) and the tuning database.
  int64_t workers = 0, workers_busy = 0, workers_lost = 0;
  int64_t jobs_submitted = 0, jobs_completed = 0, jobs_requeued = 0, jobs_poisoned = 0;
  int64_t leases_expired = 0, jobs_queued = 0;
  // The fleet's shared tier (server/shared_tier.h); none without --redis.
  std::optional<SharedTierCounters> shared;
};

class ServerMetrics {
 public:
  ServerMetrics();

  // "OK", "INVALID_ARGUMENT", ... as gRPC names its codes.
  static std::string CodeName(absl::StatusCode code);

  void RpcStarted(const std::string& method, const std::string& type);
  void RpcHandled(const std::string& method, const std::string& type, absl::StatusCode code,
                  double seconds);
  void CompileFinished(const std::string& target, absl::StatusCode code, double seconds);
  prometheus::Gauge& compiles_in_flight() { return *in_flight_; }
  void SetSnapshot(std::function<Snapshot()> snapshot);

  // Everything to expose: the registry and the scrape-time collector.
  std::shared_ptr<prometheus::Registry> registry() { return registry_; }
  std::shared_ptr<prometheus::Collectable> snapshot_collector() { return snapshot_collector_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* started_;
  prometheus::Family<prometheus::Counter>* handled_;
  prometheus::Family<prometheus::Histogram>* handling_seconds_;
  prometheus::Family<prometheus::Histogram>* compile_seconds_;
  prometheus::Family<prometheus::Counter>* compiles_;
  prometheus::Gauge* in_flight_;
  std::shared_ptr<prometheus::Collectable> snapshot_collector_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_METRICS_H_
