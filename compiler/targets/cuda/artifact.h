// A compiled CUDA artifact: the cubin of a tile program for one target, the
// generated CUDA C++ it was built from, and the launch metadata a runtime
// needs to call it.
//
// BuildCudaArtifact runs inference, emission and NVRTC on a verified program
// whose tile parameters are all bound. The metadata (CudaArtifactMetadataJson)
// is one JSON object:
//
//   {"schema": "tilec.cuda.artifact.v1", "program": "matmul", "target": "sm_80",
//    "nvrtc": "13.0",
//    "config": {"block_M": 128, ...},            bound tile parameters
//    "dyn_dims": ["M"],                          in kernel-parameter order
//    "device_queries": [                         what the source asked of the
//      "driver.get_num_sms() = 132 (profile h100_sxm)"],  device, answered
//                                                from the target's profile
//                                                (omitted when none)
//    "requires": [                               conditions on the dynamic
//      {"cond": "M % 64 == 0",                   dims a launch must meet
//       "message": "M must be a multiple of 64"}],  (omitted when none)
//    "params": [                                 the program's ABI, in order
//      {"name": "A", "kind": "tensor", "dtype": "float16", "shape": ["M", "4096"]},
//      {"name": "S", "kind": "tensor", "dtype": "float16", "shape": ["M", "64"],
//       "strides": ["NN", "1"]},                 a T.StridedTensor
//      {"name": "eps", "kind": "scalar", "dtype": "float32"}],
//    "workspaces": [                             T.alloc_global buffers
//      {"name": "glse", "dtype": "float32", "shape": [...], "bytes": "M * 16"}],
//    "kernels": [                                launch order
//      {"name": "matmul_k0", "grid": ["32", "T.ceildiv(M, 128)", "1"],
//       "block": [128, 1, 1], "smem_bytes": 24576,
//       "registers": 96, "spill_store_bytes": 0, "spill_load_bytes": 0,
//       "stack_frame_bytes": 0,
//       "params": ["A", "B", "C", "M"],          the kernel's signature order
//       "mma": ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"],
//                                                tensor-core instructions its
//                                                T.gemm calls use
//       "shared": [                              the shared-memory plan
//         {"buffer": "A_shared", "offset": 0, "bytes": 16384, "live": [3, 5]}]}],
//                                                live: first and last top-level
//                                                statement of the kernel body
//                                                that accesses it ([-1, -1]:
//                                                never); buffers whose ranges
//                                                are disjoint may share bytes
//       "tensor_maps": [                         TMA tensor maps among the
//         {"name": "A_tmap", "tensor": "A",      params (omitted when none):
//          "box": [128, 64], "swizzle": 128}]}], made at launch from the
//                                                tensor's address and shape
//                                                (box outermost first,
//                                                elements; swizzle in bytes,
//                                                0 none; zero fill)
//    "source": "..."}                            the generated CUDA C++ (what
//                                                the emulator builds; what
//                                                users read)
//
// Expressions (shapes, grid extents, workspace bytes) are IR expressions over
// the dynamic dims printed by the IR printer; constants print as integers. A
// kernel needs `smem_bytes` of dynamic shared memory (above 48 KiB the
// launcher must raise cudaFuncAttributeMaxDynamicSharedMemorySize). Tensor
// arguments must be 16-byte aligned (cudaMalloc's 256 bytes are).
#ifndef TILEC_COMPILER_TARGETS_CUDA_ARTIFACT_H_
#define TILEC_COMPILER_TARGETS_CUDA_ARTIFACT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/emitter.h"
#include "compiler/targets/cuda/nvrtc.h"
#include "compiler/targets/cuda/target.h"

namespace tilec::cuda {

// For an AMD target (gfx942, gfx90a) the same record holds the code object:
// `cubin` is the hsaco ELF clang-19 wrote, `nvrtc_version` is clang's
// version ("19.1.7"), and the files are .hsaco and .hip; the metadata names
// the compiler as "clang" instead of "nvrtc", and each kernel's registers
// are its VGPRs (on gfx90a and gfx942 the unified file's total, AGPRs
// included), its stack frame the scratch bytes per lane
// (spill bytes are the scratch bytes when the code object reports spills).
struct CudaArtifact {
  std::string program;        // the program's name
  std::string target;         // "sm_80", "sm_90a", "gfx942", "gfx90a"
  bool amd = false;           // an AMD code object
  std::string nvrtc_version;  // "13.0"; clang's "19.1.7" for AMD
  CudaSource source;          // generated code, kernels, workspaces
  std::string cubin;          // the hsaco for AMD
  // ptxas's report for source.kernels[i] (same order; zeros if ptxas did not
  // report a kernel); the code object's metadata for AMD.
  std::vector<PtxasKernelInfo> ptxas;
  std::vector<std::pair<std::string, int64_t>> config;  // bound tile parameters
  std::vector<std::string> dyn_dims;
  std::vector<std::string> device_queries;  // Program.device_queries
  // Program.requirements: each condition's text (the ShapeExpr grammar of
  // the runtime) and message.
  std::vector<std::pair<std::string, std::string>> requirements;
  std::vector<CudaKernelParam> params;  // Program.params, in order
  double compile_seconds = 0;               // NVRTC's share
};

// Errors: those of InferLayouts and EmitCuda (FAILED_PRECONDITION for an
// unbound tile parameter, UNIMPLEMENTED for unsupported constructs, ...) and
// of CompileCuda (FAILED_PRECONDITION without NVRTC; INTERNAL when the
// generated code does not compile, a tilec bug).
absl::StatusOr<CudaArtifact> BuildCudaArtifact(const ir::Program& program, const CudaTarget& target,
                                               const NvrtcOptions& options = {});

std::string CudaArtifactMetadataJson(const CudaArtifact& artifact);

// Writes <dir>/<base>.cubin, <dir>/<base>.cu and <dir>/<base>.json (.hsaco
// and .hip for AMD: BinarySuffix, SourceSuffix), creating
// `dir` if needed. PERMISSION_DENIED / NOT_FOUND style errors name the file.
absl::Status WriteCudaArtifact(const CudaArtifact& artifact, const std::string& dir,
                               const std::string& base);

// ".cubin" or ".hsaco"; ".cu" or ".hip".
std::string BinarySuffix(const CudaArtifact& artifact);
std::string SourceSuffix(const CudaArtifact& artifact);

// `s` as a JSON string literal, quotes included (control characters escaped).
std::string JsonQuote(absl::string_view s);

}  // namespace tilec::cuda

#endif  // TILEC_COMPILER_TARGETS_CUDA_ARTIFACT_H_
