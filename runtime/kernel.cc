#include "runtime/kernel.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/host/tensor_map.h"
#include "runtime/tensor_data.h"

namespace tilec::runtime {

Arg Arg::Tensor(void* data, std::string dtype, std::vector<int64_t> shape, DeviceType device_type,
                int device_id) {
  Arg a;
  a.kind = Kind::kTensor;
  a.data = data;
  a.dtype = std::move(dtype);
  a.shape = std::move(shape);
  a.device_type = device_type;
  a.device_id = device_id;
  return a;
}

Arg Arg::Int(int64_t v) {
  Arg a;
  a.kind = Kind::kScalar;
  a.i = v;
  a.f = static_cast<double>(v);
  return a;
}

Arg Arg::Float(double v) {
  Arg a;
  a.kind = Kind::kScalar;
  a.f = v;
  a.is_float = true;
  return a;
}

int64_t TensorBytes(const DTypeInfo& dtype, const std::vector<int64_t>& shape) {
  int64_t outer = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) outer *= shape[i];
  const int64_t last = shape.empty() ? 1 : shape.back();
  const int64_t row_bytes = (last * dtype.bits + 7) / 8;
  return outer * row_bytes;
}

namespace {

constexpr int64_t kAlignment = 16;
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;

std::string ShapeText(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::string SpecShapeText(const ParamSpec& p) {
  std::vector<std::string> dims;
  for (const ShapeExpr& e : p.shape) dims.push_back(e.text());
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

const char* DeviceTypeName(DeviceType t) {
  switch (t) {
    case DeviceType::kCpu: return "host memory";
    case DeviceType::kCuda: return "cuda";
    case DeviceType::kHip: return "hip";
  }
  return "?";
}

// An int4 parameter given as int8/uint8 bytes: the last dimension is packed.
bool PackedInt4(const ParamSpec& p, const Arg& a) {
  return p.dtype.name == "int4" && (a.dtype == "int8" || a.dtype == "uint8");
}

// The logical size of dimension `d` of argument `a` for parameter `p`.
int64_t LogicalDim(const ParamSpec& p, const Arg& a, size_t d) {
  if (PackedInt4(p, a) && d + 1 == a.shape.size()) return a.shape[d] * 2;
  return a.shape[d];
}

// Row-major strides of `shape`, in elements.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = step;
    step *= shape[d];
  }
  return s;
}

// The strides of argument `a`: its own, or row-major.
std::vector<int64_t> ArgStrides(const Arg& a) {
  return a.strides.empty() ? RowMajorStrides(a.shape) : a.strides;
}

// The bytes from the first to the last element of argument `a`.
int64_t ArgBytes(const ParamSpec& p, const Arg& a) {
  if (p.strides.empty() || a.strides.empty()) return TensorBytes(p.dtype, a.shape);
  int64_t last = 0;
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] == 0) return 0;
    last += (a.shape[d] - 1) * a.strides[d];
  }
  return (last + 1) * p.dtype.bits / 8;
}

// Why strides `s` over `shape` would place two elements at one address
// (dimensions of extent 1 aside); empty when they do not.
std::string Overlap(const std::vector<int64_t>& shape, const std::vector<int64_t>& s) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
  for (size_t k = 0; k + 1 < dims.size(); ++k) {
    const size_t outer = dims[k], inner = dims[k + 1];
    if (s[outer] < s[inner] * shape[inner]) {
      return absl::StrCat("dimension ", outer, "'s stride ", s[outer], " is less than ",
                          shape[inner], " elements of dimension ", inner, " (stride ", s[inner],
                          ")");
    }
  }
  return "";
}

