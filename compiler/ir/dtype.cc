#include "compiler/ir/dtype.h"

#include <string>

namespace tilec::ir {

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt4: return "int4";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat8E4M3: return "float8_e4m3";
    case DType::kFloat8E5M2: return "float8_e5m2";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kUInt16: return "uint16";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kFloat8E4M3FNUZ: return "float8_e4m3fnuz";
    case DType::kFloat8E5M2FNUZ: return "float8_e5m2fnuz";
  }
  return "?";
}

std::optional<DType> ParseDType(std::string_view name) {
  for (DType t : kAllDTypes) {
    if (name == DTypeName(t)) return t;
  }
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"float8_e4m3fn", DType::kFloat8E4M3},
      {"e4m3_float8", DType::kFloat8E4M3},
      {"e5m2_float8", DType::kFloat8E5M2},
      {"half", DType::kFloat16},
      {"float", DType::kFloat32},
      {"double", DType::kFloat64},
      {"int", DType::kInt32},
      {"long", DType::kInt64},
      {"short", DType::kInt16},
      {"bf16", DType::kBFloat16},
      {"fp16", DType::kFloat16},
      {"fp32", DType::kFloat32},
  };
  for (const Alias& a : kAliases) {
    if (name == a.name) return a.type;
  }
  return std::nullopt;
}

int DTypeBits(DType t) {
  switch (t) {
    case DType::kBool: return 8;
    case DType::kInt4: return 4;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2FNUZ: return 8;
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16: return 16;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32: return 32;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat64: return 64;
  }
  return 0;
}

bool IsFloat8(DType t) {
  return t == DType::kFloat8E4M3 || t == DType::kFloat8E5M2 || IsFnuz(t);
}

bool IsFnuz(DType t) { return t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2FNUZ; }

bool IsAtomicDType(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kInt64:
    case DType::kUInt64: return true;
    default: return false;
  }
}

bool IsFloat(DType t) {
  switch (t) {
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64: return true;
    default: return false;
  }
}

bool IsInt(DType t) { return !IsFloat(t) && t != DType::kBool; }

bool IsSigned(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64: return false;
    default: return true;
  }
}

}  // namespace tilec::ir
