#include "compiler/inference/layout_inference.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/visitor.h"
#include "gtest/gtest.h"
#include "tests/testing/example_cases.h"

namespace tilec::inference {
namespace {

using ::tilec::testing::ExampleCase;

// ---------------------------------------------------------------------------
// Checks of a plan that do not trust the inference: each states what the
// generated code needs for the plan to be executable.

// The thread running slot `local` of `thread` in `loop` holds element `index`
// of fragment `f` (so it can read or write it without data movement).
bool Holds(const FragmentLayout& f, int64_t thread, const std::vector<int64_t>& index) {
  int64_t local = f.LocalOf(index);
  return local < f.local_size && f.ValidAt(thread, local) && f.LogicalAt(thread, local) == index;
}

// Every fragment access in a T.Parallel nest is local to the thread that
// runs the iteration, and every iteration is run by `replicate` threads.
void CheckNest(const LayoutPlan& plan, const LoopPartition& p) {
  const FragmentLayout& l = p.layout;
  ASSERT_EQ(l.shape.size(), p.loop_vars.size());
  std::vector<const ir::LoadNode*> loads;
  std::vector<std::pair<ir::Buffer, std::vector<ir::Expr>>> accesses;
  struct Finder : ir::IRVisitor {
    std::vector<std::pair<ir::Buffer, std::vector<ir::Expr>>>* out;
    void Visit(const ir::Expr& e) override {
      if (e == nullptr) return;
      if (const auto* ld = e->as<ir::LoadNode>()) out->push_back({ld->buffer, ld->indices});
      ir::IRVisitor::Visit(e);
    }
    void Visit(const ir::Stmt& s) override {
      if (s == nullptr) return;
      if (const auto* st = s->as<ir::StoreNode>()) out->push_back({st->buffer, st->indices});
      ir::IRVisitor::Visit(s);
    }
  } finder;
  finder.out = &accesses;
  finder.Visit(p.body);
  for (const auto& [buffer, indices] : accesses) {
    if (buffer->scope != ir::Scope::kFragment) continue;
    auto it = plan.fragments.find(buffer.get());
    ASSERT_NE(it, plan.fragments.end()) << buffer->name;
    const FragmentLayout& f = it->second;
    // Which loop variable each index is (or -1).
    std::vector<int> dims;
    for (const ir::Expr& e : indices) {
      int d = -1;
      for (size_t k = 0; k < p.loop_vars.size(); ++k) {
        if (e.get() == p.loop_vars[k].get()) d = static_cast<int>(k);
      }
      dims.push_back(d);
    }
    for (int64_t t = 0; t < l.threads; ++t) {
      for (int64_t s = 0; s < l.local_size; ++s) {
        if (!l.ValidAt(t, s)) continue;
        std::vector<int64_t> it_index = l.LogicalAt(t, s);
        if (std::find(dims.begin(), dims.end(), -1) != dims.end()) {
          ASSERT_EQ(f.replicate, f.threads) << buffer->name << " is indexed by other than the "
                                            << "loop variables, so it must be everywhere";
          continue;
        }
        std::vector<int64_t> index;
        for (int d : dims) index.push_back(it_index[d]);
        ASSERT_TRUE(Holds(f, t, index)) << buffer->name << " element not held by thread " << t;
      }
    }
  }
}

// The threads holding src[.., i, ..] all hold dst[.. ..] (i dropped).
void CheckReduce(const FragmentLayout& src, const FragmentLayout& dst, int dim) {
  for (int64_t t = 0; t < src.threads; ++t) {
    for (int64_t s = 0; s < src.local_size; ++s) {
      if (!src.ValidAt(t, s)) continue;
      std::vector<int64_t> index = src.LogicalAt(t, s);
      index.erase(index.begin() + dim);
      if (index.empty()) index.push_back(0);
      ASSERT_TRUE(Holds(dst, t, index)) << "thread " << t;
    }
  }
}

// Finds the statements of one kind in a program.
std::vector<const ir::StmtNode*> Find(const ir::Program& p, ir::StmtKind kind) {
  struct Finder : ir::IRVisitor {
    ir::StmtKind kind;
    std::vector<const ir::StmtNode*> out;
    void Visit(const ir::Stmt& s) override {
      if (s == nullptr) return;
      if (s->kind == kind) out.push_back(s.get());
      ir::IRVisitor::Visit(s);
    }
  } f;
  f.kind = kind;
  f.Visit(p.body);
  return f.out;
}

// All buffers allocated in a program, by name (names are unique in the
// examples).
std::map<std::string, ir::Buffer> Buffers(const ir::Program& p) {
  std::map<std::string, ir::Buffer> out;
  for (const ir::StmtNode* s : Find(p, ir::StmtKind::kAllocate)) {
    const ir::Buffer& b = static_cast<const ir::AllocateNode*>(s)->buffer;
    out[b->name] = b;
  }
  return out;
}

absl::StatusOr<ir::Program> Compile(const ExampleCase& c) {
  absl::StatusOr<std::string> text = ::tilec::testing::ReadFile(::tilec::testing::ExamplesDir() + "/" + c.file);
  if (!text.ok()) return text.status();
  frontend::SourceFile file{"examples/" + c.file, *text};
  frontend::Bindings bindings;
  for (const auto& [k, v] : c.bindings) bindings.Set(k, v);
  return frontend::CompileTileLang(file, c.function, bindings);
}

class ExampleInference : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(ExampleInference, InfersAConsistentPlan) {
  const ExampleCase& c = GetParam();
  std::printf("case %s (examples/cases.txt:%d)\n", c.name.c_str(), c.line);
  absl::StatusOr<ir::Program> program = Compile(c);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_TRUE(ir::Verify(*program).ok()) << ir::Verify(*program);
  absl::StatusOr<LayoutPlan> plan = InferLayouts(*program, TargetInfo::Sm80());
  ASSERT_TRUE(plan.ok()) << plan.status();

