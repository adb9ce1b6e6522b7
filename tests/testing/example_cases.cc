#include "tests/testing/example_cases.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tilec::testing {
namespace {

[[noreturn]] void Die(const ExampleCase& c, const std::string& msg) {
  std::fprintf(stderr, "examples/cases.txt:%d: case %s: %s\n", c.line, c.name.c_str(), msg.c_str());
  std::abort();
}

}  // namespace

const std::string& ExampleCase::Get(const std::string& key) const {
  for (const auto& [k, v] : bindings) {
    if (k == key) return v;
  }
  Die(*this, absl::StrCat("no binding for ", key));
}

int64_t ExampleCase::Int(const std::string& key) const {
  int64_t v = 0;
  if (!absl::SimpleAtoi(Get(key), &v)) Die(*this, absl::StrCat(key, " is not an integer"));
  return v;
}

double ExampleCase::Float(const std::string& key) const {
  double v = 0;
  if (!absl::SimpleAtod(Get(key), &v)) Die(*this, absl::StrCat(key, " is not a number"));
  return v;
}

bool ExampleCase::Bool(const std::string& key) const {
  const std::string& v = Get(key);
  if (v == "True") return true;
  if (v == "False") return false;
  Die(*this, absl::StrCat(key, " is not True or False"));
}

void PrintTo(const ExampleCase& c, std::ostream* os) {
  *os << c.name << " (examples/cases.txt:" << c.line << ")";
}

std::string ExamplesDir() { return TILEC_SOURCE_DIR "/examples"; }

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::vector<ExampleCase>> LoadExampleCases() {
  auto text = ReadFile(ExamplesDir() + "/cases.txt");
  if (!text.ok()) return text.status();
  std::vector<ExampleCase> cases;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::vector<std::string> words = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.empty()) continue;
    if (words.size() < 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("examples/cases.txt:", line_no, ": expected case_name file.py function"));
    }
    ExampleCase c{words[0], words[1], words[2], {}, line_no};
    for (size_t i = 3; i < words.size(); ++i) {
      size_t eq = words[i].find('=');
      if (eq == std::string::npos || eq == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("examples/cases.txt:", line_no, ": expected name=value, got ", words[i]));
      }
      c.bindings.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace tilec::testing
