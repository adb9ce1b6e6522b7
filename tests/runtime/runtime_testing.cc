#include "tests/runtime/runtime_testing.h"

#include "compiler/ir/dtype.h"

namespace tilec::testing {

absl::StatusOr<BuiltArtifact> BuildForRuntime(const ir::Program& program, cuda::CudaArch arch) {
  return BuildForRuntime(program, cuda::CudaTarget::ForArch(arch));
}

absl::StatusOr<BuiltArtifact> BuildForRuntime(const ir::Program& program,
                                              const cuda::CudaTarget& target) {
  absl::StatusOr<cuda::CudaArtifact> a = cuda::BuildCudaArtifact(program, target);
  if (!a.ok()) return a.status();
  absl::StatusOr<runtime::Artifact> r = runtime::Artifact::Parse(cuda::CudaArtifactMetadataJson(*a));
  if (!r.ok()) return r.status();
  r->binary = a->cubin;
  return BuiltArtifact{program, *std::move(a), *std::move(r)};
}

std::vector<runtime::Arg> ArgsFor(const ir::Program& program, std::vector<interp::Tensor>& args) {
  std::vector<runtime::Arg> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (program.params[i].tensor) {
      out.push_back(runtime::Arg::Tensor(args[i].mutable_bytes().data(),
                                         std::string(ir::DTypeName(args[i].dtype())),
                                         args[i].shape()));
    } else if (ir::IsFloat(program.params[i].scalar->dtype)) {
      out.push_back(runtime::Arg::Float(args[i].GetDouble(0)));
    } else {
      out.push_back(runtime::Arg::Int(args[i].GetInt(0)));
    }
  }
  return out;
}

}  // namespace tilec::testing
