// `tilec bench FILE --fn NAME -D ... [--device cuda:0|emulator] [--target T]
// [--dim n=v] [--seed S] [--warmup W] [--iters N] [--no-flush] [--no-check]
// [--json]`: compiles the kernel (in this process, as compile --local does;
// unbound tile parameters take the top recommendation), loads it through the
// runtime (runtime/kernel.h) on the device, fills every tensor from the seed
// (interp::MakeInputs: outputs too, so an unwritten output shows), runs it
// once and checks every tensor against the reference interpreter, then times
// it: W warm-up runs, then N runs each alone between device events after a
// last-level cache flush. Prints the median and spread, and TFLOP/s (T.gemm
// work as kernel_stats.h counts it: whole tiles) or GB/s (the sizes of the
// global buffers, each moved once) at the median.
//
// On the emulator, times are CPU wall times of the SIMT emulator: they say
// nothing about a GPU and are labelled so. Exit codes: those of compile; 3
// when the check fails (nothing is timed then).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/commands.h"
#include "client/device_program.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/recommend/kernel_stats.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/target.h"
#include "compiler/targets/registry.h"
#include "runtime/kernel.h"

namespace tilec::cli {
namespace {

// The CUDA target for the GPU in front of us: sm_90a on compute capability
// 9.0, sm_80 on 8.x (tilec's two CUDA targets).
absl::StatusOr<std::string> TargetForDevice(runtime::Backend& backend) {
  if (backend.device().backend == runtime::DeviceSpec::Backend::kEmulator) return "sm_80";
  if (backend.device().backend == runtime::DeviceSpec::Backend::kHip) {
    return absl::UnimplementedError(
        "tilec has no AMD target yet: bench runs on cuda:N or the emulator");
  }
  absl::StatusOr<runtime::DeviceInfo> info = backend.Info();
  if (!info.ok()) return info.status();
  if (info->arch == "sm_90") return "sm_90a";
  if (info->arch.rfind("sm_8", 0) == 0) return "sm_80";
  return absl::FailedPreconditionError(absl::StrCat(
      info->name, " (", info->arch, ") has no tilec target: tilec compiles for sm_80 and sm_90a"));
}

struct Stats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
};

// A double as JSON, to 15 significant digits (StrCat keeps 6).
std::string Num(double v) { return absl::StrFormat("%.15g", v); }

Stats Summarise(std::vector<double> ms) {
  Stats s;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  s.min = ms.front();
  s.max = ms.back();
  for (double v : ms) s.mean += v / static_cast<double>(n);
  for (double v : ms) s.stddev += (v - s.mean) * (v - s.mean) / static_cast<double>(n);
  s.stddev = std::sqrt(s.stddev);
  return s;
}

}  // namespace

