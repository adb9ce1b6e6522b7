#include "runtime/shape_expr.h"

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <random>

#include "compiler/inference/index_expr.h"
#include "compiler/ir/ir.h"
#include "compiler/ir/printer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::runtime {
namespace {

using ::testing::HasSubstr;

TEST(ShapeExpr, EvaluatesWhatThePrinterWrites) {
  struct Case {
    const char* text;
    int64_t value;
  } cases[] = {
      {"T.ceildiv(M, 128)", 8},         {"M * 16 + 4", 16004},
      {"(M + 63) // 64 * 2", 32},       {"-7 // 2", -4},
      {"-7 % 3", 2},                    {"T.truncmod(-7, 3)", -1},
      {"-7 / 2", -3},                   {"T.max(M, N) - T.min(M, N)", 1000 - 72},
      {"M >> 2 << 1", 500},             {"M & 255 | 3 ^ 1", (1000 & 255) | (3 ^ 1)},
      {"T.int64(M) * T.int64(4)", 4000}, {"T.cast(N, \"int64\") * 2", 144},
      {"~N", ~int64_t{72}},             {"1 + 2 * 3", 7},
      // Conditions (requirements): 1 or 0.
      {"M == 1000", 1}, {"M != 1000", 0}, {"M % 64 == 0 or N > 70", 1},
      {"M % 64 == 0 and N > 70", 0}, {"not M < N", 1}, {"not M < N and N <= 72", 1},
      {"M >= 1000 and N >= 73 or True", 1}, {"False or order == 3", 1},
      {"(M == 1000) == (N == 72)", 1}, {"T.ceildiv(M, 128) * 128 >= M", 1},
  };
  const std::map<std::string, int64_t> dims = {{"M", 1000}, {"N", 72}, {"order", 3}};
  for (const Case& c : cases) {
    absl::StatusOr<ShapeExpr> e = ShapeExpr::Parse(c.text);
    ASSERT_TRUE(e.ok()) << c.text << ": " << e.status();
    absl::StatusOr<int64_t> v = e->Eval(dims);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, c.value) << c.text;
  }
}

TEST(ShapeExpr, NamesAndErrors) {
  absl::StatusOr<ShapeExpr> e = ShapeExpr::Parse("T.ceildiv(N, 4) * M");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->names(), (std::vector<std::string>{"M", "N"}));
  EXPECT_FALSE(e->is_name());
  EXPECT_TRUE(ShapeExpr::Parse("M")->is_name());
  EXPECT_TRUE(ShapeExpr::Parse("12")->is_constant());
  EXPECT_EQ(ShapeExpr::Parse("order == 3")->names(), (std::vector<std::string>{"order"}));
  absl::StatusOr<int64_t> unbound = e->Eval({{"M", 1}});
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(unbound.status().message(), HasSubstr("no value for N"));
  absl::StatusOr<int64_t> div0 = ShapeExpr::Parse("M // N")->Eval({{"M", 1}, {"N", 0}});
  ASSERT_FALSE(div0.ok());
  EXPECT_THAT(div0.status().message(), HasSubstr("division by zero"));
  for (const char* bad : {"M +", "T.exp(M)", "A[0]", "T.cast(M, \"float32\")", "(M", "M ) ",
                          "99999999999999999999", "a.b", "M == 1 == 1", "not", "M and"}) {
    absl::StatusOr<ShapeExpr> p = ShapeExpr::Parse(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_THAT(p.status().message(), HasSubstr("metadata expression")) << bad;
    EXPECT_THAT(p.status().message(), HasSubstr("column")) << bad;
  }
  std::string deep(5000, '(');
  EXPECT_FALSE(ShapeExpr::Parse(deep + "1" + std::string(5000, ')')).ok());
}

// Random integer expressions over two dims, printed by the IR printer, read
// back and evaluated by the runtime: the runtime agrees with the compiler's
// own evaluator on every one.
class RandomExpr {
 public:
  RandomExpr(uint64_t seed, ir::Var m, ir::Var n) : rng_(seed), m_(m), n_(n) {}

  ir::Expr Make(int depth) {
    std::uniform_int_distribution<int> pick(0, depth <= 0 ? 2 : 12);
    switch (pick(rng_)) {
      case 0: return ir::IntImm(std::uniform_int_distribution<int>(-9, 300)(rng_));
      case 1: return m_;
      case 2: return n_;
      case 3: return ir::Binary(ir::BinaryOp::kAdd, Make(depth - 1), Make(depth - 1));
      case 4: return ir::Binary(ir::BinaryOp::kSub, Make(depth - 1), Make(depth - 1));
      case 5: return ir::Binary(ir::BinaryOp::kMul, Make(depth - 1), Make(depth - 1));
      case 6: return ir::Binary(ir::BinaryOp::kFloorDiv, Make(depth - 1), NonZero());
      case 7: return ir::Binary(ir::BinaryOp::kFloorMod, Make(depth - 1), NonZero());
      case 8: return ir::Binary(ir::BinaryOp::kMin, Make(depth - 1), Make(depth - 1));
      case 9: return ir::Binary(ir::BinaryOp::kMax, Make(depth - 1), Make(depth - 1));
      case 10: return ir::Call(ir::CallFn::kCeilDiv, {Make(depth - 1), NonZero()});
      case 11: return ir::Binary(ir::BinaryOp::kMod, Make(depth - 1), NonZero());
      default: return ir::Unary(ir::UnaryOp::kNeg, Make(depth - 1));
    }
  }