// The bytes a scalar argument is passed as, in the low bytes of a uint64.
absl::StatusOr<uint64_t> ScalarBits(const ParamSpec& p, const Arg& a) {
  uint64_t bits = 0;
  const std::string& t = p.dtype.name;
  if (t == "float32") {
    float v = static_cast<float>(a.f);
    std::memcpy(&bits, &v, 4);
  } else if (t == "float64") {
    std::memcpy(&bits, &a.f, 8);
  } else if (t == "float16") {
    bits = FloatToHalf(static_cast<float>(a.f));
  } else if (t == "bfloat16") {
    bits = FloatToBFloat16(static_cast<float>(a.f));
  } else if (p.dtype.is_float) {
    return absl::UnimplementedError(
        absl::StrCat("parameter ", p.name, ": ", t, " scalars are not supported by the runtime"));
  } else {
    if (a.is_float) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", p.name, " is a ", t, " scalar; got the float ", a.f));
    }
    const int64_t v = a.i;
    const int bits_n = p.dtype.bits;
    if (t == "bool") {
      bits = v != 0;
    } else if (bits_n < 64) {
      const int64_t lo = p.dtype.is_signed ? -(int64_t{1} << (bits_n - 1)) : 0;
      const int64_t hi =
          p.dtype.is_signed ? (int64_t{1} << (bits_n - 1)) - 1 : (int64_t{1} << bits_n) - 1;
      if (v < lo || v > hi) {
        return absl::InvalidArgumentError(absl::StrCat("parameter ", p.name, " is a ", t,
                                                       " scalar; ", v, " is out of its range"));
      }
      bits = static_cast<uint64_t>(v) & ((uint64_t{1} << bits_n) - 1);
    } else {
      std::memcpy(&bits, &v, 8);
    }
  }
  return bits;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> Kernel::Load(const Artifact& artifact, Backend* backend) {
  absl::StatusOr<std::unique_ptr<Module>> module = backend->Load(artifact);
  if (!module.ok()) return module.status();
  return std::unique_ptr<Kernel>(new Kernel(artifact, backend, *std::move(module)));
}

