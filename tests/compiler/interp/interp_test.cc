// Whole programs: argument binding, dynamic dims, scalar and tile parameters,
// several kernels with a workspace, block order, MakeInputs.
#include "compiler/interp/interp.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/compiler/interp/test_programs.h"

namespace tilec::interp {
namespace {

using ir::BinaryOp;
using ir::DType;
using testing::Global;
using testing::Ints;
using testing::MakeProgram;
using testing::OneBlock;
using testing::RegionOf;

// B = A for A, B of shape [M, 4] with a dynamic M, in 2-row tiles.
ir::Program TiledCopy() {
  ir::Var m = ir::MakeVar("M");
  ir::Buffer a = ir::MakeBuffer("A", DType::kFloat32, {m, ir::IntImm(4)}, ir::Scope::kGlobal);
  ir::Buffer b = ir::MakeBuffer("B", DType::kFloat32, {m, ir::IntImm(4)}, ir::Scope::kGlobal);
  ir::Buffer s = testing::Local("S", DType::kFloat32, {2, 4}, ir::Scope::kShared);
  ir::Var bx = ir::MakeVar("bx");
  std::vector<ir::Expr> origin = {testing::Mul(bx, ir::IntImm(2)), ir::IntImm(0)};
  ir::Stmt body =
      ir::Seq({ir::Allocate(s), ir::Copy(RegionOf(a, origin, Ints({2, 4})), ir::FullRegion(s)),
               ir::Copy(ir::FullRegion(s), RegionOf(b, origin, Ints({2, 4})))});
  ir::Expr grid = ir::Call(ir::CallFn::kCeilDiv, {m, ir::IntImm(2)});
  return MakeProgram({a, b}, testing::Kernel({grid}, {bx}, body), {m});
}

TEST(BindingTest, DynamicDimsComeFromTheArguments) {
  const uint64_t seed = 700;
  for (int64_t m : {1, 5, 8}) {
    std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {m, 4}, seed),
                                Tensor(DType::kFloat32, {m, 4})};
    ASSERT_TRUE(RunProgram(TiledCopy(), args).ok());
    EXPECT_EQ(args[1].bytes(), args[0].bytes()) << "M=" << m << " seed " << seed;
  }
}

TEST(BindingTest, ConflictingAndWrongShapesAreErrors) {
  std::vector<Tensor> args = {Tensor(DType::kFloat32, {5, 4}), Tensor(DType::kFloat32, {6, 4})};
  absl::Status st = RunProgram(TiledCopy(), args);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("dynamic dim M is 5 in tensor A (parameter 0) (dim 0) but 6 in "
                              "tensor B (parameter 1) (dim 0)"),
            std::string::npos)
      << st;

  args = {Tensor(DType::kFloat32, {5, 3}), Tensor(DType::kFloat32, {5, 3})};
  st = RunProgram(TiledCopy(), args);
  EXPECT_NE(st.message().find("tensor A (parameter 0) has shape [5, 3] but the program expects "
                              "[5, 4]"),
            std::string::npos)
      << st;

  args = {Tensor(DType::kFloat16, {5, 4}), Tensor(DType::kFloat32, {5, 4})};
  st = RunProgram(TiledCopy(), args);
  EXPECT_NE(st.message().find("tensor A (parameter 0) is float32 of rank 2, the argument is "
                              "float16[5, 4]"),
            std::string::npos)
      << st;

  args = {Tensor(DType::kFloat32, {5, 4})};
  st = RunProgram(TiledCopy(), args);
  EXPECT_NE(st.message().find("takes 2 arguments, got 1"), std::string::npos) << st;
}

TEST(BindingTest, ScalarAndTileParameters) {
  // out[i] = A[i] * alpha for i < n; block size from the tile parameter.
  ir::Var alpha = ir::MakeVar("alpha", DType::kFloat32), n = ir::MakeVar("n");
  ir::Var block = ir::MakeVar("block");
  ir::Buffer a = Global("A", DType::kFloat32, {8});
  ir::Buffer out = Global("out", DType::kFloat32, {8});
  ir::Var bx = ir::MakeVar("bx"), i = ir::MakeVar("i");
  ir::Expr idx = testing::Add(testing::Mul(bx, block), i);
  ir::Stmt body = ir::For(i, ir::IntImm(0), block, ir::ForKind::kParallel,
                          ir::If(ir::Binary(BinaryOp::kLt, idx, n),
                                 ir::Store(out, {idx}, testing::Mul(ir::Load(a, {idx}), alpha))));
  ir::Program p = MakeProgram({a, out}, testing::Kernel({ir::IntImm(2)}, {bx}, body));
  p.params.push_back(ir::Param{nullptr, alpha});
  p.params.push_back(ir::Param{nullptr, n});
  p.tile_params.push_back(ir::TileParam{block, 4, {}});

  const uint64_t seed = 710;
  std::vector<Tensor> args = {RandomTensor(DType::kFloat32, {8}, seed),
                              Tensor(DType::kFloat32, {8}), Tensor::Scalar(DType::kFloat32, 2.0),
                              Tensor::ScalarInt(DType::kInt64, 6)};
  ASSERT_TRUE(RunProgram(p, args).ok());
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(args[1].GetDouble(k), k < 6 ? 2 * args[0].GetDouble(k) : 0.0)
        << k << " seed " << seed;
  }

  args[2] = Tensor(DType::kFloat32, {1});
  EXPECT_NE(RunProgram(p, args).message().find("scalar alpha (parameter 2) needs a 0-d tensor"),
            std::string::npos);

  p.tile_params[0].value.reset();
  absl::Status st = RunProgram(p, args);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "tile parameter block is unbound; bind it or let tilec recommend one");
}

