#include "compiler/targets/cuda/target.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/cuda/emitter_internal.h"
#include "compiler/targets/registry.h"

namespace tilec::cuda {
namespace {

// The first value of a program (a buffer or an expression) whose element
// type the target does not lower.
class TypeFinder : public ir::IRVisitor {
 public:
  explicit TypeFinder(bool (*refused)(const CudaTarget&, ir::DType), const CudaTarget& target)
      : refused_(refused), target_(target) {}
  std::string found;
  void VisitBuffer(const ir::Buffer& b) override {
    if (found.empty() && refused_(target_, b->dtype)) {
      found = absl::StrCat("buffer ", b->name, " (", Sv(ir::DTypeName(b->dtype)), ")");
    }
    ir::IRVisitor::VisitBuffer(b);
  }
  void Visit(const ir::Expr& e) override {
    if (found.empty() && e && refused_(target_, e->dtype)) {
      found = absl::StrCat("a ", Sv(ir::DTypeName(e->dtype)), " value");
    }
    ir::IRVisitor::Visit(e);
  }
  using ir::IRVisitor::Visit;

 private:
  bool (*refused_)(const CudaTarget&, ir::DType);
  const CudaTarget& target_;
};

// NVIDIA targets take the OCP float8 types; AMD targets take them too
// (converted in software, multiplied as half: docs/amdgpu.md), and the fnuz
// ones where the target has them (gfx942).
bool Float8Refused(const CudaTarget& target, ir::DType t) {
  if (!IsFloat8(t) || !IsFnuz(t)) return false;
  return !target.amd || !target.info.supports_fp8_fnuz;
}

// The first float64 call of a function the AMD device library computes in
// float32 only: LLVM lowers no float64 exp, log, sin... for amdgcn without a
// device math library (docs/amdgpu.md), which tilec does not use.
class Float64MathFinder : public ir::IRVisitor {
 public:
  std::string found;
  // The program draws float64 normals (the frontend's state buffer for
  // them, tl_random.cc), which compute float64 log, sin and cos.
  bool normal64 = false;
  void VisitBuffer(const ir::Buffer& b) override {
    if (b->name == "rng_normal64") normal64 = true;
    ir::IRVisitor::VisitBuffer(b);
  }
  void Visit(const ir::Expr& e) override {
    if (const auto* c = e ? e->as<ir::CallNode>() : nullptr;
        c && found.empty() && c->dtype == ir::DType::kFloat64 && !Float64Lowered(c->fn)) {
      found = std::string(ir::CallFnName(c->fn));
    }
    ir::IRVisitor::Visit(e);
  }
  using ir::IRVisitor::Visit;

 private:
  static bool Float64Lowered(ir::CallFn fn) {
    switch (fn) {
      case ir::CallFn::kAbs:
      case ir::CallFn::kSqrt:
      case ir::CallFn::kFloor:
      case ir::CallFn::kCeil:
      case ir::CallFn::kRound:
      case ir::CallFn::kTrunc:
      case ir::CallFn::kFmod:
      case ir::CallFn::kCopysign:
      case ir::CallFn::kReinterpret: return true;
      default: return false;
    }
  }
};

// AMD targets refuse float64 calls of the functions their device library
// computes in float32 only, naming the function, before clang sees them.
absl::Status CheckFloat64Math(const ir::Program& program, const CudaTarget& target) {
  if (!target.amd || !program.body) return absl::OkStatus();
  Float64MathFinder math;
  math.Visit(program.body);
  if (math.found.empty()) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "float64 ", math.found, " not lowered for ", Sv(target.name()), ": AMD targets compute ",
      math.found,
      " in float32 only (float64 needs a device math library, which tilec does not use); ",
      math.normal64 ? "T.rng_rand_float(bit=64, dist=\"normal\") computes float64 log, sin "
                      "and cos: draw float32 normals (bit=32)"
                    : "cast the operand to float32"));
}

}  // namespace

absl::Status CheckTypesForTarget(const ir::Program& program, const CudaTarget& target) {
  TypeFinder f8(Float8Refused, target);
  for (const ir::Param& p : program.params) {
    if (p.tensor) f8.VisitBuffer(p.tensor);
  }
  if (program.body) f8.Visit(program.body);
  if (f8.found.empty()) return CheckFloat64Math(program, target);
  std::string why;
  if (!target.amd) {
    why = "float8_e4m3fnuz and float8_e5m2fnuz are AMD's float8 (MI300); NVIDIA targets take "
          "float8_e4m3 and float8_e5m2";
  } else {
    why = absl::StrCat(Sv(target.name()),
                       " has no float8 (fnuz) instructions (gfx942 has); the OCP float8_e4m3 and "
                       "float8_e5m2 are lowered for every target");
  }
  return absl::UnimplementedError(
      absl::StrCat("float8 type not lowered for ", Sv(target.name()), ": ", why,
                   "; the program uses ", f8.found));
}

