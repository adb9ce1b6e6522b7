// An artifact as the runtime sees it: the launch metadata tilec writes
// (compiler/targets/cuda/artifact.h documents the schema), the device code,
// and the generated source the emulator builds.
//
//   absl::StatusOr<Artifact> a = Artifact::ReadFiles("out/matmul.json");
//   // reads out/matmul.json, out/matmul.cubin, out/matmul.cu
//
// Parse checks everything a launch relies on before any launch: the schema,
// every dtype, every expression (shapes, grids, workspace bytes) parses and
// mentions only dynamic dims, every kernel parameter names a tensor, scalar,
// workspace or dynamic dim, block sizes and shared memory are in range.
// A violation is INVALID_ARGUMENT naming the field ("kernels[1].grid[0]").
#ifndef TILEC_RUNTIME_ARTIFACT_H_
#define TILEC_RUNTIME_ARTIFACT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/shape_expr.h"

namespace tilec::cache {
class Verifier;
}

namespace tilec::runtime {

// Element types by their metadata names. Bytes per element; int4 is packed two
// per byte along the last dimension (bits = 4).
struct DTypeInfo {
  std::string name;
  int bits = 0;
  bool is_float = false;
  bool is_signed = false;
};
// nullopt for a name the runtime does not know.
std::optional<DTypeInfo> LookupDType(std::string_view name);

struct ParamSpec {
  enum class Kind { kTensor, kScalar };
  Kind kind = Kind::kTensor;
  std::string name;
  DTypeInfo dtype;
  std::vector<ShapeExpr> shape;  // tensors
  // Tensors: the strides (elements) a strided tensor must have; empty: a
  // contiguous row-major tensor.
  std::vector<ShapeExpr> strides;
};

struct WorkspaceSpec {
  std::string name;
  DTypeInfo dtype;
  ShapeExpr bytes;
};

struct KernelArgRef {
  enum class Kind { kParam, kWorkspace, kDynDim, kTensorMap };
  Kind kind = Kind::kParam;
  int index = 0;  // into params, workspaces, dyn_dims or the kernel's tensor_maps
};

// A TMA tensor map a kernel takes: made at launch from the tensor argument
// `param` (its address and shape) with this box and swizzle.
struct TensorMapSpec {
  std::string name;
  int param = 0;              // into Artifact::params (a tensor)
  std::vector<int64_t> box;   // outermost first, one per dimension of the tensor
  int swizzle_bytes = 0;      // 0, 32, 64, 128
};

struct KernelSpec {
  std::string name;
  std::vector<ShapeExpr> grid;  // x, y, z
  int block[3] = {1, 1, 1};
  int64_t smem_bytes = 0;
  int registers = 0;
  std::vector<KernelArgRef> args;  // the kernel's signature order
  std::vector<TensorMapSpec> tensor_maps;
};

struct Artifact {
  std::string schema;
  std::string program;
  std::string target;  // "sm_90a", "sm_80"
  std::vector<std::pair<std::string, int64_t>> config;
  std::vector<std::string> dyn_dims;
  // Conditions on the dynamic dims a launch must meet ("requires").
  struct Requirement {
    ShapeExpr cond;
    std::string message;
  };
  std::vector<Requirement> requirements;
  std::vector<ParamSpec> params;
  std::vector<WorkspaceSpec> workspaces;
  std::vector<KernelSpec> kernels;

  std::string metadata_json;  // the text Parse read
  std::string binary;         // cubin (NVIDIA) or code object (AMD)
  std::string source;         // generated CUDA C++ (the emulator builds it)

  // The vendor the target belongs to: "cuda" for sm_*, "hip" for gfx*.
  std::string vendor() const;

  static absl::StatusOr<Artifact> Parse(std::string_view metadata_json);
  // `json_path` names <base>.json; the binary (<base>.cubin or <base>.hsaco)
  // and <base>.cu beside it are read when present (a backend that needs one
  // that is missing says so when it loads the artifact).
  static absl::StatusOr<Artifact> ReadFiles(const std::string& json_path);
  // The same, refusing (PERMISSION_DENIED) an artifact that `verifier` did
  // not sign: <base>.sig (compiler/cache/signing.h) must hold a signature of
  // its cache key, the binary's digest and the metadata (the .json file
  // without its final newline, as tilec writes it).
  static absl::StatusOr<Artifact> ReadFilesVerified(const std::string& json_path,
                                                    const cache::Verifier& verifier);
};

}  // namespace tilec::runtime

#endif  // TILEC_RUNTIME_ARTIFACT_H_