  // Everything has its record.
  std::map<std::string, ir::Buffer> buffers = Buffers(*program);
  for (const auto& [name, b] : buffers) {
    if (b->scope == ir::Scope::kFragment) {
      ASSERT_TRUE(plan->fragments.count(b.get())) << name;
      const FragmentLayout& l = plan->fragments.at(b.get());
      std::printf("  %s: %s\n", name.c_str(), l.ToString().c_str());
      ASSERT_EQ(l.threads, c.Int("threads")) << name;
    }
    if (b->scope == ir::Scope::kShared) {
      ASSERT_TRUE(plan->shared.count(b.get())) << name;
      std::printf("  %s: %s\n", name.c_str(), plan->shared.at(b.get()).ToString().c_str());
    }
  }
  for (const ir::StmtNode* g : Find(*program, ir::StmtKind::kGemm)) ASSERT_TRUE(plan->gemms.count(g));
  for (const ir::StmtNode* s : Find(*program, ir::StmtKind::kCopy)) ASSERT_TRUE(plan->loops.count(s));
  for (const ir::StmtNode* s : Find(*program, ir::StmtKind::kFor)) {
    if (static_cast<const ir::ForNode*>(s)->kind != ir::ForKind::kParallel) continue;
    // Inner loops of a nest are not keys; every outer one is.
    if (plan->loops.count(s)) CheckNest(*plan, plan->loops.at(s));
  }

