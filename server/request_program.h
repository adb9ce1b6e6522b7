// The program a request names: a TileLang source run through the frontend
// (with its bindings and unbound names) or a wire-form program, verified.
// Shared by the Compile and Recommend cores.
//
// Limits: the source at most `max_source_bytes`, a wire-form program at most
// `max_program_bytes` serialized (INVALID_ARGUMENT naming the limit). A bad
// program is INVALID_ARGUMENT with the frontend's or verifier's located
// diagnostic. Exactly one of `source` and `program` is non-null; both null is
// INVALID_ARGUMENT ("neither a program nor a source file"). With
// `allow_prelude` false (tilecd --allow_prelude=false), a program carrying
// inline device source (a T.Kernel prelude) is INVALID_ARGUMENT too.
#ifndef TILEC_SERVER_REQUEST_PROGRAM_H_
#define TILEC_SERVER_REQUEST_PROGRAM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/ir.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::server {

struct CoreLimits {
  int64_t max_source_bytes = 1 << 20;
  int64_t max_program_bytes = 4 << 20;
  bool allow_prelude = true;
  // The longest a recommendation search may run (Recommend, and Compile of a
  // program with unbound tile parameters), whatever the call's deadline.
  absl::Duration search_timeout = absl::Seconds(60);
  // The longest staging (running the TileLang builder in the frontend) may
  // take, whatever the call's deadline (tilecd --staging_timeout_s).
  absl::Duration staging_timeout = absl::Seconds(10);
};

// The program of a request: its source through the frontend (which answers
// queries of the device from `device`, when given), or its wire form.
// Staging stops at the earlier of the call's deadline (`call.deadline`) and
// limits.staging_timeout from now (DEADLINE_EXCEEDED, saying which), and
// when `call.stop` says so (CANCELLED: the call was cancelled or the server
// is shutting down).
absl::StatusOr<ir::Program> RequestProgram(const tilec::v1::TileLangSource* source,
                                           const tilec::v1::Program* program,
                                           const CoreLimits& limits,
                                           const frontend::DeviceFacts* device = nullptr,
                                           const frontend::StagingLimits& call = {});

}  // namespace tilec::server

#endif  // TILEC_SERVER_REQUEST_PROGRAM_H_
