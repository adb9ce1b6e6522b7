// A Compiler decorator that runs identical concurrent jobs once: the first
// request for a key (the leader) calls the inner compiler; requests for the
// same key that arrive while it runs wait and all receive its result (with
// Artifact::shared set). A key is only shared while in flight; later
// requests start a new flight (the cache below answers them).
//
// Cancellation and deadlines: a waiter whose own `cancel` fires or whose
// deadline passes stops waiting (CANCELLED / DEADLINE_EXCEEDED) without
// disturbing the others. The inner compile runs with the leader's deadline
// and is cancelled only when every request of the flight has cancelled.
#ifndef TILEC_COMPILER_CACHE_SINGLE_FLIGHT_H_
#define TILEC_COMPILER_CACHE_SINGLE_FLIGHT_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "compiler/cache/cache_key.h"
#include "compiler/cache/compiler.h"

namespace tilec::cache {

class SingleFlightCompiler : public Compiler {
 public:
  // `key_of` names a job (jobs with equal names are identical).
  using KeyFn = std::function<std::string(const CompileJob&)>;
  SingleFlightCompiler(std::unique_ptr<Compiler> inner, KeyFn key_of)
      : inner_(std::move(inner)), key_of_(std::move(key_of)) {}

  absl::StatusOr<Artifact> Compile(const CompileJob& job) override;

  // Requests answered by another request's compile.
  int64_t joined() const { return joined_.load(); }

 private:
  struct Flight;
  std::unique_ptr<Compiler> inner_;
  KeyFn key_of_;
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Flight>> flights_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> joined_{0};
};

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_SINGLE_FLIGHT_H_
