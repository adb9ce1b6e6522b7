// examples/cases.txt: the bindings every example-driven test runs with.
//
// Format (see the header of examples/cases.txt): one case per line,
//   case_name  file.py  function_name  name=value ...
// '#' starts a comment; blank lines are ignored.
#ifndef TILEC_TESTS_TESTING_EXAMPLE_CASES_H_
#define TILEC_TESTS_TESTING_EXAMPLE_CASES_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::testing {

struct ExampleCase {
  std::string name;
  std::string file;  // relative to examples/
  std::string function;
  std::vector<std::pair<std::string, std::string>> bindings;  // in file order
  int line = 0;  // in cases.txt

  // The binding's value; the test fails loudly (aborts with the case and name)
  // when the case does not bind it or it does not parse.
  const std::string& Get(const std::string& name) const;
  int64_t Int(const std::string& name) const;
  double Float(const std::string& name) const;
  bool Bool(const std::string& name) const;  // True / False
};

// Names the case in GoogleTest messages: "gemm_f16_nn_small (examples/cases.txt:27)".
void PrintTo(const ExampleCase& c, std::ostream* os);

// The examples/ folder of the source tree.
std::string ExamplesDir();

// Reads examples/cases.txt. Errors name the line.
absl::StatusOr<std::vector<ExampleCase>> LoadExampleCases();

// The text of a file; NotFound when unreadable.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace tilec::testing

#endif  // TILEC_TESTS_TESTING_EXAMPLE_CASES_H_
