// A Compiler test double for the decorator tests: it does real work (the
// artifact is a deterministic expansion of the job's fields through SHA-256),
// counts its calls, can be slowed down to hold a flight open, honours
// cancellation, and fails on request.
#ifndef TILEC_TESTS_COMPILER_CACHE_TEST_COMPILER_H_
#define TILEC_TESTS_COMPILER_CACHE_TEST_COMPILER_H_

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/cache/compiler.h"
#include "compiler/cache/digest.h"

namespace tilec::cache {

class HashingCompiler : public Compiler {
 public:
  absl::StatusOr<Artifact> Compile(const CompileJob& job) override {
    calls.fetch_add(1);
    absl::Time until = absl::Now() + delay;
    while (absl::Now() < until) {
      if (job.cancel != nullptr && job.cancel->cancelled()) {
        cancelled_calls.fetch_add(1);
        return absl::CancelledError("compile cancelled");
      }
      absl::SleepFor(absl::Milliseconds(2));
    }
    if (fail) return absl::InvalidArgumentError("x.py:3:5: error: test failure");
    std::string seed = absl::StrCat(job.program_hash, "|", job.target, "|",
                                    job.options.line_info, "|", job.options.max_registers);
    Artifact a;
    for (int i = 0; i < blocks; ++i) a.bytes += Sha256Hex(absl::StrCat(seed, "#", i));
    a.metadata_json = absl::StrCat("{\"target\":\"", job.target, "\"}");
    a.compile_seconds = absl::ToDoubleSeconds(delay);
    return a;
  }

  std::atomic<int> calls{0};
  std::atomic<int> cancelled_calls{0};
  absl::Duration delay = absl::ZeroDuration();
  int blocks = 4;  // artifact size: 64 bytes per block
  bool fail = false;
};

inline CompileJob TestJob(std::string program_hash, std::string target = "sm_80") {
  CompileJob job;
  job.program_hash = std::move(program_hash);
  job.target = std::move(target);
  return job;
}

}  // namespace tilec::cache

#endif  // TILEC_TESTS_COMPILER_CACHE_TEST_COMPILER_H_
