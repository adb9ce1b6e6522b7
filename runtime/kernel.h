// Launching an artifact: the runtime's C++ API.
//
//   auto backend = runtime::OpenBackend(*runtime::DeviceSpec::Parse("cuda:0"));
//   auto artifact = runtime::Artifact::ReadFiles("out/matmul.json");
//   auto kernel = runtime::Kernel::Load(*artifact, backend->get());
//   (*kernel)->Launch({Arg::Tensor(a), Arg::Tensor(b), Arg::Tensor(c)}, stream);
//
// A launch takes one argument per program parameter, in the artifact's ABI
// order. Before anything runs it binds every dynamic dim from the tensors'
// shapes and strided tensors' strides (a dim seen twice must agree), then
// checks each argument against the ABI: tensor or scalar, dtype, rank, every
// dimension, strides (contiguous row-major, or a strided tensor's, which
// must not overlap), 16-byte alignment, and the device it lives on (the
// backend's, confirmed with the driver on CUDA). A mismatch is
// INVALID_ARGUMENT naming the parameter and what differs; nothing is
// launched. Then it allocates the workspaces zeroed, launches every kernel
// in order on `stream` and frees the workspaces when the stream is done.
#ifndef TILEC_RUNTIME_KERNEL_H_
#define TILEC_RUNTIME_KERNEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/artifact.h"
#include "runtime/backend.h"

namespace tilec::runtime {

struct Arg {
  enum class Kind { kTensor, kScalar };
  Kind kind = Kind::kTensor;
  // Tensors.
  void* data = nullptr;
  std::string dtype;  // metadata names ("float16"); int4 tensors may
                      // also be given as int8/uint8 with the last
                      // dimension packed (half as long)
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements; empty: contiguous row-major
  DeviceType device_type = DeviceType::kCpu;
  int device_id = 0;
  // Scalars: the value, converted to the parameter's dtype.
  double f = 0;
  int64_t i = 0;
  bool is_float = false;

  static Arg Tensor(void* data, std::string dtype, std::vector<int64_t> shape,
                    DeviceType device_type = DeviceType::kCpu, int device_id = 0);
  static Arg Int(int64_t v);
  static Arg Float(double v);
};

struct TimingOptions {
  int warmup = 3;
  int iterations = 20;
  bool flush_cache = true;  // evict the last-level cache before every run
};

class Kernel {
 public:
  // `backend` must outlive the kernel.
  static absl::StatusOr<std::unique_ptr<Kernel>> Load(const Artifact& artifact, Backend* backend);

  const Artifact& artifact() const { return artifact_; }
  Backend& backend() const { return *backend_; }

  // The dynamic dims `args` bind, checked against the ABI as Launch does.
  absl::StatusOr<std::map<std::string, int64_t>> Check(absl::Span<const Arg> args) const;

  absl::Status Launch(absl::Span<const Arg> args, void* stream = nullptr);

  // Runs the whole program options.warmup times, then options.iterations
  // times, each timed alone with device events (wall time on the emulator)
  // after a cache flush; the milliseconds of every timed run, in order.
  absl::StatusOr<std::vector<double>> Time(absl::Span<const Arg> args, const TimingOptions& options,
                                           void* stream = nullptr);

 private:
  Kernel(Artifact artifact, Backend* backend, std::unique_ptr<Module> module)
      : artifact_(std::move(artifact)), backend_(backend), module_(std::move(module)) {}
  absl::Status Run(absl::Span<const Arg> args, const std::map<std::string, int64_t>& dims,
                   void* stream);

  Artifact artifact_;
  Backend* backend_;
  std::unique_ptr<Module> module_;
};

// Element count and bytes of a tensor of `dtype` and logical `shape` (int4
// packs two per byte along the last dimension, rounded up).
int64_t TensorBytes(const DTypeInfo& dtype, const std::vector<int64_t>& shape);

}  // namespace tilec::runtime

#endif  // TILEC_RUNTIME_KERNEL_H_
