// The example kernels (examples/*.py, bound as listed in examples/cases.txt)
// through the frontend: each builds, verifies, prints as its golden file
// (tests/compiler/frontend/golden/<case>.txt; TILEC_UPDATE_GOLDENS=1 rewrites
// them), and hashes the same from two separate parses. Renaming local names
// in the source keeps the hash; changing a tile size changes it.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

namespace fs = std::filesystem;

using ::tilec::testing::ExampleCase;

fs::path SourceDir() { return fs::path(TILEC_SOURCE_DIR); }

// The golden files are compared byte for byte; a missing one reads as "".
std::string ReadFile(const fs::path& path) {
  return ::tilec::testing::ReadFile(path.string()).value_or("");
}

const std::vector<ExampleCase>& Cases() {
  static const std::vector<ExampleCase> kCases =
      ::tilec::testing::LoadExampleCases().value_or(std::vector<ExampleCase>{});
  return kCases;
}

absl::StatusOr<ir::Program> CompileSource(const ExampleCase& c, const std::string& text) {
  SourceFile file{c.file, text};
  Bindings b;
  for (const auto& [k, v] : c.bindings) b.Set(k, v);
  return CompileTileLang(file, c.function, b);
}

absl::StatusOr<ir::Program> CompileCase(const ExampleCase& c) {
  return CompileSource(c, ReadFile(SourceDir() / "examples" / c.file));
}

// Replaces whole-word occurrences of identifier `from` with `to`.
std::string RenameWord(const std::string& text, const std::string& from, const std::string& to) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  std::string out;
  size_t k = 0;
  while (k < text.size()) {
    if (text.compare(k, from.size(), from) == 0 && (k == 0 || !ident(text[k - 1])) &&
        (k + from.size() == text.size() || !ident(text[k + from.size()]))) {
      out += to;
      k += from.size();
    } else {
      out += text[k++];
    }
  }
  return out;
}

TEST(Examples, CasesFileIsPresent) { EXPECT_GE(Cases().size(), 10u); }

class Example : public ::testing::TestWithParam<size_t> {};

TEST_P(Example, BuildsVerifiesMatchesGoldenAndHashesStably) {
  const ExampleCase& c = Cases()[GetParam()];
  absl::StatusOr<ir::Program> p = CompileCase(c);
  ASSERT_TRUE(p.ok()) << p.status().message();
  absl::Status verified = ir::Verify(*p);
  ASSERT_TRUE(verified.ok()) << verified.message();
  std::string text = ir::Print(*p);

  fs::path golden = SourceDir() / "tests" / "compiler" / "frontend" / "golden" / (c.name + ".txt");
  const char* update = std::getenv("TILEC_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << text;
  } else {
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with TILEC_UPDATE_GOLDENS=1";
    EXPECT_EQ(text, ReadFile(golden)) << "golden " << golden;
  }

  // A second, separate parse builds a program with the same hash and text.
  absl::StatusOr<ir::Program> again = CompileCase(c);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(ir::ProgramHash(*p), ir::ProgramHash(*again));
  EXPECT_EQ(text, ir::Print(*again));
}

TEST_P(Example, ChangingATileSizeChangesTheHash) {
  ExampleCase c = Cases()[GetParam()];
  absl::StatusOr<ir::Program> p = CompileCase(c);
  ASSERT_TRUE(p.ok()) << p.status().message();
  bool changed = false;
  for (auto& [k, v] : c.bindings) {
    if (k.rfind("block_", 0) == 0) {
      v = std::to_string(std::stoll(v) * 2);
      changed = true;
      break;
    }
  }
  ASSERT_TRUE(changed) << c.name << " binds no block_* tile size";
  absl::StatusOr<ir::Program> q = CompileSource(c, ReadFile(SourceDir() / "examples" / c.file));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_NE(ir::ProgramHash(*p), ir::ProgramHash(*q));
}

INSTANTIATE_TEST_SUITE_P(Cases, Example, ::testing::Range<size_t>(0, Cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return Cases()[info.param].name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Example);

// Renaming local variables and buffers (whole words in the source) changes
// the printed program but not its hash.
struct Rename {
  std::string case_name;
  std::vector<std::pair<std::string, std::string>> renames;
};

class RenameInvariance : public ::testing::TestWithParam<Rename> {};

TEST_P(RenameInvariance, SameHash) {
  const Rename& r = GetParam();
  const ExampleCase* c = nullptr;
  for (const ExampleCase& x : Cases()) {
    if (x.name == r.case_name) c = &x;
  }
  ASSERT_TRUE(c) << "no case " << r.case_name << " in examples/cases.txt";
  std::string text = ReadFile(SourceDir() / "examples" / c->file);
  std::string renamed = text;
  for (const auto& [from, to] : r.renames) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    renamed = RenameWord(renamed, from, to);
  }
  absl::StatusOr<ir::Program> p = CompileSource(*c, text);
  ASSERT_TRUE(p.ok()) << p.status().message();
  absl::StatusOr<ir::Program> q = CompileSource(*c, renamed);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_NE(ir::Print(*p), ir::Print(*q));
  for (const auto& [from, to] : r.renames) {
    EXPECT_NE(ir::Print(*q).find(to), std::string::npos) << to;
  }
  EXPECT_EQ(ir::ProgramHash(*p), ir::ProgramHash(*q));
}

INSTANTIATE_TEST_SUITE_P(
    Examples, RenameInvariance,
    ::testing::Values(
        Rename{"gemm_f16_nn_small", {{"A_shared", "a_tile"}, {"ko", "kk"}, {"bx", "col_block"}}},
        Rename{"gemm_eager_small", {{"C_local", "accumulator"}, {"by", "row_block"}}},
        Rename{"flash_attention_causal_small",
               {{"acc_s", "scores_tile"}, {"scores_max", "row_max"}, {"loop_range", "n_tiles"}}},
        Rename{"gqa_decode_ragged", {{"kv_start", "kv_base"}, {"weight_sum", "wsum"}}}),
    [](const ::testing::TestParamInfo<Rename>& info) { return info.param.case_name; });

}  // namespace
}  // namespace tilec::frontend
