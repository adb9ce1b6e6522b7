#include "server/compile_child.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/cache/cuda_compiler.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/wire.h"
#include "proto/tilec/v1/service.pb.h"

namespace tilec::server {
namespace {

const std::string* g_out_of_memory = nullptr;

bool WriteAll(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void OnOutOfMemory() {
  WriteAll(1, g_out_of_memory->data(), g_out_of_memory->size());
  ::_exit(0);
}

// Under an address-space limit, the toolchain reports running out of it in
// its own words: NVRTC's "catastrophic error: out of memory", or dlopen's
// "failed to map segment" when libnvrtc itself does not fit. Those are the
// compile's memory limit (RESOURCE_EXHAUSTED), not a compiler bug or a
// missing toolkit.
absl::Status ClassifyMemoryLimit(const absl::Status& status) {
  rlimit lim{};
  if (status.ok() || ::getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) {
    return status;
  }
  absl::string_view m = status.message();
  const std::string lower = absl::AsciiStrToLower(m);
  bool out_of_memory = absl::StrContains(lower, "out of memory") ||
                       absl::StrContains(lower, "failed to map segment") ||
                       absl::StrContains(lower, "cannot allocate memory");
  if (!out_of_memory) return status;
  absl::string_view first_line = m.substr(0, m.find('\n'));
  if (first_line.size() > 300) first_line = first_line.substr(0, 300);
  return absl::ResourceExhaustedError(absl::StrCat("the compile ran out of its memory limit of ",
                                                   lim.rlim_cur >> 20, " MiB and was stopped (",
                                                   first_line, ")"));
}

}  // namespace

int RunCompileChild() {
  {
    tilec::v1::CompileChildResult oom;
    oom.set_code(static_cast<int>(absl::StatusCode::kResourceExhausted));
    oom.set_message("the compile ran out of its memory limit and was stopped");
    g_out_of_memory = new std::string(oom.SerializeAsString());
  }
  std::set_new_handler(OnOutOfMemory);

  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  tilec::v1::CompileChildRequest request;
  tilec::v1::CompileChildResult result;
  absl::Status status;
  // The program nests as deep as the verifier allows (ir::kMaxNesting):
  // parse with the recursion limit that takes.
  if (!ir::ParseWire(input, &request)) {
    status = absl::InternalError("compiler bug: the compile child got a malformed request");
  } else {
    absl::StatusOr<ir::Program> program = ir::FromProto(request.program());
    if (!program.ok()) {
      status = program.status();
    } else {
      cache::CompileJob job;
      job.program = std::make_shared<const ir::Program>(*std::move(program));
      job.program_hash = request.program_hash();
      job.target = request.target();
      job.options.line_info = request.options().line_info();
      job.options.max_registers = request.options().max_registers();
      // An AMD compile runs clang-19 on files: they go in this child's own
      // folder, its working directory, named relatively (the user the child
      // runs as may not walk the path above it).
      if (absl::StartsWith(job.target, "gfx")) ::setenv("TMPDIR", ".", 1);
      cache::CudaCompiler compiler;
      absl::StatusOr<cache::Artifact> artifact = compiler.Compile(job);
      if (artifact.ok()) {
        result.set_artifact(std::move(artifact->bytes));
        result.set_metadata_json(std::move(artifact->metadata_json));
        result.set_compile_seconds(artifact->compile_seconds);
      } else {
        status = ClassifyMemoryLimit(artifact.status());
      }
    }
  }
  result.set_code(static_cast<int>(status.code()));
  result.set_message(std::string(status.message()));
  std::string out = result.SerializeAsString();
  return WriteAll(1, out.data(), out.size()) ? 0 : 1;
}

}  // namespace tilec::server
