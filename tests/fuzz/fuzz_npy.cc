// libFuzzer target: the .npy reader (tilec run --in, the worker's inputs).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/interp/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)tilec::interp::DecodeNpy(bytes);
  (void)tilec::interp::DecodeNpyShape(bytes);
  return 0;
}
