#include "compiler/inference/fragment_staging.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/visitor.h"
#include "gtest/gtest.h"

namespace tilec::inference {
namespace {

absl::StatusOr<ir::Program> Compile(const std::string& text, const std::string& fn,
                                    const std::vector<std::pair<std::string, std::string>>& b) {
  frontend::SourceFile file{"staging.py", text};
  frontend::Bindings bindings;
  for (const auto& [k, v] : b) bindings.Set(k, v);
  return frontend::CompileTileLang(file, fn, bindings);
}

// Every T.copy of the program as "src -> dst" buffer names, in order.
std::vector<std::string> Copies(const ir::Program& p) {
  struct V : ir::IRVisitor {
    std::vector<std::string> out;
    void Visit(const ir::Stmt& s) override {
      if (s == nullptr) return;
      if (const auto* c = s->as<ir::CopyNode>()) {
        out.push_back(c->src.buffer->name + " -> " + c->dst.buffer->name);
      }
      ir::IRVisitor::Visit(s);
    }
  } v;
  v.Visit(p.body);
  return v.out;
}

constexpr char kFlatten[] = R"(
import tilelang.language as T

def flatten(bm, bn, cond=0):
    @T.prim_func
    def main(X: T.Tensor((bm, bn), "float32"), Y: T.Tensor((bm * bn,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            t2 = T.alloc_fragment([bm, bn], "float32")
            t1 = T.alloc_fragment([bm * bn], "float32")
            T.copy(X[0, 0], t2)
            for i, j in T.Parallel(bm, bn):
                if cond == 0 or i < j:
                    t1[i * bn + j] = t2[i, j]
            for k in T.Parallel(bm * bn):
                Y[k] = t1[k]
    return main
)";

TEST(StageFragmentStores, StagesAReshapeThroughSharedMemory) {
  absl::StatusOr<ir::Program> p = Compile(kFlatten, "flatten", {{"bm", "16"}, {"bn", "8"}});
  ASSERT_TRUE(p.ok()) << p.status();
  bool changed = false;
  absl::StatusOr<ir::Program> out = StageFragmentStores(*p, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(changed);
  ASSERT_TRUE(ir::Verify(*out).ok()) << ir::Verify(*out);
  const std::string text = ir::Print(*out);
  EXPECT_TRUE(absl::StrContains(text, "t1_stage = T.alloc_shared((128,), \"float32\")")) << text;
  EXPECT_TRUE(absl::StrContains(text, "t1_stage[i * 8 + j] = t2[i, j]")) << text;
  // Every element is written unconditionally: no fill before the nest.
  EXPECT_EQ(Copies(*out), (std::vector<std::string>{"X -> t2", "t1_stage -> t1"})) << text;
}

TEST(StageFragmentStores, FillsTheStageFirstWhenTheNestWritesPartOfTheFragment) {
  absl::StatusOr<ir::Program> p =
      Compile(kFlatten, "flatten", {{"bm", "16"}, {"bn", "8"}, {"cond", "1"}});
  ASSERT_TRUE(p.ok()) << p.status();
  bool changed = false;
  absl::StatusOr<ir::Program> out = StageFragmentStores(*p, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Copies(*out),
            (std::vector<std::string>{"X -> t2", "t1 -> t1_stage", "t1_stage -> t1"}));
}

TEST(StageFragmentStores, LeavesOwnedAccessesAlone) {
  constexpr char kOwned[] = R"(
import tilelang.language as T

def owned(n):
    @T.prim_func
    def main(X: T.Tensor((n, n), "float32"), Y: T.Tensor((n, n), "float32")):
        with T.Kernel(1, threads=64) as bx:
            f = T.alloc_fragment([n, n], "float32")
            r = T.alloc_fragment([n], "float32")
            for i, j in T.Parallel(n, n):
                f[i, j] = X[i, j]
            for i, j in T.Parallel(n, n):
                r[i] = f[i, j]
            for i, j in T.Parallel(n, n):
                Y[i, j] = f[j, i] + r[i]
    return main
)";
  absl::StatusOr<ir::Program> p = Compile(kOwned, "owned", {{"n", "16"}});
  ASSERT_TRUE(p.ok()) << p.status();
  bool changed = true;
  absl::StatusOr<ir::Program> out = StageFragmentStores(*p, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
  EXPECT_EQ(out->body, p->body);  // the very same nodes
}

TEST(StageFragmentStores, ReadsAGemmAccumulatorAtOtherIndicesFromAStagedCopy) {
  constexpr char kAcc[] = R"(
import tilelang.language as T

def acc_read(n):
    @T.prim_func
    def main(A: T.Tensor((n, n), "float16"), Y: T.Tensor((n * n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((n, n), "float16")
            acc = T.alloc_fragment((n, n), "float32")
            T.copy(A, A_s)
            T.gemm(A_s, A_s, acc, clear_accum=True)
            for k in T.Parallel(n * n):
                Y[k] = acc[k % n, k // n]
    return main
)";
  absl::StatusOr<ir::Program> p = Compile(kAcc, "acc_read", {{"n", "32"}});
  ASSERT_TRUE(p.ok()) << p.status();
  bool changed = false;
  absl::StatusOr<ir::Program> out = StageFragmentStores(*p, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(changed);
  const std::string text = ir::Print(*out);
  // Filled before the nest, never copied back: the nest only reads it.
  EXPECT_EQ(Copies(*out), (std::vector<std::string>{"A -> A_s", "acc -> acc_stage"})) << text;
  EXPECT_TRUE(absl::StrContains(text, "Y[k] = acc_stage[k % 32, k // 32]")) << text;
}

TEST(StageFragmentStores, PicksAFreshName) {
  constexpr char kClash[] = R"(
import tilelang.language as T

def clash(n):
    @T.prim_func
    def main(Y: T.Tensor((n * n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            f_stage = T.alloc_shared([4], "float32")
            f = T.alloc_fragment([n * n], "float32")
            for i, j in T.Parallel(n, n):
                f[j * n + i] = i
            for k in T.Parallel(n * n):
                Y[k] = f[k]
    return main
)";
  absl::StatusOr<ir::Program> p = Compile(kClash, "clash", {{"n", "8"}});
  ASSERT_TRUE(p.ok()) << p.status();
  bool changed = false;
  absl::StatusOr<ir::Program> out = StageFragmentStores(*p, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::string text = ir::Print(*out);
  EXPECT_TRUE(absl::StrContains(text, "f_stage2 = T.alloc_shared((64,)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "f_stage2[j * 8 + i] = T.cast(i")) << text;
}

TEST(StageFragmentStores, RefusesInsideAPipelinedLoopWithOrderLists) {
  constexpr char kPipelined[] = R"(
import tilelang.language as T

def piped(n):
    @T.prim_func
    def main(X: T.Tensor((4, n), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment([n], "float32")
            for k in T.Pipelined(4, num_stages=1, order=[0, 1], stage=[0, 0]):
                for i in T.Parallel(n):
                    f[n - 1 - i] = X[k, i]
                for i in T.Parallel(n):
                    Y[i] = f[i]
    return main
)";
  absl::StatusOr<ir::Program> p = Compile(kPipelined, "piped", {{"n", "32"}});
  ASSERT_TRUE(p.ok()) << p.status();
  bool changed = false;
  absl::StatusOr<ir::Program> out = StageFragmentStores(*p, &changed);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "kernel 0 > T.Parallel over i"))
      << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "fragment f")) << out.status();
}

}  // namespace
}  // namespace tilec::inference
