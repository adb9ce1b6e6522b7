#include "server/compile_core.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "compiler/targets/cuda/nvrtc.h"

namespace tilec::server {
namespace {

constexpr int kMaxTargets = 8;

absl::StatusOr<ir::Program> ProgramOf(const tilec::v1::CompileRequest& request,
                                      const CoreLimits& limits) {
  if (request.has_source()) {
    const tilec::v1::TileLangSource& src = request.source();
    if (static_cast<int64_t>(src.text().size()) > limits.max_source_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          src.path(), ": the source is ", src.text().size(), " bytes; this server accepts at most ",
          limits.max_source_bytes));
    }
    if (src.function().empty()) {
      return absl::InvalidArgumentError("the request names no function to compile (--fn)");
    }
    frontend::Bindings bindings;
    for (const tilec::v1::Binding& b : src.bindings()) bindings.Set(b.name(), b.value());
    frontend::SourceFile file{src.path().empty() ? "<request>" : src.path(), src.text()};
    absl::StatusOr<ir::Program> program =
        frontend::CompileTileLang(file, src.function(), bindings);
    if (!program.ok()) return program.status();
    if (absl::Status s = ir::Verify(*program); !s.ok()) return s;
    return program;
  }
  if (request.has_program()) {
    int64_t size = static_cast<int64_t>(request.program().ByteSizeLong());
    if (size > limits.max_program_bytes) {
      return absl::InvalidArgumentError(absl::StrCat("the program is ", size,
                                                     " bytes in wire form; this server accepts "
                                                     "at most ",
                                                     limits.max_program_bytes));
    }
    absl::StatusOr<ir::Program> program = ir::FromProto(request.program());
    if (!program.ok()) return program.status();
    if (absl::Status s = ir::Verify(*program); !s.ok()) return s;
    return program;
  }
  return absl::InvalidArgumentError("the request holds neither a program nor a source file");
}

}  // namespace

absl::StatusOr<tilec::v1::CompileResponse> CompileCore::Compile(
    const tilec::v1::CompileRequest& request, absl::Time deadline,
    std::shared_ptr<const cache::Cancellation> cancel) {
  if (request.targets().empty()) {
    return absl::InvalidArgumentError("the request names no target (sm_80, sm_90a)");
  }
  if (request.targets_size() > kMaxTargets) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxTargets, " targets per request"));
  }
  for (const std::string& t : request.targets()) {
    if (absl::Status s = cuda::ParseCudaArch(t).status(); !s.ok()) return s;
  }
  if (request.options().max_registers() < 0) {
    return absl::InvalidArgumentError("max_registers must not be negative");
  }
  absl::StatusOr<ir::Program> program = ProgramOf(request, limits_);
  if (!program.ok()) return program.status();
  tilec::v1::CompileResponse response;
  response.set_program_hash(ir::ProgramHash(*program));
  auto shared = std::make_shared<const ir::Program>(*std::move(program));
  for (const std::string& target : request.targets()) {
    cache::CompileJob job;
    job.program = shared;
    job.program_hash = response.program_hash();
    job.target = target;
    job.options.line_info = request.options().line_info();
    job.options.max_registers = request.options().max_registers();
    job.deadline = deadline;
    job.cancel = cancel;
    absl::StatusOr<cache::Artifact> artifact = compiler_->Compile(job);
    if (!artifact.ok()) {
      return absl::Status(artifact.status().code(),
                          absl::StrCat(target, ": ", artifact.status().message()));
    }
    tilec::v1::CompileResult* r = response.add_results();
    r->set_target(target);
    r->set_digest(cache::Sha256Hex(artifact->bytes));
    r->set_size_bytes(static_cast<int64_t>(artifact->bytes.size()));
    r->set_metadata_json(artifact->metadata_json);
    r->set_cache_hit(artifact->cache_hit);
    r->set_cache_key(artifact->cache_key);
    r->set_compile_seconds(artifact->cache_hit ? 0 : artifact->compile_seconds);
  }
  return response;
}

}  // namespace tilec::server
