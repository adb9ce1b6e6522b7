#include "compiler/recommend/space.h"

#include <set>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/compiler/recommend/recommend_test_util.h"

namespace tilec::recommend {
namespace {

using testing::ParseExample;
using testing::ParseSource;

const HardwareProfile& Profile(const std::string& target) {
  static std::map<std::string, HardwareProfile> cache;
  if (!cache.count(target)) cache[target] = *FindProfile(BuiltinProfiles(), target);
  return cache[target];
}

const SearchedParam* Find(const SearchSpace& s, const std::string& name) {
  for (const SearchedParam& p : s.searched) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST(SpaceTest, GemmDefaultsByRole) {
  // M = N = 128, K = 64: sizes are capped by the tensor dims they tile.
  auto program =
      ParseExample("gemm_f16_nn_small", {"block_M", "block_N", "block_K", "threads", "num_stages"});
  ASSERT_TRUE(program.ok()) << program.status();
  auto space = BuildSearchSpace(*program, Profile("h100"));
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_TRUE(space->deduced.empty());
  ASSERT_EQ(space->searched.size(), 5u);
  EXPECT_EQ(Find(*space, "block_M")->values, (std::vector<int64_t>{16, 32, 64, 128}));
  EXPECT_EQ(Find(*space, "block_K")->values, (std::vector<int64_t>{16, 32, 64}));
  EXPECT_EQ(Find(*space, "threads")->role, ParamRole::kThreads);
  EXPECT_EQ(Find(*space, "threads")->values, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(Find(*space, "num_stages")->values, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(space->Size(), 4 * 4 * 3 * 6 * 4);
  // Wavefronts of 64 and 2 stages on the MI300X.
  auto amd = BuildSearchSpace(*program, Profile("mi300x"));
  ASSERT_TRUE(amd.ok());
  EXPECT_EQ(Find(*amd, "threads")->values, (std::vector<int64_t>{64, 128, 256, 512, 1024}));
  EXPECT_EQ(Find(*amd, "num_stages")->values, (std::vector<int64_t>{1, 2}));
  // Configs enumerate the product, last parameter fastest, all distinct.
  std::set<Config> seen;
  for (int64_t i = 0; i < space->Size(); ++i) seen.insert(space->At(i));
  EXPECT_EQ(static_cast<int64_t>(seen.size()), space->Size());
}

constexpr char kTiedKernel[] = R"(
import tilelang.language as T

def tied(M, N, bm, bm2, bn, bn2, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            S = T.alloc_shared((bm, bn), "float16")
            R = T.alloc_shared((bm2, bn2), "float16")
            T.copy(A[by * bm, bx * bn], S)
            T.copy(S, R)
            T.copy(R, B[by * bm, bx * bn])
    return main
)";

TEST(SpaceTest, ShapeEqualitiesDeduceParameters) {
  // bm2 == bm and bn2 == bn through the copy S -> R; bn2 fixed as well when
  // bn is bound.
  auto program = ParseSource(kTiedKernel, "tied", {{"M", "256"}, {"N", "256"}, {"bn", "32"}});
  ASSERT_TRUE(program.ok()) << program.status();
  auto space = BuildSearchSpace(*program, Profile("a100"));
  ASSERT_TRUE(space.ok()) << space.status();
  std::map<std::string, DeducedParam> deduced;
  for (const DeducedParam& d : space->deduced) deduced[d.name] = d;
  ASSERT_TRUE(deduced.count("bm2"));
  EXPECT_EQ(deduced["bm2"].equals, "bm");
  EXPECT_TRUE(absl::StrContains(deduced["bm2"].reason, "T.copy")) << deduced["bm2"].reason;
  ASSERT_TRUE(deduced.count("bn2"));
  EXPECT_EQ(deduced["bn2"].value, 32);
  ASSERT_NE(Find(*space, "bm"), nullptr);
  EXPECT_EQ(Find(*space, "bn2"), nullptr);
  for (int64_t i = 0; i < space->Size(); ++i) {
    Config c = space->At(i);
    EXPECT_EQ(c.at("bm2"), c.at("bm"));
    EXPECT_EQ(c.at("bn2"), 32);
  }
}

TEST(SpaceTest, DeclaredCandidatesAndDivisibility) {
  auto program = ParseExample("gemm_f16_nn_small", {"block_M", "block_N", "threads"});
  ASSERT_TRUE(program.ok()) << program.status();
  for (ir::TileParam& tp : program->tile_params) {
    if (tp.var && tp.var->name == "block_N") tp.candidates = {48, 64, 96};
    if (tp.var && tp.var->name == "block_M") tp.candidates = {8, 24, 32};  // only 32 is 16k
    if (tp.var && tp.var->name == "threads") tp.candidates = {100, 128, 256};
  }
  auto space = BuildSearchSpace(*program, Profile("h100"));
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(Find(*space, "block_N")->values, (std::vector<int64_t>{48, 64, 96}));
  EXPECT_EQ(Find(*space, "block_N")->origin, "declared candidates");
  EXPECT_EQ(Find(*space, "threads")->values, (std::vector<int64_t>{128, 256}));
  ASSERT_EQ(space->deduced.size(), 1u);
  EXPECT_EQ(space->deduced[0].name, "block_M");
  EXPECT_EQ(space->deduced[0].value, 32);
  EXPECT_TRUE(absl::StrContains(space->deduced[0].reason, "multiple of 16"))
      << space->deduced[0].reason;
}

}  // namespace
}  // namespace tilec::recommend
