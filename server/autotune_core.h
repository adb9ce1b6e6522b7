// The core of the Autotune RPC, without gRPC.
//
//   request -> program (request_program.h) -> tuning record? (answered from
//   the database unless `retune`) -> the top K configs from recommendation
//   for the profile -> each compiled through the cache -> one measurement job
//   per candidate on the pool's workers of the profile (in parallel) ->
//   checks -> ranking -> the record stored.
//
// Checks. Every run fills its inputs from the request's seed
// (runtime/tensor_data.h) and reports samples of every tensor after one
// launch. When the program is small enough for the interpreter
// (kReferenceMaxFlops), the server runs it on the same inputs and a
// candidate whose samples differ beyond the dtype's tolerance is rejected
// with the numbers; with three or more measured candidates, one whose
// samples differ from the candidates' median is rejected too.
//
// Ranking. By median time; candidates whose median lies within the noise
// band of the best (kMinNoiseBand, or the best's own relative spread, min to
// max, when larger) are tied (on the emulator, whose CPU wall times rank
// nothing, every checked candidate ties), and the tie goes to the better predicted rank, so the
// same measurements choose the same config. The record carries Spearman's
// rank correlation between predicted and measured order.
//
// Errors: a bad program INVALID_ARGUMENT; no unbound tile parameter
// INVALID_ARGUMENT; an unknown profile INVALID_ARGUMENT; no worker of the
// profile FAILED_PRECONDITION naming it; every candidate failing or rejected
// FAILED_PRECONDITION with their reasons; DEADLINE_EXCEEDED / CANCELLED.
#ifndef TILEC_SERVER_AUTOTUNE_CORE_H_
#define TILEC_SERVER_AUTOTUNE_CORE_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "compiler/cache/compiler.h"
#include "compiler/cache/signing.h"
#include "compiler/recommend/profile.h"
#include "proto/tilec/v1/service.pb.h"
#include "server/request_program.h"
#include "server/tuning_db.h"
#include "server/worker_pool.h"

namespace tilec::server {

inline constexpr int kDefaultAutotuneTopK = 4;
inline constexpr int kMaxAutotuneTopK = 64;
inline constexpr double kMinNoiseBand = 0.02;  // device events
inline constexpr double kReferenceMaxFlops = 2e8;
inline constexpr int kOutputSamples = 64;

struct AutotuneDeps {
  cache::Compiler* compiler = nullptr;  // the server's decorated compiler (cache, single flight)
  WorkerPool* pool = nullptr;
  TuningDb* db = nullptr;
  std::vector<recommend::HardwareProfile> profiles;
  CoreLimits limits;
  std::string compiler_version;
  std::string nvrtc_version;
  const cache::Signer* signer = nullptr;  // signs each job's artifact (may be null)
};

class AutotuneCore {
 public:
  explicit AutotuneCore(AutotuneDeps deps) : deps_(std::move(deps)) {}

  using Progress = std::function<void(const tilec::v1::AutotuneProgress&)>;
  absl::Status Autotune(const tilec::v1::AutotuneRequest& request, absl::Time deadline,
                        std::shared_ptr<const cache::Cancellation> cancel,
                        const Progress& progress);

  // The tuned config for an unbound program on `profile` (the key without
  // dynamic dim sizes), for Compile; nullopt when none is recorded.
  std::optional<tilec::v1::TuningRecord> Lookup(const std::string& program_hash,
                                                const std::string& profile_id) const;

  // Sets measured_ms on the recommendations an autotune measured (Recommend
  // shows measured times beside predicted ones). `dims` as requested.
  void AnnotateMeasured(tilec::v1::RecommendResponse* response,
                        const std::map<std::string, int64_t>& dims) const;

 private:
  AutotuneDeps deps_;
};

// Spearman's rank correlation of two equally long lists (NaN below 2).
double Spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tilec::server

#endif  // TILEC_SERVER_AUTOTUNE_CORE_H_
