#include "runtime/artifact.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "compiler/cache/signing.h"
#include "runtime/json.h"

namespace tilec::runtime {

std::optional<DTypeInfo> LookupDType(std::string_view name) {
  static const DTypeInfo kTypes[] = {
      {"bool", 8, false, false},    {"int4", 4, false, true},       {"int8", 8, false, true},
      {"uint8", 8, false, false},   {"int16", 16, false, true},     {"uint16", 16, false, false},
      {"int32", 32, false, true},   {"uint32", 32, false, false},   {"int64", 64, false, true},
      {"uint64", 64, false, false}, {"float8_e4m3", 8, true, true}, {"float8_e5m2", 8, true, true},
      {"float16", 16, true, true},  {"bfloat16", 16, true, true},   {"float32", 32, true, true},
      {"float64", 64, true, true},  {"float8_e4m3fnuz", 8, true, true},
      {"float8_e5m2fnuz", 8, true, true},
  };
  for (const DTypeInfo& t : kTypes) {
    if (t.name == name) return t;
  }
  return std::nullopt;
}

std::string Artifact::vendor() const { return target.rfind("gfx", 0) == 0 ? "hip" : "cuda"; }

namespace {

class MetadataReader {
 public:
  absl::Status Error(const std::string& field, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("artifact metadata: ", field.empty() ? "" : field + ": ", what));
  }

  absl::StatusOr<const json::Value*> Member(const json::Value& obj, const std::string& field,
                                            const std::string& key, json::Value::Kind kind) {
    const json::Value* v = obj.Find(key);
    const std::string where = field.empty() ? key : field + "." + key;
    if (v == nullptr) return Error(where, "missing");
    if (v->kind() != kind) {
      static const char* const kNames[] = {"null",     "a boolean", "an integer", "a number",
                                           "a string", "an array",  "an object"};
      return Error(where, absl::StrCat("must be ", kNames[static_cast<int>(kind)]));
    }
    return v;
  }

  absl::StatusOr<DTypeInfo> DType(const json::Value& obj, const std::string& field) {
    absl::StatusOr<const json::Value*> v = Member(obj, field, "dtype", json::Value::Kind::kString);
    if (!v.ok()) return v.status();
    std::optional<DTypeInfo> t = LookupDType((*v)->string());
    if (!t) return Error(field + ".dtype", "unknown dtype \"" + (*v)->string() + "\"");
    return *t;
  }

  absl::StatusOr<ShapeExpr> Expr(const json::Value& v, const std::string& field,
                                 const std::vector<std::string>& dims) {
    if (v.is_int()) return ShapeExpr::Parse(std::to_string(v.int_value()));
    if (!v.is_string()) return Error(field, "must be an integer expression (a string)");
    absl::StatusOr<ShapeExpr> e = ShapeExpr::Parse(v.string());
    if (!e.ok()) return Error(field, std::string(e.status().message()));
    for (const std::string& n : e->names()) {
      if (std::find(dims.begin(), dims.end(), n) == dims.end())
        return Error(
            field, absl::StrCat("\"", v.string(), "\" names ", n, ", which is not a dynamic dim"));
    }
    return e;
  }

  absl::StatusOr<std::vector<ShapeExpr>> Exprs(const json::Value& obj, const std::string& field,
                                               const std::string& key,
                                               const std::vector<std::string>& dims) {
    absl::StatusOr<const json::Value*> arr = Member(obj, field, key, json::Value::Kind::kArray);
    if (!arr.ok()) return arr.status();
    std::vector<ShapeExpr> out;
    for (size_t i = 0; i < (*arr)->array().size(); ++i) {
      absl::StatusOr<ShapeExpr> e =
          Expr((*arr)->array()[i], absl::StrCat(field, ".", key, "[", i, "]"), dims);
      if (!e.ok()) return e.status();
      out.push_back(*std::move(e));
    }
    return out;
  }
};

#define TILEC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = *std::move(tmp)
#define TILEC_CONCAT_INNER(a, b) a##b
#define TILEC_CONCAT(a, b) TILEC_CONCAT_INNER(a, b)
#define ASSIGN_OR_RETURN(lhs, expr) \
  TILEC_ASSIGN_OR_RETURN_IMPL(TILEC_CONCAT(status_or_, __LINE__), lhs, expr)

using Kind = json::Value::Kind;

}  // namespace

