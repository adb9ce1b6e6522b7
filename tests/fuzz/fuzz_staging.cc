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
#include "tests/fuzz/fuzz_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tilec::fuzz::FuzzInput in = tilec::fuzz::ParseFuzzInput(
      std::string_view(reinterpret_cast<const char*>(data), size), "build");
  tilec::frontend::SourceFile file{"builder.py", std::move(in.source)};
  constexpr absl::Duration kDeadline = absl::Seconds(2);
  // Sanitizers slow staging several times over; the check is for work that
  // never stops, not for a slow machine.
  constexpr absl::Duration kAllowed = absl::Seconds(10);
  in.bindings.staging.deadline = absl::Now() + kDeadline;
  in.bindings.staging.deadline_reason = "the fuzzer's 2 s";
  const absl::Time start = absl::Now();
  absl::StatusOr<tilec::ir::Program> program =
      tilec::frontend::CompileTileLang(file, in.function, in.bindings);
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
