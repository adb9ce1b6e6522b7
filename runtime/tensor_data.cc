#include "runtime/tensor_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/kernel.h"

namespace tilec::runtime {

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFF;
  if (((x >> 23) & 0xFF) == 0xFF) return static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN
  x += 0x7FFF + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

float HalfToFloat(uint16_t h) {
  const int exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}

namespace {

float BFloat16ToFloat(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// 8-bit floats: e4m3 (bias 7, no infinity, 0x7F/0xFF NaN), e5m2 (bias 15,
// IEEE-like), and AMD's e4m3fnuz / e5m2fnuz (bias 8 / 16, no infinity, no
// -0: 0x80 is the one NaN).
struct Float8Format {
  const char* name;
  int ebits, bias;
  bool fnuz;
};
constexpr Float8Format kFloat8Formats[] = {
    {"float8_e4m3", 4, 7, false},
    {"float8_e5m2", 5, 15, false},
    {"float8_e4m3fnuz", 4, 8, true},
    {"float8_e5m2fnuz", 5, 16, true},
};

// The index of a float8 dtype in kFloat8Formats, -1 for other dtypes.
int Float8Kind(const std::string& name) {
  for (int k = 0; k < 4; ++k) {
    if (name == kFloat8Formats[k].name) return k;
  }
  return -1;
}

double Float8ToDouble(uint8_t b, int kind) {
  const Float8Format& f = kFloat8Formats[kind];
  const int mbits = 7 - f.ebits;
  const int exp = (b >> mbits) & ((1 << f.ebits) - 1), mant = b & ((1 << mbits) - 1);
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  if (f.fnuz && b == 0x80) return NAN;
  if (!f.fnuz && f.ebits == 4 && exp == 15 && mant == 7) return NAN;
  if (!f.fnuz && f.ebits == 5 && exp == 31) return mant ? NAN : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(mant, 1 - f.bias - mbits);
  return sign * std::ldexp(mant | (1 << mbits), exp - f.bias - mbits);
}

// The finite codes of an 8-bit float sorted by value, for nearest rounding.
const std::vector<std::pair<double, uint8_t>>& Float8Table(int kind) {
  static const auto* tables = [] {
    auto* t = new std::vector<std::pair<double, uint8_t>>[4];
    for (int k = 0; k < 4; ++k) {
      for (int c = 0; c < 256; ++c) {
        double v = Float8ToDouble(static_cast<uint8_t>(c), k);
        if (std::isfinite(v) && !(v == 0 && (c & 0x80))) t[k].emplace_back(v, c);
      }
      std::sort(t[k].begin(), t[k].end());
    }
    return t;
  }();
  return tables[kind];
}

uint8_t DoubleToFloat8(double v, int kind) {
  const auto& t = Float8Table(kind);
  auto it = std::lower_bound(t.begin(), t.end(), std::make_pair(v, uint8_t{0}));
  if (it == t.end()) return t.back().second;
  if (it == t.begin()) return it->second;
  auto prev = std::prev(it);
  const double dn = it->first - v, dp = v - prev->first;
  if (dp < dn) return prev->second;
  if (dn < dp) return it->second;
  return (prev->second & 1) ? it->second : prev->second;  // ties to even
}

void WriteElement(const DTypeInfo& t, char* data, int64_t index, double v) {
  const std::string& n = t.name;
  if (n == "float32") {
    float f = static_cast<float>(v);
    std::memcpy(data + 4 * index, &f, 4);
  } else if (n == "float64") {
    std::memcpy(data + 8 * index, &v, 8);
  } else if (n == "float16") {
    uint16_t h = FloatToHalf(static_cast<float>(v));
    std::memcpy(data + 2 * index, &h, 2);
  } else if (n == "bfloat16") {
    uint16_t h = FloatToBFloat16(static_cast<float>(v));
    std::memcpy(data + 2 * index, &h, 2);
  } else if (const int kind = Float8Kind(n); kind >= 0) {
    data[index] = static_cast<char>(DoubleToFloat8(v, kind));
  } else if (n == "int4") {
    uint8_t& byte = reinterpret_cast<uint8_t&>(data[index / 2]);
    const uint8_t nib = static_cast<uint8_t>(static_cast<int64_t>(v)) & 0xF;
    byte = (index % 2) ? static_cast<uint8_t>((byte & 0x0F) | (nib << 4))
                       : static_cast<uint8_t>((byte & 0xF0) | nib);
  } else {
    const int64_t x = static_cast<int64_t>(v);
    std::memcpy(data + (t.bits / 8) * index, &x, t.bits / 8);  // little-endian low bytes
  }
}

}  // namespace

double ReadElement(const DTypeInfo& t, const void* data, int64_t index) {
  const char* p = static_cast<const char*>(data);
  const std::string& n = t.name;
  if (n == "float32") {
    float f;
    std::memcpy(&f, p + 4 * index, 4);
    return f;
  }
  if (n == "float64") {
    double d;
    std::memcpy(&d, p + 8 * index, 8);
    return d;
  }
  if (n == "float16" || n == "bfloat16") {
    uint16_t h;
    std::memcpy(&h, p + 2 * index, 2);
    return n == "float16" ? HalfToFloat(h) : BFloat16ToFloat(h);
  }
  if (const int kind = Float8Kind(n); kind >= 0) {
    return Float8ToDouble(static_cast<uint8_t>(p[index]), kind);
  }
  if (n == "int4") {
    const uint8_t byte = static_cast<uint8_t>(p[index / 2]);
    const int nib = (index % 2) ? byte >> 4 : byte & 0xF;
    return nib >= 8 ? nib - 16 : nib;
  }
  if (n == "bool" || n == "uint8") return static_cast<uint8_t>(p[index]);
  const int bytes = t.bits / 8;
  uint64_t raw = 0;
  std::memcpy(&raw, p + bytes * index, bytes);
  if (t.is_signed && bytes < 8 && (raw >> (8 * bytes - 1)) & 1) raw |= ~uint64_t{0} << (8 * bytes);
  return t.is_signed ? static_cast<double>(static_cast<int64_t>(raw)) : static_cast<double>(raw);
}

absl::StatusOr<std::vector<HostValue>> FillInputs(const Artifact& artifact,
                                                  const std::map<std::string, int64_t>& dims,
                                                  uint64_t seed) {
  std::vector<HostValue> out;
  for (size_t i = 0; i < artifact.params.size(); ++i) {
    const ParamSpec& p = artifact.params[i];
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + i + 1);
    HostValue v;
    if (p.kind == ParamSpec::Kind::kScalar) {
      v.is_tensor = false;
      if (p.dtype.is_float)
        v.f = std::uniform_real_distribution<double>(0.5, 1.5)(rng);
      else
        v.i = v.f = std::uniform_int_distribution<int>(1, 8)(rng);
      out.push_back(std::move(v));
      continue;
    }
    int64_t count = 1;
    for (const ShapeExpr& e : p.shape) {
      absl::StatusOr<int64_t> d = e.Eval(dims);
      if (!d.ok()) return d.status();
      if (*d < 0)
        return absl::InvalidArgumentError(absl::StrCat(p.name, " has a negative dimension"));
      v.shape.push_back(*d);
      count *= *d;
    }
    if (!p.strides.empty() && count > 0) {
      // A strided tensor: every element of its span, gaps included, is drawn.
      int64_t last = 0;
      for (size_t d = 0; d < p.strides.size(); ++d) {
        absl::StatusOr<int64_t> s = p.strides[d].Eval(dims);
        if (!s.ok()) return s.status();
        v.strides.push_back(*s);
        last += (v.shape[d] - 1) * *s;
      }
      count = last + 1;
    }
    v.bytes.assign(static_cast<size_t>(v.strides.empty() ? TensorBytes(p.dtype, v.shape)
                                                         : count * p.dtype.bits / 8),
                   '\0');
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::uniform_int_distribution<int> small_signed(-4, 4), small_unsigned(0, 8), bit(0, 1);
    for (int64_t e = 0; e < count; ++e) {
      double x;
      if (p.dtype.is_float)
        x = unit(rng);
      else if (p.dtype.name == "bool")
        x = bit(rng);
      else if (p.dtype.is_signed)
        x = small_signed(rng);
      else
        x = small_unsigned(rng);
      WriteElement(p.dtype, v.bytes.data(), e, x);
    }
    out.push_back(std::move(v));
  }
  return out;
}

int64_t ElementOffset(const HostValue& v, int64_t index) {
  if (v.strides.empty()) return index;
  int64_t offset = 0;
  for (size_t d = v.shape.size(); d-- > 0;) {
    offset += (index % v.shape[d]) * v.strides[d];
    index /= v.shape[d];
  }
  return offset;
}

std::vector<int64_t> SamplePositions(uint64_t seed, int64_t count, int samples) {
  std::vector<int64_t> out;
  if (count <= samples) {
    for (int64_t i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  std::mt19937_64 rng(seed ^ 0xC0FFEE1234567ull);
  std::uniform_int_distribution<int64_t> pick(0, count - 1);
  std::set<int64_t> chosen;
  while (static_cast<int>(chosen.size()) < samples) chosen.insert(pick(rng));
  return {chosen.begin(), chosen.end()};
}

}  // namespace tilec::runtime
