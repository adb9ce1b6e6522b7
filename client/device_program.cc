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

namespace {

// Extent `d` of strided tensor parameter `p`: a constant, or a dynamic dim
// that some tensor's storage has as a dimension (the frontend refuses
// others).
int64_t ViewExtent(const ir::Program& program, const std::vector<interp::Tensor>& values,
                   const ir::Param& p, size_t d) {
  const ir::Expr& e = p.view->shape[d];
  if (std::optional<int64_t> c = ir::AsConstInt(e)) return *c;
  for (size_t i = 0; i < program.params.size(); ++i) {
    const ir::Buffer& b = program.params[i].tensor;
    if (!b) continue;
    for (size_t k = 0; k < b->shape.size(); ++k) {
      if (b->shape[k].get() == e.get()) return values[i].shape()[k];
    }
  }
  return -1;  // the runtime refuses the negative extent
}

}  // namespace

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
    if (!p.view) {
      args_.push_back(runtime::Arg::Tensor(*data, std::string(ir::DTypeName(t.dtype())), t.shape(),
                                           memory, backend_->device().ordinal));
      continue;
    }
    // A strided tensor: the tensor of the view's shape inside its storage.
    const size_t rank = p.view->axes.size();
    std::vector<int64_t> shape(rank), strides(rank);
    int64_t step = 1;
    for (size_t k = rank; k-- > 0;) {
      const size_t d = static_cast<size_t>(p.view->axes[k]);
      strides[d] = step;
      step *= t.shape()[k];
      shape[d] = ViewExtent(program_, values, p, d);
    }
    runtime::Arg arg = runtime::Arg::Tensor(*data, std::string(ir::DTypeName(t.dtype())), shape,
                                            memory, backend_->device().ordinal);
    arg.strides = std::move(strides);
    args_.push_back(std::move(arg));
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
