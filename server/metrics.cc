#include "server/metrics.h"

#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "prometheus/metric_family.h"

namespace tilec::server {
namespace {

constexpr char kService[] = "tilec.v1.Tilec";

class SnapshotCollector : public prometheus::Collectable {
 public:
  void Set(std::function<Snapshot()> fn) {
    absl::MutexLock lock(&mu_);
    fn_ = std::move(fn);
  }
  std::vector<prometheus::MetricFamily> Collect() const override {
    Snapshot s;
    {
      absl::MutexLock lock(&mu_);
      if (fn_) s = fn_();
    }
    std::vector<prometheus::MetricFamily> out;
    auto add = [&](const char* name, const char* help, prometheus::MetricType type, double v) {
      prometheus::MetricFamily f;
      f.name = name;
      f.help = help;
      f.type = type;
      prometheus::ClientMetric m;
      if (type == prometheus::MetricType::Counter) {
        m.counter.value = v;
      } else {
        m.gauge.value = v;
      }
      f.metric.push_back(m);
      out.push_back(std::move(f));
    };
    using T = prometheus::MetricType;
    add("tilec_cache_hits_total", "Cache lookups that found a verified entry.", T::Counter,
        s.cache_hits);
    add("tilec_cache_misses_total", "Cache lookups that found no usable entry.", T::Counter,
        s.cache_misses);
    add("tilec_cache_evictions_total", "Entries evicted by the byte budget.", T::Counter,
        s.cache_evictions);
    add("tilec_cache_corrupt_total", "Entries found corrupt or truncated and evicted.", T::Counter,
        s.cache_corrupt);
    add("tilec_cache_store_errors_total",
        "Cache reads or writes that failed for I/O reasons (a full disk); the artifact was "
        "returned in the response instead.",
        T::Counter, s.cache_store_errors);
    add("tilec_cache_orphans_swept_total", "Blobs no cache entry referred to, removed.", T::Counter,
        s.cache_orphans_swept);
    add("tilec_cache_bytes", "Artifact bytes in the cache.", T::Gauge, s.cache_bytes);
    add("tilec_cache_entries", "Entries in the cache.", T::Gauge, s.cache_entries);
    add("tilec_queue_depth", "Requests waiting for a thread or a compile slot.", T::Gauge,
        s.queue_depth);
    add("tilec_single_flight_joined_total", "Requests answered by an identical request's compile.",
        T::Counter, s.single_flight_joined);
    add("tilec_compile_memo_hits_total",
        "Compile requests answered from a remembered response (no frontend run).", T::Counter,
        s.memo_hits);
    add("tilec_hit_path_requests_total", "Requests to the hit path (HTTP, --http_port).",
        T::Counter, s.hit_path_requests);
    add("tilec_hit_path_from_memory_total",
        "Hit path requests answered from memory on its event loop (no disk read).", T::Counter,
        s.hit_path_from_memory);
    add("tilec_workers", "GPU workers connected.", T::Gauge, s.workers);
    add("tilec_workers_busy", "GPU workers running a measurement job.", T::Gauge, s.workers_busy);
    add("tilec_workers_lost_total", "GPU workers dropped (disconnected or silent).", T::Counter,
        s.workers_lost);
    add("tilec_jobs_submitted_total", "Measurement jobs submitted to the pool.", T::Counter,
        s.jobs_submitted);
    add("tilec_jobs_completed_total", "Measurement jobs a worker reported.", T::Counter,
        s.jobs_completed);
    add("tilec_jobs_requeued_total",
        "Measurement jobs queued again after a worker died or a lease expired.", T::Counter,
        s.jobs_requeued);
    add("tilec_jobs_poisoned_total", "Measurement jobs that killed two workers (not retried).",
        T::Counter, s.jobs_poisoned);
    add("tilec_jobs_queued", "Measurement jobs waiting for a worker.", T::Gauge, s.jobs_queued);
    add("tilec_leases_expired_total", "Job leases that ran past their deadline.", T::Counter,
        s.leases_expired);
    if (s.shared) {
      const SharedTierCounters& t = *s.shared;
      add("tilec_shared_tier_up",
          "1 while the fleet's shared tier (Redis) answers, 0 while degraded (serving from disk "
          "and compiling here).",
          T::Gauge, t.up ? 1 : 0);
      add("tilec_shared_tier_hits_total", "Artifacts served from the shared tier.", T::Counter,
          t.hits);
      add("tilec_shared_tier_misses_total", "Shared-tier lookups that found nothing usable.",
          T::Counter, t.misses);
      add("tilec_shared_tier_corrupt_total",
          "Shared-tier entries or blobs that failed verification, removed.", T::Counter, t.corrupt);
      add("tilec_shared_tier_rejected_total",
          "Shared-tier entries refused for a missing or invalid signature (--signing_key, "
          "--verify_keys).",
          T::Counter, t.rejected);
      add("tilec_shared_tier_errors_total", "Shared-tier calls that failed (the tier went down).",
          T::Counter, t.errors);
      add("tilec_shared_tier_stores_total", "Artifacts this server stored in the shared tier.",
          T::Counter, t.stores);
      add("tilec_shared_tier_locks_taken_total",
          "Fleet-wide compile locks this server took (its compiles of shared misses).", T::Counter,
          t.locks_taken);
      add("tilec_shared_tier_waits_total", "Waits for another server's compile of the same kernel.",
          T::Counter, t.waits);
      add("tilec_shared_tier_wakeups_total", "Waits ended by the other server's publish.",
          T::Counter, t.wakeups);
    }
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::function<Snapshot()> fn_;
};

prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,    1,     2.5,    5,     10,   30,    60,   120, 300};
}

}  // namespace