absl::StatusOr<Artifact> Artifact::Parse(std::string_view text) {
  MetadataReader r;
  absl::StatusOr<json::Value> doc = json::Parse(text);
  if (!doc.ok()) return r.Error("", std::string(doc.status().message()));
  if (!doc->is_object()) return r.Error("", "must be a JSON object");
  Artifact a;
  a.metadata_json = std::string(text);
  ASSIGN_OR_RETURN(const json::Value* schema, r.Member(*doc, "", "schema", Kind::kString));
  a.schema = schema->string();
  if (a.schema != "tilec.cuda.artifact.v1") {
    return r.Error("schema",
                   "\"" + a.schema + "\" is not one this runtime reads (tilec.cuda.artifact.v1)");
  }
  ASSIGN_OR_RETURN(const json::Value* program, r.Member(*doc, "", "program", Kind::kString));
  a.program = program->string();
  ASSIGN_OR_RETURN(const json::Value* target, r.Member(*doc, "", "target", Kind::kString));
  a.target = target->string();
  if (const json::Value* source = doc->Find("source"); source && source->is_string())
    a.source = source->string();
  if (const json::Value* config = doc->Find("config"); config && config->is_object()) {
    for (const auto& [name, v] : config->object()) {
      if (v.is_int()) a.config.emplace_back(name, v.int_value());
    }
  }
  ASSIGN_OR_RETURN(const json::Value* dims, r.Member(*doc, "", "dyn_dims", Kind::kArray));
  for (size_t i = 0; i < dims->array().size(); ++i) {
    const json::Value& d = dims->array()[i];
    if (!d.is_string() || d.string().empty())
      return r.Error(absl::StrCat("dyn_dims[", i, "]"), "must be a name");
    a.dyn_dims.push_back(d.string());
  }
  if (const json::Value* reqs = doc->Find("requires")) {
    if (!reqs->is_array()) return r.Error("requires", "must be an array");
    for (size_t i = 0; i < reqs->array().size(); ++i) {
      const json::Value& q = reqs->array()[i];
      const std::string field = absl::StrCat("requires[", i, "]");
      if (!q.is_object()) return r.Error(field, "must be an object");
      ASSIGN_OR_RETURN(const json::Value* cond, r.Member(q, field, "cond", Kind::kString));
      ASSIGN_OR_RETURN(const json::Value* message, r.Member(q, field, "message", Kind::kString));
      ASSIGN_OR_RETURN(ShapeExpr e, r.Expr(*cond, field + ".cond", a.dyn_dims));
      a.requirements.push_back({std::move(e), message->string()});
    }
  }
  std::map<std::string, KernelArgRef> names;
  auto declare = [&](const std::string& name, KernelArgRef ref,
                     const std::string& field) -> absl::Status {
    if (!names.emplace(name, ref).second)
      return r.Error(field, "the name " + name + " is declared twice");
    return absl::OkStatus();
  };
  for (size_t i = 0; i < a.dyn_dims.size(); ++i) {
    if (absl::Status st = declare(a.dyn_dims[i], {KernelArgRef::Kind::kDynDim, static_cast<int>(i)},
                                  absl::StrCat("dyn_dims[", i, "]"));
        !st.ok())
      return st;
  }

  ASSIGN_OR_RETURN(const json::Value* params, r.Member(*doc, "", "params", Kind::kArray));
  for (size_t i = 0; i < params->array().size(); ++i) {
    const json::Value& p = params->array()[i];
    const std::string field = absl::StrCat("params[", i, "]");
    if (!p.is_object()) return r.Error(field, "must be an object");
    ParamSpec spec;
    ASSIGN_OR_RETURN(const json::Value* name, r.Member(p, field, "name", Kind::kString));
    spec.name = name->string();
    ASSIGN_OR_RETURN(const json::Value* kind, r.Member(p, field, "kind", Kind::kString));
    ASSIGN_OR_RETURN(spec.dtype, r.DType(p, field));
    if (kind->string() == "tensor") {
      spec.kind = ParamSpec::Kind::kTensor;
      ASSIGN_OR_RETURN(spec.shape, r.Exprs(p, field, "shape", a.dyn_dims));
      if (p.Find("strides") != nullptr) {
        ASSIGN_OR_RETURN(spec.strides, r.Exprs(p, field, "strides", a.dyn_dims));
        if (spec.strides.size() != spec.shape.size()) {
          return r.Error(field + ".strides", absl::StrCat("has ", spec.strides.size(),
                                                          " entries for rank ", spec.shape.size()));
        }
        if (spec.dtype.bits < 8) {
          return r.Error(field + ".strides", "a strided tensor cannot be " + spec.dtype.name);
        }
      }
    } else if (kind->string() == "scalar") {
      spec.kind = ParamSpec::Kind::kScalar;
      if (spec.dtype.bits < 8) return r.Error(field, "a scalar cannot be " + spec.dtype.name);
    } else {
      return r.Error(field + ".kind", "\"" + kind->string() + "\" is not tensor or scalar");
    }
    if (absl::Status st =
            declare(spec.name, {KernelArgRef::Kind::kParam, static_cast<int>(i)}, field);
        !st.ok())
      return st;
    a.params.push_back(std::move(spec));
  }

  // Workspace sizes and grids are over the dynamic dims and the integer
  // scalar parameters (`T.Kernel(T.ceildiv(max_len, 64))`).
  std::vector<std::string> launch_names = a.dyn_dims;
  for (const ParamSpec& p : a.params) {
    if (p.kind == ParamSpec::Kind::kScalar && !p.dtype.is_float) launch_names.push_back(p.name);
  }
  ASSIGN_OR_RETURN(const json::Value* workspaces, r.Member(*doc, "", "workspaces", Kind::kArray));
  for (size_t i = 0; i < workspaces->array().size(); ++i) {
    const json::Value& w = workspaces->array()[i];
    const std::string field = absl::StrCat("workspaces[", i, "]");
    if (!w.is_object()) return r.Error(field, "must be an object");
    WorkspaceSpec spec;
    ASSIGN_OR_RETURN(const json::Value* name, r.Member(w, field, "name", Kind::kString));
    spec.name = name->string();
    ASSIGN_OR_RETURN(spec.dtype, r.DType(w, field));
    const json::Value* bytes = w.Find("bytes");
    if (bytes == nullptr) return r.Error(field + ".bytes", "missing");
    ASSIGN_OR_RETURN(spec.bytes, r.Expr(*bytes, field + ".bytes", launch_names));
    if (absl::Status st =
            declare(spec.name, {KernelArgRef::Kind::kWorkspace, static_cast<int>(i)}, field);
        !st.ok())
      return st;
    a.workspaces.push_back(std::move(spec));
  }

  ASSIGN_OR_RETURN(const json::Value* kernels, r.Member(*doc, "", "kernels", Kind::kArray));
  if (kernels->array().empty()) return r.Error("kernels", "the artifact has no kernel");
  for (size_t i = 0; i < kernels->array().size(); ++i) {
    const json::Value& k = kernels->array()[i];
    const std::string field = absl::StrCat("kernels[", i, "]");
    if (!k.is_object()) return r.Error(field, "must be an object");
    KernelSpec spec;
    ASSIGN_OR_RETURN(const json::Value* name, r.Member(k, field, "name", Kind::kString));
    spec.name = name->string();
    ASSIGN_OR_RETURN(spec.grid, r.Exprs(k, field, "grid", launch_names));
    if (spec.grid.empty() || spec.grid.size() > 3)
      return r.Error(field + ".grid", "must have 1 to 3 extents");
    ASSIGN_OR_RETURN(const json::Value* block, r.Member(k, field, "block", Kind::kArray));
    if (block->array().empty() || block->array().size() > 3)
      return r.Error(field + ".block", "must have 1 to 3 extents");
    int64_t threads = 1;
    for (size_t d = 0; d < block->array().size(); ++d) {
      const json::Value& b = block->array()[d];
      if (!b.is_int() || b.int_value() < 1 || b.int_value() > 1024)
        return r.Error(absl::StrCat(field, ".block[", d, "]"), "must be an integer in [1, 1024]");
      spec.block[d] = static_cast<int>(b.int_value());
      threads *= b.int_value();
    }
    if (threads > 1024) return r.Error(field + ".block", "more than 1024 threads");
    ASSIGN_OR_RETURN(const json::Value* smem, r.Member(k, field, "smem_bytes", Kind::kInt));
    if (smem->int_value() < 0 || smem->int_value() > (int64_t{1} << 20))
      return r.Error(field + ".smem_bytes", "out of range");
    spec.smem_bytes = smem->int_value();
    if (const json::Value* regs = k.Find("registers"); regs && regs->is_int())
      spec.registers = static_cast<int>(regs->int_value());
    std::map<std::string, KernelArgRef> kernel_names = names;
    if (const json::Value* maps = k.Find("tensor_maps")) {
      if (!maps->is_array()) return r.Error(field + ".tensor_maps", "must be an array");
      for (size_t j = 0; j < maps->array().size(); ++j) {
        const json::Value& m = maps->array()[j];
        const std::string mfield = absl::StrCat(field, ".tensor_maps[", j, "]");
        if (!m.is_object()) return r.Error(mfield, "must be an object");
        TensorMapSpec t;
        ASSIGN_OR_RETURN(const json::Value* mname, r.Member(m, mfield, "name", Kind::kString));
        t.name = mname->string();
        ASSIGN_OR_RETURN(const json::Value* tensor, r.Member(m, mfield, "tensor", Kind::kString));
        auto it = names.find(tensor->string());
        if (it == names.end() || it->second.kind != KernelArgRef::Kind::kParam ||
            a.params[it->second.index].kind != ParamSpec::Kind::kTensor) {
          return r.Error(mfield + ".tensor", "\"" + tensor->string() + "\" is not a tensor parameter");
        }
        t.param = it->second.index;
        const ParamSpec& tp = a.params[t.param];
        if (!tp.strides.empty() || tp.dtype.bits % 8 != 0) {
          return r.Error(mfield + ".tensor", "TMA needs a contiguous tensor of whole bytes");
        }
        ASSIGN_OR_RETURN(const json::Value* box, r.Member(m, mfield, "box", Kind::kArray));
        for (const json::Value& b : box->array()) {
          if (!b.is_int() || b.int_value() < 1 || b.int_value() > 256)
            return r.Error(mfield + ".box", "must be integers in [1, 256]");
          t.box.push_back(b.int_value());
        }
        if (t.box.size() != tp.shape.size())
          return r.Error(mfield + ".box", "must have one extent per dimension of the tensor");
        ASSIGN_OR_RETURN(const json::Value* sw, r.Member(m, mfield, "swizzle", Kind::kInt));
        const int64_t swz = sw->int_value();
        if (swz != 0 && swz != 32 && swz != 64 && swz != 128)
          return r.Error(mfield + ".swizzle", "must be 0, 32, 64 or 128");
        t.swizzle_bytes = static_cast<int>(swz);
        if (kernel_names.count(t.name)) return r.Error(mfield + ".name", "names another argument");
        kernel_names[t.name] = {KernelArgRef::Kind::kTensorMap,
                                static_cast<int>(spec.tensor_maps.size())};
        spec.tensor_maps.push_back(std::move(t));
      }
    }
    ASSIGN_OR_RETURN(const json::Value* kparams, r.Member(k, field, "params", Kind::kArray));
    for (size_t j = 0; j < kparams->array().size(); ++j) {
      const json::Value& p = kparams->array()[j];
      const std::string pfield = absl::StrCat(field, ".params[", j, "]");
      if (!p.is_string()) return r.Error(pfield, "must be a name");
      auto it = kernel_names.find(p.string());
      if (it == kernel_names.end()) {
        return r.Error(pfield,
                       "\"" + p.string() + "\" is not a parameter, workspace or dynamic dim");
      }
      spec.args.push_back(it->second);
    }
    a.kernels.push_back(std::move(spec));
  }
  return a;
}

