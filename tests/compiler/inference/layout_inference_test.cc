#include "compiler/inference/layout_inference.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
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
  struct Access {
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;
    bool store;
  };
  std::vector<Access> accesses;
  struct Finder : ir::IRVisitor {
    std::vector<Access>* out;
    void Visit(const ir::Expr& e) override {
      if (e == nullptr) return;
      if (const auto* ld = e->as<ir::LoadNode>()) out->push_back({ld->buffer, ld->indices, false});
      ir::IRVisitor::Visit(e);
    }
    void Visit(const ir::Stmt& s) override {
      if (s == nullptr) return;
      if (const auto* st = s->as<ir::StoreNode>()) {
        out->push_back({st->buffer, st->indices, true});
      }
      ir::IRVisitor::Visit(s);
    }
  } finder;
  finder.out = &accesses;
  finder.Visit(p.body);
  for (const auto& [buffer, indices, store] : accesses) {
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
          // A store must reach every copy: every thread runs every iteration.
          if (store) {
            ASSERT_EQ(l.replicate, l.threads)
                << buffer->name << " is stored at other than the loop variables by a nest that "
                << "not every thread runs whole";
          }
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
  absl::StatusOr<std::string> text =
      ::tilec::testing::ReadFile(::tilec::testing::ExamplesDir() + "/" + c.file);
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
  for (const ir::StmtNode* g : Find(*program, ir::StmtKind::kGemm))
    ASSERT_TRUE(plan->gemms.count(g));
  for (const ir::StmtNode* s : Find(*program, ir::StmtKind::kCopy))
    ASSERT_TRUE(plan->loops.count(s));
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
      EXPECT_TRUE(SameLayout(a, RegisterA(m, k, p, false)))
          << g->a.buffer->name << ": " << a.ToString();
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

// Hand-derived expectations for a few example cases.
TEST(ExampleInferenceDetails, PartitionsAndExchanges) {
  absl::StatusOr<std::vector<ExampleCase>> cases = ::tilec::testing::LoadExampleCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  auto run = [&](const std::string& name, ir::Program* program) -> absl::StatusOr<LayoutPlan> {
    for (const ExampleCase& c : *cases) {
      if (c.name != name) continue;
      absl::StatusOr<ir::Program> p = Compile(c);
      if (!p.ok()) return p.status();
      *program = *p;
      return InferLayouts(*program, TargetInfo::Sm80());
    }
    return absl::NotFoundError(name);
  };
  auto copy_into = [](const ir::Program& p, const char* dst) -> const ir::StmtNode* {
    for (const ir::StmtNode* s : Find(p, ir::StmtKind::kCopy)) {
      if (static_cast<const ir::CopyNode*>(s)->dst.buffer->name == dst) return s;
    }
    return nullptr;
  };
  ir::Program program;
  // block_M = 32 on 4 warps: both gemms are 2 x 2, and register A is
  // replicated over the two warp columns while the scores are split between
  // them, so the cast copy moves data.
  absl::StatusOr<LayoutPlan> plan = run("flash_attention_small", &program);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_NE(copy_into(program, "acc_s_cast"), nullptr);
  EXPECT_TRUE(plan->loops.at(copy_into(program, "acc_s_cast")).exchange);
  // block_M = 64, FullRow: 4 x 1 for both gemms; the copy stays in registers.
  plan = run("flash_attention_causal_small", &program);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->loops.at(copy_into(program, "acc_s_cast")).exchange);

  // A[by * 64, ko * 32] (float16, K = 64) into A_shared: 16-byte vectors.
  plan = run("gemm_f16_nn_small", &program);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->loops.at(copy_into(program, "A_shared")).vector, 8);
  EXPECT_EQ(plan->loops.at(copy_into(program, "A_shared")).follows, nullptr);

  // x_tile is [8, 64] float32 on 128 threads: 4 elements each; the copy from
  // X follows it with 4-element vectors.
  plan = run("softmax_small", &program);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const LoopPartition& load = plan->loops.at(copy_into(program, "x_tile"));
  ASSERT_NE(load.follows, nullptr);
  EXPECT_EQ(load.follows->name, "x_tile");
  EXPECT_EQ(load.vector, 4);

  // Element-wise add, [32, 64] per block: float32 output limits the vector to
  // 4 elements; with float16 everywhere (ragged case) 8, since N = 72 and the
  // block offset bx * 64 are multiples of 8.
  for (auto [name, vector] : {std::pair<const char*, int64_t>{"elementwise_add_small", 4},
                              std::pair<const char*, int64_t>{"elementwise_add_ragged", 8}}) {
    plan = run(name, &program);
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<const ir::StmtNode*> loops = Find(program, ir::StmtKind::kFor);
    ASSERT_FALSE(loops.empty());
    const LoopPartition& p = plan->loops.at(loops[0]);
    EXPECT_EQ(p.vector, vector) << name;
    EXPECT_EQ(p.follows, nullptr);
    EXPECT_EQ(p.layout.replicate, 1);
    EXPECT_EQ(p.layout.local_size, 32 * 64 / 128);
  }
}

