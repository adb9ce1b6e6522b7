#include "tests/difftest/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <regex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
  switch (st.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kOutOfRange:
      return {Outcome::kRefused, Categorize(stage + " " + code, msg)};
    case absl::StatusCode::kAborted:
      return {Outcome::kCrash, Categorize(stage + " fault", msg)};
    case absl::StatusCode::kDeadlineExceeded:
      return {Outcome::kHang, stage + " watchdog"};
    default:
      return {Outcome::kInternalError, Categorize(stage + " " + code, msg)};
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

int Rank(const std::string& t) {
  static const char* kOrder[] = {"int32",    "float32",     "float16",
                                 "bfloat16", "float8_e4m3", "float8_e5m2"};
  for (int i = 0; i < 6; ++i) {
    if (t == kOrder[i]) return i;
  }
  return 1;
}

// The tolerance for a tensor: exact for integer tensors, else the default of
// the looser of its dtype and the program's loosest dtype, widened by the
// accumulation depth and scaled by the tensor's magnitude (so cancellation
// after a long sum is judged against the terms, not the result).
interp::Tolerance ToleranceFor(const Case& c, const interp::Tensor& expected) {
  ir::DType t = expected.dtype();
  if (!ir::IsFloat(t)) return {0, 0};
  std::string name(ir::DTypeName(t));
  std::string loose = Rank(c.tolerance_dtype) > Rank(name) ? c.tolerance_dtype : name;
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

TargetResult Emulate(const Case& c, const ir::Program& program, const std::string& arch,
                     const std::string& name, const std::vector<interp::Tensor>& inputs,
                     const std::vector<interp::Tensor>& reference, const RunnerOptions& o) {
  TargetResult r;
  r.target = name;
  auto fail = [&](const absl::Status& st, const std::string& stage) {
    Classified k = Classify(st, stage);
    r.outcome = k.outcome;
    r.category = k.category;
    r.detail = std::string(st.message());
    return r;
  };
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(arch);
  if (!target.ok()) return fail(target.status(), "target");
  absl::StatusOr<inference::LayoutPlan> plan = inference::InferLayouts(program, target->info);
  if (!plan.ok()) return fail(plan.status(), "inference");
  absl::StatusOr<cuda::CudaSource> source = cuda::EmitCuda(program, *plan, *target);
  if (!source.ok()) return fail(source.status(), "emit");
  std::vector<interp::Tensor> args = inputs;
  host::LaunchOptions launch;
  launch.time_limit_s = o.emulator_time_limit_s;
  launch.symbolizer = "";
  host::HostOptions build;
  build.opt_level = o.host_opt_level;
  build.debug_info = o.host_debug_info;
  build.source_name = "kernel.cu";
  absl::StatusOr<host::HostModule> module = host::CompileHost(source->code, build);
  if (!module.ok()) return fail(module.status(), "host build");
  if (absl::Status st = host::EmulateProgram(program, *source, *module, args, c.dims, launch);
      !st.ok()) {
    return fail(st, "emulator");
  }
  for (size_t i = 0; i < program.params.size(); ++i) {
    if (!program.params[i].tensor) continue;
    interp::Tolerance tol = ToleranceFor(c, reference[i]);
    absl::StatusOr<interp::CompareResult> cmp = interp::CompareTensors(args[i], reference[i], tol);
    if (!cmp.ok()) return fail(cmp.status(), "compare");
    if (!cmp->ok) {
      r.outcome = Outcome::kMismatch;
      r.category = absl::StrCat("mismatch in ", std::string(ir::DTypeName(args[i].dtype())), " output");
      r.detail = absl::StrCat(program.params[i].tensor->name, ": ", cmp->Summary());
      return r;
    }
  }
  r.outcome = Outcome::kMatch;
  return r;
}

}  // namespace

CaseResult RunCase(const Case& c, const RunnerOptions& o, const RunHooks& hooks) {
  Clock::time_point start = Clock::now();
  CaseResult result;
  result.seed = c.seed;
  auto wanted = [&](const std::string& name) {
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
  };
  std::vector<std::string> names;
  for (const std::string& t : o.targets) names.push_back(t);
  std::string alt_target;
  if (o.metamorphic && !c.alt_bindings.empty() && !o.targets.empty()) {
    alt_target = o.targets[c.seed % o.targets.size()];
    names.push_back(alt_target + "+alt");
  }
  auto all = [&](Outcome out, const std::string& cat, const std::string& detail) {
    for (const std::string& n : names) {
      if (!wanted(n)) continue;
      TargetResult r{n, out, cat, detail};
      if (hooks.on_result) hooks.on_result(r);
      result.targets.push_back(r);
    }
  };
  auto finish = [&]() {
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };
  if (hooks.on_start) hooks.on_start("frontend");
  absl::StatusOr<ir::Program> program = Compile(c, {});
  if (!program.ok()) {
    Classified k = Classify(program.status(), "frontend");
    all(k.outcome, k.category, std::string(program.status().message()));
    return finish();
  }
  absl::flat_hash_map<std::string, int64_t> dims(c.dims.begin(), c.dims.end());
  absl::StatusOr<std::vector<interp::Tensor>> inputs = interp::MakeInputs(*program, dims, c.seed);
  if (!inputs.ok()) {
    all(Outcome::kInvalid, "inputs", std::string(inputs.status().message()));
    return finish();
  }
  if (hooks.on_start) hooks.on_start("interpreter");
  std::vector<interp::Tensor> reference = *inputs;
  if (absl::Status st = interp::RunProgram(*program, reference); !st.ok()) {
    all(Outcome::kInvalid, Categorize("interpreter", std::string(st.message())),
        std::string(st.message()));
    return finish();
  }
  for (const std::string& t : o.targets) {
    if (!wanted(t)) continue;
    if (hooks.on_start) hooks.on_start(t);
    TargetResult r = Emulate(c, *program, t, t, *inputs, reference, o);
    if (hooks.on_result) hooks.on_result(r);
    result.targets.push_back(r);
  }
  if (!alt_target.empty() && wanted(alt_target + "+alt")) {
    std::string name = alt_target + "+alt";
    if (hooks.on_start) hooks.on_start(name);
    absl::StatusOr<ir::Program> alt = Compile(c, c.alt_bindings);
    TargetResult r;
    if (!alt.ok()) {
      Classified k = Classify(alt.status(), "frontend");
      r = {name, k.outcome, k.category, std::string(alt.status().message())};
    } else {
      r = Emulate(c, *alt, alt_target, name, *inputs, reference, o);
    }
    if (hooks.on_result) hooks.on_result(r);
    result.targets.push_back(r);
  }
  return finish();
}

CaseResult RunCase(const Case& c, const RunnerOptions& options) {
  return RunCase(c, options, RunHooks{});
}

}  // namespace tilec::difftest
