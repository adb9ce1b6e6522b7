#include "compiler/cache/cuda_compiler.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/amdgpu/toolchain.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/target.h"
#include "compiler/targets/registry.h"

namespace tilec::cache {
namespace {

absl::Status CheckStillWanted(const CompileJob& job) {
  if (job.cancel != nullptr && job.cancel->cancelled()) {
    return absl::CancelledError("the compile was cancelled");
  }
  if (absl::Now() >= job.deadline) {
    return absl::DeadlineExceededError("the compile's deadline passed");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckCudaTarget(const std::string& target) {
  return targets::CompileTarget(target).status();
}

ToolchainInfo CurrentToolchain() {
  ToolchainInfo t{CompilerVersion(), cuda::NvrtcVersion(), DeviceHeadersHash()};
  t.clang_version = amdgpu::ClangVersion().value_or("");
  t.amd_headers_hash = DeviceHeadersHash(device::DeviceTarget::kHip);
  return t;
}

absl::StatusOr<Artifact> CudaCompiler::Compile(const CompileJob& job) {
  absl::Time start = absl::Now();
  if (job.program == nullptr) {
    return absl::InternalError("compiler bug: compile job without a program");
  }
  const ir::Program& program = *job.program;
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(job.target);
  if (!target.ok()) return target.status();
  if (absl::Status s = ir::Verify(program); !s.ok()) return s;
  if (absl::Status s = CheckStillWanted(job); !s.ok()) return s;
  cuda::NvrtcOptions options;
  options.line_info = job.options.line_info;
  options.max_registers = job.options.max_registers;
  absl::StatusOr<cuda::CudaArtifact> built = cuda::BuildCudaArtifact(program, *target, options);
  if (!built.ok()) return built.status();
  Artifact artifact;
  artifact.metadata_json = cuda::CudaArtifactMetadataJson(*built);
  artifact.bytes = std::move(built->cubin);
  artifact.compile_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return artifact;
}

}  // namespace tilec::cache