absl::StatusOr<std::map<std::string, int64_t>> Kernel::Check(absl::Span<const Arg> args) const {
  const Artifact& a = artifact_;
  if (args.size() != a.params.size()) {
    std::vector<std::string> names;
    for (const ParamSpec& p : a.params) names.push_back(p.name);
    return absl::InvalidArgumentError(absl::StrCat(a.program, " takes ", a.params.size(),
                                                   " arguments (", absl::StrJoin(names, ", "),
                                                   "); got ", args.size()));
  }
  // Kinds, dtypes and ranks first; then the dims the shapes bind.
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::string> bound_by;
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& p = a.params[i];
    const Arg& arg = args[i];
    const std::string what = absl::StrCat("parameter ", p.name, " (argument ", i + 1, ")");
    if (p.kind == ParamSpec::Kind::kScalar) {
      if (arg.kind != Arg::Kind::kScalar)
        return absl::InvalidArgumentError(
            absl::StrCat(what, " is a ", p.dtype.name, " scalar; got a tensor"));
      // Integer scalars may size grids and workspaces.
      if (!p.dtype.is_float) dims[p.name] = arg.i;
      continue;
    }
    if (arg.kind != Arg::Kind::kTensor) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is a ", p.dtype.name, " tensor of shape ", SpecShapeText(p), "; got a scalar"));
    }
    if (arg.dtype != p.dtype.name && !PackedInt4(p, arg)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be ", p.dtype.name, "; got ", arg.dtype,
                       p.dtype.name == "int4" ? " (int4 is also accepted as int8/uint8 bytes, "
                                                "two values per byte along the last dimension)"
                                              : ""));
    }
    if (arg.shape.size() != p.shape.size()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " must have rank ", p.shape.size(), " ",
                                                     SpecShapeText(p), "; got shape ",
                                                     ShapeText(arg.shape)));
    }
    for (size_t d = 0; d < p.shape.size(); ++d) {
      if (arg.shape[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": dimension ", d, " is negative (", arg.shape[d], ")"));
      }
      if (arg.strides.size() == arg.shape.size() && arg.strides[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": stride ", d, " is negative (", arg.strides[d], ")"));
      }
    }
    if (!arg.strides.empty() && arg.strides.size() != arg.shape.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", arg.strides.size(), " strides for rank ", arg.shape.size()));
    }
    // Shapes bind the names they hold; so do a strided tensor's strides.
    const std::vector<int64_t> strides = ArgStrides(arg);
    for (int pass = 0; pass < 2; ++pass) {
      const std::vector<ShapeExpr>& exprs = pass == 0 ? p.shape : p.strides;
      for (size_t d = 0; d < exprs.size(); ++d) {
        if (!exprs[d].is_name() || (pass == 1 && arg.shape[d] == 1)) continue;
        const std::string& dim = exprs[d].text();
        const int64_t v = pass == 0 ? LogicalDim(p, arg, d) : strides[d];
        const std::string source =
            absl::StrCat(p.name, pass == 0 ? "'s dimension " : "'s stride ", d);
        auto [it, fresh] = dims.emplace(dim, v);
        if (fresh) {
          bound_by[dim] = source;
        } else if (it->second != v) {
          return absl::InvalidArgumentError(absl::StrCat("dynamic dim ", dim, " is ", it->second,
                                                         " by ", bound_by[dim], " but ", v, " by ",
                                                         source));
        }
      }
    }
  }
  for (const std::string& d : a.dyn_dims) {
    if (!dims.count(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim ", d,
                       " is not a dimension of any tensor argument, so no launch can bind it"));
    }
    if (dims[d] > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim ", d, " is ", dims[d], ", beyond the kernels' int32 range"));
    }
  }
  for (const Artifact::Requirement& req : a.requirements) {
    absl::StatusOr<int64_t> holds = req.cond.Eval(dims);
    if (!holds.ok()) return holds.status();
    if (*holds) continue;
    std::vector<std::string> values;
    for (const std::string& n : req.cond.names()) values.push_back(absl::StrCat(n, " = ", dims[n]));
    return absl::InvalidArgumentError(absl::StrCat(a.program, " requires ", req.cond.text(), " (",
                                                   absl::StrJoin(values, ", "),
                                                   "): ", req.message));
  }
  const DeviceType want = backend_->device().memory_type();
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamSpec& p = a.params[i];
    const Arg& arg = args[i];
    const std::string what = absl::StrCat("parameter ", p.name, " (argument ", i + 1, ")");
    if (p.kind == ParamSpec::Kind::kScalar) {
      if (absl::StatusOr<uint64_t> bits = ScalarBits(p, arg); !bits.ok()) return bits.status();
      continue;
    }
    for (size_t d = 0; d < p.shape.size(); ++d) {
      absl::StatusOr<int64_t> v = p.shape[d].Eval(dims);
      if (!v.ok()) return v.status();
      if (LogicalDim(p, arg, d) != *v) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " must have shape ", SpecShapeText(p), "; dimension ", d, " is ",
                         LogicalDim(p, arg, d), ", expected ", *v,
                         p.shape[d].is_constant() ? "" : absl::StrCat(" (", p.shape[d].text(), ")"),
                         "; got shape ", ShapeText(arg.shape)));
      }
    }
    // The strides the kernel was compiled for: a strided tensor's, else
    // row-major. Dimensions of extent 1 may have any stride.
    const std::vector<int64_t> got = ArgStrides(arg);
    std::vector<int64_t> expected = RowMajorStrides(arg.shape);
    for (size_t d = 0; d < p.strides.size(); ++d) {
      absl::StatusOr<int64_t> v = p.strides[d].Eval(dims);
      if (!v.ok()) return v.status();
      expected[d] = *v;
    }
    for (size_t d = 0; d < expected.size(); ++d) {
      if (arg.shape[d] == 1 || got[d] == expected[d]) continue;
      if (p.strides.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " must be contiguous (row-major); got strides ", ShapeText(got),
                         " for shape ", ShapeText(arg.shape), ": pass a contiguous copy"));
      }
      std::vector<std::string> texts;
      for (const ShapeExpr& e : p.strides) texts.push_back(e.text());
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must have strides ", ShapeText(expected), " (",
                       absl::StrJoin(texts, ", "), "); stride ", d, " is ", got[d],
                       "; got strides ", ShapeText(got), " for shape ", ShapeText(arg.shape)));
    }
    if (!p.strides.empty()) {
      if (std::string why = Overlap(arg.shape, got); !why.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": strides ", ShapeText(got), " for shape ", ShapeText(arg.shape),
                         " place elements on top of each other: ", why));
      }
    }
    if (arg.device_type != want ||
        (want != DeviceType::kCpu && arg.device_id != backend_->device().ordinal)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is in ", DeviceTypeName(arg.device_type),
                       arg.device_type == DeviceType::kCpu ? "" : absl::StrCat(":", arg.device_id),
                       ", but the kernel runs on ", backend_->device().ToString(),
                       want == DeviceType::kCpu ? " (host memory)" : ""));
    }
    if (reinterpret_cast<uintptr_t>(arg.data) % kAlignment != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be ", kAlignment, "-byte aligned; its data is at ",
                       absl::Hex(reinterpret_cast<uintptr_t>(arg.data))));
    }
    if (ArgBytes(p, arg) > 0) {
      if (absl::Status st = backend_->CheckPointer(arg.data, what); !st.ok()) return st;
    }
  }
  return dims;
}