int BenchCommand(const Flags& flags) {
  absl::StatusOr<runtime::DeviceSpec> spec = runtime::DeviceSpec::Parse(flags.device);
  if (!spec.ok()) {
    std::fprintf(stderr, "tilec: --device: %s\n", std::string(spec.status().message()).c_str());
    return kUsageError;
  }
  runtime::EmulatorBackendOptions emulator;
  emulator.time_limit_s = flags.timeout_given ? flags.timeout_s : 600;
  absl::StatusOr<std::unique_ptr<runtime::Backend>> backend = runtime::OpenBackend(*spec, emulator);
  if (!backend.ok()) return ReportError(backend.status());
  std::string target_name = flags.target;
  if (target_name.empty()) {
    absl::StatusOr<std::string> t = TargetForDevice(**backend);
    if (!t.ok()) return ReportError(t.status());
    target_name = *t;
  }
  // The registry says what the name means (an AMD target is known but not
  // compiled for yet); the CUDA target then has the details.
  const absl::Status known = targets::CompileTarget(target_name).status();
  absl::StatusOr<cuda::CudaTarget> target =
      known.ok() ? cuda::CudaTarget::FromName(target_name) : absl::StatusOr<cuda::CudaTarget>(known);
  if (!target.ok()) {
    std::fprintf(stderr, "tilec: --target: %s\n", std::string(target.status().message()).c_str());
    return kUsageError;
  }

  absl::StatusOr<ir::Program> program = LoadProgram(flags);
  if (!program.ok()) return ReportError(program.status());
  auto profiles = recommend::LoadProfiles(flags.profiles_dir);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto profile = recommend::ProfileForTarget(*profiles, target_name, flags.profile);
  if (!profile.ok()) return ReportError(profile.status());
  recommend::AutoBinding binding;
  if (recommend::HasUnboundTileParams(*program)) {
    auto bound = recommend::BindTopRecommendation(*program, *profile,
                                                  absl::Now() + absl::Seconds(flags.timeout_s));
    if (!bound.ok()) return ReportError(bound.status());
    binding = *std::move(bound);
    program = binding.program;
  }

  absl::flat_hash_map<std::string, int64_t> dims;
  std::map<std::string, int64_t> dim_map;
  for (const auto& [name, size] : flags.dims) {
    bool known = false;
    for (const ir::Var& d : program->dyn_dims) known |= d->name == name;
    if (!known) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("tilec: --dim ", name, ": the program has no dynamic dim of that name")));
    }
    dims[name] = size;
    dim_map[name] = size;
  }
  for (const ir::Var& d : program->dyn_dims) {
    if (!dims.contains(d->name)) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat(
          "tilec: dynamic dim ", d->name, " has no size: give --dim ", d->name, "=N")));
    }
  }

  absl::StatusOr<std::unique_ptr<DeviceProgram>> loaded =
      DeviceProgram::Build(*program, *target, backend->get());
  if (!loaded.ok()) return ReportError(loaded.status());
  DeviceProgram& device_program = **loaded;
  const cuda::CudaArtifact* built = &device_program.artifact();

  auto inputs = interp::MakeInputs(*program, dims, flags.seed);
  if (!inputs.ok()) return ReportError(inputs.status());
  if (absl::Status st = device_program.SetArgs(*inputs); !st.ok()) return ReportError(st);
  const std::vector<runtime::Arg>& args = device_program.args();

  // One run, checked.
  std::string check = "skipped";
  std::vector<std::string> check_lines;
  if (absl::Status st = device_program.Run(); !st.ok()) return ReportError(st);
  if (flags.check) {
    std::vector<interp::Tensor> expected = *inputs;
    if (absl::Status st = interp::RunProgram(*program, expected); !st.ok()) return ReportError(st);
    std::vector<interp::Tensor> got = *inputs;
    if (absl::Status st = device_program.Fetch(got); !st.ok()) return ReportError(st);
    check = "ok";
    for (size_t i = 0; i < program->params.size(); ++i) {
      if (!program->params[i].tensor) continue;
      auto cmp =
          interp::CompareTensors(got[i], expected[i], interp::ProgramTolerance(*program, got[i].dtype()));
      if (!cmp.ok()) return ReportError(cmp.status());
      check_lines.push_back(absl::StrCat("check ", program->params[i].tensor->name, " ",
                                         got[i].TypeString(), ": ", cmp->Summary()));
      if (!cmp->ok) check = "mismatch";
    }
  }
  if (!flags.json) {
    std::printf("seed %llu\n", static_cast<unsigned long long>(flags.seed));
    for (const std::string& line : check_lines) std::printf("%s\n", line.c_str());
  }
  if (check == "mismatch") {
    std::fprintf(stderr, "tilec: %s on %s disagrees with the reference interpreter; not timed\n",
                 program->name.c_str(), spec->ToString().c_str());
    if (flags.json) {
      std::printf("{\"program\": %s, \"check\": \"mismatch\"}\n",
                  cuda::JsonQuote(program->name).c_str());
    }
    return kMismatch;
  }

  runtime::TimingOptions timing;
  timing.warmup = flags.warmup;
  timing.iterations = flags.iters;
  timing.flush_cache = flags.flush;
  absl::StatusOr<std::vector<double>> ms = device_program.kernel().Time(args, timing);
  if (!ms.ok()) return ReportError(ms.status());
  const Stats s = Summarise(*ms);

  double flops = 0, bytes = 0;
  if (auto stats = recommend::AnalyzeKernels(*program, *profile, dim_map, nullptr); stats.ok()) {
    for (const recommend::KernelStats& k : *stats) {
      flops += k.matrix_flops * static_cast<double>(k.blocks);
      bytes += k.unique_bytes;
    }
  }
  const double seconds = s.median * 1e-3;
  const double tflops = flops > 0 && seconds > 0 ? flops / seconds / 1e12 : 0;
  const double gbps = bytes > 0 && seconds > 0 ? bytes / seconds / 1e9 : 0;
  const bool emulated = spec->backend == runtime::DeviceSpec::Backend::kEmulator;
  absl::StatusOr<runtime::DeviceInfo> info = (*backend)->Info();
  const std::string device_name = info.ok() ? info->name : spec->ToString();
  std::vector<std::string> config;
  for (const auto& [name, value] : built->config) config.push_back(absl::StrCat(name, "=", value));

  if (flags.json) {
    std::vector<std::string> runs, cfg, dim_json;
    for (double v : *ms) runs.push_back(Num(v));
    for (const auto& [name, value] : built->config)
      cfg.push_back(absl::StrCat(cuda::JsonQuote(name), ": ", value));
    for (const auto& [name, value] : dim_map)
      dim_json.push_back(absl::StrCat(cuda::JsonQuote(name), ": ", value));
    std::printf(
        "%s\n",
        absl::StrCat(
            "{\"program\": ", cuda::JsonQuote(program->name), ", \"target\": ",
            cuda::JsonQuote(target_name), ", \"device\": ", cuda::JsonQuote(spec->ToString()),
            ", \"device_name\": ", cuda::JsonQuote(device_name), ", \"timing\": ",
            cuda::JsonQuote(emulated ? "emulator wall time (not GPU time)" : "device events"),
            ", \"config\": {", absl::StrJoin(cfg, ", "), "}, \"dims\": {",
            absl::StrJoin(dim_json, ", "), "}, \"seed\": ", flags.seed, ", \"check\": \"", check,
            "\", \"warmup\": ", flags.warmup, ", \"iterations\": ", flags.iters,
            ", \"cache_flush\": ", flags.flush ? "true" : "false", ", \"ms\": [",
            absl::StrJoin(runs, ", "), "], \"median_ms\": ", Num(s.median), ", \"min_ms\": ",
            Num(s.min), ", \"max_ms\": ", Num(s.max), ", \"stddev_ms\": ", Num(s.stddev),
            ", \"flops\": ", Num(flops), ", \"bytes\": ", Num(bytes), ", \"tflops\": ", Num(tflops),
            ", \"gbps\": ", Num(gbps), "}")
            .c_str());
    return kOk;
  }
  std::printf("%s on %s (%s), %s, config %s\n", program->name.c_str(), spec->ToString().c_str(),
              device_name.c_str(), target_name.c_str(),
              config.empty() ? "-" : absl::StrJoin(config, " ").c_str());
  std::printf("%s: median %.4f ms, min %.4f, max %.4f, stddev %.1f%% over %d runs (%d warm-up%s)\n",
              emulated ? "emulator wall time, not GPU time" : "device time", s.median, s.min, s.max,
              s.median > 0 ? 100 * s.stddev / s.median : 0.0, flags.iters, flags.warmup,
              flags.flush && !emulated ? ", cache flushed before each" : "");
  if (tflops > 0) std::printf("%.3f TFLOP/s (T.gemm tiles)\n", tflops);
  if (gbps > 0) std::printf("%.3f GB/s (each global buffer once)\n", gbps);
  return kOk;
}

}  // namespace tilec::cli
