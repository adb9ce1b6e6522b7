#include "tests/difftest/generator.h"

#include "tests/difftest/generator_internal.h"

namespace tilec::difftest {

Program Generate(uint64_t seed, const GeneratorOptions& options) {
  return generator_internal::Gen(seed, options).Run();
}

}  // namespace tilec::difftest