absl::Status Kernel::Launch(absl::Span<const Arg> args, void* stream) {
  absl::StatusOr<std::map<std::string, int64_t>> dims = Check(args);
  if (!dims.ok()) return dims.status();
  return Run(args, *dims, stream);
}

absl::Status Kernel::Run(absl::Span<const Arg> args, const std::map<std::string, int64_t>& dims,
                         void* stream) {
  const Artifact& a = artifact_;
  // Grids first: nothing is allocated or launched for a launch that cannot run.
  std::vector<LaunchConfig> configs;
  for (const KernelSpec& k : a.kernels) {
    LaunchConfig c;
    for (size_t i = 0; i < k.grid.size(); ++i) {
      absl::StatusOr<int64_t> g = k.grid[i].Eval(dims);
      if (!g.ok()) return g.status();
      const int64_t limit = i == 0 ? kMaxGridX : kMaxGridYZ;
      if (*g < 1 || *g > limit) {
        return absl::InvalidArgumentError(
            absl::StrCat("kernel ", k.name, ": grid extent ", i, " (", k.grid[i].text(), ") is ",
                         *g, " for these shapes; a launch needs 1 to ", limit));
      }
      c.grid[i] = static_cast<uint32_t>(*g);
    }
    for (int i = 0; i < 3; ++i) c.block[i] = static_cast<uint32_t>(k.block[i]);
    c.smem_bytes = static_cast<size_t>(k.smem_bytes);
    configs.push_back(c);
  }
  std::vector<LaunchBuffer> buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    if (a.params[i].kind == ParamSpec::Kind::kTensor)
      buffers.push_back(
          {args[i].data, static_cast<size_t>(ArgBytes(a.params[i], args[i])), a.params[i].name});
  }
  std::vector<void*> workspaces(a.workspaces.size(), nullptr);
  absl::Status status;
  for (size_t w = 0; w < a.workspaces.size() && status.ok(); ++w) {
    absl::StatusOr<int64_t> bytes = a.workspaces[w].bytes.Eval(dims);
    if (!bytes.ok()) {
      status = bytes.status();
      break;
    }
    absl::StatusOr<void*> p = backend_->AllocOnStream(static_cast<size_t>(*bytes), stream);
    if (!p.ok()) {
      status = p.status();
      break;
    }
    workspaces[w] = *p;
    status = backend_->Zero(*p, static_cast<size_t>(*bytes), stream);
    buffers.push_back({*p, static_cast<size_t>(*bytes), a.workspaces[w].name});
  }
  struct alignas(64) MapBytes {
    unsigned char bytes[128];
  };
  for (size_t ki = 0; ki < a.kernels.size() && status.ok(); ++ki) {
    const KernelSpec& k = a.kernels[ki];
    std::vector<uint64_t> values(k.args.size());
    std::vector<void*> ptrs(k.args.size());
    std::vector<MapBytes> maps(k.tensor_maps.size());
    for (size_t m = 0; m < k.tensor_maps.size() && status.ok(); ++m) {
      const TensorMapSpec& t = k.tensor_maps[m];
      const ParamSpec& p = a.params[t.param];
      absl::StatusOr<tl::host::TensorMapDesc> desc = host::DescribeTensorMap(
          args[t.param].data, args[t.param].shape, p.dtype.bits / 8, t.box, t.swizzle_bytes,
          absl::StrCat("parameter ", p.name));
      status = desc.ok() ? backend_->EncodeTensorMap(*desc, maps[m].bytes) : desc.status();
    }
    for (size_t j = 0; j < k.args.size() && status.ok(); ++j) {
      const KernelArgRef& ref = k.args[j];
      switch (ref.kind) {
        case KernelArgRef::Kind::kParam: {
          const ParamSpec& p = a.params[ref.index];
          if (p.kind == ParamSpec::Kind::kTensor) {
            std::memcpy(&values[j], &args[ref.index].data, sizeof(void*));
          } else {
            absl::StatusOr<uint64_t> bits = ScalarBits(p, args[ref.index]);
            if (!bits.ok())
              status = bits.status();
            else
              values[j] = *bits;
          }
          break;
        }
        case KernelArgRef::Kind::kWorkspace:
          std::memcpy(&values[j], &workspaces[ref.index], sizeof(void*));
          break;
        case KernelArgRef::Kind::kDynDim: {
          const int32_t v = static_cast<int32_t>(dims.at(a.dyn_dims[ref.index]));
          std::memcpy(&values[j], &v, sizeof v);
          break;
        }
        case KernelArgRef::Kind::kTensorMap:
          break;
      }
      ptrs[j] = ref.kind == KernelArgRef::Kind::kTensorMap
                    ? static_cast<void*>(maps[ref.index].bytes)
                    : static_cast<void*>(&values[j]);
    }
    if (status.ok())
      status = module_->Launch(static_cast<int>(ki), configs[ki], ptrs.data(), buffers, stream);
  }
  for (void* w : workspaces) {
    if (w == nullptr) continue;
    absl::Status st = backend_->FreeOnStream(w, stream);
    if (status.ok()) status = st;
  }
  return status;
}

