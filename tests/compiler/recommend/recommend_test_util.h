// Test support for the recommend tests: example programs parsed with some
// of their tile parameters left unbound.
#ifndef TILEC_TESTS_COMPILER_RECOMMEND_RECOMMEND_TEST_UTIL_H_
#define TILEC_TESTS_COMPILER_RECOMMEND_RECOMMEND_TEST_UTIL_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/verifier.h"
#include "tests/testing/example_cases.h"

namespace tilec::recommend::testing {

// The case `name` of examples/cases.txt compiled with the bindings in
// `unbind` dropped (their defaults too) and those in `overrides` replaced
// (or added).
inline absl::StatusOr<ir::Program> ParseExample(
    const std::string& name, const std::set<std::string>& unbind,
    const std::vector<std::pair<std::string, std::string>>& overrides = {}) {
  auto cases = tilec::testing::LoadExampleCases();
  if (!cases.ok()) return cases.status();
  for (const tilec::testing::ExampleCase& c : *cases) {
    if (c.name != name) continue;
    auto text = tilec::testing::ReadFile(tilec::testing::ExamplesDir() + "/" + c.file);
    if (!text.ok()) return text.status();
    frontend::Bindings bindings;
    for (const auto& [k, v] : c.bindings) {
      if (!unbind.count(k)) bindings.Set(k, v);
    }
    bindings.unbound = unbind;  // -U: their Python defaults do not apply
    for (const auto& [k, v] : overrides) {
      bindings.Set(k, v);
      bindings.unbound.erase(k);
    }
    auto program = frontend::CompileTileLang({c.file, *text}, c.function, bindings);
    if (!program.ok()) return program.status();
    if (absl::Status st = ir::Verify(*program); !st.ok()) return st;
    return program;
  }
  return absl::NotFoundError("no example case " + name);
}

// Compiles a kernel written inline in a test.
inline absl::StatusOr<ir::Program> ParseSource(
    const std::string& source, const std::string& fn,
    const std::vector<std::pair<std::string, std::string>>& bind) {
  frontend::Bindings bindings;
  for (const auto& [k, v] : bind) bindings.Set(k, v);
  auto program = frontend::CompileTileLang({"test.py", source}, fn, bindings);
  if (!program.ok()) return program.status();
  if (absl::Status st = ir::Verify(*program); !st.ok()) return st;
  return program;
}

}  // namespace tilec::recommend::testing

#endif  // TILEC_TESTS_COMPILER_RECOMMEND_RECOMMEND_TEST_UTIL_H_
