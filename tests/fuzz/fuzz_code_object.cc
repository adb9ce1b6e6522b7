// libFuzzer target: the AMD code object reader (ELF sections, notes and the
// MessagePack metadata of compiler/targets/amdgpu/code_object.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/targets/amdgpu/code_object.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tilec::amdgpu::ReadCodeObject(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
