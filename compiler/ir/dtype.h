// Element types of tile programs.
//
// The set is the one TileLang kernels use. Each type is accepted under the
// spellings TileLang and PyTorch use ("float16", "half", "float" ...), and
// printed under one canonical name.
#ifndef TILEC_COMPILER_IR_DTYPE_H_
#define TILEC_COMPILER_IR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace tilec::ir {

enum class DType : uint8_t {
  kBool,
  kInt4,  // packed two per byte; only as a tensor element type
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat8E4M3,
  kFloat8E5M2,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kUInt16,
  kUInt32,
  kUInt64,
  // AMD's float8 (MI300, gfx942): no negative zero, no infinities, the
  // single NaN is 0x80 ("fnuz"); exponent bias one more than the OCP formats.
  kFloat8E4M3FNUZ,  // bias 8, max 240
  kFloat8E5M2FNUZ,  // bias 16, max 57344
};

inline constexpr DType kAllDTypes[] = {
    DType::kBool,       DType::kInt4,    DType::kInt8,     DType::kUInt8,
    DType::kInt16,      DType::kInt32,   DType::kInt64,    DType::kFloat8E4M3,
    DType::kFloat8E5M2, DType::kFloat16, DType::kBFloat16, DType::kFloat32,
    DType::kFloat64,    DType::kUInt16,  DType::kUInt32,   DType::kUInt64,
    DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2FNUZ,
};

// Canonical name, as the printer writes it ("float16", "float8_e4m3").
std::string_view DTypeName(DType t);

// Parses any accepted spelling: canonical names, TileLang aliases
// ("float8_e4m3fn", "float"), PyTorch names ("half", "bfloat16", "torch.int8"
// without the prefix). Returns nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);

int DTypeBits(DType t);
bool IsFloat(DType t);
bool IsInt(DType t);  // signed or unsigned integers, not bool
bool IsSigned(DType t);
// The four 8-bit float types (OCP e4m3/e5m2 and AMD's fnuz pair).
bool IsFloat8(DType t);
// float8_e4m3fnuz or float8_e5m2fnuz.
bool IsFnuz(DType t);
// A type T.atomic_add / atomic_max / atomic_min can update in place: the
// 16-, 32- and 64-bit floats, and the 32- and 64-bit integers.
bool IsAtomicDType(DType t);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_DTYPE_H_
