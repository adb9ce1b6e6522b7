#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/interp/npy.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/target.h"
#include "compiler/targets/host/emulate.h"
#include "compiler/targets/registry.h"

namespace tilec::cli {
namespace {

// The name of parameter i: a tensor's buffer name or a scalar's var name.
std::string ParamName(const ir::Param& p) { return p.tensor ? p.tensor->name : p.scalar->name; }

// Binds dynamic dims from --dim flags, then from the shapes of the --in files
// (a tensor dimension that is exactly a dynamic dim takes the file's size).
absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> BindDims(
    const ir::Program& program, const Flags& flags,
    const std::vector<std::vector<int64_t>>& files) {
  absl::flat_hash_map<std::string, int64_t> dims;
  for (const auto& [name, size] : flags.dims) {
    bool known = false;
    for (const ir::Var& d : program.dyn_dims) known |= d->name == name;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("tilec: --dim ", name, ": the program has no dynamic dim of that name"));
    }
    dims[name] = size;
  }
  size_t file = 0;
  for (const ir::Param& p : program.params) {
    if (file == files.size()) break;
    if (!p.tensor) {
      ++file;
      continue;
    }
    const std::vector<int64_t>& shape = files[file++];
    if (shape.size() != p.tensor->shape.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tilec: ", flags.inputs[file - 1], " has rank ", shape.size(),
                       ", but parameter ", p.tensor->name, " has rank ", p.tensor->shape.size()));
    }
    for (size_t d = 0; d < p.tensor->shape.size(); ++d) {
      // A packed int4 file holds half the elements of its last dim.
      if (p.tensor->dtype == ir::DType::kInt4 && d + 1 == p.tensor->shape.size()) continue;
      if (const auto* v = p.tensor->shape[d]->as<ir::VarNode>())
        dims.try_emplace(v->name, shape[d]);
    }
  }
  for (const ir::Var& d : program.dyn_dims) {
    if (!dims.contains(d->name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("tilec: dynamic dim ", d->name, " has no size: give --dim ", d->name,
                       "=N, bind it with -D, or pass an --in file that has it"));
    }
  }
  return dims;
}

// Emits CUDA for --target and runs it on the SIMT emulator over `args`.
absl::Status Emulate(const ir::Program& program, const Flags& flags,
                     const absl::flat_hash_map<std::string, int64_t>& dims,
                     std::vector<interp::Tensor>& args) {
  // The registry says what the name means (an AMD target is known but not
  // compiled for yet); the CUDA target then has the details.
  const absl::Status known = targets::CompileTarget(flags.target).status();
  absl::StatusOr<cuda::CudaTarget> target =
      known.ok() ? cuda::CudaTarget::FromName(flags.target) : absl::StatusOr<cuda::CudaTarget>(known);
  if (!target.ok()) return target.status();
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(program, target->info);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<cuda::CudaSource> source = cuda::EmitCuda(program, *plan, *target);
  if (!source.ok()) return source.status();
  host::LaunchOptions options;
  options.shuffle_blocks = flags.shuffle_blocks;
  options.shuffle_seed = flags.seed;
  options.time_limit_s = flags.timeout_given ? flags.timeout_s : 60;
  options.check_uninit = flags.check_uninit;
  return host::EmulateProgram(program, *source, args,
                              std::map<std::string, int64_t>(dims.begin(), dims.end()), options);
}

// Compares every tensor parameter after the emulator and the interpreter ran;
// kMismatch when any differs beyond its dtype's tolerance.
int Compare(const ir::Program& program, const std::vector<interp::Tensor>& emulated,
            const std::vector<interp::Tensor>& reference) {
  int code = kOk;
  for (size_t i = 0; i < program.params.size(); ++i) {
    if (!program.params[i].tensor) continue;
    interp::Tolerance tol = interp::ProgramTolerance(program, emulated[i].dtype());
    auto cmp = interp::CompareTensors(emulated[i], reference[i], tol);
    if (!cmp.ok()) return ReportError(cmp.status());
    std::printf("compare %s %s: %s\n", ParamName(program.params[i]).c_str(),
                emulated[i].TypeString().c_str(), cmp->Summary().c_str());
    if (!cmp->ok) code = kMismatch;
  }
  return code;
}

}  // namespace

