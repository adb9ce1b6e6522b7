#include "server/request_program.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"

namespace tilec::server {

absl::StatusOr<ir::Program> RequestProgram(const tilec::v1::TileLangSource* source,
                                           const tilec::v1::Program* program,
                                           const CoreLimits& limits) {
  if (source != nullptr) {
    const tilec::v1::TileLangSource& src = *source;
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
    for (const std::string& name : src.unbound()) bindings.unbound.insert(name);
    frontend::SourceFile file{src.path().empty() ? "<request>" : src.path(), src.text()};
    absl::StatusOr<ir::Program> p = frontend::CompileTileLang(file, src.function(), bindings);
    if (!p.ok()) return p.status();
    if (absl::Status s = ir::Verify(*p); !s.ok()) return s;
    return p;
  }
  if (program != nullptr) {
    int64_t size = static_cast<int64_t>(program->ByteSizeLong());
    if (size > limits.max_program_bytes) {
      return absl::InvalidArgumentError(absl::StrCat("the program is ", size,
                                                     " bytes in wire form; this server accepts "
                                                     "at most ",
                                                     limits.max_program_bytes));
    }
    absl::StatusOr<ir::Program> p = ir::FromProto(*program);
    if (!p.ok()) return p.status();
    if (absl::Status s = ir::Verify(*p); !s.ok()) return s;
    return p;
  }
  return absl::InvalidArgumentError("the request holds neither a program nor a source file");
}

}  // namespace tilec::server
