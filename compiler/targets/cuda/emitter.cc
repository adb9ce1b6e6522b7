// CUDA emission: the translation unit, one kernel function per T.Kernel, its
// parameters, block indices and shared-memory plan.
#include "compiler/targets/cuda/emitter.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/inference/index_expr.h"
#include "compiler/inference/shared_plan.h"
#include "compiler/ir/names.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/visitor.h"
#include "compiler/targets/cuda/emitter_internal.h"

namespace tilec::cuda {

// --- CodeWriter -------------------------------------------------------------

void CodeWriter::Line(absl::string_view text) {
  absl::StrAppend(&out_, std::string(2 * indent_, ' '), text, "\n");
}

void CodeWriter::Open(absl::string_view head) {
  Line(absl::StrCat(head, head.empty() ? "{" : " {"));
  ++indent_;
}

void CodeWriter::Close(absl::string_view tail) {
  --indent_;
  Line(absl::StrCat("}", tail));
}

void CodeWriter::Else() {
  --indent_;
  Line("} else {");
  ++indent_;
}

void CodeWriter::Blank() { out_ += "\n"; }

void CodeWriter::Indent(int delta) { indent_ = std::max(0, indent_ + delta); }

void CodeWriter::Splice(const CodeWriter& other) {
  for (absl::string_view line : absl::StrSplit(other.text(), '\n')) {
    if (line.empty()) continue;
    absl::StrAppend(&out_, std::string(2 * indent_, ' '), line, "\n");
  }
}

namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whole-word occurrences of `name` in `text`.
int CountWord(const std::string& text, const std::string& name) {
  int n = 0;
  for (size_t pos = text.find(name); pos != std::string::npos; pos = text.find(name, pos + 1)) {
    const bool left = pos == 0 || !IsIdentChar(text[pos - 1]);
    const size_t end = pos + name.size();
    const bool right = end >= text.size() || !IsIdentChar(text[end]);
    n += left && right;
  }
  return n;
}

}  // namespace

void CodeWriter::DropUnusedConstLets() {
  // int index arithmetic, and the bool conditions of lets whose uses a
  // vector path replaced (a guarded gather's padding test).
  static constexpr absl::string_view kPrefixes[] = {"const int ", "const bool "};
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<std::string> lines = absl::StrSplit(out_, '\n');
    std::string kept;
    for (const std::string& line : lines) {
      size_t start = line.find_first_not_of(' ');
      bool drop = false;
      absl::string_view prefix;
      if (start != std::string::npos) {
        for (absl::string_view p : kPrefixes) {
          if (absl::string_view(line).substr(start, p.size()) == p) prefix = p;
        }
      }
      if (!prefix.empty() && line.back() == ';') {
        size_t name_start = start + prefix.size();
        size_t name_end = name_start;
        while (name_end < line.size() && IsIdentChar(line[name_end])) ++name_end;
        const std::string name = line.substr(name_start, name_end - name_start);
        drop = !name.empty() && CountWord(out_, name) == 1;
      }
      if (drop) {
        changed = true;
      } else if (!line.empty()) {
        absl::StrAppend(&kept, line, "\n");
      }
    }
    out_ = kept;
  }
}

// --- NameTable --------------------------------------------------------------

namespace {

constexpr const char* kReserved[] = {
    // C++ keywords and alternative tokens
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
    "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
    "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
    "while", "xor", "xor_eq",
    // names generated code and the device library use
    "tl", "std", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "int8_t", "uint8_t",
    "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "half", "main", "assert",
    "printf", "min", "max", "abs", "exp", "log", "sqrt", "floor", "ceil", "round", "pow", "sin",
    "cos", "tanh", "erf"};

}  // namespace

NameTable::NameTable() {
  for (const char* r : kReserved) used_.insert(r);
}

