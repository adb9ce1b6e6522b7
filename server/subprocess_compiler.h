// A Compiler that runs each compile in a child process: fork + exec of the
// compile child (`tilecd compile-child`, compile_child.h), which reads a
// tilec.v1.CompileChildRequest on stdin and writes a CompileChildResult on stdout.
//
// Isolation and limits:
// - the child runs under RLIMIT_AS = `memory_limit_bytes` (0: none); a
//   child that runs out reports RESOURCE_EXHAUSTED;
// - a wall-time limit of min(`time_limit`, the job's deadline): past it the
//   child is killed (SIGKILL) and the compile fails with DEADLINE_EXCEEDED;
// - a cancelled job kills its child (CANCELLED);
// - a child that crashes or exits without a result fails that compile with
//   INTERNAL ("compiler bug: the compile child crashed with SIGSEGV");
//   nothing else is affected. A crash under the memory limit whose stderr
//   says the memory ran out (NVRTC aborts on std::bad_alloc) is
//   RESOURCE_EXHAUSTED; a child killed by its CPU limit is DEADLINE_EXCEEDED;
// - the child runs in the sandbox of child_sandbox.h (empty environment, no
//   network, Landlock, a separate user under root, parent-death signal, a CPU
//   limit of the time limit plus a second), with its own temp dir as working
//   directory, removed after it exits. protections() says what the last
//   child (or the startup probe) had in force.
// At most `max_parallel` children run at once; further compiles wait for a
// slot (counted by waiting()).
#ifndef TILEC_SERVER_SUBPROCESS_COMPILER_H_
#define TILEC_SERVER_SUBPROCESS_COMPILER_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "compiler/cache/compiler.h"
#include "server/child_sandbox.h"

namespace tilec::server {

struct SubprocessOptions {
  std::vector<std::string> child_argv;  // e.g. {"/proc/self/exe", "compile-child"}
  int64_t memory_limit_bytes = 0;
  absl::Duration time_limit = absl::Minutes(5);
  int max_parallel = 2;
  SandboxConfig sandbox;
};

class SubprocessCompiler : public cache::Compiler {
 public:
  explicit SubprocessCompiler(SubprocessOptions options);

  absl::StatusOr<cache::Artifact> Compile(const cache::CompileJob& job) override;

  int64_t waiting() const { return waiting_.load(); }
  int64_t running() const { return running_.load(); }

  // Protection bits (child_sandbox.h) of the last child started, or of the
  // probe before any; and the same in words.
  uint32_t protections() const { return protections_.load(); }
  std::string DescribeProtections() const { return sandbox_->Describe(protections()); }

 private:
  absl::StatusOr<cache::Artifact> RunChild(const cache::CompileJob& job);

  SubprocessOptions options_;
  std::unique_ptr<ChildSandbox> sandbox_;
  std::atomic<uint32_t> protections_{0};
  absl::Mutex mu_;
  int slots_used_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int64_t> waiting_{0}, running_{0};
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_SUBPROCESS_COMPILER_H_
