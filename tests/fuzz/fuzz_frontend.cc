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
#include "tests/fuzz/fuzz_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tilec::fuzz::FuzzInput in = tilec::fuzz::ParseFuzzInput(
      std::string_view(reinterpret_cast<const char*>(data), size), "main");
  tilec::frontend::SourceFile file{"fuzz.py", std::move(in.source)};
  (void)tilec::frontend::Parse(file);
  absl::StatusOr<tilec::ir::Program> program =
      tilec::frontend::CompileTileLang(file, in.function, in.bindings);
  if (program.ok()) {
    (void)tilec::ir::Verify(*program);
    (void)tilec::ir::ProgramHash(*program);
  }
  return 0;
}