namespace {

absl::StatusOr<std::string> ReadWhole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

absl::StatusOr<Artifact> Artifact::ReadFiles(const std::string& json_path) {
  std::filesystem::path path(json_path);
  absl::StatusOr<std::string> text = ReadWhole(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<Artifact> a = Parse(*text);
  if (!a.ok()) {
    return absl::Status(a.status().code(), json_path + ": " + std::string(a.status().message()));
  }
  std::filesystem::path base = path;
  base.replace_extension();
  const char* binary_ext = a->vendor() == "hip" ? ".hsaco" : ".cubin";
  if (absl::StatusOr<std::string> bin = ReadWhole(base.string() + binary_ext); bin.ok())
    a->binary = *std::move(bin);
  if (a->source.empty()) {
    if (absl::StatusOr<std::string> src = ReadWhole(base.string() + ".cu"); src.ok())
      a->source = *std::move(src);
  }
  return a;
}

absl::StatusOr<Artifact> Artifact::ReadFilesVerified(const std::string& json_path,
                                                     const cache::Verifier& verifier) {
  absl::StatusOr<Artifact> a = ReadFiles(json_path);
  if (!a.ok()) return a;
  std::filesystem::path base(json_path);
  base.replace_extension();
  const std::string sig_path = base.string() + ".sig";
  absl::StatusOr<std::string> sig_text = ReadWhole(sig_path);
  auto refuse = [&](const std::string& why) {
    return absl::PermissionDeniedError(
        absl::StrCat(json_path, ": not loaded: ", why, " (signature file ", sig_path, ")"));
  };
  if (!sig_text.ok()) return refuse("the artifact has no signature");
  absl::StatusOr<cache::ParsedSignature> sig = cache::ParseSignatureFile(*sig_text);
  if (!sig.ok()) return refuse(std::string(sig.status().message()));
  std::string metadata = a->metadata_json;
  if (!metadata.empty() && metadata.back() == '\n') metadata.pop_back();
  if (a->binary.empty()) return refuse("the artifact's binary is missing");
  if (!verifier.Verify(
          cache::ArtifactStatement(sig->cache_key, cache::Sha256Hex(a->binary), metadata),
          sig->signature)) {
    return refuse(
        "its signature does not verify with the given key (a modified binary or "
        "metadata, or another signer)");
  }
  return a;
}

}  // namespace tilec::runtime