 private:
  ir::Expr NonZero() { return ir::IntImm(std::uniform_int_distribution<int>(1, 129)(rng_)); }
  std::mt19937_64 rng_;
  ir::Var m_, n_;
};

// Dims M and N and a generator of random expressions over them, from a
// printed seed.
class RandomShapeExprs : public ::testing::Test {
 protected:
  RandomShapeExprs() { std::printf("seed %llu\n", static_cast<unsigned long long>(seed)); }

  const uint64_t seed = std::random_device{}();
  ir::Var m = ir::MakeVar("M", ir::DType::kInt32);
  ir::Var n = ir::MakeVar("N", ir::DType::kInt32);
  RandomExpr gen{seed, m, n};
};

// Random conditions (comparisons of random expressions under not / and /
// or), printed by the IR printer and read back: the runtime's value is the
// one computed here from the compiler's evaluation of each comparison's
// operands.
TEST_F(RandomShapeExprs, AgreeWithThePrinterOnRandomConditions) {
  std::mt19937_64 rng(seed ^ 0xc0d);
  std::map<const ir::VarNode*, int64_t> values;
  // A condition and its value under `values` (nullopt: an operand the
  // compiler cannot evaluate, e.g. a division by zero).
  std::function<std::pair<ir::Expr, std::optional<bool>>(int)> cond =
      [&](int depth) -> std::pair<ir::Expr, std::optional<bool>> {
    const int pick = std::uniform_int_distribution<int>(0, depth <= 0 ? 0 : 3)(rng);
    if (pick == 0) {
      static constexpr ir::BinaryOp kOps[] = {ir::BinaryOp::kEq, ir::BinaryOp::kNe,
                                              ir::BinaryOp::kLt, ir::BinaryOp::kLe,
                                              ir::BinaryOp::kGt, ir::BinaryOp::kGe};
      const ir::BinaryOp op = kOps[std::uniform_int_distribution<int>(0, 5)(rng)];
      ir::Expr a = gen.Make(2), b = gen.Make(2);
      std::optional<int64_t> x = inference::EvalInt(a, values), y = inference::EvalInt(b, values);
      std::optional<bool> v;
      if (x && y) {
        switch (op) {
          case ir::BinaryOp::kEq: v = *x == *y; break;
          case ir::BinaryOp::kNe: v = *x != *y; break;
          case ir::BinaryOp::kLt: v = *x < *y; break;
          case ir::BinaryOp::kLe: v = *x <= *y; break;
          case ir::BinaryOp::kGt: v = *x > *y; break;
          default: v = *x >= *y; break;
        }
      }
      return {ir::Binary(op, a, b), v};
    }
    auto [a, x] = cond(depth - 1);
    if (pick == 1) return {ir::Unary(ir::UnaryOp::kNot, a), x ? std::optional<bool>(!*x) : x};
    auto [b, y] = cond(depth - 1);
    const bool both = pick == 2;
    std::optional<bool> v;
    if (x && y) v = both ? (*x && *y) : (*x || *y);
    return {ir::Binary(both ? ir::BinaryOp::kAnd : ir::BinaryOp::kOr, a, b), v};
  };
  int checked = 0;
  for (int i = 0; i < 1000; ++i) {
    const int64_t mv = std::uniform_int_distribution<int64_t>(1, 300)(rng);
    const int64_t nv = std::uniform_int_distribution<int64_t>(1, 300)(rng);
    values = {{m.get(), mv}, {n.get(), nv}};
    auto [e, want] = cond(3);
    if (!want) continue;
    const std::string text = ir::PrintExpr(e);
    absl::StatusOr<ShapeExpr> parsed = ShapeExpr::Parse(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    absl::StatusOr<int64_t> got = parsed->Eval({{"M", mv}, {"N", nv}});
    ASSERT_TRUE(got.ok()) << text << ": " << got.status();
    ASSERT_EQ(*got, *want ? 1 : 0) << text << " with M=" << mv << " N=" << nv;
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

TEST_F(RandomShapeExprs, AgreeWithTheCompilerOnRandomPrintedExpressions) {
  std::mt19937_64 rng(seed ^ 0x5eed);
  int checked = 0;
  for (int i = 0; i < 2000; ++i) {
    ir::Expr e = gen.Make(4);
    const int64_t mv = std::uniform_int_distribution<int64_t>(1, 5000)(rng);
    const int64_t nv = std::uniform_int_distribution<int64_t>(1, 5000)(rng);
    std::optional<int64_t> want = inference::EvalInt(e, {{m.get(), mv}, {n.get(), nv}});
    if (!want) continue;
    const std::string text = ir::PrintExpr(e);
    absl::StatusOr<ShapeExpr> parsed = ShapeExpr::Parse(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    absl::StatusOr<int64_t> got = parsed->Eval({{"M", mv}, {"N", nv}});
    ASSERT_TRUE(got.ok()) << text << ": " << got.status();
    ASSERT_EQ(*got, *want) << text << " with M=" << mv << " N=" << nv;
    ++checked;
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace tilec::runtime