std::string NameTable::Fresh(absl::string_view hint) {
  const bool prefix = hint.empty() || std::isdigit(static_cast<unsigned char>(hint[0])) ||
                      (hint.size() >= 2 && hint[0] == '_' &&
                       (hint[1] == '_' || std::isupper(static_cast<unsigned char>(hint[1]))));
  std::string base(prefix ? 1 : 0, 'v');
  for (char c : hint) {
    base.push_back((std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_');
  }
  std::string name = base;
  for (int i = 1; used_.count(name); ++i) name = absl::StrCat(base, "_", i);
  used_.insert(name);
  return name;
}

// --- EmitContext ------------------------------------------------------------

EmitContext::EmitContext(const ir::Program& program, const inference::LayoutPlan& plan,
                         const CudaTarget& target)
    : program_(program), plan_(plan), target_(target) {}

void EmitContext::Fail(absl::Status s) {
  if (status_.ok() && !s.ok()) status_ = std::move(s);
}

absl::Status EmitContext::Unimplemented(absl::string_view what) const {
  return absl::UnimplementedError(absl::StrCat(where_.empty() ? "" : absl::StrCat(where_, ": "),
                                               what, " is not supported on ", Sv(target_.name())));
}

absl::Status EmitContext::Internal(absl::string_view what) const {
  return absl::InternalError(absl::StrCat("CUDA emitter", where_.empty() ? "" : " in ", where_,
                                          ": ", what, " (this is a tilec bug)"));
}

std::string EmitContext::VarName(const ir::VarNode* v) {
  auto it = var_names_.find(v);
  if (it != var_names_.end()) return it->second;
  for (const ir::TileParam& p : program_.tile_params) {
    if (p.var.get() == v) {
      Fail(absl::FailedPreconditionError(absl::StrCat(
          "tile parameter ", v->name, " is unbound; bind it with -D ", v->name, "=<value>")));
      return "0";
    }
  }
  Fail(Internal(absl::StrCat("variable ", v->name, " is used out of scope")));
  return "0";
}

std::string EmitContext::DeclareVar(const ir::Var& v) {
  std::string name = Fresh(v->name);
  pinned_.push_back(v);
  var_names_[v.get()] = name;
  return name;
}

void EmitContext::BindVarText(const ir::Var& v, std::string text) {
  pinned_.push_back(v);
  var_names_[v.get()] = std::move(text);
}

void EmitContext::MarkNonNegative(const ir::Var& v) {
  pinned_.push_back(v);
  nonneg_vars_.insert(v.get());
}

void EmitContext::SetRange(const ir::Var& v, int64_t lo, int64_t hi) {
  pinned_.push_back(v);
  ranges_[v.get()] = {lo, hi};
}

void EmitContext::SetLoopRange(const ir::Var& v, const ir::Expr& min, const ir::Expr& extent) {
  const auto lo = Range(min), n = Range(extent);
  // Inside the body the loop ran at least once: 1 <= extent <= n->second.
  if (lo && n && n->second > 0) SetRange(v, lo->first, lo->second + n->second - 1);
}

BufferInfo* EmitContext::Info(const ir::BufferNode* b) {
  auto it = buffers_.find(b);
  return it == buffers_.end() ? nullptr : &it->second;
}

BufferInfo& EmitContext::AddBuffer(const ir::Buffer& b, std::string name) {
  BufferInfo& info = buffers_[b.get()];
  info.buffer = b;
  info.name = std::move(name);
  info.ctype = CType(b->dtype);
  return info;
}

const inference::FragmentLayout* EmitContext::FragmentOf(const ir::BufferNode* b) {
  auto it = plan_.fragments.find(b);
  return it == plan_.fragments.end() ? nullptr : &it->second;
}

EmitContext::ScratchArea EmitContext::Scratch(int64_t bytes, absl::string_view ctype) {
  scratch_bytes_ = std::max(scratch_bytes_, bytes);
  const int area = next_scratch_;
  if (!one_scratch_area_) next_scratch_ = 1 - next_scratch_;
  scratch_used_[area] = true;
  return {ScratchKey(area),
          absl::StrCat("reinterpret_cast<", ctype, "*>(", scratch_names_[area], ")")};
}

void EmitContext::BeginKernel(std::string where, int64_t threads, std::string scratch0,
                              std::string scratch1) {
  where_ = std::move(where);
  threads_ = threads;
  scratch_bytes_ = 0;
  scratch_names_[0] = std::move(scratch0);
  scratch_names_[1] = std::move(scratch1);
  scratch_used_[0] = scratch_used_[1] = false;
  next_scratch_ = 0;
  written_.clear();
  read_.clear();
  pending_async_ = false;
  pipeline_depth_ = 0;
  stage_index_.clear();
  tensor_maps_.clear();
  mbarrier_count_ = 0;
  mbarrier_array_.clear();
  ws_ = nullptr;
  mma_.clear();
}

std::string EmitContext::TensorMap(const inference::TmaCopyPlan& plan) {
  for (const TensorMapParam& m : tensor_maps_) {
    if (m.param == plan.param && m.box == plan.box && m.swizzle_bytes == plan.swizzle_bytes) {
      return m.name;
    }
  }
  TensorMapParam m;
  m.name = Fresh(absl::StrCat(program_.params[plan.param].tensor->name, "_tmap"));
  m.param = plan.param;
  m.box = plan.box;
  m.swizzle_bytes = plan.swizzle_bytes;
  m.elem_bytes = plan.elem_bytes;
  tensor_maps_.push_back(m);
  return m.name;
}

std::string EmitContext::Mbarriers(int64_t count) {
  if (mbarrier_array_.empty()) mbarrier_array_ = Fresh("mbar");
  const int64_t first = mbarrier_count_;
  mbarrier_count_ += count;
  return first == 0 ? mbarrier_array_ : absl::StrCat("(", mbarrier_array_, " + ", first, ")");
}

bool EmitContext::uses_wgmma() const {
  for (const auto& [g, p] : plan_.gemms) {
    if (p.wgmma) return true;
  }
  return false;
}

void EmitContext::WriteBarrier() {
  if (uses_wgmma()) w().Line("tl::fence_proxy_async();  // shared writes -> wgmma");
  if (ws_) {
    w().Line(absl::StrCat("tl::named_barrier_sync(1, ", ws_->consumers, ");  // the consumers"));
    return;
  }
  w().Line("tl::syncthreads();");
}

void EmitContext::NoteMma(const std::string& instruction) {
  if (std::find(mma_.begin(), mma_.end(), instruction) == mma_.end()) mma_.push_back(instruction);
}

void EmitContext::Reset() {
  names_ = NameTable();
  var_names_.clear();
  buffers_.clear();
  nonneg_vars_.clear();
  ranges_.clear();
  pinned_.clear();
  slot_loops_.clear();
}

// --- shared helpers ---------------------------------------------------------

namespace {

class Substituter : public ir::IRMutator {
 public:
  explicit Substituter(const std::map<const ir::VarNode*, ir::Expr>& map) : map_(map) {}
  ir::Expr Mutate(const ir::Expr& e) override {
    if (const auto* v = e->as<ir::VarNode>()) {
      auto it = map_.find(v);
      if (it != map_.end()) return it->second;
    }
    return IRMutator::Mutate(e);
  }
  using IRMutator::Mutate;

 private:
  const std::map<const ir::VarNode*, ir::Expr>& map_;
};

}  // namespace

ir::Expr Substitute(const ir::Expr& e, const std::map<const ir::VarNode*, ir::Expr>& map) {
  if (map.empty()) return e;
  Substituter s(map);
  return s.Mutate(e);
}

std::vector<int> NonUnitDims(const ir::Region& r) {
  std::vector<int> dims;
  for (size_t d = 0; d < r.extents.size(); ++d) {
    auto c = ConstValue(r.extents[d]);
    if (!c || *c != 1) dims.push_back(static_cast<int>(d));
  }
  return dims;
}

std::vector<ir::Expr> RegionIndex(const ir::Region& r, const std::vector<ir::Expr>& iter_index,
                                  const std::vector<int64_t>& iter_shape) {
  std::vector<int> iter_dims;
  for (size_t d = 0; d < iter_shape.size(); ++d) {
    if (iter_shape[d] != 1) iter_dims.push_back(static_cast<int>(d));
  }
  std::vector<int> region_dims = NonUnitDims(r);
  if (iter_dims.size() != region_dims.size()) return {};
  std::vector<ir::Expr> out = r.mins;
  for (size_t k = 0; k < region_dims.size(); ++k) {
    out[region_dims[k]] = AddI(r.mins[region_dims[k]], iter_index[iter_dims[k]]);
  }
  return out;
}

std::string Hoist(EmitContext& ctx, absl::string_view hint, const std::string& text) {
  bool simple = !text.empty();
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') simple = false;
  }
  if (simple) return text;
  std::string name = ctx.Fresh(hint);
  ctx.w().Line(absl::StrCat("const int ", name, " = ", text, ";"));
  return name;
}

// --- kernels ----------------------------------------------------------------

namespace {

constexpr int64_t kSmemAlign = 128;
constexpr int64_t kWgmmaSmemAlign = 1024;  // the period of wgmma's 128-byte swizzle

int64_t AlignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Buffers a kernel body uses, and the shared buffers it allocates in order.
class KernelScan : public ir::IRVisitor {
 public:
  explicit KernelScan(const inference::LayoutPlan& plan) : plan_(plan) {}
  void VisitBuffer(const ir::Buffer& b) override {
    used.insert(b.get());
    IRVisitor::VisitBuffer(b);
  }
  void Visit(const ir::Stmt& s) override {
    if (!s) return;
    if (const auto* a = s->as<ir::AllocateNode>()) {
      if (a->buffer->scope == ir::Scope::kShared) shared.push_back(a->buffer);
    }
    if (const auto* g = s->as<ir::GemmNode>()) PadGemmOperands(*g);
    if (const auto* f = s->as<ir::ForNode>()) {
      if (f->kind == ir::ForKind::kPipelined) pipelined.push_back(f);
    }
    IRVisitor::Visit(s);
  }
  void Visit(const ir::Expr& e) override {
    if (!e) return;
    if (const auto* l = e->as<ir::LoadNode>()) used.insert(l->buffer.get());
    IRVisitor::Visit(e);
  }
  std::set<const ir::BufferNode*> used;
  std::vector<ir::Buffer> shared;
  std::vector<const ir::ForNode*> pipelined;
  // Rows a shared gemm operand must have for a gemm padded to whole mma
  // tiles (the rows past the buffer's own are read, never used).
  std::map<const ir::BufferNode*, int64_t> padded_rows;

 private:
  void PadGemmOperands(const ir::GemmNode& g) {
    auto it = plan_.gemms.find(&g);
    if (it == plan_.gemms.end() || it->second.exact) return;
    const inference::GemmWarpPartition& p = it->second;
    auto ext = [](const ir::Region& r, int from_end) -> int64_t {
      auto v = ConstValue(r.extents[r.extents.size() - from_end]);
      return v ? *v : 0;
    };
    const int64_t m = ext(g.c, 2), n = ext(g.c, 1);
    const int64_t mp = (m + 16 * p.warps_m - 1) / (16 * p.warps_m) * (16 * p.warps_m);
    const int64_t np = (n + 8 * p.warps_n - 1) / (8 * p.warps_n) * (8 * p.warps_n);
    if (mp > m && !g.transpose_a && g.a.buffer->scope == ir::Scope::kShared) {
      padded_rows[g.a.buffer.get()] = std::max(padded_rows[g.a.buffer.get()], mp);
    }
    if (np > n && g.transpose_b && g.b.buffer->scope == ir::Scope::kShared) {
      padded_rows[g.b.buffer.get()] = std::max(padded_rows[g.b.buffer.get()], np);
    }
  }
  const inference::LayoutPlan& plan_;
};

void FlattenSeq(const ir::Stmt& s, std::vector<ir::Stmt>& out) {
  if (const auto* q = s->as<ir::SeqNode>()) {
    for (const ir::Stmt& x : q->stmts) FlattenSeq(x, out);
  } else {
    out.push_back(s);
  }
}

// What EmitKernel returns when the kernel's shared memory does not fit with
// two scratch areas: the caller emits it again with one.
const absl::Status kTryOneScratchArea =
    absl::ResourceExhaustedError("emit again with one scratch area");

absl::Status EmitKernel(EmitContext& ctx, const ir::KernelNode& k, int index,
                        const std::vector<ir::Buffer>& workspaces, CudaKernel& out,
                        CodeWriter& file) {
  const ir::Program& program = ctx.program();
  out.name = absl::StrCat(NameTable().Fresh(program.name), "_k", index);
  ctx.Reset();
  auto threads = ConstValue(k.threads);
  if (!threads) {
    ctx.BeginKernel(out.name, 0, "", "");
    return ctx.Unimplemented("a T.Kernel whose thread count is not a constant");
  }
  if (*threads < 1 || *threads > ctx.target().info.max_threads_per_block) {
    return absl::InvalidArgumentError(absl::StrCat(
        out.name, ": T.Kernel with threads=", *threads, "; ", Sv(ctx.target().name()),
        " allows 1 to ", ctx.target().info.max_threads_per_block, " threads per block"));
  }
  out.threads = *threads;
  out.grid = k.grid;
  // Generated names first, so that program names never shadow them.
  const std::string smem = ctx.Fresh("smem");
  const std::string tx = ctx.Fresh("tx");
  const std::string scratch = ctx.Fresh("scratch");
  const std::string scratch1 = ctx.Fresh("scratch");
  ctx.BeginKernel(out.name, *threads, scratch, scratch1);

  KernelScan scan(ctx.plan());
  scan.Visit(k.body);
  ctx.set_kernel_body(k.body);
  // A kernel that reads the thread index runs per-thread code.
  std::optional<ir::ThreadDependence> dependence;
  ctx.set_thread_dependence(nullptr);
  if (ir::UsesThreadIndex(k.body)) {
    dependence.emplace(k.body);
    if (absl::Status st = dependence->Check(k.body); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(out.name, ": ", st.message()));
    }
    ctx.set_thread_dependence(&*dependence);
  }
  // Stage counts of the buffers multi-stage pipelines fill.
  std::map<const ir::BufferNode*, int64_t> stages;
  for (const ir::ForNode* f : scan.pipelined) {
    if (auto info = AnalyzePipeline(*f, k.body, ctx.target())) {
      for (const ir::BufferNode* b : info->staged) {
        stages[b] = std::max(stages[b], info->stages);
      }
    }
  }

  // Parameters.
  std::vector<std::string> params;
  for (const ir::Param& p : program.params) {
    if (p.tensor) {
      const ir::Buffer& b = p.tensor;
      BufferInfo& info = ctx.AddBuffer(b, ctx.Fresh(b->name));
      params.push_back(absl::StrCat("tl::gptr<", info.ctype, "> ", info.name));
      out.params.push_back({CudaKernelParam::Kind::kTensor, b->name, b->dtype, b->shape});
    } else if (p.scalar) {
      std::string name = ctx.DeclareVar(p.scalar);
      params.push_back(absl::StrCat(CType(p.scalar->dtype), " ", name));
      out.params.push_back({CudaKernelParam::Kind::kScalar, p.scalar->name, p.scalar->dtype, {}});
    }
  }
  for (const ir::Buffer& b : workspaces) {
    if (!scan.used.count(b.get())) continue;
    BufferInfo& info = ctx.AddBuffer(b, ctx.Fresh(b->name));
    params.push_back(absl::StrCat("tl::gptr<", info.ctype, "> ", info.name));
    out.params.push_back({CudaKernelParam::Kind::kWorkspace, b->name, b->dtype, b->shape});
  }
  for (const ir::Var& d : program.dyn_dims) {
    std::string name = ctx.DeclareVar(d);
    ctx.MarkNonNegative(d);
    params.push_back(absl::StrCat("int ", name));
    out.params.push_back({CudaKernelParam::Kind::kDynDim, d->name, ir::DType::kInt32, {}});
  }
  for (const ir::TileParam& t : program.tile_params) {
    if (!t.value) {
      return absl::FailedPreconditionError(absl::StrCat("tile parameter ", t.var->name,
                                                        " is unbound; bind it with -D ",
                                                        t.var->name, "=<value>"));
    }
  }

  for (size_t i = 0; i < k.block_vars.size(); ++i) {
    ctx.DeclareVar(k.block_vars[i]);
    ctx.MarkNonNegative(k.block_vars[i]);
    if (auto g = ConstValue(k.grid[i])) ctx.SetRange(k.block_vars[i], 0, *g - 1);
  }

  // Shared memory plan (inference/shared_plan.h): each shared buffer at a
  // 128-byte aligned offset, buffers whose live ranges do not overlap on the
  // same bytes, then the operators' scratch area.
  CodeWriter prologue;
  const int64_t smem_align = ctx.uses_wgmma() ? kWgmmaSmemAlign : kSmemAlign;
  std::vector<inference::SharedRequest> requests;
  for (const ir::Buffer& b : scan.shared) {
    auto it = ctx.plan().shared.find(b.get());
    if (it == ctx.plan().shared.end()) {
      return ctx.Internal(absl::StrCat("shared buffer ", b->name, " has no layout in the plan"));
    }
    auto n = ConstProduct(b->shape);
    if (!n) {
      return ctx.Unimplemented(absl::StrCat("shared buffer ", b->name, " of symbolic shape"));
    }
    BufferInfo& info = ctx.AddBuffer(b, ctx.Fresh(b->name));
    info.shared = &it->second;
    const inference::SharedLayout& l = it->second;
    const int64_t rows = std::max(
        l.rows, scan.padded_rows.count(b.get()) ? scan.padded_rows.at(b.get()) : int64_t{0});
    info.bytes = std::max(*n, rows * l.cols) * ElemBytes(b->dtype);
    info.rows = rows;
    if (stages.count(b.get())) {
      info.stages = stages.at(b.get());
      info.bytes = AlignUp(info.bytes, smem_align);  // every stage aligned
    }
    requests.push_back({b.get(), info.bytes * info.stages});
  }
  const inference::SharedPlan shared_plan =
      inference::PlanShared(requests, inference::SharedLiveRanges(k.body), smem_align);
  std::map<const void*, std::set<const void*>> aliases;
  for (const inference::SharedSlot& x : shared_plan.slots) {
    for (const inference::SharedSlot& y : shared_plan.slots) {
      if (x.buffer != y.buffer && shared_plan.Overlap(x.buffer, y.buffer)) {
        aliases[x.buffer].insert(y.buffer);
      }
    }
  }
  ctx.SetSharedAliases(std::move(aliases));
  std::vector<std::string> smem_lines;
  for (size_t i = 0; i < scan.shared.size(); ++i) {
    const ir::Buffer& b = scan.shared[i];
    const inference::SharedSlot& slot = shared_plan.slots[i];
    BufferInfo& info = *ctx.Info(b.get());
    const inference::SharedLayout& l = *info.shared;
    const int64_t rows = std::max(
        l.rows, scan.padded_rows.count(b.get()) ? scan.padded_rows.at(b.get()) : int64_t{0});
    info.smem_offset = slot.offset;
    info.layout_type = ctx.Fresh(absl::StrCat(b->name, "_layout"));
    std::string type = l.kind == inference::SharedLayout::Kind::kSwizzled
                           ? absl::StrCat("tl::Swizzled<", rows, ", ", l.cols, ", ", l.elem_bytes,
                                          l.shape.size() > 2 && l.cols * l.elem_bytes > 128
                                              ? absl::StrCat(", ", l.tile_rows)
                                              : "",
                                          ">")
                           : absl::StrCat("tl::RowMajor<", rows, ", ", l.cols, ">");
    smem_lines.push_back(absl::StrCat("using ", info.layout_type, " = ", type, ";"));
    // A plain pointer on CUDA; a pointer checked against this buffer's bounds
    // on the emulator (tl/buffer.h).
    std::string live = slot.live.accessed() ? absl::StrCat(", live in statements ", slot.live.first,
                                                           "..", slot.live.last)
                                            : ", never accessed";
    smem_lines.push_back(absl::StrCat(
        "auto ", info.name, " = tl::smem_buffer<", info.ctype, ">(", smem, ", ", slot.offset, ", ",
        info.bytes * info.stages / ElemBytes(b->dtype), ", \"", info.name, "\");  // ",
        Sv(ir::DTypeName(b->dtype)), "[", absl::StrJoin(l.shape, ", "), "]", live));
    out.shared.push_back({b->name, slot.offset, slot.bytes, slot.live.first, slot.live.last});
  }
  const int64_t offset = shared_plan.total_bytes;
  const int64_t scratch_offset = offset;

  // Body, after the producer warpgroup's branch in a warp-specialised kernel.
  CodeWriter body;
  CodeWriter* outer = ctx.SetWriter(&body);
  std::string not_ws;
  std::optional<WarpSpecialization> ws = PlanWarpSpecialization(ctx, k, *threads, offset, not_ws);
  out.schedule =
      ws ? DescribeWarpSpecialization(*ws) : absl::StrCat("not warp-specialised: ", not_ws);
  if (!ws) ctx.w().Line(absl::StrCat("// ", out.schedule));
  absl::Status st;
  if (ws) {
    st = EmitProducerBranch(ctx, *ws);
    ctx.set_ws(&*ws);
  }
  if (st.ok()) st = ctx.EmitStmt(k.body);
  if (ws) ctx.w().Close();
  ctx.set_ws(nullptr);
  ctx.set_thread_dependence(nullptr);
  ctx.SetWriter(outer);
  if (!st.ok()) return st;
  const int64_t block_threads = ws ? *threads + 128 : *threads;
  out.threads = block_threads;
  if (ws && ws->producer_regs > 0) {
    out.setmaxnreg_registers = 128 * ws->producer_regs + *threads * ws->consumer_regs;
  }
  if (!ctx.ok()) return ctx.status();
  out.mma = ctx.mma();

  const int64_t area_bytes = AlignUp(ctx.scratch_bytes(), kSmemAlign);
  const int64_t scratch_end =
      scratch_offset + (ctx.scratch_area1_used() ? 2 * area_bytes : area_bytes);
  int64_t smem_bytes = ctx.scratch_bytes() > 0 ? scratch_end : offset;
  // TMA's mbarriers last.
  const int64_t mbarrier_offset = AlignUp(smem_bytes, 8);
  if (ctx.mbarrier_count() > 0) smem_bytes = mbarrier_offset + 8 * ctx.mbarrier_count();
  for (const EmitContext::TensorMapParam& m : ctx.tensor_maps()) {
    const ir::Buffer& t = program.params[m.param].tensor;
    params.push_back(absl::StrCat("const __grid_constant__ tl::TmaMap ", m.name));
    CudaKernelParam p{CudaKernelParam::Kind::kTensorMap, m.name, t->dtype, t->shape};
    p.tensor = t->name;
    p.box = m.box;
    p.swizzle_bytes = m.swizzle_bytes;
    out.params.push_back(std::move(p));
  }
  out.smem_bytes = smem_bytes;
  if (smem_bytes > ctx.target().info.shared_memory_per_block) {
    if (ctx.scratch_area1_used()) return kTryOneScratchArea;
    return absl::InvalidArgumentError(
        absl::StrCat(out.name, " needs ", smem_bytes, " bytes of shared memory; ",
                     Sv(ctx.target().name()), " allows ", ctx.target().info.shared_memory_per_block,
                     " per block (use smaller tiles or fewer pipeline stages)"));
  }

  // Block indices, remapped by T.use_swizzle.
  static const char* kAxes[] = {"x", "y", "z"};
  std::vector<ir::Stmt> top;
  FlattenSeq(k.body, top);
  const ir::UseSwizzleNode* swizzle = nullptr;
  for (const ir::Stmt& s : top) {
    if (const auto* u = s->as<ir::UseSwizzleNode>()) {
      if (u->enable) swizzle = u;
    }
  }
  for (size_t i = 0; i < k.block_vars.size() && i < 3; ++i) {
    const std::string& name = ctx.var_names().at(k.block_vars[i].get());
    prologue.Line(absl::StrCat(swizzle && i < 2 ? "int " : "const int ", name, " = blockIdx.",
                               kAxes[i], ";"));
  }
  if (swizzle && k.block_vars.size() >= 2) {
    prologue.Line(absl::StrCat("tl::rasterize(", ctx.Expr(swizzle->panel_size), ", ",
                               swizzle->column_major ? "true" : "false", ", ",
                               ctx.var_names().at(k.block_vars[0].get()), ", ",
                               ctx.var_names().at(k.block_vars[1].get()), ");  // T.use_swizzle"));
  }

  // Assemble.
  if (!k.prelude.empty()) {
    file.Line("// prelude");
    for (absl::string_view line : absl::StrSplit(k.prelude, '\n')) file.Line(line);
    file.Blank();
  }
  file.Line(absl::StrCat("extern \"C\" __global__ void __launch_bounds__(", block_threads,
                         ws ? absl::StrCat(", ", ws->blocks_per_sm) : "", ") ",
                         out.name, "("));
  // Every kernel takes all of the program's parameters; one this kernel does
  // not use (another kernel of the program does) is [[maybe_unused]].
  const std::string uses =
      absl::StrCat(prologue.text(), absl::StrJoin(smem_lines, "\n"), "\n", body.text());
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string name = params[i].substr(params[i].rfind(' ') + 1);
    file.Line(absl::StrCat("    ", CountWord(uses, name) == 0 ? "[[maybe_unused]] " : "", params[i],
                           i + 1 < params.size() ? "," : ") {"));
  }
  if (params.empty()) file.Line("    ) {");
  file.Indent(1);
  if (smem_bytes > 0) file.Line(absl::StrCat("uint8_t* ", smem, " = tl::dynamic_smem();"));
  file.Line(absl::StrCat("const int ", tx, " = threadIdx.x;"));
  file.Splice(prologue);
  for (const std::string& line : smem_lines) file.Line(line);
  if (ctx.scratch_bytes() > 0) {
    file.Line(absl::StrCat("uint8_t* ", scratch, " = ", smem, " + ", scratch_offset, ";  // ",
                           ctx.scratch_bytes(), " bytes of operator scratch"));
    if (ctx.scratch_area1_used()) {
      file.Line(absl::StrCat("uint8_t* ", scratch1, " = ", smem, " + ", scratch_offset + area_bytes,
                             ";  // the next operator's"));
    }
  }
  if (ctx.mbarrier_count() > 0) {
    file.Line(absl::StrCat("uint64_t* ", ctx.mbarrier_array(), " = reinterpret_cast<uint64_t*>(",
                           smem, " + ", mbarrier_offset, ");  // ", ctx.mbarrier_count(),
                           " mbarriers of TMA loads"));
  }
  file.Splice(body);
  file.Indent(-1);
  file.Line("}");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CudaSource> EmitCuda(const ir::Program& input, const inference::LayoutPlan& plan,
                                    const CudaTarget& target) {
  const ir::Program& program = inference::PlannedProgram(plan, input);
  // Names are written into the source (as identifiers, and in comments): the
  // verifier accepts only identifiers; checked again here, where it matters.
  if (absl::Status st = ir::CheckNames(program); !st.ok()) return st;
  if (absl::Status st = CheckTypesForTarget(program, target); !st.ok()) return st;
  for (const ir::TileParam& t : program.tile_params) {
    if (!t.value) {
      return absl::FailedPreconditionError(absl::StrCat("tile parameter ", t.var->name,
                                                        " is unbound; bind it with -D ",
                                                        t.var->name, "=<value>"));
    }
  }
  CudaSource out;
  out.warp_size = static_cast<int>(target.info.warp_size);
  CodeWriter file;

  EmitContext ctx(program, plan, target);
  std::vector<ir::Stmt> top;
  if (program.body) FlattenSeq(program.body, top);
  std::vector<ir::Buffer> workspaces;
  int index = 0;
  for (const ir::Stmt& s : top) {
    if (const auto* a = s->as<ir::AllocateNode>()) {
      if (a->buffer->scope != ir::Scope::kGlobal) {
        return absl::InternalError(absl::StrCat("CUDA emitter: ", a->buffer->name,
                                                " is allocated outside a kernel (a tilec bug)"));
      }
      workspaces.push_back(a->buffer);
      ir::Expr bytes = ir::IntImm(ElemBytes(a->buffer->dtype), ir::DType::kInt64);
      for (const ir::Expr& d : a->buffer->shape) {
        ir::Expr d64 = d->dtype == ir::DType::kInt64 ? d : ir::Cast(ir::DType::kInt64, d);
        if (auto c = ConstValue(d)) d64 = ir::IntImm(*c, ir::DType::kInt64);
        bytes = MulI(bytes, d64);
      }
      out.workspaces.push_back({a->buffer->name, a->buffer->dtype, a->buffer->shape, bytes});
      continue;
    }
    if (const auto* k = s->as<ir::KernelNode>()) {
      file.Blank();
      CudaKernel kernel;
      ctx.set_one_scratch_area(false);
      absl::Status st = EmitKernel(ctx, *k, index, workspaces, kernel, file);
      if (st == kTryOneScratchArea) {
        ctx.set_one_scratch_area(true);
        kernel = CudaKernel();
        st = EmitKernel(ctx, *k, index, workspaces, kernel, file);
      }
      ++index;
      if (!st.ok()) return st;
      out.kernels.push_back(std::move(kernel));
      continue;
    }
    return absl::UnimplementedError(absl::StrCat("a statement outside every T.Kernel (",
                                                 ir::PrintStmt(s), ") is not supported on ",
                                                 Sv(target.name())));
  }
  CodeWriter head;
  head.Line(absl::StrCat("// Generated by tilec from the tile program `", program.name, "` for ",
                         Sv(target.name()), "."));
  for (int64_t n : ctx.wgmma_n()) head.Line(absl::StrCat("#define TL_WGMMA_N", n, " 1"));
  for (int64_t n : ctx.wgmma_rs_n()) head.Line(absl::StrCat("#define TL_WGMMA_RS_N", n, " 1"));
  if (target.amd) head.Line("#define TL_AMDGPU 1");
  head.Line("#include \"tl/tl.h\"");
  out.code = absl::StrCat(head.text(), file.text());
  return out;
}

}  // namespace tilec::cuda
