#include "tests/difftest/program.h"

#include "gtest/gtest.h"

namespace tilec::difftest {
namespace {

Program TwoStatementProgram() {
  Program p;
  p.params = {{"M", 33, false, 1, 1, false},
              {"N", 7, true, 1, 1, false},
              {"bm", 16, false, 1, 1, true},
              {"threads", 128, false, 32, 32, true}};
  p.tensors = {{"A", {"M", "N"}, "float16", false}, {"Y0", {"M", "N"}, "float32", true}};
  p.grid = {"T.ceildiv(M, bm)"};
  p.block_vars = {"bx"};
  p.buffers = {{"F0", "fragment", {"bm", "N"}, "float16"}, {"S1", "shared", {"bm"}, "float32"}};
  p.body.push_back(Line("T.copy(A[bx * bm, 0], F0)", {}, {"F0"}));
  auto s = std::make_shared<Stmt>();
  s->kind = Stmt::Kind::kParallel;
  s->vars = {"i", "j"};
  s->extents = {"bm", "N"};
  s->guard = "bx * bm + i < M";
  s->target = "Y0[bx * bm + i, j]";
  s->dtype = "float32";
  s->value = Unary(
      "exp", Binary("*", Load("F0[i, j]", "float16", "F0"), Const("2.0", "float16"), "float16"));
  p.body.push_back(s);
  return p;
}

TEST(ProgramTest, RendersTheGeneratorFunctionWithDynamicDimsFirst) {
  std::string text = TwoStatementProgram().Render();
  EXPECT_NE(text.find("def kernel(N, M=33, bm=16, threads=128):"), std::string::npos) << text;
  EXPECT_NE(text.find("with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:"), std::string::npos)
      << text;
  EXPECT_NE(text.find("F0 = T.alloc_fragment((bm, N), \"float16\")"), std::string::npos) << text;
  // The float16 expression is cast to the float32 target; the literal takes
  // its sibling's type.
  EXPECT_NE(text.find("Y0[bx * bm + i, j] = T.cast(T.exp((F0[i, j] * 2.0)), \"float32\")"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("            for i, j in T.Parallel(bm, N):\n                if bx * bm + i < M:"),
      std::string::npos)
      << text;
}

TEST(ProgramTest, DynamicDimsAreTheParametersWithoutDefault) {
  std::map<std::string, int64_t> dims = TwoStatementProgram().DynamicDims();
  ASSERT_EQ(dims.size(), 1u);
  EXPECT_EQ(dims["N"], 7);
}

TEST(ProgramTest, DefinedBeforeUseRejectsAReadOfAnUndefinedBuffer) {
  Program p = TwoStatementProgram();
  EXPECT_TRUE(p.DefinedBeforeUse());
  p.body.erase(p.body.begin());  // the copy that defines F0
  EXPECT_FALSE(p.DefinedBeforeUse());
}

TEST(ProgramTest, PruneBuffersDropsUnmentionedBuffers) {
  Program p = TwoStatementProgram();
  p.PruneBuffers();
  ASSERT_EQ(p.buffers.size(), 1u);
  EXPECT_EQ(p.buffers[0].name, "F0");
}

TEST(ProgramTest, CloneIsDeep) {
  Program p = TwoStatementProgram();
  Program c = p.Clone();
  c.body[1]->value->args[0] = Const("1.0", "float16");
  c.body[1]->guard = "";
  EXPECT_EQ(p.body[1]->guard, "bx * bm + i < M");
  EXPECT_EQ(p.body[1]->value->args[0]->kind, Expr::Kind::kBinary);
  EXPECT_NE(p.Render(), c.Render());
}

TEST(ProgramTest, StandaloneConstantsOfNarrowTypesAreCast) {
  EXPECT_EQ(Render(*Select("i < j", Const("1.5", "bfloat16"), Load("X[i]", "bfloat16", "X"))),
            "T.if_then_else(i < j, T.cast(1.5, \"bfloat16\"), X[i])");
  EXPECT_EQ(Render(*Binary("max", Load("X[i]", "int32"), Const("3", "int32"), "int32")),
            "T.max(X[i], 3)");
}

}  // namespace
}  // namespace tilec::difftest
