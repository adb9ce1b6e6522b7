#include "compiler/interp/npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/interp/numerics.h"
#include "compiler/ir/sv.h"

namespace tilec::interp {
namespace {

using ir::DType;

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// A parsed .npy file; `data` points into the caller's buffer.
struct NpyArray {
  char kind = 0;  // 'f', 'i', 'u' or 'b'
  int size = 0;   // bytes per element
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  int64_t count = 1;
  std::string_view data;
};

absl::Status Bad(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed .npy data: ", what));
}

// The value text that follows `'key':` in a header dict, or nullopt.
std::optional<std::string_view> ValueOf(std::string_view header, std::string_view key) {
  for (char q : {'\'', '"'}) {
    std::string quoted = std::string(1, q) + std::string(key) + std::string(1, q);
    size_t at = header.find(quoted);
    if (at == std::string_view::npos) continue;
    size_t p = at + quoted.size();
    while (p < header.size() && (std::isspace(static_cast<unsigned char>(header[p])) != 0)) ++p;
    if (p >= header.size() || header[p] != ':') return std::nullopt;
    ++p;
    while (p < header.size() && (std::isspace(static_cast<unsigned char>(header[p])) != 0)) ++p;
    return header.substr(p);
  }
  return std::nullopt;
}

absl::StatusOr<NpyArray> Parse(std::string_view data) {
  if (data.size() < kMagicLen + 4 ||
      data.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen)) {
    return Bad("missing the \\x93NUMPY magic");
  }
  const int major = static_cast<uint8_t>(data[6]);
  size_t header_len, start;
  if (major == 1) {
    header_len =
        static_cast<uint8_t>(data[8]) | (static_cast<size_t>(static_cast<uint8_t>(data[9])) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) return Bad("truncated header");
    header_len = 0;
    for (int k = 3; k >= 0; --k) header_len = (header_len << 8) | static_cast<uint8_t>(data[8 + k]);
    start = 12;
  } else {
    return Bad(absl::StrCat("unsupported format version ", major));
  }
  if (data.size() < start + header_len) return Bad("truncated header");
  std::string_view header = data.substr(start, header_len);
  NpyArray a;

  auto descr = ValueOf(header, "descr");
  if (!descr || descr->empty() || ((*descr)[0] != '\'' && (*descr)[0] != '"')) {
    return Bad("header has no 'descr' string");
  }
  size_t close = descr->find((*descr)[0], 1);
  if (close == std::string_view::npos) return Bad("unterminated 'descr'");
  a.descr = std::string(descr->substr(1, close - 1));
  std::string_view d = a.descr;
  if (!d.empty() && (d[0] == '<' || d[0] == '|' || d[0] == '=' || d[0] == '>')) {
    char order = d[0];
    d.remove_prefix(1);
    if (order == '>' && !(d.size() == 2 && d[1] == '1')) {
      return absl::InvalidArgumentError(absl::StrCat("big-endian .npy data ('", a.descr,
                                                     "') is not supported; save it little-endian"));
    }
  }
  if (d.size() != 2 || std::string_view("fiub").find(d[0]) == std::string_view::npos ||
      !std::isdigit(static_cast<unsigned char>(d[1]))) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported .npy descriptor '", a.descr, "'"));
  }
  a.kind = d[0];
  a.size = d[1] - '0';
  const bool size_ok = a.kind == 'b'   ? a.size == 1
                       : a.kind == 'f' ? (a.size == 2 || a.size == 4 || a.size == 8)
                                       : (a.size == 1 || a.size == 2 || a.size == 4 || a.size == 8);
  if (!size_ok) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported .npy descriptor '", a.descr, "'"));
  }

  auto fortran = ValueOf(header, "fortran_order");
  if (!fortran) return Bad("header has no 'fortran_order'");
  if (fortran->substr(0, 4) == "True") {
    a.fortran_order = true;
  } else if (fortran->substr(0, 5) != "False") {
    return Bad("'fortran_order' is neither True nor False");
  }

  auto shape = ValueOf(header, "shape");
  if (!shape || shape->empty() || (*shape)[0] != '(') return Bad("header has no 'shape' tuple");
  size_t p = 1;
  while (true) {
    while (p < shape->size() && ((*shape)[p] == ' ' || (*shape)[p] == ',')) ++p;
    if (p >= shape->size()) return Bad("unterminated 'shape'");
    if ((*shape)[p] == ')') break;
    if (!std::isdigit(static_cast<unsigned char>((*shape)[p]))) return Bad("bad 'shape' entry");
    int64_t v = 0;
    while (p < shape->size() && std::isdigit(static_cast<unsigned char>((*shape)[p]))) {
      v = v * 10 + ((*shape)[p++] - '0');
      if (v > (int64_t{1} << 48)) return Bad("'shape' entry too large");
    }
    // Python 2 era writers append 'L' to longs.
    if (p < shape->size() && (*shape)[p] == 'L') ++p;
    a.shape.push_back(v);
    a.count *= v;
  }
  size_t need = static_cast<size_t>(a.count) * static_cast<size_t>(a.size);
  std::string_view body = data.substr(start + header_len);
  if (body.size() < need) {
    return Bad(absl::StrCat("expected ", need, " data bytes for shape ", ShapeString(a.shape),
                            " of '", a.descr, "', found ", body.size()));
  }
  a.data = body.substr(0, need);
  return a;
}

