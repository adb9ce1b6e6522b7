#include "compiler/cache/cuda_compiler.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/cache/cache_key.h"
#include "compiler/cache/digest.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/target.h"

namespace tilec::cache {
namespace {

std::string Json(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string_view ParamKind(cuda::CudaKernelParam::Kind kind) {
  switch (kind) {
    case cuda::CudaKernelParam::Kind::kTensor: return "tensor";
    case cuda::CudaKernelParam::Kind::kScalar: return "scalar";
    case cuda::CudaKernelParam::Kind::kWorkspace: return "workspace";
    case cuda::CudaKernelParam::Kind::kDynDim: return "dyn_dim";
  }
  return "unknown";
}

std::string Metadata(const CompileJob& job, const ir::Program& program,
                     const cuda::CudaSource& source, const cuda::NvrtcResult& nvrtc) {
  std::string kernels;
  for (const cuda::CudaKernel& k : source.kernels) {
    std::string grid, params;
    for (const ir::Expr& g : k.grid) {
      absl::StrAppend(&grid, grid.empty() ? "" : ",", Json(ir::PrintExpr(g)));
    }
    for (const cuda::CudaKernelParam& p : k.params) {
      absl::StrAppend(&params, params.empty() ? "" : ",", "{\"kind\":", Json(ParamKind(p.kind)),
                      ",\"name\":", Json(p.name), ",\"dtype\":", Json(ir::DTypeName(p.dtype)),
                      "}");
    }
    std::string regs;
    for (const cuda::PtxasKernelInfo& info : nvrtc.kernels) {
      if (info.name != k.name) continue;
      regs = absl::StrCat(",\"registers\":", info.registers,
                          ",\"spill_store_bytes\":", info.spill_store_bytes,
                          ",\"spill_load_bytes\":", info.spill_load_bytes);
    }
    absl::StrAppend(&kernels, kernels.empty() ? "" : ",", "{\"name\":", Json(k.name),
                    ",\"grid\":[", grid, "],\"threads\":", k.threads,
                    ",\"smem_bytes\":", k.smem_bytes, ",\"params\":[", params, "]", regs, "}");
  }
  std::string workspaces, dyn_dims, tile_params;
  for (const cuda::CudaWorkspace& w : source.workspaces) {
    absl::StrAppend(&workspaces, workspaces.empty() ? "" : ",", "{\"name\":", Json(w.name),
                    ",\"dtype\":", Json(ir::DTypeName(w.dtype)),
                    ",\"bytes\":", Json(ir::PrintExpr(w.bytes)), "}");
  }
  for (const ir::Var& d : program.dyn_dims) {
    absl::StrAppend(&dyn_dims, dyn_dims.empty() ? "" : ",", Json(d->name));
  }
  for (const ir::TileParam& t : program.tile_params) {
    if (!t.value) continue;
    absl::StrAppend(&tile_params, tile_params.empty() ? "" : ",", Json(t.var->name), ":",
                    *t.value);
  }
  return absl::StrCat(
      "{\"target\":", Json(job.target), ",\"program_hash\":", Json(job.program_hash),
      ",\"program\":", Json(program.name), ",\"compiler\":", Json(CompilerVersion()),
      ",\"nvrtc\":", Json(nvrtc.nvrtc_version), ",\"options\":{\"line_info\":",
      job.options.line_info ? "true" : "false", ",\"max_registers\":", job.options.max_registers,
      "},\"kernels\":[", kernels, "],\"workspaces\":[", workspaces, "],\"dyn_dims\":[", dyn_dims,
      "],\"tile_params\":{", tile_params, "},\"source_bytes\":", source.code.size(),
      ",\"source_sha256\":", Json(Sha256Hex(source.code)), "}");
}

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
  return cuda::ParseCudaArch(target).status();
}

absl::StatusOr<Artifact> CudaCompiler::Compile(const CompileJob& job) {
  absl::Time start = absl::Now();
  if (job.program == nullptr) return absl::InternalError("compiler bug: compile job without a program");
  const ir::Program& program = *job.program;
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(job.target);
  if (!target.ok()) return target.status();
  if (absl::Status s = ir::Verify(program); !s.ok()) return s;
  for (const ir::TileParam& t : program.tile_params) {
    if (!t.value) {
      return absl::FailedPreconditionError(
          absl::StrCat("tile parameter ", t.var->name, " is unbound; bind it with -D"));
    }
  }
  if (absl::Status s = CheckStillWanted(job); !s.ok()) return s;
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(program, target->info);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<cuda::CudaSource> source = cuda::EmitCuda(program, *plan, *target);
  if (!source.ok()) return source.status();
  if (absl::Status s = CheckStillWanted(job); !s.ok()) return s;
  cuda::NvrtcOptions options;
  options.line_info = job.options.line_info;
  options.max_registers = job.options.max_registers;
  absl::StatusOr<cuda::NvrtcResult> nvrtc =
      cuda::CompileCuda(source->code, program.name + ".cu", target->arch, options);
  if (!nvrtc.ok()) return nvrtc.status();
  Artifact artifact;
  artifact.metadata_json = Metadata(job, program, *source, *nvrtc);
  artifact.bytes = std::move(nvrtc->cubin);
  artifact.compile_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return artifact;
}

}  // namespace tilec::cache
