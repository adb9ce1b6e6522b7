// libFuzzer target: TileLang builders, staged under the budget tilecd sets.
//
// Input: as fuzz_frontend's (a first line "fn=NAME name=value ...", then the
// source). Seeds: the examples, and builders that make Python builtins work
// per element (sorted, sum, min/max, list arithmetic, comparisons and
// containment of nested sequences, str.find/replace/split/join), written by
// fuzz_corpus. Staging runs with a 2-second deadline; it aborts, as a crash
// would, when a call takes longer than its deadline allows (a builtin that
// does not pay for its work, or a loop that never asks the clock) or when
// anything answers INTERNAL (a compiler bug).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/time/clock.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t eol = input.find('\n');
  std::string_view header = input.substr(0, eol == std::string_view::npos ? input.size() : eol);
  tilec::frontend::SourceFile file{
      "builder.py",
      std::string(eol == std::string_view::npos ? std::string_view() : input.substr(eol + 1))};
  std::string function = "build";
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
  constexpr absl::Duration kDeadline = absl::Seconds(2);
  // Sanitizers slow staging several times over; the check is for work that
  // never stops, not for a slow machine.
  constexpr absl::Duration kAllowed = absl::Seconds(10);
  bindings.staging.deadline = absl::Now() + kDeadline;
  bindings.staging.deadline_reason = "the fuzzer's 2 s";
  const absl::Time start = absl::Now();
  absl::StatusOr<tilec::ir::Program> program =
      tilec::frontend::CompileTileLang(file, function, bindings);
  const absl::Duration took = absl::Now() - start;
  if (took > kAllowed) {
    std::fprintf(stderr, "fuzz_staging: staging took %s past a %s deadline\n",
                 absl::FormatDuration(took).c_str(), absl::FormatDuration(kDeadline).c_str());
    std::abort();
  }
  if (!program.ok()) {
    if (program.status().code() == absl::StatusCode::kInternal) {
      std::fprintf(stderr, "fuzz_staging: INTERNAL: %s\n",
                   std::string(program.status().message()).c_str());
      std::abort();
    }
    return 0;
  }
  absl::Status verified = tilec::ir::Verify(*program);
  if (verified.code() == absl::StatusCode::kInternal) std::abort();
  return 0;
}
