// libFuzzer target: what tilecd does with a CompileRequest before it
// compiles: the request parsed from its wire bytes, its program (TileLang
// source through the frontend, or a wire-form program) verified under the
// server's limits, its remembered-response key. Seeds: requests for the
// examples (benchmarks/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/ir/hash.h"
#include "compiler/ir/wire.h"
#include "proto/tilec/v1/service.pb.h"
#include "server/request_program.h"
#include "server/response_memo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)tilec::server::ResponseMemo::KeyOf(bytes);
  tilec::v1::CompileRequest request;
  if (!tilec::ir::ParseWire(bytes, &request)) return 0;
  tilec::server::CoreLimits limits;
  limits.max_source_bytes = 1 << 16;
  absl::StatusOr<tilec::ir::Program> program =
      tilec::server::RequestProgram(request.has_source() ? &request.source() : nullptr,
                                    request.has_program() ? &request.program() : nullptr, limits);
  if (program.ok()) (void)tilec::ir::ProgramHash(*program);
  return 0;
}
