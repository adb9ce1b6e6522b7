#include "tests/difftest/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <regex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/device_program.h"
#include "compiler/frontend/frontend.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/interp/compare.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/target.h"
#include "compiler/targets/host/emulate.h"
#include "compiler/targets/host/toolchain.h"
#include "runtime/backend.h"

namespace tilec::difftest {

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kMatch: return "match";
    case Outcome::kRefused: return "refused";
    case Outcome::kMismatch: return "mismatch";
    case Outcome::kInternalError: return "internal_error";
    case Outcome::kCrash: return "crash";
    case Outcome::kHang: return "hang";
    case Outcome::kInvalid: return "invalid_program";
  }
  return "?";
}

bool IsBug(Outcome o) {
  return o == Outcome::kMismatch || o == Outcome::kInternalError || o == Outcome::kCrash ||
         o == Outcome::kHang;
}

Case CaseOf(const Program& p) {
  Case c;
  c.seed = p.seed;
  c.source = p.Render();
  c.dims = p.DynamicDims();
  c.tolerance_dtype = p.tolerance_dtype;
  c.accum_depth = p.accum_depth;
  c.unordered_atomics = p.unordered_atomics;
  // The second config: another thread count and pipeline depth.
  for (const Param& q : p.params) {
    if (q.name == "threads") {
      int64_t t = q.value == 128 ? (p.seed % 2 ? 256 : 64) : 128;
      c.alt_bindings.push_back({"threads", t});
    }
    if (q.name == "stages") c.alt_bindings.push_back({"stages", (q.value + 2) % 5});
  }
  return c;
}

