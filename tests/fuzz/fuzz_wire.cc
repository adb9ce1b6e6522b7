// libFuzzer target: the wire-form reader (a serialized tilec.v1.Program, as
// clients send it) through conversion, verification and hashing. Seeds:
// the examples' programs in wire form (benchmarks/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler/ir/hash.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/wire.h"
#include "proto/tilec/v1/ir.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tilec::v1::Program proto;
  if (!tilec::ir::ParseWire(std::string_view(reinterpret_cast<const char*>(data), size), &proto)) {
    return 0;
  }
  absl::StatusOr<tilec::ir::Program> program = tilec::ir::FromProto(proto);
  if (program.ok() && tilec::ir::Verify(*program).ok()) (void)tilec::ir::ProgramHash(*program);
  return 0;
}
