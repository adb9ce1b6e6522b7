// The core of the Recommend RPC, without gRPC: the request's program
// (server/request_program.h) is ranked on the named hardware profile by
// compiler/recommend/recommend.h, and the report becomes a
// RecommendResponse. tilecd serves it; the CLI runs the same core in-process
// when no server is named, so both print the same table.
//
// Errors: a bad program INVALID_ARGUMENT with its located diagnostic; an
// unknown profile INVALID_ARGUMENT listing the known ids; top_k < 0 or over
// kMaxTopK, or a dyn dim size < 0, INVALID_ARGUMENT; no valid config
// FAILED_PRECONDITION with the most common rejections; a search space over
// recommend::kMaxSearchConfigs INVALID_ARGUMENT naming each parameter's
// count; DEADLINE_EXCEEDED past `deadline` or past limits.search_timeout
// (whichever is first); CANCELLED once `cancelled` returns true.
#ifndef TILEC_SERVER_RECOMMEND_CORE_H_
#define TILEC_SERVER_RECOMMEND_CORE_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/recommend/profile.h"
#include "compiler/recommend/recommend.h"
#include "proto/tilec/v1/service.pb.h"
#include "server/request_program.h"

namespace tilec::server {

inline constexpr int kMaxTopK = 1000;
inline constexpr int kDefaultTopK = 5;

class RecommendCore {
 public:
  RecommendCore(CoreLimits limits, std::vector<recommend::HardwareProfile> profiles)
      : limits_(limits), profiles_(std::move(profiles)) {}

  absl::StatusOr<tilec::v1::RecommendResponse> Recommend(
      const tilec::v1::RecommendRequest& request, absl::Time deadline,
      std::function<bool()> cancelled = nullptr) const;

 private:
  CoreLimits limits_;
  std::vector<recommend::HardwareProfile> profiles_;
};

// The report in wire form (exposed for tests).
tilec::v1::RecommendResponse ToProto(const recommend::RecommendReport& report,
                                     const recommend::HardwareProfile& profile);

}  // namespace tilec::server

#endif  // TILEC_SERVER_RECOMMEND_CORE_H_
