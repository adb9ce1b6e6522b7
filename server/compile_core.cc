#include "server/compile_core.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "compiler/ir/hash.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/targets/cuda/nvrtc.h"

namespace tilec::server {
namespace {

constexpr int kMaxTargets = 8;

absl::Status WithTarget(const std::string& target, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(target, ": ", s.message()));
}

}  // namespace

absl::StatusOr<tilec::v1::CompileResponse> CompileCore::Compile(
    const tilec::v1::CompileRequest& request, absl::Time deadline,
    std::shared_ptr<const cache::Cancellation> cancel) {
  if (request.targets().empty()) {
    return absl::InvalidArgumentError("the request names no target (sm_80, sm_90a)");
  }
  if (request.targets_size() > kMaxTargets) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxTargets, " targets per request"));
  }
  for (const std::string& t : request.targets()) {
    if (absl::Status s = cuda::ParseCudaArch(t).status(); !s.ok()) return s;
  }
  if (request.options().max_registers() < 0) {
    return absl::InvalidArgumentError("max_registers must not be negative");
  }
  absl::StatusOr<ir::Program> program =
      RequestProgram(request.has_source() ? &request.source() : nullptr,
                     request.has_program() ? &request.program() : nullptr, limits_);
  if (!program.ok()) return program.status();
  tilec::v1::CompileResponse response;
  response.set_program_hash(ir::ProgramHash(*program));
  const bool unbound = recommend::HasUnboundTileParams(*program);
  auto shared = std::make_shared<const ir::Program>(*std::move(program));
  for (const std::string& target : request.targets()) {
    cache::CompileJob job;
    job.program = shared;
    job.program_hash = response.program_hash();
    recommend::AutoBinding binding;
    if (unbound) {
      absl::StatusOr<recommend::HardwareProfile> profile =
          recommend::ProfileForTarget(profiles_, target, request.options().profile());
      if (!profile.ok()) return WithTarget(target, profile.status());
      absl::StatusOr<recommend::AutoBinding> bound =
          recommend::BindTopRecommendation(*shared, *profile, deadline);
      if (!bound.ok()) return WithTarget(target, bound.status());
      binding = *std::move(bound);
      job.program = std::make_shared<const ir::Program>(std::move(binding.program));
      job.program_hash = ir::ProgramHash(*job.program);
    }
    job.target = target;
    job.options.line_info = request.options().line_info();
    job.options.max_registers = request.options().max_registers();
    job.deadline = deadline;
    job.cancel = cancel;
    absl::StatusOr<cache::Artifact> artifact = compiler_->Compile(job);
    if (!artifact.ok()) return WithTarget(target, artifact.status());
    tilec::v1::CompileResult* r = response.add_results();
    r->set_target(target);
    r->set_digest(cache::Sha256Hex(artifact->bytes));
    r->set_size_bytes(static_cast<int64_t>(artifact->bytes.size()));
    r->set_metadata_json(artifact->metadata_json);
    r->set_cache_hit(artifact->cache_hit);
    r->set_cache_key(artifact->cache_key);
    r->set_compile_seconds(artifact->cache_hit ? 0 : artifact->compile_seconds);
    r->set_program_hash(job.program_hash);
    for (const auto& [name, value] : binding.config) {
      tilec::v1::NamedValue* v = r->add_config();
      v->set_name(name);
      v->set_value(value);
    }
    r->set_profile(binding.profile_id);
    r->set_predicted_us(binding.predicted_us);
  }
  return response;
}

}  // namespace tilec::server