int RunCommand(const Flags& flags) {
  auto program = LoadProgram(flags);
  if (!program.ok()) return ReportError(program.status());
  std::vector<std::string> unbound;
  for (const ir::TileParam& tp : program->tile_params) {
    if (!tp.value) unbound.push_back(tp.var->name);
  }
  if (!unbound.empty()) {
    return ReportError(absl::FailedPreconditionError(absl::StrCat(
        "tilec: run needs every tile parameter bound, but ", flags.function, " leaves ",
        absl::StrJoin(unbound, ", "), " unbound; bind them with -D name=value (tilec recommend ",
        flags.file, " --fn ", flags.function, " --target PROFILE suggests values)")));
  }
  if (flags.inputs.size() > program->params.size()) {
    return ReportError(
        absl::InvalidArgumentError(absl::StrCat("tilec: ", flags.inputs.size(), " --in files for ",
                                                program->params.size(), " parameters")));
  }
  // The files' shapes bind dynamic dims first; their data is read below, into
  // each parameter's dtype.
  std::vector<std::vector<int64_t>> files;
  for (const std::string& path : flags.inputs) {
    auto shape = interp::ReadNpyShape(path);
    if (!shape.ok()) return ReportError(shape.status());  // the message names the file
    files.push_back(*std::move(shape));
  }
  auto dims = BindDims(*program, flags, files);
  if (!dims.ok()) return ReportError(dims.status());
  auto args = interp::MakeInputs(*program, *dims, flags.seed);
  if (!args.ok()) return ReportError(args.status());
  for (size_t i = 0; i < flags.inputs.size(); ++i) {
    // Re-read into the parameter's dtype and shape: converting as a cast would.
    interp::Tensor& arg = (*args)[i];
    auto t = interp::ReadNpyAs(flags.inputs[i], arg.dtype(), arg.shape());
    if (!t.ok()) {
      return ReportError(
          absl::Status(t.status().code(),
                       absl::StrCat(flags.inputs[i], " for parameter ",
                                    ParamName(program->params[i]), ": ", t.status().message())));
    }
    arg = *std::move(t);
  }
  std::printf("seed %llu\n", static_cast<unsigned long long>(flags.seed));

  // The interpreter and the emulator each run on their own copy of the inputs.
  std::vector<interp::Tensor> interp_args, emu_args;
  if (flags.interp) {
    interp_args = *args;
    interp::RunOptions options;
    options.shuffle_blocks = flags.shuffle_blocks;
    options.shuffle_seed = flags.seed;
    if (absl::Status st = interp::RunProgram(*program, interp_args, options); !st.ok()) {
      return ReportError(st);
    }
  }
  if (flags.emulate) {
    absl::Status st = Emulate(*program, flags, *dims, emu_args = *args);
    if (absl::IsDeadlineExceeded(st)) {
      std::fprintf(stderr, "tilec: the emulated kernel did not finish within --timeout_s: %s\n",
                   std::string(st.message()).c_str());
      return kTimeout;
    }
    if (absl::IsAborted(st)) {
      // A device-side fault (out-of-bounds access, barrier divergence, ...)
      // in code tilec generated: a compiler bug unless the program's own
      // indexing leaves its tensors.
      std::fprintf(stderr,
                   "tilec: the generated kernel faulted on the emulator: %s\n"
                   "tilec: unless the tile program itself indexes outside its tensors, this is a "
                   "compiler bug; please report it\n",
                   std::string(st.message()).c_str());
      return kInternalError;
    }
    if (!st.ok()) return ReportError(st);
  }
  int code = kOk;
  if (flags.compare) code = Compare(*program, emu_args, interp_args);
  const std::vector<interp::Tensor>& results = flags.emulate ? emu_args : interp_args;

  if (!flags.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags.out_dir, ec);
    if (ec) {
      return ReportError(absl::PermissionDeniedError(
          absl::StrCat("tilec: cannot create ", flags.out_dir, ": ", ec.message())));
    }
  }
  for (size_t i = 0; i < program->params.size(); ++i) {
    const interp::Tensor& t = results[i];
    std::string line = absl::StrCat(ParamName(program->params[i]), " ", t.TypeString());
    if (!flags.out_dir.empty()) {
      std::string path = absl::StrCat(flags.out_dir, "/", ParamName(program->params[i]), ".npy");
      if (absl::Status st = interp::WriteNpy(path, t); !st.ok()) return ReportError(st);
      absl::StrAppend(&line, " -> ", path);
    }
    std::printf("%s\n", line.c_str());
  }
  return code;
}

}  // namespace tilec::cli