std::string Categorize(const std::string& code, const std::string& message) {
  std::string m = message;
  // Drop "path:line:col: error: " and everything after the first line.
  static const std::regex kLoc(R"(^[^\s:]+:\d+:\d+: (error: )?)");
  m = std::regex_replace(m, kLoc, "");
  if (size_t nl = m.find('\n'); nl != std::string::npos) m.resize(nl);
  static const std::regex kQuoted(R"(('[^']*'|"[^"]*"|`[^`]*`))");
  m = std::regex_replace(m, kQuoted, "Q");
  static const std::regex kNum(R"(\b[A-Za-z_]*\d[\w.]*)");
  m = std::regex_replace(m, kNum, "N");
  static const std::regex kBrackets(R"(\[[^\]]*\])");
  m = std::regex_replace(m, kBrackets, "[..]");
  if (m.size() > 90) m.resize(90);
  return absl::StrCat(code, ": ", m);
}

namespace {

using Clock = std::chrono::steady_clock;

struct Classified {
  Outcome outcome;
  std::string category;
};

Classified Classify(const absl::Status& st, const std::string& stage) {
  std::string code = absl::StatusCodeToString(st.code());
  std::string msg(st.message());
  // A toolchain log: the first diagnostic says what went wrong.
  if (size_t e = msg.find(" error: "); e != std::string::npos && msg.find('\n') < e) {
    msg = msg.substr(e + 1);
  }
  switch (st.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kOutOfRange:
      return {Outcome::kRefused, Categorize(stage + " " + code, msg)};
    case absl::StatusCode::kAborted: return {Outcome::kCrash, Categorize(stage + " fault", msg)};
    case absl::StatusCode::kDeadlineExceeded: return {Outcome::kHang, stage + " watchdog"};
    default: return {Outcome::kInternalError, Categorize(stage + " " + code, msg)};
  }
}

absl::StatusOr<ir::Program> Compile(const Case& c,
                                    const std::vector<std::pair<std::string, int64_t>>& bind) {
  frontend::Bindings b;
  for (const auto& [name, value] : bind) b.Set(name, std::to_string(value));
  absl::StatusOr<ir::Program> p = frontend::CompileTileLang(
      frontend::SourceFile{absl::StrCat("difftest_", c.seed, ".py"), c.source}, kFunctionName, b);
  if (!p.ok()) return p.status();
  if (absl::Status st = ir::Verify(*p); !st.ok()) return st;
  return p;
}

// The tolerance for a tensor: exact for integer tensors, else the default of
// the looser of its dtype and the program's loosest dtype, widened by the
// accumulation depth and scaled by the tensor's magnitude (so cancellation
// after a long sum is judged against the terms, not the result).
interp::Tolerance ToleranceFor(const Case& c, const interp::Tensor& expected) {
  ir::DType t = expected.dtype();
  if (!ir::IsFloat(t)) return {0, 0};
  std::string name(ir::DTypeName(t));
  std::string loose = Looseness(c.tolerance_dtype) > Looseness(name) ? c.tolerance_dtype : name;
  std::optional<ir::DType> lt = ir::ParseDType(loose);
  interp::Tolerance tol = interp::DefaultTolerance(lt ? *lt : t);
  double maxabs = 1;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    double v = std::fabs(expected.GetDouble(i));
    if (std::isfinite(v)) maxabs = std::max(maxabs, v);
  }
  double depth = std::max(1.0, std::sqrt(static_cast<double>(c.accum_depth)) / 2);
  tol.atol *= depth * maxabs;
  tol.rtol *= depth;
  return tol;
}

// One emulated run of a case: a target, or the metamorphic variant.
struct Variant {
  std::string name, arch;
  std::vector<std::pair<std::string, int64_t>> bindings;
  std::optional<ir::Program> program;
  std::optional<cuda::CudaSource> source;
  std::optional<TargetResult> result;  // set once the variant is decided
};

TargetResult Failed(const std::string& name, const absl::Status& st, const std::string& stage) {
  Classified k = Classify(st, stage);
  return {name, k.outcome, k.category, std::string(st.message())};
}

// Frontend (for a variant with its own bindings), inference and emission; the
// kernels are named after the variant so that variants share one host build.
void Prepare(const Case& c, const ir::Program& base, const std::string& id, Variant& v) {
  if (!v.bindings.empty()) {
    absl::StatusOr<ir::Program> p = Compile(c, v.bindings);
    if (!p.ok()) {
      v.result = Failed(v.name, p.status(), "frontend");
      return;
    }
    v.program = *std::move(p);
  } else {
    v.program = base;
  }
  v.program->name = id;
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(v.arch);
  if (!target.ok()) {
    v.result = Failed(v.name, target.status(), "target");
    return;
  }
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(*v.program, target->info);
  if (!plan.ok()) {
    v.result = Failed(v.name, plan.status(), "inference");
    return;
  }
  absl::StatusOr<cuda::CudaSource> source = cuda::EmitCuda(*v.program, *plan, *target);
  if (!source.ok()) {
    v.result = Failed(v.name, source.status(), "emit");
    return;
  }
  v.source = *std::move(source);
}

// The variants' sources as one translation unit, each in its own namespace
// (kernel names are already distinct; helpers need not be).
std::string Combine(const std::vector<Variant*>& vs) {
  const std::string include = "#include \"tl/tl.h\"";
  std::string out = include + "\n";
  for (size_t i = 0; i < vs.size(); ++i) {
    std::string code = vs[i]->source->code;
    if (size_t inc = code.find(include); inc != std::string::npos) code.erase(inc, include.size());
    absl::StrAppend(&out, "namespace tilec_variant", i, " {\n", code, "\n}  // namespace\n",
                    "using namespace tilec_variant", i, ";\n");
  }
  return out;
}

absl::StatusOr<host::HostModule> Build(const std::string& code, const RunnerOptions& o) {
  host::HostOptions build;
  build.opt_level = o.host_opt_level;
  build.debug_info = o.host_debug_info;
  build.work_dir = o.host_work_dir;
  build.source_name = "kernel.cu";
  return host::CompileHost(code, build);
}

// The tensors a variant's run left, judged against the interpreter's.
TargetResult Judge(const Case& c, const Variant& v, const std::vector<interp::Tensor>& args,
                   const std::vector<interp::Tensor>& reference) {
  const ir::Program& program = *v.program;
  TargetResult r;
  r.target = v.name;
  for (size_t i = 0; i < program.params.size(); ++i) {
    if (!program.params[i].tensor) continue;
    interp::Tolerance tol = ToleranceFor(c, reference[i]);
    absl::StatusOr<interp::CompareResult> cmp = interp::CompareTensors(args[i], reference[i], tol);
    if (!cmp.ok()) return Failed(v.name, cmp.status(), "compare");
    if (!cmp->ok) {
      r.outcome = Outcome::kMismatch;
      r.category =
          absl::StrCat("mismatch in ", std::string(ir::DTypeName(args[i].dtype())), " output");
      r.detail = absl::StrCat(program.params[i].tensor->name, ": ", cmp->Summary());
      return r;
    }
  }
  r.outcome = Outcome::kMatch;
  return r;
}

TargetResult Execute(const Case& c, const Variant& v, const host::HostModule& module,
                     const std::vector<interp::Tensor>& inputs,
                     const std::vector<interp::Tensor>& reference, const RunnerOptions& o) {
  std::vector<interp::Tensor> args = inputs;
  host::LaunchOptions launch;
  launch.time_limit_s = o.emulator_time_limit_s;
  launch.symbolizer = "";
  // A read of shared memory no thread wrote is a fault: every thread stores a
  // block-level result, so a thread that read too early (a missing barrier)
  // would otherwise be hidden by a later thread's store of the right value.
  launch.check_uninit = true;
  if (absl::Status st = host::EmulateProgram(*v.program, *v.source, module, args, c.dims, launch);
      !st.ok()) {
    return Failed(v.name, st, "emulator");
  }
  return Judge(c, v, args, reference);
}

// The variant on a GPU through the runtime. `backend` is opened on first use
// and dropped after a fault (a faulted CUDA context takes no more work; the
// next open starts a fresh one).
TargetResult ExecuteOnDevice(const Case& c, const Variant& v,
                             const std::vector<interp::Tensor>& inputs,
                             const std::vector<interp::Tensor>& reference, const RunnerOptions& o,
                             std::unique_ptr<runtime::Backend>& backend) {
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(v.arch);
  if (!target.ok()) return Failed(v.name, target.status(), "target");
  if (backend == nullptr) {
    absl::StatusOr<runtime::DeviceSpec> spec = runtime::DeviceSpec::Parse(o.device);
    if (!spec.ok()) return Failed(v.name, spec.status(), "device");
    absl::StatusOr<std::unique_ptr<runtime::Backend>> opened = runtime::OpenBackend(*spec);
    // Not the program's fault: reported as an internal error of the run.
    if (!opened.ok())
      return Failed(v.name, absl::InternalError(opened.status().message()), "device");
    backend = *std::move(opened);
  }
  absl::StatusOr<std::unique_ptr<cli::DeviceProgram>> loaded =
      cli::DeviceProgram::Build(*v.program, *target, backend.get());
  if (!loaded.ok()) return Failed(v.name, loaded.status(), "nvrtc");
  std::vector<interp::Tensor> args = inputs;
  absl::Status st = (*loaded)->SetArgs(args);
  if (st.ok()) st = (*loaded)->Run();
  if (st.ok()) st = (*loaded)->Fetch(args);
  if (!st.ok()) {
    loaded->reset();
    backend.reset();
    return Failed(v.name, absl::AbortedError(st.message()), "device");
  }
  return Judge(c, v, args, reference);
}

}  // namespace

std::vector<std::string> ExpectedTargets(const Case& c, const RunnerOptions& o) {
  std::vector<std::string> names = o.targets;
  if (o.metamorphic && !c.alt_bindings.empty() && !o.targets.empty())
    names.push_back(o.targets[c.seed % o.targets.size()] + "+alt");
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), n) != o.only.end())
      out.push_back(n);
  }
  return out;
}

std::vector<CaseResult> RunCases(const std::vector<Case>& cases, const RunnerOptions& o,
                                 const BatchHooks& hooks) {
  struct State {
    Clock::time_point start;
    CaseResult result;
    std::vector<Variant> variants;
    std::vector<interp::Tensor> inputs, reference;
  };
  std::vector<State> states(cases.size());
  // TILEC_DIFFTEST_PROFILE set: the time of each stage on stderr.
  static const bool profile = std::getenv("TILEC_DIFFTEST_PROFILE") != nullptr;
  Clock::time_point stage_start = Clock::now();
  std::string last_stage;
  auto start = [&](size_t i, const std::string& stage) {
    if (profile) {
      Clock::time_point now = Clock::now();
      if (!last_stage.empty())
        std::fprintf(stderr, "difftest profile: %-12s %.3f s\n", last_stage.c_str(),
                     std::chrono::duration<double>(now - stage_start).count());
      stage_start = now;
      last_stage = stage;
    }
    if (hooks.on_start) hooks.on_start(i, stage);
  };
  auto report = [&](size_t i, const TargetResult& r) {
    if (hooks.on_result) hooks.on_result(i, r);
  };
  // Frontend, interpreter and emission of every case.
  std::vector<std::pair<size_t, Variant*>> ready;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    State& s = states[i];
    s.start = Clock::now();
    s.result.seed = c.seed;
    std::vector<std::string> names = ExpectedTargets(c, o);
    auto all = [&](Outcome out, const std::string& cat, const std::string& detail) {
      for (const std::string& n : names) {
        Variant v{n, "", {}, {}, {}, TargetResult{n, out, cat, detail}};
        report(i, *v.result);
        s.variants.push_back(std::move(v));
      }
    };
    start(i, "frontend");
    absl::StatusOr<ir::Program> program = Compile(c, {});
    if (!program.ok()) {
      Classified k = Classify(program.status(), "frontend");
      all(k.outcome, k.category, std::string(program.status().message()));
      continue;
    }
    absl::flat_hash_map<std::string, int64_t> dims(c.dims.begin(), c.dims.end());
    absl::StatusOr<std::vector<interp::Tensor>> inputs = interp::MakeInputs(*program, dims, c.seed);
    if (!inputs.ok()) {
      all(Outcome::kInvalid, "inputs", std::string(inputs.status().message()));
      continue;
    }
    start(i, "interpreter");
    s.inputs = *std::move(inputs);
    s.reference = s.inputs;
    if (absl::Status st = interp::RunProgram(*program, s.reference); !st.ok()) {
      all(Outcome::kInvalid, Categorize("interpreter", std::string(st.message())),
          std::string(st.message()));
      continue;
    }
    start(i, "emit");
    for (const std::string& n : names) {
      bool alt = n.size() > 4 && n.substr(n.size() - 4) == "+alt";
      std::string arch = alt ? n.substr(0, n.size() - 4) : n;
      s.variants.push_back({n,
                            arch,
                            alt ? c.alt_bindings : std::vector<std::pair<std::string, int64_t>>{},
                            {},
                            {},
                            {}});
    }
    for (size_t j = 0; j < s.variants.size(); ++j) {
      Variant& v = s.variants[j];
      Prepare(c, *program, absl::StrCat("c", i, "v", j), v);
      if (v.result) {
        report(i, *v.result);
      } else {
        ready.push_back({i, &v});
      }
    }
  }
  // One host build for every variant of every case; when it fails, one per
  // case, then one per variant, so that a build failure is attributed.
  auto execute = [&](size_t i, Variant& v, const host::HostModule& module) {
    start(i, v.name);
    v.result = Execute(cases[i], v, module, states[i].inputs, states[i].reference, o);
    report(i, *v.result);
  };
  auto combine = [](const std::vector<std::pair<size_t, Variant*>>& vs) {
    std::vector<Variant*> list;
    for (const auto& [i, v] : vs) list.push_back(v);
    return Combine(list);
  };
  if (!ready.empty() && !o.device.empty()) {
    std::unique_ptr<runtime::Backend> backend;
    for (auto& [i, v] : ready) {
      start(i, v->name);
      v->result = ExecuteOnDevice(cases[i], *v, states[i].inputs, states[i].reference, o, backend);
      report(i, *v->result);
    }
    ready.clear();
  }
  if (!ready.empty()) {
    start(ready[0].first, "host build");
    absl::StatusOr<host::HostModule> shared = Build(combine(ready), o);
    if (shared.ok()) {
      for (auto& [i, v] : ready) execute(i, *v, *shared);
    } else {
      for (size_t i = 0; i < cases.size(); ++i) {
        std::vector<std::pair<size_t, Variant*>> mine;
        for (const auto& p : ready) {
          if (p.first == i) mine.push_back(p);
        }
        if (mine.empty()) continue;
        absl::StatusOr<host::HostModule> own =
            ready.size() == mine.size() ? shared : Build(combine(mine), o);
        for (auto& [k, v] : mine) {
          if (own.ok()) {
            execute(i, *v, *own);
            continue;
          }
          absl::StatusOr<host::HostModule> single =
              mine.size() == 1 ? own : Build(combine({{k, v}}), o);
          if (single.ok()) {
            execute(i, *v, *single);
          } else {
            v->result = Failed(v->name, single.status(), "host build");
            report(i, *v->result);
          }
        }
      }
    }
  }
  start(0, "");
  std::vector<CaseResult> out;
  for (State& s : states) {
    for (Variant& v : s.variants) s.result.targets.push_back(*v.result);
    s.result.seconds = std::chrono::duration<double>(Clock::now() - s.start).count();
    out.push_back(std::move(s.result));
  }
  return out;
}

CaseResult RunCase(const Case& c, const RunnerOptions& o, const RunHooks& hooks) {
  BatchHooks batch;
  if (hooks.on_start) batch.on_start = [&](size_t, const std::string& s) { hooks.on_start(s); };
  if (hooks.on_result) batch.on_result = [&](size_t, const TargetResult& r) { hooks.on_result(r); };
  return RunCases({c}, o, batch)[0];
}

absl::StatusOr<std::string> EmitSource(const Case& c, const std::string& arch) {
  absl::StatusOr<ir::Program> program = Compile(c, {});
  if (!program.ok()) return program.status();
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(arch);
  if (!target.ok()) return target.status();
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(*program, target->info);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<cuda::CudaSource> source = cuda::EmitCuda(*program, *plan, *target);
  if (!source.ok()) return source.status();
  return source->code;
}

CaseResult RunCase(const Case& c, const RunnerOptions& options) {
  return RunCase(c, options, RunHooks{});
}

}  // namespace tilec::difftest
