// Test support for the recommend tests: example programs parsed with some
// of their tile parameters left unbound.
#ifndef TILEC_TESTS_COMPILER_RECOMMEND_RECOMMEND_TEST_UTIL_H_
#define TILEC_TESTS_COMPILER_RECOMMEND_RECOMMEND_TEST_UTIL_H_

#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/verifier.h"
#include "tests/testing/example_cases.h"

namespace tilec::recommend::testing {

// `source` with the Python defaults of the parameters `names` of function
// `fn` removed (`threads=128,` -> a leading `threads,`), so that leaving them
// unbound leaves them to the recommender. The frontend gives a parameter
// with a default its default, so this is how a test asks for every tile
// parameter of an example to be recommended.
inline std::string StripDefaults(std::string source, const std::string& fn,
                                 const std::set<std::string>& names) {
  const std::string head = "def " + fn + "(";
  for (const std::string& name : names) {
    const size_t begin = source.find(head);
    if (begin == std::string::npos) break;
    const size_t end = source.find("):", begin);  // the end of the signature
    std::string signature = source.substr(begin, end - begin);
    std::regex with_default("\\b" + name + "\\s*=\\s*[^,()]+,\\s*");
    std::smatch m;
    if (!std::regex_search(signature, m, with_default)) continue;
    signature.erase(m.position(0), m.length(0));
    signature.insert(head.size(), name + ", ");
    source.replace(begin, end - begin, signature);
  }
  return source;
}

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
    for (const auto& [k, v] : overrides) bindings.Set(k, v);
    auto program = frontend::CompileTileLang({c.file, StripDefaults(*text, c.function, unbind)},
                                             c.function, bindings);
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
