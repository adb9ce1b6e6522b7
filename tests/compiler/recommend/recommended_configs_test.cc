// The top recommendation is a config that works: for the GEMM,
// FlashAttention and GQA/MLA decode examples with their block sizes, threads
// and num_stages left unbound (-U), the first-ranked config for h100_sxm
// (sm_90a), a100 (sm_80) and mi300x (gfx942), bound as Compile binds it
// (auto_bind.h), compiles (NVRTC; clang-19 for AMD) without spills or scratch
// and runs on the SIMT emulator matching
// the reference interpreter on random inputs. Set TILEC_TEST_SEED to
// reproduce a run.
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/hash.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/targets/cuda/artifact.h"
#include "gtest/gtest.h"
#include "tests/compiler/targets/cuda/emit_testing.h"
#include "tests/testing/example_cases.h"

namespace tilec::recommend {
namespace {

struct Case {
  std::string example;  // a case of examples/cases.txt
  std::set<std::string> unbind;
  std::string target;  // the profile is the target's own
  // Bindings of the example replaced (the float8 cases with AMD's types).
  std::map<std::string, std::string> with = {};
};

// The example with the parameters in `unbind` left unbound (their -D
// dropped, their Python defaults ignored).
absl::StatusOr<ir::Program> Parse(const Case& c) {
  absl::StatusOr<tilec::testing::ExampleCase> e = tilec::testing::FindExampleCase(c.example);
  if (!e.ok()) return e.status();
  absl::StatusOr<std::string> text =
      tilec::testing::ReadFile(tilec::testing::ExamplesDir() + "/" + e->file);
  if (!text.ok()) return text.status();
  frontend::Bindings bindings;
  for (const auto& [k, v] : e->bindings) {
    if (!c.unbind.count(k)) bindings.Set(k, c.with.count(k) ? c.with.at(k) : v);
  }
  bindings.unbound = c.unbind;
  return tilec::testing::CompileWithBindings("examples/" + e->file, *text, e->function, bindings);
}

class TopRecommendation : public ::testing::TestWithParam<Case> {};

TEST_P(TopRecommendation, CompilesWithoutSpillsAndMatchesTheInterpreter) {
  const Case& c = GetParam();
  absl::StatusOr<ir::Program> program = Parse(c);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_TRUE(HasUnboundTileParams(*program));
  for (const ir::TileParam& tp : program->tile_params) {
    if (c.unbind.count(tp.var->name)) {
      EXPECT_FALSE(tp.value) << tp.var->name;
    }
  }
  absl::StatusOr<HardwareProfile> profile = ProfileForTarget(BuiltinProfiles(), c.target, "");
  ASSERT_TRUE(profile.ok()) << profile.status();
  absl::StatusOr<AutoBinding> bound =
      BindTopRecommendation(*program, *profile, absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->profile_id, profile->id());
  EXPECT_FALSE(HasUnboundTileParams(bound->program));
  for (const std::string& name : c.unbind) EXPECT_TRUE(bound->config.count(name)) << name;
  std::printf("%s on %s: %s (predicted %.1f us)\n", c.example.c_str(), profile->id().c_str(),
              ConfigText(bound->config).c_str(), bound->predicted_us);

  // Compiles for the target (NVRTC; clang-19 for AMD), without spills.
  absl::StatusOr<cuda::CudaTarget> target = cuda::CudaTarget::FromName(c.target);
  ASSERT_TRUE(target.ok()) << target.status();
  absl::StatusOr<cuda::CudaArtifact> artifact = cuda::BuildCudaArtifact(bound->program, *target);
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  ASSERT_EQ(artifact->ptxas.size(), artifact->source.kernels.size());
  for (const cuda::PtxasKernelInfo& k : artifact->ptxas) {
    EXPECT_GT(k.registers, 0) << k.name << ": no register count from the toolchain";
    if (target->amd) {
      EXPECT_EQ(k.stack_frame_bytes, 0) << k.name << " uses scratch";
    }
    EXPECT_EQ(k.spill_store_bytes, 0) << k.name;
    EXPECT_EQ(k.spill_load_bytes, 0) << k.name;
    std::printf("  %s: %d registers, spills %lld/%lld B\n", k.name.c_str(), k.registers,
                static_cast<long long>(k.spill_store_bytes),
                static_cast<long long>(k.spill_load_bytes));
  }
  // The artifact's config names the recommended values.
  for (const auto& [name, value] : bound->config) {
    bool found = false;
    for (const auto& [n, v] : artifact->config) found |= n == name && v == value;
    EXPECT_TRUE(found) << name << "=" << value;
  }

  // The very same source on the emulator matches the interpreter.
  tilec::testing::ExpectEmulatorMatchesInterpreter(bound->program, artifact->source,
                                                   {.seed = tilec::testing::TestSeed(20261122)});
}

const std::set<std::string> kGemmTiles = {"block_M", "block_N", "block_K", "threads",
                                          "num_stages"};
const std::set<std::string> kAttentionTiles = {"block_M", "block_N", "threads", "num_stages"};
const std::set<std::string> kDecodeTiles = {"block_N", "block_H", "threads", "num_stages"};

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (const std::string target : {"sm_90a", "sm_80", "gfx942", "gfx90a"}) {
    out.push_back({"gemm_f16_nn_small", kGemmTiles, target});
    out.push_back({"gemm_f16_nn_ragged", kGemmTiles, target});
    out.push_back({"flash_attention_small", kAttentionTiles, target});
    out.push_back({"gqa_decode_small", kDecodeTiles, target});
    out.push_back({"mla_decode_small", kDecodeTiles, target});
  }
  // gfx942's float8 (fnuz) on the float8 MFMA.
  out.push_back({"gemm_fp8_e4m3_nt_small", kGemmTiles, "gfx942",
                 {{"a_dtype", "float8_e4m3fnuz"}, {"b_dtype", "float8_e4m3fnuz"}}});
  out.push_back({"gemm_fp8_mixed_nn_ragged", kGemmTiles, "gfx942",
                 {{"a_dtype", "float8_e4m3fnuz"}, {"b_dtype", "float8_e5m2fnuz"}}});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Examples, TopRecommendation, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.example + "_" + info.param.target +
                                  (info.param.with.empty() ? "" : "_fnuz");
                         });

}  // namespace
}  // namespace tilec::recommend
