// libFuzzer target: the runtime's artifact metadata reader (<name>.json),
// which every launch trusts once it has parsed. Seeds: the metadata tilec
// writes for the examples (benchmarks/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/artifact.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tilec::runtime::Artifact::Parse(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
