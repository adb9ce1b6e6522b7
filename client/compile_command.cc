// `tilec compile FILE --fn NAME -D ... --target sm_80|sm_90a --local -o DIR`:
// the whole CUDA pipeline in this process, without the artifact cache. Writes
// DIR/<program>.cubin, DIR/<program>.cu (the generated source) and
// DIR/<program>.json (launch metadata, compiler/targets/cuda/artifact.h) and
// prints one line per kernel (or the metadata with --json). Unbound tile
// parameters are bound to the top recommendation for the target's profile
// (--profile P overrides it; --profiles DIR adds profiles), as tilecd and the
// embedded compile do (compiler/recommend/auto_bind.h).
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/commands.h"
#include "compiler/inference/index_expr.h"
#include "compiler/ir/printer.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/target.h"
#include "compiler/targets/registry.h"

namespace tilec::cli {
namespace {

std::string GridText(const cuda::CudaKernel& k) {
  std::vector<std::string> dims;
  for (const ir::Expr& g : k.grid) {
    std::optional<int64_t> v = inference::EvalInt(g);
    dims.push_back(v ? absl::StrCat(*v) : ir::PrintExpr(g));
  }
  while (dims.size() < 3) dims.push_back("1");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

}  // namespace

int CompileCommand(const Flags& flags) {
  // The registry says what the name means; the emitter's target then has
  // the details.
  const absl::Status known = targets::CompileTarget(flags.target).status();
  absl::StatusOr<cuda::CudaTarget> target =
      known.ok() ? cuda::CudaTarget::FromName(flags.target) : absl::StatusOr<cuda::CudaTarget>(known);
  if (!target.ok()) {
    std::fprintf(stderr, "tilec: --target: %s\n", std::string(target.status().message()).c_str());
    return kUsageError;
  }
  absl::StatusOr<ir::Program> program = LoadProgram(flags);
  if (!program.ok()) return ReportError(program.status());
  recommend::AutoBinding binding;
  if (recommend::HasUnboundTileParams(*program)) {
    auto profiles = recommend::LoadProfiles(flags.profiles_dir);
    if (!profiles.ok()) return ReportError(profiles.status());
    auto profile = recommend::ProfileForTarget(*profiles, flags.target, flags.profile);
    if (!profile.ok()) return ReportError(profile.status());
    auto bound = recommend::BindTopRecommendation(*program, *profile,
                                                  absl::Now() + absl::Seconds(flags.timeout_s));
    if (!bound.ok()) return ReportError(bound.status());
    binding = *std::move(bound);
    program = binding.program;
  }
  absl::StatusOr<cuda::CudaArtifact> artifact = cuda::BuildCudaArtifact(*program, *target);
  if (!artifact.ok()) return ReportError(artifact.status());
  if (absl::Status st = cuda::WriteCudaArtifact(*artifact, flags.out_dir, program->name);
      !st.ok()) {
    std::fprintf(stderr, "tilec: %s\n", std::string(st.message()).c_str());
    return kIoError;
  }
  if (flags.json) {
    std::fputs(cuda::CudaArtifactMetadataJson(*artifact).c_str(), stdout);
    return kOk;
  }
  const std::string base = (std::filesystem::path(flags.out_dir) / program->name).string();
  std::printf("%s for %s (%s %s, %.2f s): %s%s (%zu bytes), %s%s, %s.json\n",
              program->name.c_str(), artifact->target.c_str(), artifact->amd ? "clang" : "NVRTC",
              artifact->nvrtc_version.c_str(), artifact->compile_seconds, base.c_str(),
              cuda::BinarySuffix(*artifact).c_str(), artifact->cubin.size(), base.c_str(),
              cuda::SourceSuffix(*artifact).c_str(), base.c_str());
  for (const std::string& q : artifact->device_queries) {
    std::printf("  device query answered from the target's profile: %s\n", q.c_str());
  }
  if (!binding.config.empty()) {
    std::printf("  config chosen by recommendation: %s (profile %s, predicted %.1f us)\n",
                recommend::ConfigText(binding.config).c_str(), binding.profile_id.c_str(),
                binding.predicted_us);
  }
  for (size_t i = 0; i < artifact->source.kernels.size(); ++i) {
    const cuda::CudaKernel& k = artifact->source.kernels[i];
    const cuda::PtxasKernelInfo& p = artifact->ptxas[i];
    std::printf("  %s  grid %s  block %lld  smem %lld B  registers %d  spills %lld/%lld B\n",
                k.name.c_str(), GridText(k).c_str(), static_cast<long long>(k.threads),
                static_cast<long long>(k.smem_bytes), p.registers,
                static_cast<long long>(p.spill_store_bytes),
                static_cast<long long>(p.spill_load_bytes));
    if (flags.explain && !k.schedule.empty()) std::printf("    %s\n", k.schedule.c_str());
  }
  return kOk;
}

}  // namespace tilec::cli
