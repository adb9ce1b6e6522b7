// Tile recommendation: ranked configurations of a program's unbound tile
// parameters for one hardware profile, with the predicted time and the
// reason for each.
//
// Before: `program` verifies; unbound tile parameters are what is
// recommended (a program with none gets its one config ranked and checked).
// Steps:
//  1. Deduction and the search space (space.h).
//  2. Every config is bound (bind.h) and measured without lowering
//     (kernel_stats.h, registers estimated); configs over the profile's
//     limits (threads, shared memory, registers, nothing resident on an SM)
//     are rejected, the rest ranked by the cost model (cost_model.h).
//  3. In that order, each config is lowered as the backend would: ir::Verify
//     and inference::InferLayouts on the profile's TargetInfo; a rejection,
//     a T.gemm whose tile does not split over the warps without padding, or
//     a plan whose exact register and shared-memory needs exceed the limits
//     discards the config. Lowering stops once top_k configs passed (all of
//     them with validate_all). The passing configs are re-ranked with the
//     plan's numbers.
// Deterministic: the same program and profile give the same list, also for
// two programs parsed separately from one source; ties in predicted time are
// broken by the config's values in Program.tile_params order, ascending.
// Bounded: a space of more than options.max_configs configs (the product of
// the candidate counts, overflow-checked) is refused before any enumeration;
// step 2 keeps only the best options.kept_candidates configs in memory (a bounded
// heap), and when lowering rejects all of them while more remain, the space
// is streamed again for the next best ones (exactly the order of one full
// sort, in memory independent of the space's size).
// Errors: INVALID_ARGUMENT for contradictions in deduction or a space over
// max_configs (naming each searched parameter and its count); NOT_FOUND
// when no config of the space is valid, with the most common rejection
// reasons; DEADLINE_EXCEEDED past options.deadline; CANCELLED once
// options.cancelled returns true (both checked every 64 configs).
#ifndef TILEC_COMPILER_RECOMMEND_RECOMMEND_H_
#define TILEC_COMPILER_RECOMMEND_RECOMMEND_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/ir/ir.h"
#include "compiler/recommend/cost_model.h"
#include "compiler/recommend/profile.h"
#include "compiler/recommend/space.h"

namespace tilec::recommend {

// The largest search space enumerated (configs): about 22 s of step 2 on
// one core for the GEMM example with 16 candidates for each of its five
// tile parameters; memory is bounded by kKeptCandidates, not by this.
inline constexpr int64_t kMaxSearchConfigs = int64_t{1} << 20;
// Configs of step 2 held in memory at once.
inline constexpr int64_t kKeptCandidates = 4096;

struct RecommendOptions {
  int top_k = 5;
  // Values of dynamic dims for the cost model (kDefaultDynDim otherwise).
  std::map<std::string, int64_t> dyn_dims;
  // Lower every config within the limits, not only until top_k pass.
  bool validate_all = false;
  // Past it the search stops with DEADLINE_EXCEEDED (a served request's
  // deadline); checked between configs.
  absl::Time deadline = absl::InfiniteFuture();
  // Past it the search stops with CANCELLED (a cancelled call, a server
  // shutting down); null: never.
  std::function<bool()> cancelled;
  int64_t max_configs = kMaxSearchConfigs;
  int64_t kept_candidates = kKeptCandidates;  // >= 1
};

struct Recommendation {
  int rank = 0;   // 1-based
  Config config;  // every unbound tile parameter
  double predicted_us = 0;
  std::string limiter;               // "compute" | "memory" | "occupancy" | "waves"
  std::string reason;                // one line
  std::vector<KernelStats> kernels;  // with the plan's register and shared numbers
  std::vector<KernelCost> costs;
};

struct RecommendReport {
  SearchSpace space;
  int64_t configs = 0;      // size of the space
  int64_t over_limits = 0;  // rejected before lowering
  int64_t lowered = 0;      // configs lowered
  int64_t rejected_by_lowering = 0;
  // Rejection reasons with their counts, most common first (ties by text).
  std::vector<std::pair<std::string, int64_t>> rejections;
  std::vector<Recommendation> recommendations;
};

absl::StatusOr<RecommendReport> RecommendWithReport(const ir::Program& program,
                                                    const HardwareProfile& profile,
                                                    const RecommendOptions& options);

absl::StatusOr<std::vector<Recommendation>> Recommend(const ir::Program& program,
                                                      const HardwareProfile& profile,
                                                      const RecommendOptions& options);

// Checks one bound config by lowering it (step 3 above) and predicts its
// time: the Recommendation for it (rank 0), or the rejection as
// RESOURCE_EXHAUSTED / the lowering's own status.
absl::StatusOr<Recommendation> EvaluateConfig(const ir::Program& program,
                                              const HardwareProfile& profile, const Config& config,
                                              const RecommendOptions& options);

}  // namespace tilec::recommend

#endif  // TILEC_COMPILER_RECOMMEND_RECOMMEND_H_
