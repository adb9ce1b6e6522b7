// The real Compiler for every target: the tilec pipeline run in this process,
// from a verified tile program to a cubin (hsaco for AMD) and its launch
// metadata.
// It is cuda::BuildCudaArtifact (compiler/targets/cuda/artifact.h: inference,
// emission, NVRTC) behind the Compiler interface, so tilecd's compile children, the
// embedded CLI and `tilec compile --local` run one pipeline.
//
//   ir::Verify -> cuda::BuildCudaArtifact -> artifact
//
// The artifact's bytes are the cubin; its metadata JSON is
// cuda::CudaArtifactMetadataJson (schema "tilec.cuda.artifact.v1": target,
// NVRTC version, bound config, parameter ABI, workspaces, kernels in launch
// order with grid, block, dynamic shared memory, registers and spills).
//
// Errors are the pipeline's own codes (see compiler.h). Deadlines and
// cancellation are checked before the pipeline starts only: a pipeline in
// progress runs to its end; SubprocessCompiler (server/) enforces hard
// limits.
#ifndef TILEC_COMPILER_CACHE_CUDA_COMPILER_H_
#define TILEC_COMPILER_CACHE_CUDA_COMPILER_H_

#include "compiler/cache/cache_key.h"
#include "compiler/cache/compiler.h"

namespace tilec::cache {

class CudaCompiler : public Compiler {
 public:
  absl::StatusOr<Artifact> Compile(const CompileJob& job) override;
};

// INVALID_ARGUMENT unless `target` is a target tilec compiles for.
absl::Status CheckCudaTarget(const std::string& target);

// The toolchains of this process, for cache keys: tilec's version, NVRTC's,
// clang-19's (empty when it cannot be run: AMD compiles then fail) and the
// CUDA and AMD device headers' hashes.
ToolchainInfo CurrentToolchain();

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_CUDA_COMPILER_H_
