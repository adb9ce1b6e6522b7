#include "server/request_program.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "compiler/ir/visitor.h"

namespace tilec::server {
namespace {

// Finds the first kernel that carries inline source.
class PreludeFinder : public ir::IRVisitor {
 public:
  using ir::IRVisitor::Visit;
  void Visit(const ir::Stmt& s) override {
    if (found_ >= 0 || !s) return;
    if (s->kind == ir::StmtKind::kKernel) {
      if (!s->as<ir::KernelNode>()->prelude.empty()) found_ = kernels_;
      ++kernels_;
      return;  // kernels do not nest
    }
    ir::IRVisitor::Visit(s);
  }
  int found() const { return found_; }

 private:
  int kernels_ = 0;
  int found_ = -1;
};

absl::StatusOr<ir::Program> Checked(absl::StatusOr<ir::Program> p, const CoreLimits& limits) {
  if (!p.ok()) return p.status();
  if (absl::Status s = ir::Verify(*p); !s.ok()) return s;
  if (!limits.allow_prelude) {
    PreludeFinder finder;
    finder.Visit(p->body);
    if (finder.found() >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel ", finder.found(),
                       ": this server does not accept inline device source (T.Kernel prelude=); "
                       "compile the program without the prelude, or embedded"));
    }
  }
  return p;
}

}  // namespace

absl::StatusOr<ir::Program> RequestProgram(const tilec::v1::TileLangSource* source,
                                           const tilec::v1::Program* program,
                                           const CoreLimits& limits,
                                           const frontend::DeviceFacts* device,
                                           const frontend::StagingLimits& call) {
  if (source != nullptr) {
    const tilec::v1::TileLangSource& src = *source;
    if (static_cast<int64_t>(src.text().size()) > limits.max_source_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(src.path(), ": the source is ", src.text().size(),
                       " bytes; this server accepts at most ", limits.max_source_bytes));
    }
    if (src.function().empty()) {
      return absl::InvalidArgumentError("the request names no function to compile (--fn)");
    }
    frontend::Bindings bindings;
    for (const tilec::v1::Binding& b : src.bindings()) bindings.Set(b.name(), b.value());
    for (const std::string& name : src.unbound()) bindings.unbound.insert(name);
    if (device != nullptr) bindings.device = *device;
    bindings.staging = call;
    bindings.staging.deadline_reason = "the call's deadline passed";
    if (const absl::Time own = absl::Now() + limits.staging_timeout; own <= call.deadline) {
      bindings.staging.deadline = own;
      bindings.staging.deadline_reason =
          absl::StrCat("this server stages a program for at most ",
                       absl::FormatDuration(limits.staging_timeout), " (--staging_timeout_s)");
    }
    frontend::SourceFile file{src.path().empty() ? "<request>" : src.path(), src.text()};
    return Checked(frontend::CompileTileLang(file, src.function(), bindings), limits);
  }
  if (program != nullptr) {
    int64_t size = static_cast<int64_t>(program->ByteSizeLong());
    if (size > limits.max_program_bytes) {
      return absl::InvalidArgumentError(absl::StrCat("the program is ", size,
                                                     " bytes in wire form; this server accepts "
                                                     "at most ",
                                                     limits.max_program_bytes));
    }
    return Checked(ir::FromProto(*program), limits);
  }
  return absl::InvalidArgumentError("the request holds neither a program nor a source file");
}

}  // namespace tilec::server
