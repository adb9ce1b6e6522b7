// The core of the Compile RPC, without gRPC: a request becomes a verified
// program (frontend or wire form), its hash, and one compile per target
// through the decorated Compiler.
//
// Limits: the TileLang source at most `max_source_bytes`, a wire-form
// program at most `max_program_bytes` serialized, at most 8 targets
// (INVALID_ARGUMENT naming the limit). A bad program is INVALID_ARGUMENT with
// the frontend's or verifier's located diagnostic; an unknown target
// INVALID_ARGUMENT naming the accepted ones; compile errors keep their codes.
//
// The frontend runs in the server process (it is cheap and needed for the
// cache key of every request, hits included); everything after verification
// runs in the compile worker.
#ifndef TILEC_SERVER_COMPILE_CORE_H_
#define TILEC_SERVER_COMPILE_CORE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/cache/compiler.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::server {

struct CoreLimits {
  int64_t max_source_bytes = 1 << 20;
  int64_t max_program_bytes = 4 << 20;
};

class CompileCore {
 public:
  CompileCore(cache::Compiler* compiler, CoreLimits limits)
      : compiler_(compiler), limits_(limits) {}

  absl::StatusOr<tilec::v1::CompileResponse> Compile(
      const tilec::v1::CompileRequest& request, absl::Time deadline,
      std::shared_ptr<const cache::Cancellation> cancel);

 private:
  cache::Compiler* compiler_;
  CoreLimits limits_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_COMPILE_CORE_H_