CudaTarget CudaTarget::ForArch(CudaArch arch) {
  CudaTarget t;
  t.arch = arch;
  t.info =
      arch == CudaArch::kSm90a ? inference::TargetInfo::Sm90a() : inference::TargetInfo::Sm80();
  return t;
}

absl::StatusOr<CudaTarget> CudaTarget::FromName(absl::string_view name) {
  // The registry says what the name is; NVIDIA targets also need NVRTC's arch.
  absl::StatusOr<const targets::Target*> known =
      targets::FindTarget(std::string_view(name.data(), name.size()));
  if (!known.ok()) return known.status();
  CudaTarget t;
  t.info = (*known)->info;
  if ((*known)->vendor == targets::Vendor::kAmd) {
    t.amd = true;
    return t;
  }
  absl::StatusOr<CudaArch> arch = ParseCudaArch(std::string_view(name.data(), name.size()));
  if (!arch.ok()) return arch.status();
  t.arch = *arch;
  return t;
}

absl::string_view TileOpName(ir::StmtKind kind) {
  switch (kind) {
    case ir::StmtKind::kCopy: return "T.copy";
    case ir::StmtKind::kGemm: return "T.gemm";
    case ir::StmtKind::kFill: return "T.fill";
    case ir::StmtKind::kReduce: return "T.reduce";
    case ir::StmtKind::kCumsum: return "T.cumsum";
    case ir::StmtKind::kAtomicAdd: return "T.atomic_add";
    case ir::StmtKind::kSeq: return "sequence";
    case ir::StmtKind::kKernel: return "T.Kernel";
    case ir::StmtKind::kAllocate: return "allocation";
    case ir::StmtKind::kFor: return "loop";
    case ir::StmtKind::kIf: return "if";
    case ir::StmtKind::kWhile: return "while";
    case ir::StmtKind::kStore: return "store";
    case ir::StmtKind::kLet: return "let";
    case ir::StmtKind::kAnnotateLayout: return "T.annotate_layout";
    case ir::StmtKind::kUseSwizzle: return "T.use_swizzle";
  }
  return "statement";
}

absl::Status LoweringRegistry::Register(ir::StmtKind op, absl::string_view target,
                                        TileOpLowering fn) {
  auto [it, inserted] = impls_.emplace(std::make_pair(op, std::string(target)), fn);
  if (!inserted) {
    return absl::InternalError(absl::StrCat(Sv(TileOpName(op)), " is registered twice for target ",
                                            target, " (a tilec bug)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TileOpLowering> LoweringRegistry::Find(ir::StmtKind op,
                                                      absl::string_view target) const {
  auto it = impls_.find(std::make_pair(op, std::string(target)));
  if (it == impls_.end()) {
    return absl::UnimplementedError(
        absl::StrCat(Sv(TileOpName(op)), " has no lowering for target ", target));
  }
  return it->second;
}

const LoweringRegistry& CudaLowerings() {
  static const LoweringRegistry* registry = [] {
    auto* r = new LoweringRegistry;
    const std::pair<ir::StmtKind, TileOpLowering> ops[] = {
        {ir::StmtKind::kCopy, &LowerCopy},     {ir::StmtKind::kFill, &LowerFill},
        {ir::StmtKind::kGemm, &LowerGemm},     {ir::StmtKind::kReduce, &LowerReduce},
        {ir::StmtKind::kCumsum, &LowerCumsum}, {ir::StmtKind::kAtomicAdd, &LowerAtomicAdd},
    };
    // One set of lowerings: each reads the target's features (wgmma, TMA,
    // MFMA, cp.async) from the layout plan and TargetInfo.
    for (const char* target : {"sm_80", "sm_90a", "gfx942", "gfx90a"}) {
      for (const auto& [op, fn] : ops) {
        absl::Status st = r->Register(op, target, fn);
        if (!st.ok()) {
          std::fprintf(stderr, "tilec: %s\n", std::string(st.message()).c_str());
          std::abort();
        }
      }
    }
    return r;
  }();
  return *registry;
}

}  // namespace tilec::cuda
