// libFuzzer target: the TileLang frontend on arbitrary source text.
//
// Input: a first line "fn=NAME name=value ..." (the function to build and its
// bindings, as tilec's -D), then the source. The seed corpus is every case of
// examples/cases.txt in this form (benchmarks/fuzz.sh writes it). Any result
// is fine but a crash, a sanitizer report or a hang: errors are statuses.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/frontend/frontend.h"
#include "compiler/frontend/parser.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t eol = input.find('\n');
  std::string_view header = input.substr(0, eol == std::string_view::npos ? input.size() : eol);
  tilec::frontend::SourceFile file{"fuzz.py",
                                   std::string(eol == std::string_view::npos
                                                   ? std::string_view()
                                                   : input.substr(eol + 1))};
  (void)tilec::frontend::Parse(file);
  std::string function = "main";
  tilec::frontend::Bindings bindings;
  while (!header.empty()) {
    const size_t space = header.find(' ');
    const std::string_view word = header.substr(0, space);
    header = space == std::string_view::npos ? std::string_view() : header.substr(space + 1);
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    if (word.substr(0, eq) == "fn") {
      function = std::string(word.substr(eq + 1));
    } else {
      bindings.Set(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
    }
  }
  absl::StatusOr<tilec::ir::Program> program =
      tilec::frontend::CompileTileLang(file, function, bindings);
  if (program.ok()) {
    (void)tilec::ir::Verify(*program);
    (void)tilec::ir::ProgramHash(*program);
  }
  return 0;
}