ServerMetrics::ServerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  started_ = &prometheus::BuildCounter()
                  .Name("grpc_server_started_total")
                  .Help("RPCs started on the server.")
                  .Register(*registry_);
  handled_ = &prometheus::BuildCounter()
                  .Name("grpc_server_handled_total")
                  .Help("RPCs completed on the server, by status code.")
                  .Register(*registry_);
  handling_seconds_ = &prometheus::BuildHistogram()
                           .Name("grpc_server_handling_seconds")
                           .Help("Time from an RPC's start to its status, in seconds.")
                           .Register(*registry_);
  compile_seconds_ = &prometheus::BuildHistogram()
                          .Name("tilec_compile_duration_seconds")
                          .Help("Wall time of compiles (child processes), by target.")
                          .Register(*registry_);
  compiles_ = &prometheus::BuildCounter()
                   .Name("tilec_compiles_total")
                   .Help("Compiles run, by target and status code.")
                   .Register(*registry_);
  in_flight_ = &prometheus::BuildGauge()
                    .Name("tilec_compiles_in_flight")
                    .Help("Compiles running or waiting for a compile slot now.")
                    .Register(*registry_)
                    .Add({});
  snapshot_collector_ = std::make_shared<SnapshotCollector>();
}

std::string ServerMetrics::CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return "OK";
    case absl::StatusCode::kCancelled: return "CANCELLED";
    case absl::StatusCode::kUnknown: return "UNKNOWN";
    case absl::StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case absl::StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case absl::StatusCode::kNotFound: return "NOT_FOUND";
    case absl::StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case absl::StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case absl::StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case absl::StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case absl::StatusCode::kAborted: return "ABORTED";
    case absl::StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case absl::StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case absl::StatusCode::kInternal: return "INTERNAL";
    case absl::StatusCode::kUnavailable: return "UNAVAILABLE";
    case absl::StatusCode::kDataLoss: return "DATA_LOSS";
    case absl::StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

void ServerMetrics::RpcStarted(const std::string& method, const std::string& type) {
  started_->Add({{"grpc_service", kService}, {"grpc_method", method}, {"grpc_type", type}})
      .Increment();
}

void ServerMetrics::RpcHandled(const std::string& method, const std::string& type,
                               absl::StatusCode code, double seconds) {
  handled_
      ->Add({{"grpc_service", kService},
             {"grpc_method", method},
             {"grpc_type", type},
             {"grpc_code", CodeName(code)}})
      .Increment();
  handling_seconds_
      ->Add({{"grpc_service", kService}, {"grpc_method", method}, {"grpc_type", type}},
            LatencyBuckets())
      .Observe(seconds);
}

void ServerMetrics::CompileFinished(const std::string& target, absl::StatusCode code,
                                    double seconds) {
  compiles_->Add({{"target", target}, {"code", CodeName(code)}}).Increment();
  compile_seconds_->Add({{"target", target}}, LatencyBuckets()).Observe(seconds);
}

void ServerMetrics::SetSnapshot(std::function<Snapshot()> snapshot) {
  static_cast<SnapshotCollector*>(snapshot_collector_.get())->Set(std::move(snapshot));
}

}  // namespace tilec::server
