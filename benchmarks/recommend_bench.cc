// Recommendation latency per example: the whole of Recommend (deduction,
// the search space, ranking every config, lowering the top ones) for the
// GEMM, FlashAttention and GQA decode examples with their block sizes (and
// threads and num_stages, their defaults dropped) left unbound, on the H100
// SXM and MI300X profiles. The goal is under 50 ms for
// a GEMM space.
//
//   build-*/benchmarks/recommend_bench [--benchmark_filter=gemm]
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "benchmark/benchmark.h"
#include "compiler/recommend/recommend.h"
#include "tests/compiler/recommend/recommend_test_util.h"

namespace tilec::recommend {
namespace {

ir::Program Load(const std::string& case_name, const std::set<std::string>& unbind) {
  auto program = testing::ParseExample(case_name, unbind);
  if (!program.ok()) {
    std::fprintf(stderr, "%s: %s\n", case_name.c_str(),
                 std::string(program.status().message()).c_str());
    std::exit(1);
  }
  return *program;
}

void Run(benchmark::State& state, const std::string& case_name, const std::set<std::string>& unbind,
         const std::string& target) {
  const ir::Program program = Load(case_name, unbind);
  const HardwareProfile profile = *FindProfile(BuiltinProfiles(), target);
  RecommendOptions options;
  int64_t configs = 0;
  for (auto _ : state) {
    auto report = RecommendWithReport(program, profile, options);
    if (!report.ok()) {
      state.SkipWithError(std::string(report.status().message()).c_str());
      return;
    }
    configs = report->configs;
    benchmark::DoNotOptimize(report->recommendations.data());
  }
  state.counters["configs"] = static_cast<double>(configs);
}

const std::set<std::string> kGemm = {"block_M", "block_N", "block_K", "threads", "num_stages"};
const std::set<std::string> kFlash = {"block_M", "block_N", "num_stages", "threads"};
const std::set<std::string> kDecode = {"block_N", "block_H", "num_stages"};

BENCHMARK_CAPTURE(Run, gemm_h100, "gemm_f16_nn_small", kGemm, "h100")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, gemm_mi300x, "gemm_f16_nn_small", kGemm, "mi300x")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, flash_attention_h100, "flash_attention_small", kFlash, "h100")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, gqa_decode_h100, "gqa_decode_small", kDecode, "h100")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tilec::recommend

BENCHMARK_MAIN();
