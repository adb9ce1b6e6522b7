// The input format of the TileLang fuzz targets (fuzz_frontend,
// fuzz_staging): a first line "fn=NAME name=value ..." naming the function
// to build and its bindings (as tilec's -D), then the source.
#ifndef TILEC_TESTS_FUZZ_FUZZ_HEADER_H_
#define TILEC_TESTS_FUZZ_FUZZ_HEADER_H_

#include <string>
#include <string_view>

#include "compiler/frontend/frontend.h"

namespace tilec::fuzz {

struct FuzzInput {
  std::string function;  // `default_function` when the header names none
  frontend::Bindings bindings;
  std::string source;
};

inline FuzzInput ParseFuzzInput(std::string_view input, std::string default_function) {
  FuzzInput out;
  out.function = std::move(default_function);
  const size_t eol = input.find('\n');
  std::string_view header = input.substr(0, eol == std::string_view::npos ? input.size() : eol);
  if (eol != std::string_view::npos) out.source = std::string(input.substr(eol + 1));
  while (!header.empty()) {
    const size_t space = header.find(' ');
    const std::string_view word = header.substr(0, space);
    header = space == std::string_view::npos ? std::string_view() : header.substr(space + 1);
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    if (word.substr(0, eq) == "fn") {
      out.function = std::string(word.substr(eq + 1));
    } else {
      out.bindings.Set(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
    }
  }
  return out;
}

}  // namespace tilec::fuzz

#endif  // TILEC_TESTS_FUZZ_FUZZ_HEADER_H_