// Byte offset in `a.data` of the element with row-major flat index i.
int64_t ElementOffset(const NpyArray& a, int64_t i) {
  if (!a.fortran_order || a.shape.size() < 2) return i * a.size;
  int64_t off = 0, stride = 1;
  std::vector<int64_t> index(a.shape.size());
  for (int d = static_cast<int>(a.shape.size()) - 1; d >= 0; --d) {
    index[d] = i % a.shape[d];
    i /= a.shape[d];
  }
  for (size_t d = 0; d < a.shape.size(); ++d) {
    off += index[d] * stride;
    stride *= a.shape[d];
  }
  return off * a.size;
}

uint64_t RawBits(const NpyArray& a, int64_t i) {
  const auto* p = reinterpret_cast<const uint8_t*>(a.data.data()) + ElementOffset(a, i);
  uint64_t v = 0;
  for (int k = a.size - 1; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

bool IsFloatKind(const NpyArray& a) { return a.kind == 'f'; }

double FloatElement(const NpyArray& a, int64_t i) {
  uint64_t bits = RawBits(a, i);
  switch (a.size) {
    case 2: return DecodeFloat(bits, DType::kFloat16);
    case 4: return DecodeFloat(bits, DType::kFloat32);
    default: return DecodeFloat(bits, DType::kFloat64);
  }
}

int64_t IntElement(const NpyArray& a, int64_t i) {
  uint64_t bits = RawBits(a, i);
  if (a.kind == 'b') return bits != 0;
  if (a.kind == 'u' || a.size == 8) return static_cast<int64_t>(bits);
  int shift = 64 - 8 * a.size;
  return static_cast<int64_t>(bits << shift) >> shift;
}

std::optional<DType> NativeDType(const NpyArray& a) {
  switch (a.kind) {
    case 'b': return a.size == 1 ? std::optional(DType::kBool) : std::nullopt;
    case 'i':
      switch (a.size) {
        case 1: return DType::kInt8;
        case 2: return DType::kInt16;
        case 4: return DType::kInt32;
        case 8: return DType::kInt64;
      }
      return std::nullopt;
    case 'u':
      switch (a.size) {
        case 1: return DType::kUInt8;
        case 2: return DType::kUInt16;
        case 4: return DType::kUInt32;
        case 8: return DType::kUInt64;
      }
      return std::nullopt;
    case 'f':
      switch (a.size) {
        case 2: return DType::kFloat16;
        case 4: return DType::kFloat32;
        case 8: return DType::kFloat64;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::string_view Descr(DType t) {
  switch (t) {
    case DType::kBool: return "|b1";
    case DType::kInt4:
    case DType::kUInt8: return "|u1";
    case DType::kInt8: return "|i1";
    case DType::kInt16: return "<i2";
    case DType::kUInt16: return "<u2";
    case DType::kUInt32: return "<u4";
    case DType::kUInt64: return "<u8";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kFloat16: return "<f2";
    case DType::kFloat64: return "<f8";
    default: return "<f4";  // float32, bfloat16, float8
  }
}

std::vector<int64_t> FileShape(const Tensor& t) {
  if (t.dtype() != DType::kInt4) return t.shape();
  std::vector<int64_t> s = t.shape();
  if (!s.empty() && s.back() % 2 == 0) {
    s.back() /= 2;
    return s;
  }
  return {Tensor::StorageBytes(DType::kInt4, t.num_elements())};
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  return ss.str();
}

absl::Status WithPath(const absl::Status& s, const std::string& path) {
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

}  // namespace

std::string EncodeNpy(const Tensor& t) {
  std::vector<int64_t> shape = FileShape(t);
  std::string dims = absl::StrJoin(shape, ", ");
  if (shape.size() == 1) dims += ",";
  std::string header = absl::StrCat("{'descr': '", Sv(Descr(t.dtype())),
                                    "', 'fortran_order': False, 'shape': (", dims, "), }");
  // The prefix plus header is padded with spaces to a multiple of 64 bytes and
  // ends in a newline.
  size_t prefix = 10;
  size_t total = prefix + header.size() + 1;
  if ((total + 63) / 64 * 64 - prefix > 65535) prefix = 12;
  total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(prefix == 10 ? 1 : 2));
  out.push_back(0);
  for (size_t k = 0; k < prefix - 8; ++k)
    out.push_back(static_cast<char>((header.size() >> (8 * k)) & 0xFF));
  out += header;

  const DType d = t.dtype();
  if (d == DType::kBFloat16 || ir::IsFloat8(d)) {
    Tensor wide(DType::kFloat32, t.shape());
    for (int64_t i = 0; i < t.num_elements(); ++i) wide.SetDouble(i, t.GetDouble(i));
    out.append(reinterpret_cast<const char*>(wide.bytes().data()), wide.bytes().size());
  } else {
    out.append(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
  }
  return out;
}

absl::Status WriteNpy(const std::string& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot open ", path, " for writing"));
  std::string data = EncodeNpy(t);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("error writing ", path));
  return absl::OkStatus();
}

absl::StatusOr<Tensor> DecodeNpy(std::string_view data) {
  auto parsed = Parse(data);
  if (!parsed.ok()) return parsed.status();
  const NpyArray& a = *parsed;
  std::optional<DType> dtype = NativeDType(a);
  if (!dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the .npy descriptor '", a.descr,
        "' has no tilec element type; read it with DecodeNpyAs and the intended dtype"));
  }
  Tensor t(*dtype, a.shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (*dtype == DType::kBool) {
      t.SetInt(i, IntElement(a, i));
    } else {
      t.SetBits(i, RawBits(a, i));
    }
  }
  return t;
}

absl::StatusOr<Tensor> DecodeNpyAs(std::string_view data, DType dtype,
                                   absl::Span<const int64_t> shape) {
  auto parsed = Parse(data);
  if (!parsed.ok()) return parsed.status();
  const NpyArray& a = *parsed;
  Tensor t(dtype, std::vector<int64_t>(shape.begin(), shape.end()));

  if (dtype == DType::kInt4) {
    int64_t bytes = Tensor::StorageBytes(dtype, t.num_elements());
    if ((a.kind != 'u' && a.kind != 'i') || a.size != 1 || a.count != bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("int4", ShapeString(shape), " needs ", bytes,
                       " packed bytes ('|u1' or '|i1'), the file has '", a.descr, "' of shape ",
                       ShapeString(a.shape)));
    }
    for (int64_t i = 0; i < bytes; ++i) t.mutable_bytes()[i] = static_cast<uint8_t>(RawBits(a, i));
    return t;
  }
  if (a.shape != t.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("expected shape ", ShapeString(shape),
                                                   ", the file has ", ShapeString(a.shape)));
  }
  const bool raw = (dtype == DType::kBFloat16 && a.kind == 'u' && a.size == 2) ||
                   (ir::IsFloat8(dtype) && a.kind == 'u' && a.size == 1);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (raw) {
      t.SetBits(i, RawBits(a, i));
    } else if (IsFloatKind(a)) {
      t.SetDouble(i, FloatElement(a, i));
    } else if (a.kind == 'u' && a.size == 8 && ir::IsFloat(dtype)) {
      t.SetDouble(i, IntAsDouble(IntElement(a, i), DType::kUInt64));
    } else {
      t.SetInt(i, IntElement(a, i));
    }
  }
  return t;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  auto data = ReadFile(path);
  if (!data.ok()) return data.status();
  auto t = DecodeNpy(*data);
  if (!t.ok()) return WithPath(t.status(), path);
  return t;
}

absl::StatusOr<std::vector<int64_t>> DecodeNpyShape(std::string_view data) {
  auto a = Parse(data);
  if (!a.ok()) return a.status();
  return a->shape;
}

absl::StatusOr<std::vector<int64_t>> ReadNpyShape(const std::string& path) {
  auto data = ReadFile(path);
  if (!data.ok()) return data.status();
  auto shape = DecodeNpyShape(*data);
  if (!shape.ok()) return WithPath(shape.status(), path);
  return shape;
}

absl::StatusOr<Tensor> ReadNpyAs(const std::string& path, DType dtype,
                                 absl::Span<const int64_t> shape) {
  auto data = ReadFile(path);
  if (!data.ok()) return data.status();
  auto t = DecodeNpyAs(*data, dtype, shape);
  if (!t.ok()) return WithPath(t.status(), path);
  return t;
}

}  // namespace tilec::interp
