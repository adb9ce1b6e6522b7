// The compiler as the cache and the server see it: one verified tile program
// with every tile parameter bound, compiled for one target, becomes artifact
// bytes plus metadata. Decorators (caching, single-flight, metrics, child
// process isolation) wrap this interface, one concern each.
//
// Contract of Compile:
//   Before: `job.program` verifies and binds every tile parameter;
//           `job.program_hash` is ir::ProgramHash(*job.program).
//   After (OK): `bytes` is the device binary (a cubin for sm_80/sm_90a) and
//           `metadata_json` the launch metadata (a JSON object: target,
//           program hash, kernels in launch order with grid, threads,
//           dynamic shared memory, parameters, registers and spills;
//           workspaces; compiler and toolchain versions). The artifact's
//           name is Sha256Hex(bytes).
//   Errors keep the compiler's codes: INVALID_ARGUMENT for a bad program or
//           option, FAILED_PRECONDITION for an unbound parameter or a
//           missing toolchain, UNIMPLEMENTED for unsupported features,
//           DEADLINE_EXCEEDED when `deadline` passed or the compile ran past
//           its time limit, RESOURCE_EXHAUSTED past its memory limit,
//           CANCELLED when `cancel` fired, INTERNAL for compiler bugs.
#ifndef TILEC_COMPILER_CACHE_COMPILER_H_
#define TILEC_COMPILER_CACHE_COMPILER_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/ir/ir.h"

namespace tilec::cache {

// Options that change the artifact's bytes (and so are in the cache key).
struct CompileOptions {
  bool line_info = false;
  int max_registers = 0;
};

// A flag that a caller raises to abandon a compile; compilers poll it.
// Decorators may derive a cancellation that combines several requests'.
class Cancellation {
 public:
  virtual ~Cancellation() = default;
  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  virtual bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> cancelled_{false};
};

struct CompileJob {
  std::shared_ptr<const ir::Program> program;
  std::string program_hash;
  std::string target;  // "sm_80", "sm_90a"
  CompileOptions options;
  absl::Time deadline = absl::InfiniteFuture();
  std::shared_ptr<const Cancellation> cancel;  // may be null
};

struct Artifact {
  std::string bytes;
  std::string metadata_json;
  double compile_seconds = 0;  // wall time of the compile that made it
  // Set by decorators: served from the cache (CachingCompiler), or by
  // another request's compile (SingleFlightCompiler), and the cache key.
  bool cache_hit = false;
  bool shared = false;
  bool shared_tier_hit = false;  // from the fleet's shared tier (server/shared_tier.h)
  std::string cache_key;
  // Set by CachingCompiler when the compile succeeded but the store could
  // not keep it (a full disk): why. The artifact is then not in the cache
  // and only these bytes hold it.
  std::string store_error;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual absl::StatusOr<Artifact> Compile(const CompileJob& job) = 0;
};

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_COMPILER_H_