TEST(KernelTest, KernelsRunInOrderWithAZeroedWorkspace) {
  // Kernel 0: W[0] += A[bx] for each block; kernel 1: out[0] = W[0] * 2.
  ir::Buffer a = Global("A", DType::kFloat32, {4});
  ir::Buffer out = Global("out", DType::kFloat32, {1});
  ir::Buffer w = Global("W", DType::kFloat32, {1});
  ir::Var bx = ir::MakeVar("bx"), b0 = ir::MakeVar("b0");
  auto add = std::make_shared<ir::AtomicAddNode>(RegionOf(w, Ints({0}), Ints({1})), std::nullopt,
                                                 ir::Load(a, {bx}));
  ir::Program p;
  p.name = "two_kernels";
  p.params = {ir::Param{a, nullptr}, ir::Param{out, nullptr}};
  p.body = ir::Seq(
      {ir::Allocate(w), testing::Kernel(Ints({4}), {bx}, add),
       testing::Kernel(
           Ints({1}), {b0},
           ir::Store(out, Ints({0}), testing::Mul(ir::Load(w, Ints({0})), ir::FloatImm(2.0))))});
  Tensor in(DType::kFloat32, {4});
  for (int k = 0; k < 4; ++k) in.SetDouble(k, k + 1);  // integers: exact in any order
  for (bool shuffle : {false, true}) {
    std::vector<Tensor> args = {in, RandomTensor(DType::kFloat32, {1}, 3)};
    RunOptions options;
    options.shuffle_blocks = shuffle;
    ASSERT_TRUE(RunProgram(p, args, options).ok());
    EXPECT_EQ(args[1].GetDouble(0), 20.0) << "shuffle " << shuffle;
  }
}

TEST(KernelTest, ErrorsNameTheKernelAndBlock) {
  ir::Buffer a = Global("A", DType::kFloat32, {8});
  ir::Buffer out = Global("out", DType::kFloat32, {8});
  ir::Var bx = ir::MakeVar("bx"), by = ir::MakeVar("by"), c = ir::MakeVar("c");
  // Kernel 1 reads A[by * 10 + bx]: block (bx=0, by=1) is the first to fail.
  ir::Stmt k0 = testing::Kernel(Ints({1}), {c}, ir::Store(out, Ints({0}), ir::FloatImm(1.0)));
  ir::Stmt k1 = testing::Kernel(
      Ints({2, 3}), {bx, by},
      ir::Store(out, {bx}, ir::Load(a, {testing::Add(testing::Mul(by, ir::IntImm(10)), bx)})));
  ir::Program p = MakeProgram({a, out}, ir::Seq({k0, k1}));
  std::vector<Tensor> args = {Tensor(DType::kFloat32, {8}), Tensor(DType::kFloat32, {8})};
  absl::Status st = RunProgram(p, args);
  EXPECT_EQ(st.message(),
            "in kernel 1 at block (bx=0, by=1): load A[10] is out of bounds of shape [8]");
}

TEST(KernelTest, VariablesOutsideTheirScopeAreRejected) {
  ir::Buffer out = Global("out", DType::kInt32, {1});
  ir::Var stray = ir::MakeVar("stray");
  std::vector<Tensor> args = {Tensor(DType::kInt32, {1})};
  absl::Status st =
      RunProgram(MakeProgram({out}, OneBlock(ir::Store(out, Ints({0}), stray))), args);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("variable stray is used outside its scope"), std::string::npos) << st;

  ir::Buffer unallocated = testing::Local("F", DType::kInt32, {1});
  st = RunProgram(
      MakeProgram({out}, OneBlock(ir::Store(out, Ints({0}), ir::Load(unallocated, Ints({0}))))),
      args);
  EXPECT_NE(st.message().find("buffer F is used outside its scope"), std::string::npos) << st;
}

// Each block b writes a value derived from its own index only: any order
// gives the same result.
ir::Program OrderIndependent() {
  ir::Buffer a = Global("A", DType::kFloat32, {16});
  ir::Buffer out = Global("out", DType::kFloat32, {16});
  ir::Var bx = ir::MakeVar("bx");
  return MakeProgram(
      {a, out},
      testing::Kernel(Ints({16}), {bx},
                      ir::Store(out, {bx}, testing::Mul(ir::Load(a, {bx}), ir::FloatImm(3.0)))));
}