// ---------------------------------------------------------------------------
// Hand-built programs.

ir::Buffer Buf(const char* name, ir::DType t, std::vector<int64_t> shape, ir::Scope scope) {
  std::vector<ir::Expr> dims;
  for (int64_t d : shape) dims.push_back(ir::IntImm(d));
  return ir::MakeBuffer(name, t, std::move(dims), scope);
}

ir::Stmt Kernel(int64_t threads, std::vector<ir::Stmt> body) {
  auto k = std::make_shared<ir::KernelNode>();
  k->grid = {ir::IntImm(1)};
  k->block_vars = {ir::MakeVar("bx")};
  k->threads = ir::IntImm(threads);
  k->body = ir::Seq(std::move(body));
  return k;
}

ir::Stmt Gemm(const ir::Buffer& a, const ir::Buffer& b, const ir::Buffer& c,
              ir::GemmPolicy policy = ir::GemmPolicy::kSquare) {
  auto g = std::make_shared<ir::GemmNode>();
  g->a = ir::FullRegion(a);
  g->b = ir::FullRegion(b);
  g->c = ir::FullRegion(c);
  g->policy = policy;
  return g;
}

// for i, j in T.Parallel(m, n): body(i, j)
ir::Stmt Parallel2(int64_t m, int64_t n, const std::function<ir::Stmt(ir::Var, ir::Var)>& body) {
  ir::Var i = ir::MakeVar("i"), j = ir::MakeVar("j");
  return ir::For(
      i, ir::IntImm(0), ir::IntImm(m), ir::ForKind::kParallel,
      ir::For(j, ir::IntImm(0), ir::IntImm(n), ir::ForKind::kParallel, ir::Seq({body(i, j)})));
}

ir::Program Prog(std::vector<ir::Stmt> kernel_body, int64_t threads = 128) {
  ir::Program p;
  p.name = "handmade";
  p.body = ir::Seq({Kernel(threads, std::move(kernel_body))});
  return p;
}

using ir::DType;
using ir::Scope;

TEST(InferLayoutsTest, AccumulatorUsedAsIncompatibleRegisterAIsAConflict) {
  ir::Buffer a = Buf("A_s", DType::kFloat16, {64, 32}, Scope::kShared);
  ir::Buffer b = Buf("B_s", DType::kFloat16, {32, 64}, Scope::kShared);
  ir::Buffer b2 = Buf("B2_s", DType::kFloat32, {64, 64}, Scope::kShared);
  ir::Buffer x = Buf("X", DType::kFloat32, {64, 64}, Scope::kFragment);
  ir::Buffer y = Buf("Y", DType::kFloat32, {64, 64}, Scope::kFragment);
  ir::Program p = Prog({ir::Allocate(a), ir::Allocate(b), ir::Allocate(b2), ir::Allocate(x),
                        ir::Allocate(y), Gemm(a, b, x), Gemm(x, b2, y)});
  ASSERT_TRUE(ir::Verify(p).ok()) << ir::Verify(p);
  absl::StatusOr<LayoutPlan> plan = InferLayouts(p, TargetInfo::Sm80());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(plan.status().message());
  EXPECT_TRUE(absl::StrContains(msg, "fragment X")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "accumulator of T.gemm at kernel 0 > T.gemm #1")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "register A operand of T.gemm at kernel 0 > T.gemm #2"))
      << msg;
  EXPECT_TRUE(absl::StrContains(msg, "mma_accumulator(warps=2x2)")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "register_a(warps=2x2)")) << msg;

  // With FullRow on both gemms (4 x 1) the two layouts agree.
  ir::Program q =
      Prog({ir::Allocate(a), ir::Allocate(b), ir::Allocate(b2), ir::Allocate(x), ir::Allocate(y),
            Gemm(a, b, x, ir::GemmPolicy::kFullRow), Gemm(x, b2, y, ir::GemmPolicy::kFullRow)});
  plan = InferLayouts(q, TargetInfo::Sm80());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(SameLayout(plan->fragments.at(x.get()), MmaAccumulator(64, 64, {4, 1})));
}

