// CUDA C++ emission: a tile program plus its layout plan becomes one
// translation unit of readable CUDA C++ that includes only "tl/tl.h" and
// holds one `extern "C" __global__` function per T.Kernel
// (docs/cuda_backend.md, "Generated code shape"). The same text compiles for
// the GPU (NVRTC) and for the emulator (clang-19 with the host tl headers).
//
// Before: `program` verifies, every tile parameter is bound, and `plan` is
// InferLayouts(program, target.info) for this very program (the plan is
// keyed by the program's nodes). When the plan carries a converted program
// (LayoutPlan::program), that one is emitted.
//
// After (OK): `code` holds the translation unit; `kernels` describes each
// kernel in launch order:
// - name `<program name>_k<index>`;
// - parameters: Program.params in order (tensors as `T* __restrict__`,
//   scalars by value), then one pointer per global workspace the kernel
//   uses, then one `int` per dynamic dim in Program.dyn_dims order, then
//   one TMA tensor map per (tensor, box, swizzle) its TMA loads use;
// - grid extents as IR expressions over the dynamic dims, the thread count,
//   and the dynamic shared memory in bytes (every shared buffer and the
//   scratch the tile operators need, 128-byte aligned offsets; the kernel
//   must be launched with exactly that much).
//
// Lowering choices (see docs/cuda_backend.md "Emission"): fragments are
// per-thread register arrays of the layout's local_size; T.Parallel nests and
// the element loops of tile operators walk the thread's slots of their loop
// partition; T.copy global<->shared moves 16-byte vectors (cp.async inside a
// T.Pipelined body) with a predicated scalar path at tensor borders; T.gemm
// calls tl::gemm_ss / tl::gemm_rs; block barriers are placed wherever a
// shared buffer passes from one statement to another.
//
// Errors: FAILED_PRECONDITION for an unbound tile parameter; UNIMPLEMENTED
// naming the feature and the target for anything this backend does not
// lower; INVALID_ARGUMENT when a kernel needs more shared memory than the
// target has per block; INTERNAL (a compiler bug) when the plan does not
// match the program.
#ifndef TILEC_COMPILER_TARGETS_CUDA_EMITTER_H_
#define TILEC_COMPILER_TARGETS_CUDA_EMITTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/inference/layout_inference.h"
#include "compiler/ir/ir.h"
#include "compiler/targets/cuda/target.h"

namespace tilec::cuda {

// One parameter of a generated kernel, in signature order.
struct CudaKernelParam {
  enum class Kind : uint8_t { kTensor, kScalar, kWorkspace, kDynDim, kTensorMap };
  Kind kind = Kind::kTensor;
  std::string name;  // the program's name for it (C++ name in the source)
  ir::DType dtype = ir::DType::kInt32;
  std::vector<ir::Expr> shape;  // tensors and workspaces
  // Tensors: the strides (elements) of a strided tensor (T.StridedTensor),
  // whose shape is then the tensor's, not its storage's; empty: row-major.
  std::vector<ir::Expr> strides = {};
  // kTensorMap: a TMA tensor map (`const __grid_constant__ tl::TmaMap`) of
  // the tensor parameter named `tensor`, made at launch from its address and
  // shape: box (elements per dimension, outermost first), swizzle (0, 32, 64
  // or 128 bytes), dtype the tensor's.
  std::string tensor = {};
  std::vector<int64_t> box = {};
  int64_t swizzle_bytes = 0;
};

struct CudaKernel {
  std::string name;
  std::vector<ir::Expr> grid;  // 1 to 3 extents (x, y, z), over the dyn dims
  int64_t threads = 0;
  int64_t smem_bytes = 0;  // dynamic shared memory
  // Registers the block's warpgroups hold once setmaxnreg has run (0: the
  // kernel has none): no more than threads x ptxas's count, or a
  // setmaxnreg.inc waits forever.
  int64_t setmaxnreg_registers = 0;
  std::vector<CudaKernelParam> params;
  // The tensor-core instructions the kernel's T.gemm calls use, in order of
  // first use ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", ...).
  std::vector<std::string> mma;
  // The schedule's structure in words ("warp-specialised: ..." or "not
  // warp-specialised: <the condition that failed>"), for `tilec compile
  // --explain`.
  std::string schedule;
  // The shared-memory plan (inference/shared_plan.h): where each shared
  // buffer lives and in which top-level statements of the kernel body it is
  // live (-1 when never accessed); buffers may share bytes when their live
  // ranges do not overlap.
  struct SharedBuffer {
    std::string name;
    int64_t offset = 0;
    int64_t bytes = 0;  // every pipeline stage included
    int first = -1, last = -1;
  };
  std::vector<SharedBuffer> shared;
};

// A T.alloc_global workspace: the caller allocates it before the first kernel
// that uses it and passes it to each such kernel.
struct CudaWorkspace {
  std::string name;
  ir::DType dtype = ir::DType::kFloat32;
  std::vector<ir::Expr> shape;
  ir::Expr bytes;  // int64 expression over the dyn dims
};

struct CudaSource {
  std::string code;
  // Threads per warp of the target the code is for (64: AMD wavefronts);
  // the emulator runs it with warps of this size.
  int warp_size = 32;
  std::vector<CudaKernel> kernels;  // launch order
  std::vector<CudaWorkspace> workspaces;
};

absl::StatusOr<CudaSource> EmitCuda(const ir::Program& program, const inference::LayoutPlan& plan,
                                    const CudaTarget& target);

}  // namespace tilec::cuda

#endif  // TILEC_COMPILER_TARGETS_CUDA_EMITTER_H_
