#include "compiler/targets/cuda/artifact.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/amdgpu/toolchain.h"

namespace tilec::cuda {
namespace {

// An IR expression as metadata text: constants as integers.
std::string ExprText(const ir::Expr& e) {
  if (std::optional<int64_t> v = inference::EvalInt(e)) return absl::StrCat(*v);
  return ir::PrintExpr(e);
}

std::string ShapeJson(const std::vector<ir::Expr>& shape) {
  std::vector<std::string> dims;
  for (const ir::Expr& d : shape) dims.push_back(JsonQuote(ExprText(d)));
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

absl::string_view KindName(CudaKernelParam::Kind k) {
  switch (k) {
    case CudaKernelParam::Kind::kTensor: return "tensor";
    case CudaKernelParam::Kind::kScalar: return "scalar";
    case CudaKernelParam::Kind::kWorkspace: return "workspace";
    case CudaKernelParam::Kind::kDynDim: return "dyn_dim";
    case CudaKernelParam::Kind::kTensorMap: return "tensor_map";
  }
  return "?";
}

}  // namespace

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

// The kernels' preludes in program order (kernels do not nest).
class Preludes : public ir::IRVisitor {
 public:
  using ir::IRVisitor::Visit;
  void Visit(const ir::Stmt& s) override {
    if (s && s->kind == ir::StmtKind::kKernel) {
      texts.push_back(s->as<ir::KernelNode>()->prelude);
      return;
    }
    ir::IRVisitor::Visit(s);
  }
  std::vector<std::string> texts;
};

// An NVRTC error inside a kernel's prelude is the program's (the user's
// inline source), not a compiler bug: INVALID_ARGUMENT naming the kernel and
// the prelude's line. The emitter writes each prelude after a `// prelude`
// line, verbatim.
absl::Status BlamePrelude(const ir::Program& program, const std::string& code,
                          const std::string& file_name, const absl::Status& status) {
  if (!absl::IsInternal(status)) return status;
  auto log = status.GetPayload(kNvrtcLogPayload);
  if (!log) return status;
  std::vector<int> errors = ErrorLines(std::string(*log), file_name);
  if (errors.empty()) return status;
  Preludes preludes;
  preludes.Visit(program.body);
  std::vector<absl::string_view> lines = absl::StrSplit(code, '\n');
  size_t line = 0;  // 0-based index into lines
  for (size_t k = 0; k < preludes.texts.size(); ++k) {
    const std::string& p = preludes.texts[k];
    if (p.empty()) continue;
    while (line < lines.size() && lines[line] != "// prelude") ++line;
    if (line >= lines.size()) break;
    const int first = static_cast<int>(line) + 2;  // 1-based line of the prelude's first line
    const int count = static_cast<int>(std::count(p.begin(), p.end(), '\n')) + 1;
    for (int e : errors) {
      if (e >= first && e < first + count) {
        return absl::InvalidArgumentError(
            absl::StrCat("kernel ", k, " > prelude:", e - first + 1,
                         ": the prelude does not compile: ", status.message()));
      }
    }
    line += static_cast<size_t>(count) + 1;
  }
  return status;
}

// The code object of an AMD target, by clang-19 (amdgpu/toolchain.h), and
// each kernel's resources from its metadata.
absl::Status CompileForAmd(const ir::Program& program, const CudaTarget& target,
                           const CudaSource& source, CudaArtifact& a) {
  amdgpu::HsacoOptions options;
  options.source_name = absl::StrCat(program.name, ".hip");
  absl::StatusOr<amdgpu::Hsaco> hsaco =
      amdgpu::CompileHsaco(source.code, std::string(target.name()), options);
  if (!hsaco.ok()) return hsaco.status();
  // The version the code object names (its .comment), else clang's own.
  std::string v = hsaco->info.compiler;
  if (v.empty()) {
    absl::StatusOr<std::string> version = amdgpu::ClangVersion();
    if (!version.ok()) return version.status();
    v = *version;
  }
  // "Debian clang version 19.1.7 (3~deb12u1)" -> "19.1.7"
  if (size_t at = v.find("version "); at != std::string::npos) v = v.substr(at + 8);
  a.nvrtc_version = v.substr(0, v.find(' '));
  a.cubin = std::move(hsaco->code_object);
  a.compile_seconds = hsaco->seconds;
  for (const CudaKernel& k : source.kernels) {
    PtxasKernelInfo info;
    info.name = k.name;
    for (const amdgpu::AmdKernelInfo& ki : hsaco->info.kernels) {
      if (ki.name != k.name) continue;
      // On gfx90a and gfx942 the VGPR count is the unified file's total:
      // architectural VGPRs and AGPRs (which it includes) together.
      info.registers = static_cast<int>(ki.vgprs);
      info.stack_frame_bytes = ki.scratch_bytes;
      if (ki.vgpr_spills + ki.sgpr_spills > 0) {
        info.spill_store_bytes = info.spill_load_bytes = ki.scratch_bytes;
      }
      info.shared_bytes = ki.lds_bytes;
    }
    a.ptxas.push_back(info);
  }
  return absl::OkStatus();
}

}  // namespace

std::string BinarySuffix(const CudaArtifact& artifact) {
  return artifact.amd ? ".hsaco" : ".cubin";
}
std::string SourceSuffix(const CudaArtifact& artifact) { return artifact.amd ? ".hip" : ".cu"; }

absl::StatusOr<CudaArtifact> BuildCudaArtifact(const ir::Program& program, const CudaTarget& target,
                                               const NvrtcOptions& options) {
  for (const ir::TileParam& t : program.tile_params) {
    if (!t.value) {
      return absl::FailedPreconditionError(absl::StrCat("tile parameter ", t.var->name,
                                                        " is unbound; bind it with -D ",
                                                        t.var->name, "=<value>"));
    }
  }
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(program, target.info);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<CudaSource> source = EmitCuda(program, *plan, target);
  if (!source.ok()) return source.status();
  CudaArtifact a;
  a.program = program.name;
  a.target = std::string(target.name());
  a.amd = target.amd;
  if (target.amd) {
    absl::Status st = CompileForAmd(program, target, *source, a);
    if (!st.ok()) return st;
  } else {
    const std::string file_name = absl::StrCat(program.name, ".cu");
    // The kernel's fast math (pass_configs): approximate division, square
    // root and exp/log, float32 denormals flushed, as TileLang's nvcc does.
    NvrtcOptions nvrtc_options = options;
    if (program.fast_math) nvrtc_options.extra_options.push_back("--use_fast_math");
    absl::StatusOr<NvrtcResult> nvrtc =
        CompileCuda(source->code, file_name, target.arch, nvrtc_options);
    if (!nvrtc.ok()) return BlamePrelude(program, source->code, file_name, nvrtc.status());
    a.nvrtc_version = nvrtc->nvrtc_version;
    a.cubin = std::move(nvrtc->cubin);
    a.compile_seconds = nvrtc->compile_seconds;
    for (const CudaKernel& k : source->kernels) {
      const PtxasKernelInfo* info_ptr = nullptr;
      for (const PtxasKernelInfo& p : nvrtc->kernels) {
        if (p.name == k.name) info_ptr = &p;
      }
      if (info_ptr == nullptr) {
        return absl::InternalError(absl::StrCat(
            "compiler bug: NVRTC ", nvrtc->nvrtc_version, "'s log has no ptxas report (",
            "registers, spills) for kernel ", k.name, ", so its resources are unknown"));
      }
      const PtxasKernelInfo& info = *info_ptr;
      if (k.setmaxnreg_registers > 0 && info.registers * k.threads < k.setmaxnreg_registers) {
        return absl::InternalError(absl::StrCat(
            "compiler bug: kernel ", k.name, "'s warpgroups ask setmaxnreg for ",
            k.setmaxnreg_registers, " registers, but its ", k.threads, " threads hold ",
            info.registers * k.threads, " (", info.registers,
            " each from ptxas): a setmaxnreg.inc would wait forever"));
      }
      a.ptxas.push_back(info);
    }
  }
  a.source = *std::move(source);
  for (const ir::TileParam& t : program.tile_params) a.config.emplace_back(t.var->name, *t.value);
  for (const ir::Var& d : program.dyn_dims) a.dyn_dims.push_back(d->name);
  a.device_queries = program.device_queries;
  for (const ir::Requirement& r : program.requirements) {
    a.requirements.emplace_back(ir::PrintExpr(r.cond), r.message);
  }
  for (const ir::Param& p : program.params) {
    if (p.tensor && p.view) {
      a.params.push_back({CudaKernelParam::Kind::kTensor, p.tensor->name, p.tensor->dtype,
                          p.view->shape, ir::ViewStrides(p.tensor, *p.view)});
    } else if (p.tensor) {
      a.params.push_back(
          {CudaKernelParam::Kind::kTensor, p.tensor->name, p.tensor->dtype, p.tensor->shape});
    } else if (p.scalar) {
      a.params.push_back({CudaKernelParam::Kind::kScalar, p.scalar->name, p.scalar->dtype, {}});
    }
  }
  return a;
}

std::string CudaArtifactMetadataJson(const CudaArtifact& a) {
  std::vector<std::string> config, dims, params, workspaces, kernels;
  for (const auto& [name, value] : a.config)
    config.push_back(absl::StrCat(JsonQuote(name), ": ", value));
  for (const std::string& d : a.dyn_dims) dims.push_back(JsonQuote(d));
  std::vector<std::string> queries;
  for (const std::string& q : a.device_queries) queries.push_back(JsonQuote(q));
  std::vector<std::string> requires_;
  for (const auto& [cond, message] : a.requirements) {
    requires_.push_back(
        absl::StrCat("{\"cond\": ", JsonQuote(cond), ", \"message\": ", JsonQuote(message), "}"));
  }
  for (const CudaKernelParam& p : a.params) {
    std::string entry =
        absl::StrCat("{\"name\": ", JsonQuote(p.name), ", \"kind\": ", JsonQuote(KindName(p.kind)),
                     ", \"dtype\": ", JsonQuote(Sv(ir::DTypeName(p.dtype))));
    if (p.kind == CudaKernelParam::Kind::kTensor) {
      absl::StrAppend(&entry, ", \"shape\": ", ShapeJson(p.shape));
      if (!p.strides.empty()) absl::StrAppend(&entry, ", \"strides\": ", ShapeJson(p.strides));
    }
    params.push_back(entry + "}");
  }
  for (const CudaWorkspace& w : a.source.workspaces) {
    workspaces.push_back(absl::StrCat(
        "{\"name\": ", JsonQuote(w.name), ", \"dtype\": ", JsonQuote(Sv(ir::DTypeName(w.dtype))),
        ", \"shape\": ", ShapeJson(w.shape), ", \"bytes\": ", JsonQuote(ExprText(w.bytes)), "}"));
  }
  for (size_t i = 0; i < a.source.kernels.size(); ++i) {
    const CudaKernel& k = a.source.kernels[i];
    std::vector<ir::Expr> grid = k.grid;
    while (grid.size() < 3) grid.push_back(ir::IntImm(1));
    std::vector<std::string> kparams, maps;
    for (const CudaKernelParam& p : k.params) {
      kparams.push_back(JsonQuote(p.name));
      if (p.kind != CudaKernelParam::Kind::kTensorMap) continue;
      maps.push_back(absl::StrCat("{\"name\": ", JsonQuote(p.name), ", \"tensor\": ",
                                  JsonQuote(p.tensor), ", \"box\": [", absl::StrJoin(p.box, ", "),
                                  "], \"swizzle\": ", p.swizzle_bytes, "}"));
    }
    std::vector<std::string> mma;
    for (const std::string& instruction : k.mma) mma.push_back(JsonQuote(instruction));
    std::vector<std::string> shared;
    for (const CudaKernel::SharedBuffer& b : k.shared) {
      shared.push_back(absl::StrCat("{\"buffer\": ", JsonQuote(b.name), ", \"offset\": ", b.offset,
                                    ", \"bytes\": ", b.bytes, ", \"live\": [", b.first, ", ",
                                    b.last, "]}"));
    }
    const PtxasKernelInfo info = i < a.ptxas.size() ? a.ptxas[i] : PtxasKernelInfo();
    kernels.push_back(absl::StrCat(
        "{\"name\": ", JsonQuote(k.name), ", \"grid\": ", ShapeJson(grid), ", \"block\": [",
        k.threads, ", 1, 1], \"smem_bytes\": ", k.smem_bytes, ", \"registers\": ", info.registers,
        ", \"spill_store_bytes\": ", info.spill_store_bytes, ", \"spill_load_bytes\": ",
        info.spill_load_bytes, ", \"stack_frame_bytes\": ", info.stack_frame_bytes,
        ", \"params\": [", absl::StrJoin(kparams, ", "), "], \"mma\": [", absl::StrJoin(mma, ", "),
        "], \"shared\": [", absl::StrJoin(shared, ", "), "]",
        k.schedule.empty() ? "" : absl::StrCat(", \"schedule\": ", JsonQuote(k.schedule)),
        maps.empty() ? "" : absl::StrCat(", \"tensor_maps\": [", absl::StrJoin(maps, ", "), "]"),
        "}"));
  }
  return absl::StrCat(
      "{\"schema\": \"tilec.cuda.artifact.v1\", \"program\": ", JsonQuote(a.program),
      ", \"target\": ", JsonQuote(a.target), a.amd ? ", \"clang\": " : ", \"nvrtc\": ",
      JsonQuote(a.nvrtc_version),
      ",\n \"config\": {", absl::StrJoin(config, ", "), "},\n \"dyn_dims\": [",
      absl::StrJoin(dims, ", "), "],",
      queries.empty()
          ? ""
          : absl::StrCat("\n \"device_queries\": [", absl::StrJoin(queries, ", "), "],"),
      requires_.empty()
          ? ""
          : absl::StrCat("\n \"requires\": [", absl::StrJoin(requires_, ",\n   "), "],"),
      "\n \"params\": [", absl::StrJoin(params, ",\n   "), "],\n \"workspaces\": [",
      absl::StrJoin(workspaces, ",\n   "), "],\n \"kernels\": [", absl::StrJoin(kernels, ",\n   "),
      "],\n \"source\": ", JsonQuote(a.source.code), "}\n");
}

absl::Status WriteCudaArtifact(const CudaArtifact& a, const std::string& dir,
                               const std::string& base) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the output folder ", dir, ": ", ec.message()));
  }
  const std::pair<std::string, const std::string*> files[] = {
      {BinarySuffix(a), &a.cubin}, {SourceSuffix(a), &a.source.code}, {".json", nullptr}};
  const std::string json = CudaArtifactMetadataJson(a);
  for (const auto& [ext, text] : files) {
    const std::string path = (std::filesystem::path(dir) / (base + ext)).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::string& bytes = text ? *text : json;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace tilec::cuda
