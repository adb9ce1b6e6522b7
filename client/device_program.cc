#include "client/device_program.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "runtime/artifact.h"

namespace tilec::cli {

absl::StatusOr<std::unique_ptr<DeviceProgram>> DeviceProgram::Build(const ir::Program& program,
                                                                    const cuda::CudaTarget& target,
                                                                    runtime::Backend* backend) {
  std::unique_ptr<DeviceProgram> p(new DeviceProgram(program, backend));
  absl::StatusOr<cuda::CudaArtifact> built = cuda::BuildCudaArtifact(program, target);
  if (!built.ok()) return built.status();
  p->artifact_ = *std::move(built);
  absl::StatusOr<runtime::Artifact> artifact =
      runtime::Artifact::Parse(cuda::CudaArtifactMetadataJson(p->artifact_));
  if (!artifact.ok()) {
    return absl::InternalError(
        absl::StrCat("the runtime cannot read the metadata tilec wrote (a compiler bug): ",
                     artifact.status().message()));
  }
  artifact->binary = p->artifact_.cubin;
  absl::StatusOr<std::unique_ptr<runtime::Kernel>> kernel =
      runtime::Kernel::Load(*artifact, backend);
  if (!kernel.ok()) return kernel.status();
  p->kernel_ = *std::move(kernel);
  return p;
}

DeviceProgram::~DeviceProgram() { FreeBuffers(); }

void DeviceProgram::FreeBuffers() {
  for (void* b : buffers_) backend_->Free(b);
  buffers_.clear();
  args_.clear();
}

absl::Status DeviceProgram::SetArgs(const std::vector<interp::Tensor>& values) {
  if (values.size() != program_.params.size()) {
    return absl::InternalError(absl::StrCat(program_.name, " takes ", program_.params.size(),
                                            " arguments, given ", values.size()));
  }
  FreeBuffers();
  const runtime::DeviceType memory = backend_->device().memory_type();
  for (size_t i = 0; i < program_.params.size(); ++i) {
    const ir::Param& p = program_.params[i];
    const interp::Tensor& t = values[i];
    if (p.scalar) {
      args_.push_back(ir::IsFloat(p.scalar->dtype) ? runtime::Arg::Float(t.GetDouble(0))
                                                   : runtime::Arg::Int(t.GetInt(0)));
      continue;
    }
    absl::StatusOr<void*> data = backend_->Alloc(t.bytes().size());
    if (!data.ok()) return data.status();
    buffers_.push_back(*data);
    if (absl::Status st = backend_->CopyToDevice(*data, t.bytes().data(), t.bytes().size());
        !st.ok()) {
      return st;
    }
    args_.push_back(runtime::Arg::Tensor(*data, std::string(ir::DTypeName(t.dtype())), t.shape(),
                                         memory, backend_->device().ordinal));
  }
  return absl::OkStatus();
}

absl::Status DeviceProgram::Run() {
  if (absl::Status st = kernel_->Launch(args_); !st.ok()) return st;
  return backend_->Synchronize(nullptr);
}

absl::Status DeviceProgram::Fetch(std::vector<interp::Tensor>& values) const {
  for (size_t i = 0; i < program_.params.size() && i < values.size() && i < args_.size(); ++i) {
    if (!program_.params[i].tensor) continue;
    interp::Tensor& t = values[i];
    if (absl::Status st =
            backend_->CopyToHost(t.mutable_bytes().data(), args_[i].data, t.bytes().size());
        !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace tilec::cli
