// The core of the Compile RPC, without gRPC: a request becomes a verified
// program (frontend or wire form, server/request_program.h), its hash, and
// one compile per target through the decorated Compiler.
//
// Limits: those of CoreLimits, and at most 8 targets (INVALID_ARGUMENT naming
// the limit). A bad program is INVALID_ARGUMENT with the frontend's or
// verifier's located diagnostic; an unknown target INVALID_ARGUMENT naming
// the accepted ones; compile errors keep their codes.
//
// Unbound tile parameters: per target, the program is bound to the top
// recommendation for the target's hardware profile (options.profile, else
// the target's own: sm_90a h100_sxm, sm_80 a100), compiler/recommend/
// auto_bind.h; the result carries the chosen config, the profile, and the
// bound program's hash, which is the one in the cache key, so an explicit
// compile of the same config later is a cache hit. A program with no valid
// config is FAILED_PRECONDITION; an unknown or mismatched profile
// INVALID_ARGUMENT. Recommendation runs under the request's deadline and at
// most limits.search_timeout, and stops when `cancel` fires.
//
// An artifact compiled but not stored (CachingCompiler could not write the
// cache: a full disk) is returned in the result's `artifact` with the reason
// in `store_error`, so the compile is not lost; GetArtifact cannot serve it.
//
// The frontend and recommendation run in the calling process (they are
// cheap and needed for the cache key of every request, hits included);
// everything after binding runs in the compile child.
#ifndef TILEC_SERVER_COMPILE_CORE_H_
#define TILEC_SERVER_COMPILE_CORE_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/cache/compiler.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/recommend/profile.h"
#include "proto/tilec/v1/service.pb.h"
#include "server/request_program.h"

namespace tilec::server {

class CompileCore {
 public:
  // `profiles`: the hardware profiles recommendation may use (the built-in
  // ones by default).
  CompileCore(cache::Compiler* compiler, CoreLimits limits,
              std::vector<recommend::HardwareProfile> profiles = recommend::BuiltinProfiles())
      : compiler_(compiler), limits_(limits), profiles_(std::move(profiles)) {}

  absl::StatusOr<tilec::v1::CompileResponse> Compile(
      const tilec::v1::CompileRequest& request, absl::Time deadline,
      std::shared_ptr<const cache::Cancellation> cancel);

  // A request made ready to compile: parsed, verified, and for every target
  // its job (bound by recommendation when the request left tile parameters
  // unbound) and the binding chosen.
  struct Prepared {
    std::string program_hash;  // of the program as requested
    std::vector<cache::CompileJob> jobs;
    std::vector<recommend::AutoBinding> bindings;  // `program` left empty
    std::vector<std::string> config_sources;       // per job: "autotune" | "recommendation" | ""
    std::vector<double> measured_ms;
  };

  // The cache's answer without compiling: the response when every target is
  // a cache hit (exactly what Compile would answer), nullopt when some
  // target must be compiled (or no lookup was set, or the cache could not
  // be read); the request's own errors as Compile gives them. On nullopt
  // `*prepared` holds the prepared request, for Compile(Prepared) to finish
  // without parsing or searching again. Never waits for a compile slot, so
  // a server answers hits on threads that misses never hold.
  using LookupFn =
      std::function<absl::StatusOr<std::optional<cache::Artifact>>(const cache::CompileJob&)>;
  void SetLookup(LookupFn lookup) { lookup_ = std::move(lookup); }

  // A measured config for a program with unbound tile parameters (the
  // program's hash as requested, the profile's id), from the tuning
  // database; when it answers, Compile binds that config instead of the
  // recommendation's and says so (config_source "autotune").
  struct Tuned {
    std::map<std::string, int64_t> config;
    double measured_ms = 0;
  };
  using TunedFn = std::function<std::optional<Tuned>(const std::string& program_hash,
                                                     const std::string& profile_id)>;
  void SetTuned(TunedFn tuned) { tuned_ = std::move(tuned); }
  absl::StatusOr<std::optional<tilec::v1::CompileResponse>> Lookup(
      const tilec::v1::CompileRequest& request, absl::Time deadline,
      std::shared_ptr<const cache::Cancellation> cancel, std::shared_ptr<const Prepared>* prepared);

  // Lookup in two steps, so that a server can run the second, which may
  // search, on its search threads: Parse checks the request, runs the
  // frontend (under limits.staging_timeout), hashes, and finds each target's
  // profile and tuning record; Lookup(Parsed) binds unbound tile parameters
  // (searching where no tuning record answers: needs_search) and asks the
  // cache. `request` must outlive the Parsed.
  struct Parsed {
    struct Target {
      std::string name;
      recommend::HardwareProfile profile;  // set when unbound
      std::optional<Tuned> tuned;
    };
    const tilec::v1::CompileRequest* request = nullptr;
    absl::Time deadline;
    std::shared_ptr<const cache::Cancellation> cancel;
    std::string program_hash;
    std::shared_ptr<const ir::Program> program;
    bool unbound = false;
    bool needs_search = false;
    std::vector<Target> targets;
  };
  absl::StatusOr<std::shared_ptr<const Parsed>> Parse(
      const tilec::v1::CompileRequest& request, absl::Time deadline,
      std::shared_ptr<const cache::Cancellation> cancel) const;
  absl::StatusOr<std::optional<tilec::v1::CompileResponse>> Lookup(
      const Parsed& parsed, std::shared_ptr<const Prepared>* prepared);
  absl::StatusOr<tilec::v1::CompileResponse> Compile(const Prepared& prepared);

  // A request that names its program by hash (CompileRequest.program_hash):
  // the response when every target is cached, NOT_FOUND when one is not
  // (the client then sends the program), INVALID_ARGUMENT for a malformed
  // hash or target. Never compiles.
  absl::StatusOr<tilec::v1::CompileResponse> LookupByHash(const tilec::v1::CompileRequest& request);

 private:
  absl::StatusOr<std::shared_ptr<const Prepared>> Prepare(
      const tilec::v1::CompileRequest& request, absl::Time deadline,
      std::shared_ptr<const cache::Cancellation> cancel);
  absl::StatusOr<std::shared_ptr<const Prepared>> Bind(const Parsed& parsed) const;
  absl::StatusOr<std::optional<tilec::v1::CompileResponse>> Finish(const Prepared& prepared,
                                                                   bool lookup_only);

  cache::Compiler* compiler_;
  CoreLimits limits_;
  std::vector<recommend::HardwareProfile> profiles_;
  LookupFn lookup_;
  TunedFn tuned_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_COMPILE_CORE_H_
