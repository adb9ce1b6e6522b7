#include "server/compile_core.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/cache/digest.h"
#include "compiler/ir/hash.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/recommend/bind.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/registry.h"

namespace tilec::server {
namespace {

constexpr int kMaxTargets = 8;

// Asked by staging and searches: whether the call was cancelled (or the
// server is stopping).
std::function<bool()> StopOf(std::shared_ptr<const cache::Cancellation> cancel) {
  return [cancel = std::move(cancel)] { return cancel != nullptr && cancel->cancelled(); };
}

absl::Status WithTarget(const std::string& target, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(target, ": ", s.message()));
}

}  // namespace

absl::StatusOr<tilec::v1::CompileResponse> CompileCore::Compile(
    const tilec::v1::CompileRequest& request, absl::Time deadline,
    std::shared_ptr<const cache::Cancellation> cancel) {
  absl::StatusOr<std::shared_ptr<const Prepared>> prepared =
      Prepare(request, deadline, std::move(cancel));
  if (!prepared.ok()) return prepared.status();
  return Compile(**prepared);
}

absl::StatusOr<tilec::v1::CompileResponse> CompileCore::Compile(const Prepared& prepared) {
  absl::StatusOr<std::optional<tilec::v1::CompileResponse>> r =
      Finish(prepared, /*lookup_only=*/false);
  if (!r.ok()) return r.status();
  if (!r->has_value()) return absl::InternalError("compiler bug: a compile gave no response");
  return **std::move(r);
}

absl::StatusOr<std::optional<tilec::v1::CompileResponse>> CompileCore::Lookup(
    const tilec::v1::CompileRequest& request, absl::Time deadline,
    std::shared_ptr<const cache::Cancellation> cancel, std::shared_ptr<const Prepared>* prepared) {
  absl::StatusOr<std::shared_ptr<const Parsed>> parsed =
      Parse(request, deadline, std::move(cancel));
  if (!parsed.ok()) return parsed.status();
  return Lookup(**parsed, prepared);
}

absl::StatusOr<std::optional<tilec::v1::CompileResponse>> CompileCore::Lookup(
    const Parsed& parsed, std::shared_ptr<const Prepared>* prepared) {
  absl::StatusOr<std::shared_ptr<const Prepared>> p = Bind(parsed);
  if (!p.ok()) return p.status();
  *prepared = *p;
  if (!lookup_) return std::nullopt;
  return Finish(**p, /*lookup_only=*/true);
}

absl::StatusOr<tilec::v1::CompileResponse> CompileCore::LookupByHash(
    const tilec::v1::CompileRequest& request) {
  if (!cache::IsHexDigest(request.program_hash())) {
    return absl::InvalidArgumentError("program_hash must be 64 lowercase hex digits");
  }
  if (request.targets().empty() || request.targets_size() > kMaxTargets) {
    return absl::InvalidArgumentError(
        absl::StrCat("a request names 1 to ", kMaxTargets, " targets (",
                     targets::TargetNames(), ")"));
  }
  for (const std::string& t : request.targets()) {
    if (absl::Status s = targets::CompileTarget(t).status(); !s.ok()) return s;
  }
  if (request.options().max_registers() < 0) {
    return absl::InvalidArgumentError("max_registers must not be negative");
  }
  Prepared prepared;  // no program: lookups only
  prepared.program_hash = request.program_hash();
  for (const std::string& target : request.targets()) {
    cache::CompileJob job;
    job.program_hash = request.program_hash();
    job.target = target;
    job.options.line_info = request.options().line_info();
    job.options.max_registers = request.options().max_registers();
    prepared.jobs.push_back(std::move(job));
    prepared.bindings.emplace_back();
  }
  absl::StatusOr<std::optional<tilec::v1::CompileResponse>> r =
      lookup_ ? Finish(prepared, /*lookup_only=*/true)
              : absl::StatusOr<std::optional<tilec::v1::CompileResponse>>(std::nullopt);
  if (!r.ok()) return r.status();
  if (!r->has_value()) {
    return absl::NotFoundError(absl::StrCat("program ", request.program_hash(),
                                            " is not cached for every target: send the program"));
  }
  return **std::move(r);
}

absl::StatusOr<std::shared_ptr<const CompileCore::Prepared>> CompileCore::Prepare(
    const tilec::v1::CompileRequest& request, absl::Time deadline,
    std::shared_ptr<const cache::Cancellation> cancel) {
  absl::StatusOr<std::shared_ptr<const Parsed>> parsed =
      Parse(request, deadline, std::move(cancel));
  if (!parsed.ok()) return parsed.status();
  return Bind(**parsed);
}

