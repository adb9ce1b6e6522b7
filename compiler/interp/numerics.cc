#include "compiler/interp/numerics.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

namespace tilec::interp {
namespace {

using ir::DType;

// A binary float format narrower than double.
struct Format {
  int bits;      // total storage bits
  int man_bits;  // explicit mantissa bits
  int min_exp;   // exponent of the smallest normal (1 - bias)
  double max_finite;
  bool has_inf;   // false for e4m3
  bool saturate;  // conversions clamp to +-max_finite (fp8 satfinite)
  uint64_t nan;   // canonical quiet NaN bits without the sign
  bool fnuz = false;  // AMD's float8: no -0, no infinities, the one NaN is 0x80
};

constexpr Format kFloat16{16, 10, -14, 65504.0, true, false, 0x7E00};
constexpr Format kBFloat16{16,   7,     -126,  3.38953138925153547590470800371487866880e38,
                           true, false, 0x7FC0};
constexpr Format kE4M3{8, 3, -6, 448.0, false, true, 0x7F};
constexpr Format kE5M2{8, 2, -14, 57344.0, true, true, 0x7E};
constexpr Format kE4M3Fnuz{8, 3, -7, 240.0, false, true, 0x80, true};
constexpr Format kE5M2Fnuz{8, 2, -15, 57344.0, false, true, 0x80, true};
constexpr Format kFloat32{32,   23,    -126,      3.40282346638528859811704183484516925440e38,
                          true, false, 0x7FC00000};

const Format& FormatOf(DType t) {
  switch (t) {
    case DType::kFloat16: return kFloat16;
    case DType::kBFloat16: return kBFloat16;
    case DType::kFloat8E4M3: return kE4M3;
    case DType::kFloat8E5M2: return kE5M2;
    case DType::kFloat8E4M3FNUZ: return kE4M3Fnuz;
    case DType::kFloat8E5M2FNUZ: return kE5M2Fnuz;
    default: return kFloat32;
  }
}

// Round half to even of a value whose magnitude is below 2^52, independent of
// the floating-point environment's rounding mode.
double RoundHalfEven(double s) {
  double fl = std::floor(s);
  double diff = s - fl;  // exact: s has few integer bits
  if (diff > 0.5) return fl + 1.0;
  if (diff < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

double RoundToFormat(double x, const Format& f) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return f.saturate ? std::copysign(f.max_finite, x) : x;
  if (x == 0.0) return f.fnuz ? 0.0 : x;
  int e;
  std::frexp(x, &e);  // |x| = m * 2^e with m in [0.5, 1): leading bit at e - 1
  int quantum = std::max(e - 1, f.min_exp) - f.man_bits;
  // Both scalings are by powers of two and stay in double's normal range.
  double r = RoundHalfEven(std::ldexp(x, -quantum));
  double y = std::ldexp(r, quantum);
  if (y == 0.0) return f.fnuz ? 0.0 : std::copysign(0.0, x);
  if (std::fabs(y) > f.max_finite) {
    return std::copysign(f.saturate ? f.max_finite : std::numeric_limits<double>::infinity(), x);
  }
  return y;
}

uint64_t EncodeFormat(double y, const Format& f) {
  const int exp_bits = f.bits - 1 - f.man_bits;
  const uint64_t sign = std::signbit(y) ? uint64_t{1} << (f.bits - 1) : 0;
  if (std::isnan(y)) return sign | f.nan;
  if (f.fnuz && y == 0.0) return 0;  // 0x80, -0's pattern, is the NaN
  if (std::isinf(y)) return sign | (((uint64_t{1} << exp_bits) - 1) << f.man_bits);
  double a = std::fabs(y);
  if (a == 0.0) return sign;
  int e;
  std::frexp(a, &e);
  int lead = e - 1;
  if (lead < f.min_exp) {  // subnormal: exponent field 0
    return sign | static_cast<uint64_t>(std::ldexp(a, f.man_bits - f.min_exp));
  }
  uint64_t biased = static_cast<uint64_t>(lead - f.min_exp + 1);
  uint64_t mant =
      static_cast<uint64_t>(std::ldexp(a, f.man_bits - lead)) - (uint64_t{1} << f.man_bits);
  return sign | (biased << f.man_bits) | mant;
}

double DecodeFormat(uint64_t bits, const Format& f) {
  const int exp_bits = f.bits - 1 - f.man_bits;
  const uint64_t exp_max = (uint64_t{1} << exp_bits) - 1;
  const uint64_t man_mask = (uint64_t{1} << f.man_bits) - 1;
  const bool negative = (bits >> (f.bits - 1)) & 1;
  const uint64_t exp = (bits >> f.man_bits) & exp_max;
  const uint64_t man = bits & man_mask;
  double v;
  if (f.fnuz && bits == f.nan) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (f.fnuz) {
    v = exp == 0 ? std::ldexp(static_cast<double>(man), f.min_exp - f.man_bits)
                 : std::ldexp(static_cast<double>(man | (man_mask + 1)),
                              static_cast<int>(exp) - 1 + f.min_exp - f.man_bits);
  } else if (!f.has_inf && exp == exp_max && man == man_mask) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (f.has_inf && exp == exp_max) {
    v = man == 0 ? std::numeric_limits<double>::infinity()
                 : std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), f.min_exp - f.man_bits);
  } else {
    v = std::ldexp(static_cast<double>(man | (man_mask + 1)),
                   static_cast<int>(exp) - 1 + f.min_exp - f.man_bits);
  }
  return negative ? -v : v;
}

// Decoding tables for the 16- and 8-bit formats, built once and never freed.
template <size_t N>
const std::array<double, N>* BuildTable(const Format& f) {
  auto* table = new std::array<double, N>;
  for (size_t i = 0; i < N; ++i) (*table)[i] = DecodeFormat(i, f);
  return table;
}

}  // namespace

