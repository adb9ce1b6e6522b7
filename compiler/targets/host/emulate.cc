#include "compiler/targets/host/emulate.h"

#include <cstring>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "compiler/inference/index_expr.h"
#include "compiler/ir/limits.h"
#include "compiler/targets/host/tensor_map.h"
#include "compiler/targets/host/toolchain.h"

namespace tilec::host {

absl::Status EmulateProgram(const ir::Program& program, const cuda::CudaSource& src,
                            std::vector<interp::Tensor>& args,
                            const std::map<std::string, int64_t>& dim_values,
                            LaunchOptions options) {
  // Compiled under the name `tilec compile` gives the source, so the lines in
  // the emulator's messages point into <program>.cu.
  HostOptions host_options;
  host_options.source_name = program.name + ".cu";
  absl::StatusOr<HostModule> module = CompileHost(src.code, host_options);
  if (!module.ok()) return module.status();
  return EmulateProgram(program, src, *module, args, dim_values, std::move(options));
}

absl::Status EmulateProgram(const ir::Program& program, const cuda::CudaSource& src,
                            const HostModule& module, std::vector<interp::Tensor>& args,
                            const std::map<std::string, int64_t>& dim_values,
                            LaunchOptions options) {
  options.warp_size = src.warp_size;
  std::map<const ir::VarNode*, int64_t> dims;
  for (const ir::Var& d : program.dyn_dims) {
    if (!dim_values.count(d->name))
      return absl::InvalidArgumentError("no size for dynamic dim " + d->name);
    dims[d.get()] = dim_values.at(d->name);
  }
  // Integer scalar parameters may size the grid (`T.Kernel(T.ceildiv(max_len,
  // 64))`) and workspaces as dynamic dims do.
  for (size_t i = 0; i < program.params.size() && i < args.size(); ++i) {
    const ir::Var& v = program.params[i].scalar;
    if (v && ir::IsInt(v->dtype)) dims[v.get()] = args[i].GetInt(0);
  }
  std::map<std::string, std::vector<uint8_t>> workspaces;
  for (const cuda::CudaWorkspace& w : src.workspaces) {
    std::optional<int64_t> bytes = inference::EvalInt(w.bytes, dims);
    if (!bytes)
      return absl::InternalError("workspace " + w.name +
                                 " has a size that does not evaluate (a compiler bug)");
    workspaces[w.name].assign(static_cast<size_t>(*bytes), 0);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (program.params[i].tensor) {
      options.buffers.push_back(
          {args[i].mutable_bytes().data(), args[i].bytes().size(), program.params[i].tensor->name});
    }
  }
  for (auto& [name, bytes] : workspaces)
    options.buffers.push_back({bytes.data(), bytes.size(), name});
  struct alignas(64) MapStorage {
    tl::host::TensorMapDesc desc;
  };
  for (const cuda::CudaKernel& k : src.kernels) {
    std::vector<std::unique_ptr<uint64_t>> values;  // storage for each argument value
    std::vector<std::unique_ptr<MapStorage>> maps;
    std::vector<void*> ptrs;
    size_t param = 0;
    for (const cuda::CudaKernelParam& p : k.params) {
      if (p.kind == cuda::CudaKernelParam::Kind::kTensorMap) {
        size_t i = 0;
        while (i < program.params.size() &&
               !(program.params[i].tensor && program.params[i].tensor->name == p.tensor)) {
          ++i;
        }
        if (i >= program.params.size() || i >= args.size()) {
          return absl::InternalError(absl::StrCat("kernel ", k.name, ": tensor map ", p.name,
                                                  " of no tensor parameter (a compiler bug)"));
        }
        absl::StatusOr<tl::host::TensorMapDesc> d = DescribeTensorMap(
            args[i].mutable_bytes().data(), args[i].shape(), ir::DTypeBits(p.dtype) / 8, p.box,
            p.swizzle_bytes, p.tensor);
        if (d.ok()) d = EncodeHostTensorMap(*d, p.tensor);
        if (!d.ok()) return d.status();
        maps.push_back(std::make_unique<MapStorage>(MapStorage{*d}));
        ptrs.push_back(maps.back().get());
        continue;
      }
      auto v = std::make_unique<uint64_t>(0);
      switch (p.kind) {
        case cuda::CudaKernelParam::Kind::kTensorMap: break;
        case cuda::CudaKernelParam::Kind::kTensor: {
          void* data = args[param++].mutable_bytes().data();
          std::memcpy(v.get(), &data, sizeof data);
          break;
        }
        case cuda::CudaKernelParam::Kind::kScalar: {
          const interp::Tensor& t = args[param++];
          if (p.dtype == ir::DType::kFloat32) {
            float f = static_cast<float>(t.GetDouble(0));
            std::memcpy(v.get(), &f, sizeof f);
          } else if (p.dtype == ir::DType::kFloat64) {
            double d = t.GetDouble(0);
            std::memcpy(v.get(), &d, sizeof d);
          } else {
            int64_t x = t.GetInt(0);
            std::memcpy(v.get(), &x, sizeof x);  // little-endian: narrower reads see the low bytes
          }
          break;
        }
        case cuda::CudaKernelParam::Kind::kWorkspace: {
          void* data = workspaces.at(p.name).data();
          std::memcpy(v.get(), &data, sizeof data);
          break;
        }
        case cuda::CudaKernelParam::Kind::kDynDim: {
          int32_t x = static_cast<int32_t>(dim_values.at(p.name));
          std::memcpy(v.get(), &x, sizeof x);
          break;
        }
      }
      ptrs.push_back(v.get());
      values.push_back(std::move(v));
    }
    Dim3 grid;
    uint32_t* axes[] = {&grid.x, &grid.y, &grid.z};
    for (size_t i = 0; i < k.grid.size(); ++i) {
      std::optional<int64_t> g = inference::EvalInt(k.grid[i], dims);
      if (!g)
        return absl::InternalError("kernel " + k.name +
                                   " has a grid extent that does not evaluate (a compiler bug)");
      // Dynamic extents meet CUDA's grid limits only now that the dims are
      // known (constant ones were checked by the verifier).
      const int64_t limit = i == 0 ? ir::kMaxGridX : ir::kMaxGridYZ;
      if (*g < 1 || *g > limit) {
        return absl::InvalidArgumentError(
            absl::StrCat("launch of kernel ", k.name, ": grid extent ", i, " is ", *g,
                         " for these dynamic dims; CUDA launches 1 to ", limit, " blocks along ",
                         i == 0   ? "x"
                         : i == 1 ? "y"
                                  : "z"));
      }
      *axes[i] = static_cast<uint32_t>(*g);
    }
    Dim3 block{static_cast<uint32_t>(k.threads), 1, 1};
    if (absl::Status st = Launch(module, k.name, grid, block, k.smem_bytes, ptrs, options);
        !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace tilec::host