TEST(InferLayoutsTest, ANestThatOnlyReadsAFragmentOfAnotherLayoutReadsAStagedCopy) {
  // acc is a 2 x 2 accumulator, m its row maximum; acc2 a 4 x 1 accumulator.
  // Scaling acc2's rows by m needs m in acc2's row layout: m cannot have it,
  // so the nest reads a shared copy of m (the conversion).
  ir::Buffer a = Buf("A_s", DType::kFloat16, {64, 32}, Scope::kShared);
  ir::Buffer b = Buf("B_s", DType::kFloat16, {32, 64}, Scope::kShared);
  ir::Buffer acc = Buf("acc", DType::kFloat32, {64, 64}, Scope::kFragment);
  ir::Buffer acc2 = Buf("acc2", DType::kFloat32, {64, 64}, Scope::kFragment);
  ir::Buffer m = Buf("m", DType::kFloat32, {64}, Scope::kFragment);
  ir::Program p = Prog(
      {ir::Allocate(a), ir::Allocate(b), ir::Allocate(acc), ir::Allocate(acc2), ir::Allocate(m),
       Gemm(a, b, acc), Gemm(a, b, acc2, ir::GemmPolicy::kFullRow),
       std::make_shared<ir::ReduceNode>(ir::ReduceKind::kMax, acc, m, 1, true),
       Parallel2(64, 64, [&](ir::Var i, ir::Var j) {
         return ir::Store(acc2, {i, j},
                          ir::Binary(ir::BinaryOp::kMul, ir::Load(acc2, {i, j}), ir::Load(m, {i})));
       })});
  ASSERT_TRUE(ir::Verify(p).ok()) << ir::Verify(p);
  absl::StatusOr<LayoutPlan> plan = InferLayouts(p, TargetInfo::Sm80());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_NE(plan->program, nullptr);
  const std::string text = ir::Print(*plan->program);
  EXPECT_TRUE(absl::StrContains(text, "m_stage")) << text;
  ASSERT_TRUE(ir::Verify(*plan->program).ok());
}

TEST(InferLayoutsTest, ParallelNestConflictNamesBothBuffers) {
  // A nest that writes both a 2 x 2 and a 4 x 1 accumulator: no conversion
  // serves a store, so this stays a conflict.
  ir::Buffer a = Buf("A_s", DType::kFloat16, {64, 32}, Scope::kShared);
  ir::Buffer b = Buf("B_s", DType::kFloat16, {32, 64}, Scope::kShared);
  ir::Buffer acc = Buf("acc", DType::kFloat32, {64, 64}, Scope::kFragment);
  ir::Buffer acc2 = Buf("acc2", DType::kFloat32, {64, 64}, Scope::kFragment);
  ir::Program p = Prog(
      {ir::Allocate(a), ir::Allocate(b), ir::Allocate(acc), ir::Allocate(acc2), Gemm(a, b, acc),
       Gemm(a, b, acc2, ir::GemmPolicy::kFullRow),
       Parallel2(64, 64, [&](ir::Var i, ir::Var j) {
         return ir::Seq({ir::Store(acc, {i, j},
                                   ir::Binary(ir::BinaryOp::kAdd, ir::Load(acc, {i, j}),
                                              ir::FloatImm(1.0, DType::kFloat32))),
                         ir::Store(acc2, {i, j},
                                   ir::Binary(ir::BinaryOp::kMul, ir::Load(acc2, {i, j}),
                                              ir::FloatImm(2.0, DType::kFloat32)))});
       })});
  ASSERT_TRUE(ir::Verify(p).ok()) << ir::Verify(p);
  absl::StatusOr<LayoutPlan> plan = InferLayouts(p, TargetInfo::Sm80());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(plan.status().message());
  EXPECT_TRUE(absl::StrContains(msg, "layout conflict")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "acc2")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "fragment acc")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "kernel 0 > for i > for j > store #")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "mma_accumulator(warps=2x2)")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "mma_accumulator(warps=4x1)")) << msg;
}