// Each block takes a ticket from a global counter: the result records the
// order the blocks ran in.
ir::Program OrderDependent() {
  ir::Buffer counter = Global("counter", DType::kInt32, {1});
  ir::Buffer out = Global("out", DType::kInt32, {16});
  ir::Var bx = ir::MakeVar("bx");
  ir::Expr ticket = ir::Load(counter, Ints({0}));
  return MakeProgram(
      {counter, out},
      testing::Kernel(
          Ints({16}), {bx},
          ir::Seq({ir::Store(out, {bx}, ticket),
                   ir::Store(counter, Ints({0}), testing::Add(ticket, ir::IntImm(1)))})));
}

TEST(ShuffleTest, CorrectProgramsDoNotNotice) {
  const uint64_t seed = 800;
  std::vector<Tensor> base = {RandomTensor(DType::kFloat32, {16}, seed),
                              Tensor(DType::kFloat32, {16})};
  std::vector<Tensor> in_order = base;
  ASSERT_TRUE(RunProgram(OrderIndependent(), in_order).ok());
  for (uint64_t s = 0; s < 5; ++s) {
    std::vector<Tensor> shuffled = base;
    ASSERT_TRUE(RunProgram(OrderIndependent(), shuffled, {true, s}).ok());
    EXPECT_EQ(shuffled[1], in_order[1]) << "shuffle seed " << s;
  }
}

TEST(ShuffleTest, OrderDependentProgramsDo) {
  std::vector<Tensor> args = {Tensor(DType::kInt32, {1}), Tensor(DType::kInt32, {16})};
  ASSERT_TRUE(RunProgram(OrderDependent(), args).ok());
  for (int k = 0; k < 16; ++k) EXPECT_EQ(args[1].GetInt(k), k);  // in order: bx runs k-th

  int differing = 0;
  for (uint64_t s = 0; s < 5; ++s) {
    std::vector<Tensor> shuffled = {Tensor(DType::kInt32, {1}), Tensor(DType::kInt32, {16})};
    ASSERT_TRUE(RunProgram(OrderDependent(), shuffled, {true, s}).ok());
    std::vector<int64_t> tickets;
    for (int k = 0; k < 16; ++k) tickets.push_back(shuffled[1].GetInt(k));
    differing += shuffled[1] != args[1];
    // Every block ran exactly once.
    std::sort(tickets.begin(), tickets.end());
    for (int k = 0; k < 16; ++k) EXPECT_EQ(tickets[k], k) << "shuffle seed " << s;
    // The same seed gives the same order.
    std::vector<Tensor> again = {Tensor(DType::kInt32, {1}), Tensor(DType::kInt32, {16})};
    ASSERT_TRUE(RunProgram(OrderDependent(), again, {true, s}).ok());
    EXPECT_EQ(again[1], shuffled[1]) << "shuffle seed " << s;
  }
  EXPECT_EQ(differing, 5);
}

TEST(MakeInputsTest, ShapesFromTheValuesAndSeededContents) {
  ir::Program p = TiledCopy();
  ir::Var alpha = ir::MakeVar("alpha", DType::kFloat32), n = ir::MakeVar("n");
  p.params.push_back(ir::Param{nullptr, alpha});
  p.params.push_back(ir::Param{nullptr, n});
  const uint64_t seed = 900;
  auto in = MakeInputs(p, {{"M", 6}, {"n", 3}}, seed);
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ(in->size(), 4u);
  EXPECT_EQ((*in)[0].TypeString(), "float32[6, 4]");
  EXPECT_EQ((*in)[1].TypeString(), "float32[6, 4]");
  EXPECT_NE((*in)[0], (*in)[1]);  // a stream per parameter
  EXPECT_EQ((*in)[2].rank(), 0);
  EXPECT_EQ((*in)[3].GetInt(0), 3);
  EXPECT_EQ(*MakeInputs(p, {{"M", 6}, {"n", 3}}, seed), *in);
  EXPECT_NE((*MakeInputs(p, {{"M", 6}, {"n", 3}}, seed + 1))[0], (*in)[0]);

  // The inputs run as they are.
  std::vector<Tensor> args = *in;
  ASSERT_TRUE(RunProgram(p, args).ok());
  EXPECT_EQ(args[1], args[0]);

  EXPECT_NE(MakeInputs(p, {}, seed).status().message().find("dynamic dim M has no value"),
            std::string::npos);
  EXPECT_NE(MakeInputs(p, {{"M", 6}, {"K", 1}}, seed)
                .status()
                .message()
                .find("no dynamic dim or scalar parameter named K"),
            std::string::npos);
}

}  // namespace
}  // namespace tilec::interp
