#include "compiler/inference/fragment_check.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/inference/layout.h"
#include "compiler/inference/loop_partition.h"
#include "compiler/ir/visitor.h"
#include "gtest/gtest.h"

namespace tilec::inference {
namespace {

// The reshape through registers: t1 stored in the (i, j) nest at i * bn + j.
constexpr char kFlatten[] = R"(
import tilelang.language as T

def flatten(bm, bn):
    @T.prim_func
    def main(X: T.Tensor((bm, bn), "float32"), Y: T.Tensor((bm * bn,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            t2 = T.alloc_fragment([bm, bn], "float32")
            t1 = T.alloc_fragment([bm * bn], "float32")
            T.copy(X[0, 0], t2)
            for i, j in T.Parallel(bm, bn):
                t1[i * bn + j] = t2[i, j] * 2
            for k in T.Parallel(bm * bn):
                Y[k] = t1[k]
    return main
)";

struct Parts {
  ir::Program program;
  ir::Buffer t1, t2;
  std::vector<const ir::ForNode*> nests;  // outermost T.Parallel loops in order
};

Parts Flatten() {
  frontend::SourceFile file{"flatten.py", kFlatten};
  frontend::Bindings bindings;
  bindings.Set("bm", "16");
  bindings.Set("bn", "8");
  absl::StatusOr<ir::Program> p = frontend::CompileTileLang(file, "flatten", bindings);
  EXPECT_TRUE(p.ok()) << p.status();
  Parts parts{*p, nullptr, nullptr, {}};
  struct V : ir::IRVisitor {
    Parts* parts;
    bool in_nest = false;
    void Visit(const ir::Stmt& s) override {
      if (s == nullptr) return;
      if (const auto* a = s->as<ir::AllocateNode>()) {
        (a->buffer->name == "t1" ? parts->t1 : parts->t2) = a->buffer;
      }
      const auto* f = s->as<ir::ForNode>();
      if (f != nullptr && f->kind == ir::ForKind::kParallel && !in_nest) {
        parts->nests.push_back(f);
        in_nest = true;
        ir::IRVisitor::Visit(s);
        in_nest = false;
        return;
      }
      ir::IRVisitor::Visit(s);
    }
  } v;
  v.parts = &parts;
  v.Visit(parts.program.body);
  return parts;
}

LoopPartition NestOver(const ir::ForNode* f, FragmentLayout layout) {
  std::optional<ParallelNest> nest = NestAt(*f);
  EXPECT_TRUE(nest.has_value());
  LoopPartition p;
  p.threads = layout.threads;
  p.layout = std::move(layout);
  p.loop_vars = nest->vars;
  p.body = nest->body;
  return p;
}

// The plan layout inference made for this program before staging existed:
// t1 replicated (it is indexed by other than loop variables) but stored by a
// nest that runs each iteration on one thread. The check refuses it.
TEST(CheckFragmentAccesses, RefusesAReplicatedFragmentStoredByAPartitionedNest) {
  Parts parts = Flatten();
  ASSERT_EQ(parts.nests.size(), 2u);
  LayoutPlan plan;
  plan.fragments[parts.t2.get()] = Blocked({16, 8}, 128, 1);
  plan.fragments[parts.t1.get()] = Replicated({128}, 128);
  plan.loops[parts.nests[0]] = NestOver(parts.nests[0], Blocked({16, 8}, 128, 1));
  plan.loops[parts.nests[1]] = NestOver(parts.nests[1], Replicated({128}, 128));
  absl::Status st = CheckFragmentAccesses(parts.program, plan);
  ASSERT_EQ(st.code(), absl::StatusCode::kInternal) << st;
  const std::string msg(st.message());
  EXPECT_TRUE(absl::StartsWith(msg,
                               "compiler bug: kernel 0 > T.Parallel over i, j: the store "
                               "to t1[i * 8 + j]"))
      << msg;
  EXPECT_TRUE(absl::StrContains(msg, "not every thread runs whole")) << msg;

  // With the nest run whole by every thread (and t2 everywhere) it holds.
  plan.fragments[parts.t2.get()] = Replicated({16, 8}, 128);
  plan.loops[parts.nests[0]] = NestOver(parts.nests[0], Replicated({16, 8}, 128));
  EXPECT_TRUE(CheckFragmentAccesses(parts.program, plan).ok())
      << CheckFragmentAccesses(parts.program, plan);
}

TEST(CheckFragmentAccesses, RefusesAnOwnedAccessOnAnotherLayout) {
  Parts parts = Flatten();
  LayoutPlan plan;
  // t2's rows dealt to threads differently from the nest's.
  plan.fragments[parts.t2.get()] = Blocked({16, 8}, 128, 2);
  plan.fragments[parts.t1.get()] = Replicated({128}, 128);
  plan.loops[parts.nests[0]] = NestOver(parts.nests[0], Replicated({16, 8}, 128));
  plan.loops[parts.nests[1]] = NestOver(parts.nests[1], Replicated({128}, 128));
  absl::Status st = CheckFragmentAccesses(parts.program, plan);
  ASSERT_EQ(st.code(), absl::StatusCode::kInternal) << st;
  EXPECT_TRUE(
      absl::StrContains(st.message(), "the load of t2[i, j] whose layout is not the nest's"))
      << st;
}

TEST(CheckFragmentAccesses, RefusesAPartitionedFragmentOutsideANest) {
  constexpr char kOutside[] = R"(
import tilelang.language as T

def outside(n):
    @T.prim_func
    def main(Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment([n], "float32")
            f[0] = 1.0
            for i in T.Parallel(n):
                Y[i] = f[i]
    return main
)";
  frontend::SourceFile file{"outside.py", kOutside};
  frontend::Bindings bindings;
  bindings.Set("n", "64");
  absl::StatusOr<ir::Program> p = frontend::CompileTileLang(file, "outside", bindings);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<LayoutPlan> plan = InferLayouts(*p, TargetInfo::Sm80());
  ASSERT_TRUE(plan.ok()) << plan.status();  // f is replicated: the check passes
  for (auto& [buffer, layout] : plan->fragments) layout = Blocked({64}, 32, 1);
  for (auto& [node, loop] : plan->loops) loop.layout = Blocked({64}, 32, 1);
  absl::Status st = CheckFragmentAccesses(*p, *plan);
  ASSERT_EQ(st.code(), absl::StatusCode::kInternal) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "the store to f[0] outside a T.Parallel nest")) << st;
}

}  // namespace
}  // namespace tilec::inference

