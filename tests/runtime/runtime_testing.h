// Shared steps of the runtime tests: a real artifact (frontend, inference,
// emission, NVRTC) as the runtime reads it, and the interpreter's tensors as
// launch arguments.
#ifndef TILEC_TESTS_RUNTIME_RUNTIME_TESTING_H_
#define TILEC_TESTS_RUNTIME_RUNTIME_TESTING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/artifact.h"
#include "runtime/artifact.h"
#include "runtime/kernel.h"

namespace tilec::testing {

struct BuiltArtifact {
  ir::Program program;
  cuda::CudaArtifact cuda;
  runtime::Artifact artifact;  // its metadata read back by the runtime
};

absl::StatusOr<BuiltArtifact> BuildForRuntime(const ir::Program& program,
                                              cuda::CudaArch arch = cuda::CudaArch::kSm80);
absl::StatusOr<BuiltArtifact> BuildForRuntime(const ir::Program& program,
                                              const cuda::CudaTarget& target);

// One runtime argument per interpreter tensor (0-d tensors become scalars of
// their parameter's kind), pointing into the tensors' storage.
std::vector<runtime::Arg> ArgsFor(const ir::Program& program, std::vector<interp::Tensor>& args);

}  // namespace tilec::testing

#endif  // TILEC_TESTS_RUNTIME_RUNTIME_TESTING_H_
