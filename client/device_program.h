// A tile program compiled for a CUDA target and loaded on a runtime device,
// with the reference interpreter's tensors as its arguments: what `tilec
// bench` and tilec-difftest's device mode run and check against the
// interpreter.
//
//   auto p = DeviceProgram::Build(program, target, backend);   // NVRTC + load
//   (*p)->SetArgs(inputs);       // tensors to the device, scalars by value
//   (*p)->Run();                 // one launch of the whole program, waited for
//   (*p)->Fetch(outputs);        // every tensor back, in parameter order
#ifndef TILEC_CLIENT_DEVICE_PROGRAM_H_
#define TILEC_CLIENT_DEVICE_PROGRAM_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/interp/interp.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/artifact.h"
#include "compiler/targets/cuda/target.h"
#include "runtime/backend.h"
#include "runtime/kernel.h"

namespace tilec::cli {

class DeviceProgram {
 public:
  // `program` verified with every tile parameter bound; `backend` must
  // outlive the result. Errors: BuildCudaArtifact's, and the runtime's when
  // it cannot load the cubin (INTERNAL when it cannot read tilec's own
  // metadata: a compiler bug).
  static absl::StatusOr<std::unique_ptr<DeviceProgram>> Build(const ir::Program& program,
                                                              const cuda::CudaTarget& target,
                                                              runtime::Backend* backend);
  ~DeviceProgram();
  DeviceProgram(const DeviceProgram&) = delete;
  DeviceProgram& operator=(const DeviceProgram&) = delete;

  const ir::Program& program() const { return program_; }
  const cuda::CudaArtifact& artifact() const { return artifact_; }
  runtime::Kernel& kernel() { return *kernel_; }
  const std::vector<runtime::Arg>& args() const { return args_; }

  // One value per program parameter (interp::MakeInputs' order): tensors are
  // copied to new device buffers (freed with this object or the next
  // SetArgs), scalars passed by value.
  absl::Status SetArgs(const std::vector<interp::Tensor>& values);
  // Launches the program once with the arguments and waits for it.
  absl::Status Run();
  // Copies every tensor argument back into `values` (scalars untouched).
  absl::Status Fetch(std::vector<interp::Tensor>& values) const;

 private:
  DeviceProgram(ir::Program program, runtime::Backend* backend)
      : program_(std::move(program)), backend_(backend) {}
  void FreeBuffers();

  ir::Program program_;
  runtime::Backend* backend_;
  cuda::CudaArtifact artifact_;
  std::unique_ptr<runtime::Kernel> kernel_;
  std::vector<void*> buffers_;
  std::vector<runtime::Arg> args_;
};

}  // namespace tilec::cli

#endif  // TILEC_CLIENT_DEVICE_PROGRAM_H_