absl::StatusOr<std::shared_ptr<const CompileCore::Parsed>> CompileCore::Parse(
    const tilec::v1::CompileRequest& request, absl::Time deadline,
    std::shared_ptr<const cache::Cancellation> cancel) const {
  if (request.targets().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the request names no target (",
                                                   targets::TargetNames(),
                                                   ")"));
  }
  if (request.targets_size() > kMaxTargets) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxTargets, " targets per request"));
  }
  for (const std::string& t : request.targets()) {
    if (absl::Status s = targets::CompileTarget(t).status(); !s.ok()) return s;
  }
  if (request.options().max_registers() < 0) {
    return absl::InvalidArgumentError("max_registers must not be negative");
  }
  // A source that asks the device is answered for the first target's
  // profile; one asked for several targets would need one program each.
  std::optional<frontend::DeviceFacts> device;
  if (request.has_source() && request.targets_size() > 0) {
    absl::StatusOr<recommend::HardwareProfile> first =
        recommend::ProfileForTarget(profiles_, request.targets(0), request.options().profile());
    if (first.ok()) device = recommend::DeviceFactsOf(*first);
  }
  absl::StatusOr<ir::Program> program =
      RequestProgram(request.has_source() ? &request.source() : nullptr,
                     request.has_program() ? &request.program() : nullptr, limits_,
                     device ? &*device : nullptr, {.deadline = deadline, .stop = StopOf(cancel)});
  if (!program.ok()) return program.status();
  if (!program->device_queries.empty() && request.targets_size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the source asks the device (", program->device_queries[0],
        "), whose answer depends on the target: compile it for one target per request"));
  }
  auto parsed = std::make_shared<Parsed>();
  parsed->request = &request;
  parsed->deadline = deadline;
  parsed->cancel = std::move(cancel);
  parsed->program_hash = ir::ProgramHash(*program);
  parsed->unbound = recommend::HasUnboundTileParams(*program);
  parsed->program = std::make_shared<const ir::Program>(*std::move(program));
  for (const std::string& target : request.targets()) {
    Parsed::Target t;
    t.name = target;
    if (parsed->unbound) {
      absl::StatusOr<recommend::HardwareProfile> profile =
          recommend::ProfileForTarget(profiles_, target, request.options().profile());
      if (!profile.ok()) return WithTarget(target, profile.status());
      t.profile = *std::move(profile);
      if (tuned_) t.tuned = tuned_(parsed->program_hash, t.profile.id());
      parsed->needs_search |= !t.tuned.has_value();
    }
    parsed->targets.push_back(std::move(t));
  }
  return parsed;
}

absl::StatusOr<std::shared_ptr<const CompileCore::Prepared>> CompileCore::Bind(
    const Parsed& parsed) const {
  const tilec::v1::CompileRequest& request = *parsed.request;
  auto prepared = std::make_shared<Prepared>();
  prepared->program_hash = parsed.program_hash;
  const std::shared_ptr<const ir::Program>& shared = parsed.program;
  const std::shared_ptr<const cache::Cancellation>& cancel = parsed.cancel;
  for (const Parsed::Target& t : parsed.targets) {
    const std::string& target = t.name;
    cache::CompileJob job;
    job.program = shared;
    job.program_hash = prepared->program_hash;
    recommend::AutoBinding binding;
    std::string source;
    double measured_ms = 0;
    if (t.tuned) {
      absl::StatusOr<ir::Program> bound = recommend::BindTileParams(*shared, t.tuned->config);
      if (!bound.ok()) return WithTarget(target, bound.status());
      binding.program = *std::move(bound);
      binding.config = t.tuned->config;
      binding.profile_id = t.profile.id();
      source = "autotune";
      measured_ms = t.tuned->measured_ms;
      job.program = std::make_shared<const ir::Program>(std::move(binding.program));
      job.program_hash = ir::ProgramHash(*job.program);
    } else if (parsed.unbound) {
      source = "recommendation";
      absl::StatusOr<recommend::AutoBinding> bound = recommend::BindTopRecommendation(
          *shared, t.profile, std::min(parsed.deadline, absl::Now() + limits_.search_timeout),
          StopOf(cancel));
      if (!bound.ok()) return WithTarget(target, bound.status());
      binding = *std::move(bound);
      job.program = std::make_shared<const ir::Program>(std::move(binding.program));
      job.program_hash = ir::ProgramHash(*job.program);
    }
    job.target = target;
    job.options.line_info = request.options().line_info();
    job.options.max_registers = request.options().max_registers();
    job.deadline = parsed.deadline;
    job.cancel = cancel;
    prepared->jobs.push_back(std::move(job));
    prepared->bindings.push_back(
        {{}, std::move(binding.config), std::move(binding.profile_id), binding.predicted_us});
    prepared->config_sources.push_back(source);
    prepared->measured_ms.push_back(measured_ms);
  }
  return prepared;
}

absl::StatusOr<std::optional<tilec::v1::CompileResponse>> CompileCore::Finish(
    const Prepared& prepared, bool lookup_only) {
  tilec::v1::CompileResponse response;
  response.set_program_hash(prepared.program_hash);
  for (size_t i = 0; i < prepared.jobs.size(); ++i) {
    const cache::CompileJob& job = prepared.jobs[i];
    const recommend::AutoBinding& binding = prepared.bindings[i];
    const std::string& target = job.target;
    absl::StatusOr<cache::Artifact> artifact;
    if (lookup_only) {
      absl::StatusOr<std::optional<cache::Artifact>> hit = lookup_(job);
      if (!hit.ok() || !hit->has_value()) return std::nullopt;  // compile it
      artifact = **std::move(hit);
    } else {
      artifact = compiler_->Compile(job);
    }
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
    if (i < prepared.config_sources.size()) r->set_config_source(prepared.config_sources[i]);
    if (i < prepared.measured_ms.size()) r->set_measured_ms(prepared.measured_ms[i]);
    if (!artifact->store_error.empty()) {
      // Not in the cache: the response is the only copy.
      r->set_store_error(artifact->store_error);
      r->set_artifact(std::move(artifact->bytes));
    }
  }
  return response;
}

}  // namespace tilec::server