absl::StatusOr<std::vector<double>> Kernel::Time(absl::Span<const Arg> args,
                                                 const TimingOptions& options, void* stream) {
  if (options.iterations < 1 || options.warmup < 0) {
    return absl::InvalidArgumentError(
        "timing needs at least one iteration and no negative warm-up");
  }
  absl::StatusOr<std::map<std::string, int64_t>> dims = Check(args);
  if (!dims.ok()) return dims.status();
  for (int i = 0; i < options.warmup; ++i) {
    if (absl::Status st = Run(args, *dims, stream); !st.ok()) return st;
  }
  if (absl::Status st = backend_->Synchronize(stream); !st.ok()) return st;
  absl::StatusOr<std::unique_ptr<Backend::Timer>> timer = backend_->NewTimer();
  if (!timer.ok()) return timer.status();
  std::vector<double> ms;
  for (int i = 0; i < options.iterations; ++i) {
    if (options.flush_cache) {
      if (absl::Status st = backend_->FlushCache(stream); !st.ok()) return st;
    }
    if (absl::Status st = (*timer)->Start(stream); !st.ok()) return st;
    if (absl::Status st = Run(args, *dims, stream); !st.ok()) return st;
    if (absl::Status st = (*timer)->Stop(stream); !st.ok()) return st;
    absl::StatusOr<double> t = (*timer)->ElapsedMs();
    if (!t.ok()) return t.status();
    ms.push_back(*t);
  }
  return ms;
}

}  // namespace tilec::runtime
