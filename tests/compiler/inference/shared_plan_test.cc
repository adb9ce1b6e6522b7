#include "compiler/inference/shared_plan.h"

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/visitor.h"
#include "gtest/gtest.h"

namespace tilec::inference {
namespace {

absl::StatusOr<ir::Program> Compile(const std::string& text, const std::string& fn) {
  frontend::SourceFile file{"plan.py", text};
  return frontend::CompileTileLang(file, fn, frontend::Bindings());
}

const ir::KernelNode* FirstKernel(const ir::Program& p) {
  struct V : ir::IRVisitor {
    const ir::KernelNode* k = nullptr;
    void Visit(const ir::Stmt& s) override {
      if (!s || k) return;
      if (const auto* n = s->as<ir::KernelNode>()) k = n;
      ir::IRVisitor::Visit(s);
    }
  } v;
  v.Visit(p.body);
  return v.k;
}

std::map<std::string, LiveRange> ByName(const std::map<const ir::BufferNode*, LiveRange>& m) {
  std::map<std::string, LiveRange> out;
  for (const auto& [b, r] : m) out[b->name] = r;
  return out;
}

// Statements (top level of the kernel body): 0-4 the allocations, 5 copy
// into A_s, 6 the loop (reads A_s and B_s), 7 copy into C_s, 8 copy out of
// C_s. U_s is never accessed; the annotation does not count.
constexpr char kPhases[] = R"(
import tilelang.language as T

def phases():
    @T.prim_func
    def main(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 64), "float32")
            B_s = T.alloc_shared((64, 64), "float32")
            C_s = T.alloc_shared((64, 64), "float32")
            U_s = T.alloc_shared((64, 64), "float32")
            T.annotate_layout({C_s: T.Layout((64, 64), lambda i, j: (i, j))})
            T.copy(X, A_s)
            for k in T.serial(2):
                for i, j in T.Parallel(64, 64):
                    B_s[i, j] = A_s[i, j] + k
            T.copy(B_s, C_s)
            T.copy(C_s, Y)
    return main
)";

TEST(SharedLiveRanges, CountTopLevelStatementsAndWholeLoops) {
  absl::StatusOr<ir::Program> p = Compile(kPhases, "phases");
  ASSERT_TRUE(p.ok()) << p.status();
  const ir::KernelNode* k = FirstKernel(*p);
  ASSERT_NE(k, nullptr);
  std::map<std::string, LiveRange> live = ByName(SharedLiveRanges(k->body));
  ASSERT_EQ(live.size(), 4u);
  EXPECT_EQ(live["A_s"].first, 5);
  EXPECT_EQ(live["A_s"].last, 6);
  EXPECT_EQ(live["B_s"].first, 6);
  EXPECT_EQ(live["B_s"].last, 7);
  EXPECT_EQ(live["C_s"].first, 7);  // the annotation at 4 is not an access
  EXPECT_EQ(live["C_s"].last, 8);
  EXPECT_FALSE(live["U_s"].accessed());
}

TEST(PlanShared, ReusesTheBytesOfBuffersThatAreDeadAndKeepsLiveOnesApart) {
  absl::StatusOr<ir::Program> p = Compile(kPhases, "phases");
  ASSERT_TRUE(p.ok()) << p.status();
  const ir::KernelNode* k = FirstKernel(*p);
  std::map<const ir::BufferNode*, LiveRange> live = SharedLiveRanges(k->body);
  std::vector<SharedRequest> requests;
  std::map<std::string, const ir::BufferNode*> named;
  for (const auto& [b, r] : live) named[b->name] = b;
  for (const char* n : {"A_s", "B_s", "C_s", "U_s"}) requests.push_back({named[n], 16384});
  SharedPlan plan = PlanShared(requests, live, 128);
  EXPECT_EQ(plan.unshared_bytes, 4 * 16384);
  // A_s and C_s are never live together; B_s overlaps both.
  EXPECT_EQ(plan.total_bytes, 2 * 16384);
  EXPECT_TRUE(plan.Overlap(named["A_s"], named["C_s"]));
  EXPECT_FALSE(plan.Overlap(named["A_s"], named["B_s"]));
  EXPECT_FALSE(plan.Overlap(named["B_s"], named["C_s"]));
  EXPECT_EQ(plan.Find(named["U_s"])->offset, 0);
  EXPECT_FALSE(plan.Find(named["U_s"])->live.accessed());
}

TEST(PlanShared, AlignsEveryOffset) {
  std::vector<SharedRequest> requests;
  std::map<const ir::BufferNode*, LiveRange> live;
  std::vector<std::unique_ptr<char>> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(std::make_unique<char>());
    const auto* b = reinterpret_cast<const ir::BufferNode*>(keys.back().get());
    requests.push_back({b, 100});
    live[b] = {0, 0};
  }
  SharedPlan plan = PlanShared(requests, live, 128);
  EXPECT_EQ(plan.slots[0].offset, 0);
  EXPECT_EQ(plan.slots[1].offset, 128);
  EXPECT_EQ(plan.slots[2].offset, 256);
  EXPECT_EQ(plan.total_bytes, 384);
}

// Random requests and ranges: no two buffers live in the same statement
// share a byte, offsets are aligned, the total covers every slot and never
// exceeds side-by-side placement.
TEST(PlanShared, RandomPlansNeverOverlapLiveBuffers) {
  const unsigned seed = 20261126;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 500; ++round) {
    const int n = 1 + static_cast<int>(rng() % 12);
    std::vector<std::unique_ptr<char>> keys;
    std::vector<SharedRequest> requests;
    std::map<const ir::BufferNode*, LiveRange> live;
    for (int i = 0; i < n; ++i) {
      keys.push_back(std::make_unique<char>());
      const auto* b = reinterpret_cast<const ir::BufferNode*>(keys.back().get());
      requests.push_back({b, 1 + static_cast<int64_t>(rng() % 5000)});
      if (rng() % 8 == 0) continue;  // never accessed
      int first = static_cast<int>(rng() % 20);
      int last = first + static_cast<int>(rng() % 6);
      live[b] = {first, last};
    }
    const int64_t align = int64_t{1} << (rng() % 8);
    SharedPlan plan = PlanShared(requests, live, align);
    ASSERT_EQ(plan.slots.size(), requests.size());
    for (size_t i = 0; i < plan.slots.size(); ++i) {
      const SharedSlot& a = plan.slots[i];
      EXPECT_EQ(a.offset % align, 0) << "round " << round;
      EXPECT_LE(a.offset + a.bytes, plan.total_bytes) << "round " << round;
      for (size_t j = i + 1; j < plan.slots.size(); ++j) {
        const SharedSlot& b = plan.slots[j];
        if (!a.live.Overlaps(b.live)) continue;
        EXPECT_FALSE(a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes)
            << "round " << round << ": slots " << i << " and " << j << " are live together";
      }
    }
    EXPECT_LE(plan.total_bytes, plan.unshared_bytes) << "round " << round;
  }
}

}  // namespace
}  // namespace tilec::inference