TEST(InferLayoutsTest, NestWithOnlyADecidedProjectionIsLifted) {
  // for i, j: S[i, j] = m[i] with m the row maximum of an accumulator: the
  // nest takes a layout whose rows are where m's are.
  ir::Buffer a = Buf("A_s", DType::kFloat16, {64, 32}, Scope::kShared);
  ir::Buffer b = Buf("B_s", DType::kFloat16, {32, 64}, Scope::kShared);
  ir::Buffer acc = Buf("acc", DType::kFloat32, {64, 64}, Scope::kFragment);
  ir::Buffer m = Buf("m", DType::kFloat32, {64}, Scope::kFragment);
  ir::Buffer s = Buf("S", DType::kFloat32, {64, 32}, Scope::kShared);
  ir::Program p = Prog({ir::Allocate(a), ir::Allocate(b), ir::Allocate(acc), ir::Allocate(m),
                        ir::Allocate(s), Gemm(a, b, acc),
                        std::make_shared<ir::ReduceNode>(ir::ReduceKind::kMax, acc, m, 1, true),
                        Parallel2(64, 32, [&](ir::Var i, ir::Var j) {
                          return ir::Store(s, {i, j}, ir::Load(m, {i}));
                        })});
  ASSERT_TRUE(ir::Verify(p).ok()) << ir::Verify(p);
  absl::StatusOr<LayoutPlan> plan = InferLayouts(p, TargetInfo::Sm80());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ir::StmtNode* nest = Find(p, ir::StmtKind::kFor)[0];
  const LoopPartition& lp = plan->loops.at(nest);
  EXPECT_TRUE(absl::StartsWith(lp.layout.kind, "lifted")) << lp.layout.kind;
  EXPECT_EQ(lp.layout.replicate, 1);  // m's replicas share the columns
  CheckNest(*plan, lp);
}

TEST(InferLayoutsTest, FragmentReadOutsideAParallelLoopIsReplicated) {
  ir::Buffer f = Buf("f", DType::kFloat32, {4}, Scope::kFragment);
  ir::Buffer out = Buf("out", DType::kFloat32, {4}, Scope::kShared);
  ir::Var k = ir::MakeVar("k");
  ir::Program p =
      Prog({ir::Allocate(f), ir::Allocate(out), ir::Fill(ir::FullRegion(f), ir::FloatImm(1.0)),
            ir::For(k, ir::IntImm(0), ir::IntImm(4), ir::ForKind::kSerial,
                    ir::Store(out, {k}, ir::Load(f, {k})))});
  ASSERT_TRUE(ir::Verify(p).ok()) << ir::Verify(p);
  absl::StatusOr<LayoutPlan> plan = InferLayouts(p, TargetInfo::Sm80());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fragments.at(f.get()).replicate, 128);
  EXPECT_EQ(plan->fragments.at(f.get()).local_size, 4);
}

TEST(InferLayoutsTest, Preconditions) {
  // Unbound tile parameters are named.
  ir::Program p = Prog({});
  p.tile_params = {{ir::MakeVar("block_M"), std::nullopt, {}},
                   {ir::MakeVar("threads"), 128, {}},
                   {ir::MakeVar("num_stages"), std::nullopt, {2, 3}}};
  absl::StatusOr<LayoutPlan> plan = InferLayouts(p, TargetInfo::Sm80());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(plan.status().message(),
            "tile parameters block_M, num_stages are unbound; bind them with -D");

  // Too many threads.
  plan = InferLayouts(Prog({}, 2048), TargetInfo::Sm80());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "2048 threads")) << plan.status();

  // Too much shared memory.
  ir::Buffer big = Buf("big", DType::kFloat32, {256, 256}, Scope::kShared);
  plan = InferLayouts(Prog({ir::Allocate(big)}), TargetInfo::Sm80());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "262144 bytes")) << plan.status();

  // T.gemm where the target has no mma, and with B in registers.
  ir::Buffer a = Buf("A_s", DType::kFloat16, {64, 32}, Scope::kShared);
  ir::Buffer b = Buf("B_s", DType::kFloat16, {32, 64}, Scope::kShared);
  ir::Buffer bf = Buf("B_f", DType::kFloat16, {32, 64}, Scope::kFragment);
  ir::Buffer c = Buf("C", DType::kFloat32, {64, 64}, Scope::kFragment);
  TargetInfo no_mma = TargetInfo::Sm80();
  no_mma.name = "plain";
  no_mma.supports_mma = false;
  plan = InferLayouts(Prog({ir::Allocate(a), ir::Allocate(b), ir::Allocate(c), Gemm(a, b, c)}),
                      no_mma);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "not supported on plain"))
      << plan.status();
  plan = InferLayouts(Prog({ir::Allocate(a), ir::Allocate(bf), ir::Allocate(c), Gemm(a, bf, c)}),
                      TargetInfo::Sm80());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "B in a fragment (B_f)")) << plan.status();
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
