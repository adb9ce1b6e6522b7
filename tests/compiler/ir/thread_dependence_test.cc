// ThreadDependence::Differs: which values of a per-thread kernel may differ
// between threads. Thread-private variables assigned only values the same in
// every thread, under control the same in every thread, do not; the rest,
// and what is computed from them, do.
#include "compiler/ir/thread_dependence.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace tilec::ir {
namespace {

constexpr DType kI32 = DType::kInt32;

Expr I(int64_t v) { return IntImm(v); }
Expr Tx() { return Call(CallFn::kThreadIndex, {}); }
Expr Lt(Expr a, Expr b) { return Binary(BinaryOp::kLt, std::move(a), std::move(b)); }
Expr Add(Expr a, Expr b) { return Binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Buffer Var(const char* name) { return MakeBuffer(name, kI32, {I(1)}, Scope::kVar); }
Expr Read(const Buffer& b) { return Load(b, {I(0)}); }
Stmt Set(const Buffer& b, Expr v) { return Store(b, {I(0)}, std::move(v)); }

struct Kernel {
  Buffer shared = MakeBuffer("S", kI32, {I(64)}, Scope::kShared);
  Buffer from_shared = Var("from_shared");      // S[0]
  Buffer from_thread = Var("from_thread");      // S[tx]
  Buffer chained = Var("chained");              // from_thread + 1, assigned before it
  Buffer under_branch = Var("under_branch");    // 1 under `if tx < 8`
  Buffer under_uniform = Var("under_uniform");  // 1 under `if from_shared < 3`
  Buffer prev = Var("prev");                    // an atomic's old value
  Buffer counted = Var("counted");              // += 1 in a loop of uniform bounds
  Stmt body;

  Kernel() {
    auto atomic = std::make_shared<AtomicAddNode>(Region{shared, {I(0)}, {I(1)}}, std::nullopt,
                                                  I(1), AtomicOp::kAdd, prev);
    body = Seq({
        Allocate(from_shared, I(0)),
        Allocate(from_thread, I(0)),
        Allocate(chained, I(0)),
        Allocate(under_branch, I(0)),
        Allocate(under_uniform, I(0)),
        Allocate(prev),
        Allocate(counted, I(0)),
        Set(chained, Add(Read(from_thread), I(1))),
        Set(from_shared, Load(shared, {I(0)})),
        Set(from_thread, Load(shared, {Tx()})),
        If(Lt(Tx(), I(8)), Set(under_branch, I(1))),
        If(Lt(Read(from_shared), I(3)), Set(under_uniform, I(1))),
        atomic,
        For(MakeVar("k"), I(0), Read(from_shared), ForKind::kSerial,
            Set(counted, Add(Read(counted), I(1)))),
    });
  }
};

TEST(ThreadDependence, PrivateValuesAssignedTheSameInEveryThreadDoNotDiffer) {
  Kernel k;
  ThreadDependence d(k.body);
  EXPECT_FALSE(d.Differs(Read(k.from_shared)));
  EXPECT_FALSE(d.Differs(Read(k.under_uniform)));
  EXPECT_FALSE(d.Differs(Read(k.counted)));
  EXPECT_FALSE(d.Differs(Load(k.shared, {Read(k.from_shared)})));

  EXPECT_TRUE(d.Differs(Tx()));
  EXPECT_TRUE(d.Differs(Read(k.from_thread)));
  EXPECT_TRUE(d.Differs(Read(k.chained))) << "assigned from a differing variable before it is";
  EXPECT_TRUE(d.Differs(Read(k.under_branch))) << "assigned under a branch on the thread";
  EXPECT_TRUE(d.Differs(Read(k.prev))) << "an atomic's old value";
  EXPECT_TRUE(d.Differs(Load(k.shared, {Read(k.from_thread)})));
}

TEST(ThreadDependence, ControlIsDivergentOnlyWhenItsValueDiffers) {
  Kernel k;
  ThreadDependence d(k.body);
  const Stmt uniform = If(Lt(Read(k.counted), I(4)), Set(k.from_shared, I(0)));
  const Stmt differing = If(Lt(Read(k.chained), I(4)), Set(k.from_shared, I(0)));
  EXPECT_FALSE(d.Divergent(uniform));
  EXPECT_TRUE(d.Divergent(differing));
  // Both still read per-thread storage: every thread holds its own copy.
  EXPECT_TRUE(d.PerThread(uniform));
  EXPECT_TRUE(d.PerThread(differing));
}

}  // namespace
}  // namespace tilec::ir