namespace tilec::inference {
namespace {

absl::Status PrivateCheck(const char* body) {
  const std::string text = absl::StrCat(R"(
import tilelang.language as T

def k(N):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            a = T.alloc_local([N], "float32")
            s = T.alloc_var("float32", init=0)
)",
                                        body, "    return main\n");
  frontend::SourceFile file{"private.py", text};
  frontend::Bindings bindings;
  bindings.Set("N", "64");
  absl::StatusOr<ir::Program> p = frontend::CompileTileLang(file, "k", bindings);
  if (!p.ok()) return p.status();
  return CheckThreadPrivateBuffers(*p);
}

TEST(CheckThreadPrivateBuffers, RefusesALocalStoredInANestAndReadAfterIt) {
  absl::Status st = PrivateCheck(R"(
            for i in T.Parallel(N):
                a[i] = X[i] * 2
            for k in T.serial(N):
                Y[k] = a[k]
)");
  ASSERT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(absl::StartsWith(st.message(),
                               "kernel 0 > T.Parallel over i: a is a T.alloc_local "
                               "buffer (one per thread)"))
      << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "T.alloc_fragment")) << st;
}

TEST(CheckThreadPrivateBuffers, RefusesAVarAccumulatedAcrossIterations) {
  absl::Status st = PrivateCheck(R"(
            for i in T.Parallel(N):
                s = s + X[i]
            Y[0] = s
)");
  ASSERT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "s is a T.alloc_var buffer")) << st;
}

TEST(CheckThreadPrivateBuffers, AllowsPerIterationTemporariesAndUsesOutsideNests) {
  absl::Status st = PrivateCheck(R"(
            for i in T.Parallel(N):
                a[0] = X[i] * 2
                Y[i] = a[0] + 1
            s = 3
            for i in T.Parallel(N):
                Y[i] = Y[i] * s
)");
  EXPECT_TRUE(st.ok()) << st;
}

}  // namespace
}  // namespace tilec::inference

namespace tilec::inference {
namespace {

absl::StatusOr<ir::Program> BuildAccumulation(const std::string& body) {
  const std::string text = R"(
import tilelang.language as T

def f(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            r = T.alloc_fragment((N,), "float32")
            S = T.alloc_shared((N,), "float32")
            T.clear(r)
)" + body + R"(
            T.copy(r, B)
    return main
)";
  frontend::SourceFile file{"acc.py", text};
  frontend::Bindings bindings;
  bindings.Set("M", "64");
  bindings.Set("N", "32");
  return frontend::CompileTileLang(file, "f", bindings);
}

// A reduction written as a read-modify-write across T.Parallel iterations is
// refused: the iterations that differ only in i all update r[j].
TEST(CheckParallelAccumulation, RefusesAReductionAcrossIterations) {
  for (const char* body : {"            for i, j in T.Parallel(M, N):\n"
                           "                r[j] += A[i, j]\n",
                           "            for i, j in T.Parallel(M, N):\n"
                           "                jj = j\n"
                           "                S[jj] = S[jj] + A[i, j]\n"}) {
    absl::StatusOr<ir::Program> p = BuildAccumulation(body);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::Status st = CheckParallelAccumulation(*p);
    ASSERT_FALSE(st.ok()) << body;
    EXPECT_TRUE(absl::StrContains(st.message(), "whose index does not use i")) << st;
    EXPECT_TRUE(absl::StrContains(st.message(), "kernel 0 > T.Parallel over i, j")) << st;
  }
}

// Independent iterations, and a serial loop inside each iteration, pass.
TEST(CheckParallelAccumulation, AcceptsIndependentIterationsAndInnerLoops) {
  for (const char* body : {"            for j in T.Parallel(N):\n"
                           "                for i in T.serial(M):\n"
                           "                    r[j] += A[i, j]\n",
                           "            for i, j in T.Parallel(M, N):\n"
                           "                if i == 0:\n"
                           "                    S[j] = A[i, j]\n",
                           "            for j in T.Parallel(N):\n"
                           "                r[j] = r[j] * 2\n",
                           "            for i, j in T.Parallel(1, N):\n"
                           "                r[j] += A[i, j]\n"}) {
    absl::StatusOr<ir::Program> p = BuildAccumulation(body);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(CheckParallelAccumulation(*p).ok()) << body;
  }
}

}  // namespace
}  // namespace tilec::inference
