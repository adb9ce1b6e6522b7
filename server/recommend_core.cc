#include "server/recommend_core.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/ir/hash.h"

namespace tilec::server {

tilec::v1::RecommendResponse ToProto(const recommend::RecommendReport& report,
                                     const recommend::HardwareProfile& profile) {
  tilec::v1::RecommendResponse r;
  r.set_profile(profile.id());
  r.set_profile_name(profile.name());
  r.set_configs(report.configs);
  r.set_over_limits(report.over_limits);
  r.set_lowered(report.lowered);
  r.set_rejected_by_lowering(report.rejected_by_lowering);
  for (const auto& [reason, count] : report.rejections) {
    tilec::v1::Rejection* j = r.add_rejections();
    j->set_reason(reason);
    j->set_count(count);
  }
  for (const recommend::DeducedParam& d : report.space.deduced) {
    tilec::v1::DeducedParam* p = r.add_deduced();
    p->set_name(d.name);
    if (d.value) {
      p->set_value(*d.value);
    } else {
      p->set_equals(d.equals);
    }
    p->set_reason(d.reason);
  }
  for (const recommend::SearchedParam& s : report.space.searched) {
    tilec::v1::SearchedParam* p = r.add_searched();
    p->set_name(s.name);
    p->set_role(std::string(recommend::ParamRoleName(s.role)));
    for (int64_t v : s.values) p->add_values(v);
    p->set_origin(s.origin);
  }
  for (const recommend::Recommendation& rec : report.recommendations) {
    tilec::v1::RankedConfig* c = r.add_recommendations();
    c->set_rank(rec.rank);
    for (const auto& [name, value] : rec.config) {
      tilec::v1::NamedValue* v = c->add_config();
      v->set_name(name);
      v->set_value(value);
    }
    c->set_predicted_us(rec.predicted_us);
    c->set_limiter(rec.limiter);
    c->set_reason(rec.reason);
    for (const recommend::KernelStats& k : rec.kernels) {
      tilec::v1::KernelResources* kr = c->add_kernels();
      kr->set_index(k.index);
      kr->set_blocks(k.blocks);
      kr->set_threads(k.threads);
      kr->set_shared_bytes(k.shared_bytes);
      kr->set_registers(k.registers);
    }
  }
  return r;
}

absl::StatusOr<tilec::v1::RecommendResponse> RecommendCore::Recommend(
    const tilec::v1::RecommendRequest& request, absl::Time deadline,
    std::function<bool()> cancelled) const {
  if (request.profile().empty()) {
    return absl::InvalidArgumentError(
        "the request names no hardware profile (h100_sxm, a100, mi300x, ...)");
  }
  absl::StatusOr<recommend::HardwareProfile> profile =
      recommend::FindProfile(profiles_, request.profile());
  if (!profile.ok()) return absl::InvalidArgumentError(profile.status().message());
  const frontend::DeviceFacts device = recommend::DeviceFactsOf(*profile);
  if (request.top_k() < 0 || request.top_k() > kMaxTopK) {
    return absl::InvalidArgumentError(absl::StrCat("top_k must be in [1, ", kMaxTopK, "] (0 for ",
                                                   kDefaultTopK, "), got ", request.top_k()));
  }
  recommend::RecommendOptions options;
  options.top_k = request.top_k() == 0 ? kDefaultTopK : request.top_k();
  options.deadline = std::min(deadline, absl::Now() + limits_.search_timeout);
  options.cancelled = std::move(cancelled);
  for (const tilec::v1::NamedValue& d : request.dyn_dims()) {
    if (d.value() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim ", d.name(), " must be a size >= 0, got ", d.value()));
    }
    options.dyn_dims[d.name()] = d.value();
  }
  absl::StatusOr<ir::Program> program =
      RequestProgram(request.has_source() ? &request.source() : nullptr,
                     request.has_program() ? &request.program() : nullptr, limits_, &device,
                     {.deadline = deadline, .stop = options.cancelled});
  if (!program.ok()) return program.status();
  absl::StatusOr<recommend::RecommendReport> report =
      recommend::RecommendWithReport(*program, *profile, options);
  if (!report.ok()) {
    // No valid config is a property of the program on this hardware.
    if (report.status().code() == absl::StatusCode::kNotFound) {
      return absl::FailedPreconditionError(report.status().message());
    }
    return report.status();
  }
  tilec::v1::RecommendResponse response = ToProto(*report, *profile);
  response.set_program_hash(ir::ProgramHash(*program));
  return response;
}

}  // namespace tilec::server