double RoundToFloat(double x, DType t) {
  switch (t) {
    case DType::kFloat64: return x;
    case DType::kFloat32: return static_cast<double>(static_cast<float>(x));
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2FNUZ: return RoundToFormat(x, FormatOf(t));
    default: return x;
  }
}

namespace {

// NaNs keep their sign and payload between a format and double, bit for
// bit (as bit casts and plain moves on a GPU keep them): the payload sits in
// the top mantissa bits of the double. E4M3 has a single NaN and keeps its
// table. nullopt for the formats that do not take this path.
struct NaNFormat {
  int ebits, mbits;
};
std::optional<NaNFormat> NaNFormatOf(DType t) {
  switch (t) {
    case DType::kFloat32: return NaNFormat{8, 23};
    case DType::kFloat16: return NaNFormat{5, 10};
    case DType::kBFloat16: return NaNFormat{8, 7};
    case DType::kFloat8E5M2: return NaNFormat{5, 2};
    default: return std::nullopt;
  }
}

std::optional<double> DecodeNaN(uint64_t bits, DType t) {
  std::optional<NaNFormat> f = NaNFormatOf(t);
  if (!f) return std::nullopt;
  const uint64_t mant = bits & ((uint64_t{1} << f->mbits) - 1);
  const uint64_t exp = (bits >> f->mbits) & ((uint64_t{1} << f->ebits) - 1);
  if (exp != (uint64_t{1} << f->ebits) - 1 || mant == 0) return std::nullopt;
  const uint64_t sign = (bits >> (f->ebits + f->mbits)) & 1;
  return std::bit_cast<double>(sign << 63 | uint64_t{0x7FF} << 52 | mant << (52 - f->mbits));
}

std::optional<uint64_t> EncodeNaN(double x, DType t) {
  std::optional<NaNFormat> f = NaNFormatOf(t);
  if (!f || !std::isnan(x)) return std::nullopt;
  const uint64_t u = std::bit_cast<uint64_t>(x);
  uint64_t mant = (u >> (52 - f->mbits)) & ((uint64_t{1} << f->mbits) - 1);
  if (mant == 0) mant = uint64_t{1} << (f->mbits - 1);  // a quiet NaN
  return (u >> 63) << (f->ebits + f->mbits) | ((uint64_t{1} << f->ebits) - 1) << f->mbits | mant;
}

}  // namespace

uint64_t EncodeFloat(double x, DType t) {
  if (std::optional<uint64_t> nan = EncodeNaN(x, t)) return *nan;
  switch (t) {
    case DType::kFloat64: return std::bit_cast<uint64_t>(x);
    case DType::kFloat32: return std::bit_cast<uint32_t>(static_cast<float>(x));
    default: return EncodeFormat(RoundToFormat(x, FormatOf(t)), FormatOf(t));
  }
}

