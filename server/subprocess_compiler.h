// A Compiler that runs each compile in a child process: fork + exec of the
// compile worker (`tilecd compile-worker`, worker.h), which reads a
// tilec.v1.WorkerRequest on stdin and writes a WorkerResult on stdout.
//
// Isolation and limits:
// - the child runs under RLIMIT_AS = `memory_limit_bytes` (0: none); a
//   worker that runs out reports RESOURCE_EXHAUSTED;
// - a wall-time limit of min(`time_limit`, the job's deadline): past it the
//   child is killed (SIGKILL) and the compile fails with DEADLINE_EXCEEDED;
// - a cancelled job kills its child (CANCELLED);
// - a child that crashes or exits without a result fails that compile with
//   INTERNAL ("compiler bug: the compile worker crashed with SIGSEGV");
//   nothing else is affected.
// At most `max_parallel` children run at once; further compiles wait for a
// slot (counted by waiting()).
#ifndef TILEC_SERVER_SUBPROCESS_COMPILER_H_
#define TILEC_SERVER_SUBPROCESS_COMPILER_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "compiler/cache/compiler.h"

namespace tilec::server {

struct SubprocessOptions {
  std::vector<std::string> worker_argv;  // e.g. {"/proc/self/exe", "compile-worker"}
  int64_t memory_limit_bytes = 0;
  absl::Duration time_limit = absl::Minutes(5);
  int max_parallel = 2;
};

class SubprocessCompiler : public cache::Compiler {
 public:
  explicit SubprocessCompiler(SubprocessOptions options) : options_(std::move(options)) {}

  absl::StatusOr<cache::Artifact> Compile(const cache::CompileJob& job) override;

  int64_t waiting() const { return waiting_.load(); }
  int64_t running() const { return running_.load(); }

 private:
  absl::StatusOr<cache::Artifact> RunChild(const cache::CompileJob& job);

  SubprocessOptions options_;
  absl::Mutex mu_;
  int slots_used_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int64_t> waiting_{0}, running_{0};
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_SUBPROCESS_COMPILER_H_
