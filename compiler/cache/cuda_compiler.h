// The real Compiler for the CUDA targets: the tilec pipeline run in this
// process, from a verified tile program to a cubin and its launch metadata.
//
//   ir::Verify -> every tile parameter bound -> inference::InferLayouts ->
//   cuda::EmitCuda -> cuda::CompileCuda (NVRTC) -> artifact
//
// The artifact's bytes are the cubin. Its metadata JSON object holds:
// "target", "program_hash", "program" (name), "compiler", "nvrtc",
// "options" {"line_info", "max_registers"}, "kernels" (launch order: "name",
// "grid" (IR expressions over the dynamic dims, as text), "threads",
// "smem_bytes", "params" [{"kind", "name", "dtype"}], and from ptxas
// "registers", "spill_store_bytes", "spill_load_bytes"), "workspaces"
// [{"name", "dtype", "bytes"}], "dyn_dims" [names], "tile_params"
// {name: value}, "source_bytes" and "source_sha256" of the generated CUDA.
//
// Errors are the pipeline's own codes (see compiler.h). Deadlines and
// cancellation are checked between stages only: a stage in progress runs
// to its end; SubprocessCompiler (server/) enforces hard limits.
#ifndef TILEC_COMPILER_CACHE_CUDA_COMPILER_H_
#define TILEC_COMPILER_CACHE_CUDA_COMPILER_H_

#include "compiler/cache/compiler.h"

namespace tilec::cache {

class CudaCompiler : public Compiler {
 public:
  absl::StatusOr<Artifact> Compile(const CompileJob& job) override;
};

// INVALID_ARGUMENT unless `target` is a CUDA target tilec compiles for.
absl::Status CheckCudaTarget(const std::string& target);

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_CUDA_COMPILER_H_
