// Random edits of the example kernels (and of their bindings) never crash
// the frontend: every input either builds, verifies and prints, or fails
// with a located error.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/testing/example_cases.h"

namespace tilec::frontend {
namespace {

// Random edits of the example kernels (and of their bindings) never crash
// the frontend: every input either builds or fails with a located error.
TEST(FrontendMutations, RandomMutationsOfExamplesNeverCrash) {
  uint64_t seed = std::random_device{}() | 1;
  if (const char* s = std::getenv("TILEC_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::cout << "seed " << seed << " (set TILEC_TEST_SEED to replay)\n";
  std::mt19937_64 rng(seed);
  struct Example {
    std::string file, function, text;
    Bindings bindings;
  };
  std::vector<Example> examples;
  auto cases = ::tilec::testing::LoadExampleCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  for (const ::tilec::testing::ExampleCase& c : *cases) {
    Example e;
    e.file = c.file;
    e.function = c.function;
    for (const auto& [k, v] : c.bindings) e.bindings.Set(k, v);
    e.text =
        ::tilec::testing::ReadFile(::tilec::testing::ExamplesDir() + "/" + c.file).value_or("");
    if (!e.text.empty()) examples.push_back(std::move(e));
  }
  ASSERT_FALSE(examples.empty());
  static constexpr const char* kSnippets[] = {"T.copy(",
                                              ")",
                                              "(",
                                              "[",
                                              "]",
                                              ":",
                                              ",",
                                              " + ",
                                              " // ",
                                              "-1",
                                              "None",
                                              "T.Kernel(",
                                              "for i in T.Parallel(4):",
                                              "\n",
                                              "    ",
                                              "lambda x: x",
                                              "[x for x in y]",
                                              "while 1:",
                                              "return ",
                                              "T.gemm(",
                                              "block_M",
                                              "= ",
                                              "if ",
                                              "else",
                                              "T.alloc_var(",
                                              "\"",
                                              "**",
                                              "99999999999999999999",
                                              "T.reduce_sum(",
                                              "dim=",
                                              "not ",
                                              "and ",
                                              "yield",
                                              "@T.macro\n"};
  constexpr int kIterations = 300;
  int built = 0;
  for (int it = 0; it < kIterations; ++it) {
    const Example& e = examples[rng() % examples.size()];
    std::string src = e.text;
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
      size_t pos = rng() % (src.size() + 1);
      switch (rng() % 3) {
        case 0: src.erase(pos, rng() % 16); break;
        case 1: src.insert(pos, kSnippets[rng() % std::size(kSnippets)]); break;
        default: src.insert(pos, src.substr(rng() % src.size(), rng() % 32)); break;
      }
    }
    Bindings b = e.bindings;
    if (rng() % 4 == 0)
      b.values[rng() % b.values.size()].second = kSnippets[rng() % std::size(kSnippets)];
    absl::StatusOr<ir::Program> p = CompileTileLang(SourceFile{"fuzz.py", src}, e.function, b);
    if (p.ok()) {
      ++built;
      (void)ir::Verify(*p);
      EXPECT_EQ(ir::ProgramHash(*p).size(), 64u);
      EXPECT_FALSE(ir::Print(*p).empty());
      continue;
    }
    ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument)
        << "seed " << seed << " iteration " << it << ": " << p.status();
    EXPECT_EQ(std::string(p.status().message()).rfind("fuzz.py:", 0), 0u)
        << "seed " << seed << " iteration " << it << ": " << p.status().message();
  }
  std::cout << built << " of " << kIterations << " mutants built\n";
}

}  // namespace
}  // namespace tilec::frontend