  // Gemm operands have the documented layouts.
  for (const ir::StmtNode* s : Find(*program, ir::StmtKind::kGemm)) {
    const auto* g = static_cast<const ir::GemmNode*>(s);
    const GemmWarpPartition& p = plan->gemms.at(s);
    EXPECT_EQ(p.warps_m * p.warps_n * p.replicas * 32, c.Int("threads"));
    const FragmentLayout& acc = plan->fragments.at(g->c.buffer.get());
    int64_t m = *ir::AsConstInt(g->c.buffer->shape[0]), n = *ir::AsConstInt(g->c.buffer->shape[1]);
    EXPECT_TRUE(SameLayout(acc, MmaAccumulator(m, n, p))) << g->c.buffer->name;
    EXPECT_TRUE(absl::StartsWith(acc.kind, "mma_accumulator")) << acc.kind;
    if (g->a.buffer->scope == ir::Scope::kFragment) {
      const FragmentLayout& a = plan->fragments.at(g->a.buffer.get());
      int64_t k = *ir::AsConstInt(g->a.buffer->shape[1]);
      EXPECT_TRUE(SameLayout(a, RegisterA(m, k, p, false))) << g->a.buffer->name << ": " << a.ToString();
    }
    for (const ir::Buffer& op : {g->a.buffer, g->b.buffer}) {
      if (op->scope != ir::Scope::kShared) continue;
      const SharedLayout& sl = plan->shared.at(op.get());
      EXPECT_EQ(sl.kind == SharedLayout::Kind::kSwizzled, CanSwizzle(sl.cols, sl.elem_bytes))
          << op->name;
    }
  }
  // Reductions: the threads holding a row hold its result.
  for (const ir::StmtNode* s : Find(*program, ir::StmtKind::kReduce)) {
    const auto* r = static_cast<const ir::ReduceNode*>(s);
    if (r->src->scope != ir::Scope::kFragment || r->dst->scope != ir::Scope::kFragment) continue;
    CheckReduce(plan->fragments.at(r->src.get()), plan->fragments.at(r->dst.get()), r->dim);
  }
  // Copies: fragment to fragment is a per-thread copy exactly when the
  // layouts agree; otherwise an exchange.
  for (const ir::StmtNode* s : Find(*program, ir::StmtKind::kCopy)) {
    const auto* cp = static_cast<const ir::CopyNode*>(s);
    const LoopPartition& p = plan->loops.at(s);
    EXPECT_GE(p.vector, 1);
    EXPECT_EQ(p.vector & (p.vector - 1), 0) << "vector " << p.vector << " is not a power of two";
    if (cp->src.buffer->scope == ir::Scope::kFragment &&
        cp->dst.buffer->scope == ir::Scope::kFragment) {
      EXPECT_EQ(p.exchange, !SameLayout(plan->fragments.at(cp->src.buffer.get()),
                                        plan->fragments.at(cp->dst.buffer.get())));
    } else {
      EXPECT_FALSE(p.exchange);
    }
  }

  // Named buffers of the examples.
  auto frag = [&](const char* name) -> const FragmentLayout& {
    return plan->fragments.at(buffers.at(name).get());
  };
  if (buffers.count("C_local")) {
    EXPECT_TRUE(absl::StartsWith(frag("C_local").kind, "mma_accumulator"));
  }
  if (buffers.count("acc_s_cast")) {
    // FlashAttention / GQA: the cast scores feed a register-A gemm.
    EXPECT_TRUE(absl::StartsWith(frag("acc_s_cast").kind, "register_a")) << frag("acc_s_cast").kind;
  }
  if (buffers.count("scores_max")) {
    EXPECT_TRUE(SameLayout(frag("scores_max"), Projected(frag("acc_s"), 1)));
    EXPECT_TRUE(absl::StartsWith(frag("scores_max").kind, "projected"));
  }
  if (c.file == "softmax.py") {
    EXPECT_TRUE(SameLayout(frag("row_max"), Projected(frag("x_tile"), 1)));
    EXPECT_TRUE(SameLayout(frag("row_max_prev"), frag("row_max")));
  }
  if (c.file == "gqa_decode.py") {
    // Read in serial code by every thread.
    EXPECT_EQ(frag("lse_local").replicate, c.Int("threads"));
    EXPECT_EQ(frag("lse_max").replicate, c.Int("threads"));
  }
  if (c.file == "rmsnorm.py" || c.file == "layernorm.py") {
    const char* w = c.file == "rmsnorm.py" ? "w_local" : "gamma_local";
    EXPECT_TRUE(SameLayout(frag(w), Projected(frag("x_local"), 0)));
  }
}

std::vector<ExampleCase> AllCases() {
  absl::StatusOr<std::vector<ExampleCase>> cases = ::tilec::testing::LoadExampleCases();
  if (!cases.ok()) {
    std::fprintf(stderr, "%s\n", std::string(cases.status().message()).c_str());
    std::abort();
  }
  return *cases;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleInference, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<ExampleCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tilec::inference
