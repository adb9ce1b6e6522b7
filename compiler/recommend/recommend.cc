#include "compiler/recommend/recommend.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/verifier.h"
#include "compiler/recommend/bind.h"

namespace tilec::recommend {
namespace {

struct Candidate {
  Config config;
  std::vector<int64_t> key;  // values in Program.tile_params order (the tie-break)
  double predicted_us = 0;
};

std::vector<int64_t> KeyOf(const ir::Program& program, const Config& config) {
  std::vector<int64_t> key;
  for (const ir::TileParam& tp : program.tile_params) {
    if (tp.value || !tp.var) continue;
    auto it = config.find(tp.var->name);
    key.push_back(it == config.end() ? 0 : it->second);
  }
  return key;
}

// The first line of a status message, without the kernel prefix variations
// that would split one reason into many.
std::string Summary(const absl::Status& st) {
  std::string msg(st.message());
  if (size_t nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
  return absl::StrCat(absl::StatusCodeToString(st.code()), ": ", msg);
}

// `text` with every run of digits replaced by N (and no '~'), so that one
// kind of rejection is counted once.
std::string WithoutNumbers(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '~') continue;
    if (text[i] >= '0' && text[i] <= '9') {
      while (i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') ++i;
      out += 'N';
    } else {
      out += text[i];
    }
  }
  return out;
}

// DEADLINE_EXCEEDED past the deadline, CANCELLED once cancelled.
absl::Status Interrupted(const RecommendOptions& options, const ir::Program& program, int64_t done,
                         int64_t total) {
  if (options.cancelled && options.cancelled()) {
    return absl::CancelledError(absl::StrCat("recommending configs of ", program.name,
                                             " was cancelled after ", done, " of ", total,
                                             " configs"));
  }
  if (options.deadline == absl::InfiniteFuture() || absl::Now() < options.deadline) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(absl::StrCat("recommending configs of ", program.name,
                                                  " ran past the deadline after ", done, " of ",
                                                  total, " configs"));
}

bool Better(const Candidate& a, const Candidate& b) {
  if (a.predicted_us != b.predicted_us) return a.predicted_us < b.predicted_us;
  return a.key < b.key;
}

}  // namespace

absl::StatusOr<Recommendation> EvaluateConfig(const ir::Program& program,
                                              const HardwareProfile& profile, const Config& config,
                                              const RecommendOptions& options) {
  auto bound = BindTileParams(program, config);
  if (!bound.ok()) return bound.status();
  if (absl::Status st = ir::Verify(*bound); !st.ok()) return st;
  auto plan = inference::InferLayouts(*bound, TargetInfoFor(profile));
  if (!plan.ok()) return plan.status();
  for (const auto& [node, part] : plan->gemms) {
    if (!part.exact) {
      return absl::UnimplementedError(
          "a T.gemm tile does not split over the block's warps without padding");
    }
  }
  auto stats = AnalyzeKernels(inference::PlannedProgram(*plan, *bound), profile, options.dyn_dims,
                              &*plan);
  if (!stats.ok()) return stats.status();
  for (const KernelStats& k : *stats) {
    if (absl::Status st = CheckLimits(k, profile); !st.ok()) return st;
  }
  ProgramCost cost = PredictProgram(*stats, profile);
  Recommendation r;
  r.config = config;
  r.predicted_us = cost.time_us;
  r.limiter = cost.limiter;
  r.reason = cost.reason;
  r.kernels = *std::move(stats);
  r.costs = std::move(cost.kernels);
  return r;
}

absl::StatusOr<RecommendReport> RecommendWithReport(const ir::Program& program,
                                                    const HardwareProfile& profile,
                                                    const RecommendOptions& options) {
  if (options.top_k < 1) return absl::InvalidArgumentError("top_k must be >= 1");
  if (options.kept_candidates < 1) {
    return absl::InvalidArgumentError("kept_candidates must be >= 1");
  }
  RecommendReport report;
  auto space = BuildSearchSpace(program, profile);
  if (!space.ok()) return space.status();
  report.space = *std::move(space);
  if (absl::Status st = report.space.CheckSize(options.max_configs); !st.ok()) return st;
  report.configs = report.space.Size();
  std::map<std::string, int64_t> reasons;

  // Step 2, one pass: bind, measure and rank without lowering every config
  // ranked after `floor`, keeping the best options.kept_candidates (a max-heap on
  // Better: the worst kept on top). Over-limit counts come from the first
  // pass only.
  auto stream = [&](const Candidate* floor, bool count,
                    std::vector<Candidate>* kept) -> absl::Status {
    kept->clear();
    for (int64_t i = 0; i < report.configs; ++i) {
      if (i % 64 == 0) {
        if (absl::Status st = Interrupted(options, program, i, report.configs); !st.ok()) {
          return st;
        }
      }
      Config config = report.space.At(i);
      auto bound = BindTileParams(program, config);
      if (!bound.ok()) return bound.status();
      auto stats = AnalyzeKernels(*bound, profile, options.dyn_dims, nullptr);
      if (!stats.ok()) return stats.status();
      absl::Status limits;
      for (const KernelStats& k : *stats) {
        limits = CheckLimits(k, profile);
        if (!limits.ok()) break;
      }
      if (!limits.ok()) {
        if (!count) continue;
        ++report.over_limits;
        // Count by kind of limit, not by number.
        ++reasons[absl::StrCat("over limits: ",
                               WithoutNumbers(std::string(absl::StripSuffix(
                                   limits.message(), absl::StrCat(" on ", profile.id())))))];
        continue;
      }
      Candidate c;
      c.key = KeyOf(program, config);
      c.predicted_us = PredictProgram(*stats, profile).time_us;
      if (floor != nullptr && !Better(*floor, c)) continue;  // seen in an earlier pass
      if (static_cast<int64_t>(kept->size()) >= options.kept_candidates) {
        if (!Better(c, kept->front())) continue;
        std::pop_heap(kept->begin(), kept->end(), Better);
        kept->pop_back();
      }
      c.config = std::move(config);
      kept->push_back(std::move(c));
      std::push_heap(kept->begin(), kept->end(), Better);
    }
    std::sort_heap(kept->begin(), kept->end(), Better);
    return absl::OkStatus();
  };

  // Step 3: lower in rank order, streaming the space again while every kept
  // candidate was lowered, more may remain, and more are wanted.
  struct Passed {
    Recommendation rec;
    std::vector<int64_t> key;
    double predicted_us;
  };
  std::vector<Passed> passed;
  std::vector<Candidate> kept;
  std::optional<Candidate> floor;
  for (bool first = true;; first = false) {
    if (absl::Status st = stream(floor ? &*floor : nullptr, first, &kept); !st.ok()) return st;
    bool enough = false;
    for (const Candidate& c : kept) {
      if (!options.validate_all && static_cast<int>(passed.size()) >= options.top_k) {
        enough = true;
        break;
      }
      if (absl::Status st = Interrupted(options, program, report.configs, report.configs);
          !st.ok()) {
        return st;
      }
      ++report.lowered;
      auto rec = EvaluateConfig(program, profile, c.config, options);
      if (!rec.ok()) {
        ++report.rejected_by_lowering;
        ++reasons[Summary(rec.status())];
        continue;
      }
      double t = rec->predicted_us;
      passed.push_back({*std::move(rec), c.key, t});
    }
    enough |= !options.validate_all && static_cast<int>(passed.size()) >= options.top_k;
    if (enough || static_cast<int64_t>(kept.size()) < options.kept_candidates) break;
    floor = kept.back();
  }
  auto better = [](const auto& a, const auto& b) {
    if (a.predicted_us != b.predicted_us) return a.predicted_us < b.predicted_us;
    return a.key < b.key;
  };
  std::stable_sort(passed.begin(), passed.end(), better);
  for (const auto& [reason, count] : reasons) report.rejections.emplace_back(reason, count);
  std::stable_sort(report.rejections.begin(), report.rejections.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (passed.empty()) {
    std::vector<std::string> top;
    for (size_t i = 0; i < report.rejections.size() && i < 3; ++i) {
      top.push_back(absl::StrCat(report.rejections[i].second, " x ", report.rejections[i].first));
    }
    return absl::NotFoundError(absl::StrCat("no valid config of ", program.name, " for ",
                                            profile.id(), " among ", report.configs, ": ",
                                            absl::StrJoin(top, "; ")));
  }
  for (size_t i = 0; i < passed.size() && static_cast<int>(i) < options.top_k; ++i) {
    passed[i].rec.rank = static_cast<int>(i) + 1;
    report.recommendations.push_back(std::move(passed[i].rec));
  }
  return report;
}

absl::StatusOr<std::vector<Recommendation>> Recommend(const ir::Program& program,
                                                      const HardwareProfile& profile,
                                                      const RecommendOptions& options) {
  auto report = RecommendWithReport(program, profile, options);
  if (!report.ok()) return report.status();
  return std::move(report->recommendations);
}

}  // namespace tilec::recommend