double DecodeFloat(uint64_t bits, DType t) {
  if (std::optional<double> nan = DecodeNaN(bits, t)) return *nan;
  switch (t) {
    case DType::kFloat64: return std::bit_cast<double>(bits);
    case DType::kFloat32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case DType::kBFloat16:
      return std::bit_cast<float>(static_cast<uint32_t>((bits & 0xFFFF) << 16));
    case DType::kFloat16: {
      static const auto* table = BuildTable<65536>(kFloat16);
      return (*table)[bits & 0xFFFF];
    }
    case DType::kFloat8E4M3: {
      static const auto* table = BuildTable<256>(kE4M3);
      return (*table)[bits & 0xFF];
    }
    case DType::kFloat8E5M2: {
      static const auto* table = BuildTable<256>(kE5M2);
      return (*table)[bits & 0xFF];
    }
    case DType::kFloat8E4M3FNUZ: {
      static const auto* table = BuildTable<256>(kE4M3Fnuz);
      return (*table)[bits & 0xFF];
    }
    case DType::kFloat8E5M2FNUZ: {
      static const auto* table = BuildTable<256>(kE5M2Fnuz);
      return (*table)[bits & 0xFF];
    }
    default: return 0.0;
  }
}

double MaxFinite(DType t) {
  if (t == DType::kFloat64) return std::numeric_limits<double>::max();
  return FormatOf(t).max_finite;
}

int64_t WrapInt(int64_t v, DType t) {
  switch (t) {
    case DType::kBool: return v != 0;
    case DType::kInt4: return ((v & 0xF) ^ 0x8) - 0x8;
    case DType::kInt8: return static_cast<int8_t>(v);
    case DType::kUInt8: return static_cast<uint8_t>(v);
    case DType::kInt16: return static_cast<int16_t>(v);
    case DType::kUInt16: return static_cast<uint16_t>(v);
    case DType::kInt32: return static_cast<int32_t>(v);
    case DType::kUInt32: return static_cast<uint32_t>(v);
    default: return v;  // int64, uint64: the bits as they are
  }
}

int64_t IntMin(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64: return 0;
    case DType::kInt4: return -8;
    case DType::kInt8: return INT8_MIN;
    case DType::kInt16: return INT16_MIN;
    case DType::kInt32: return INT32_MIN;
    default: return INT64_MIN;
  }
}

int64_t IntMax(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kUInt8: return UINT8_MAX;
    case DType::kUInt16: return UINT16_MAX;
    case DType::kUInt32: return UINT32_MAX;
    case DType::kUInt64: return -1;  // the bits of 2^64 - 1
    case DType::kInt4: return 7;
    case DType::kInt8: return INT8_MAX;
    case DType::kInt16: return INT16_MAX;
    case DType::kInt32: return INT32_MAX;
    default: return INT64_MAX;
  }
}

bool IntLess(int64_t a, int64_t b, DType t) {
  if (t == DType::kUInt64) return static_cast<uint64_t>(a) < static_cast<uint64_t>(b);
  return a < b;
}

double IntAsDouble(int64_t v, DType t) {
  if (t == DType::kUInt64) return static_cast<double>(static_cast<uint64_t>(v));
  return static_cast<double>(v);
}

int64_t FloatToInt(double x, DType t) {
  if (t == DType::kBool) return x != 0.0;
  if (std::isnan(x)) return 0;
  double tr = std::trunc(x);
  if (t == DType::kUInt64) {
    // 2^64 is exactly representable; anything at or beyond it saturates.
    if (tr >= 18446744073709551616.0) return IntMax(t);
    if (tr <= 0) return 0;
    return static_cast<int64_t>(static_cast<uint64_t>(tr));
  }
  // 2^63 is exactly representable; anything at or beyond it saturates.
  if (tr >= 9223372036854775808.0) return IntMax(t);
  if (tr < -9223372036854775808.0) return IntMin(t);
  int64_t v = static_cast<int64_t>(tr);
  return std::clamp(v, IntMin(t), IntMax(t));
}

double IntToFloat(int64_t v, DType t, DType from) {
  if (from == DType::kUInt64) {
    // One rounding from the unsigned value (through double only for the
    // narrow formats, as for int64).
    const uint64_t u = static_cast<uint64_t>(v);
    if (t == DType::kFloat32) return static_cast<double>(static_cast<float>(u));
    return RoundToFloat(static_cast<double>(u), t);
  }
  switch (t) {
    case DType::kFloat64: return static_cast<double>(v);
    case DType::kFloat32: return static_cast<double>(static_cast<float>(v));
    default: return RoundToFloat(static_cast<double>(v), t);
  }
}

double FloatMax(double a, double b) { return std::fmax(a, b); }
double FloatMin(double a, double b) { return std::fmin(a, b); }

}  // namespace tilec::interp
