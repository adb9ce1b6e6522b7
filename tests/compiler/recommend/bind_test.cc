#include "compiler/recommend/bind.h"

#include "absl/strings/match.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/compiler/recommend/recommend_test_util.h"

namespace tilec::recommend {
namespace {

using testing::ParseExample;

TEST(BindTest, BindingEqualsParsingWithTheValues) {
  auto unbound = ParseExample("gemm_f16_nn_small", {"block_M", "block_N", "block_K"});
  ASSERT_TRUE(unbound.ok()) << unbound.status();
  int unbound_params = 0;
  for (const ir::TileParam& tp : unbound->tile_params) unbound_params += !tp.value;
  EXPECT_EQ(unbound_params, 3);
  auto bound = BindTileParams(*unbound, {{"block_M", 32}, {"block_N", 64}, {"block_K", 16}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  ASSERT_TRUE(ir::Verify(*bound).ok()) << ir::Verify(*bound);
  for (const ir::TileParam& tp : bound->tile_params) EXPECT_TRUE(tp.value) << tp.var->name;
  auto direct = ParseExample("gemm_f16_nn_small", {},
                             {{"block_M", "32"}, {"block_N", "64"}, {"block_K", "16"}});
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(ir::ProgramHash(*bound), ir::ProgramHash(*direct));
  // The input is untouched.
  for (const ir::TileParam& tp : unbound->tile_params) {
    if (tp.var->name == "block_M") {
      EXPECT_FALSE(tp.value);
    }
  }
}

TEST(BindTest, RejectsUnknownNamesAndBadValues) {
  auto unbound = ParseExample("gemm_f16_nn_small", {"block_M"});
  ASSERT_TRUE(unbound.ok()) << unbound.status();
  auto bad = BindTileParams(*unbound, {{"block_Q", 32}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "block_Q")) << bad.status();
  // block_N is bound already: not a parameter one can bind again.
  EXPECT_FALSE(BindTileParams(*unbound, {{"block_N", 32}}).ok());
  EXPECT_FALSE(BindTileParams(*unbound, {{"block_M", 0}}).ok());
}

}  // namespace
}  // namespace tilec::recommend
