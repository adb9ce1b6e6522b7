#include "compiler/interp/tensor.h"

#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/interp/numerics.h"
#include "compiler/ir/sv.h"

namespace tilec::interp {
namespace {

using ir::DType;

// Little-endian load and store of `n` bytes.
uint64_t LoadLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

void StoreLE(uint8_t* p, int n, uint64_t v) {
  for (int k = 0; k < n; ++k) {
    p[k] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

// Uniform double in [0, 1) from 53 random bits.
double Unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) num_elements_ *= d;
  bytes_.assign(static_cast<size_t>(StorageBytes(dtype_, num_elements_)), 0);
}

Tensor Tensor::Scalar(DType dtype, double value) {
  Tensor t(dtype, {});
  t.SetDouble(0, value);
  return t;
}

Tensor Tensor::ScalarInt(DType dtype, int64_t value) {
  Tensor t(dtype, {});
  t.SetInt(0, value);
  return t;
}

int64_t Tensor::StorageBytes(DType dtype, int64_t num_elements) {
  if (dtype == DType::kInt4) return (num_elements + 1) / 2;
  return num_elements * (ir::DTypeBits(dtype) / 8);
}

uint64_t Tensor::GetBits(int64_t i) const {
  if (dtype_ == DType::kInt4) {
    uint8_t byte = bytes_[static_cast<size_t>(i / 2)];
    return (i % 2 == 0 ? byte : byte >> 4) & 0xF;
  }
  int n = ir::DTypeBits(dtype_) / 8;
  return LoadLE(bytes_.data() + i * n, n);
}

void Tensor::SetBits(int64_t i, uint64_t bits) {
  if (dtype_ == DType::kInt4) {
    uint8_t& byte = bytes_[static_cast<size_t>(i / 2)];
    uint8_t nib = bits & 0xF;
    byte = i % 2 == 0 ? static_cast<uint8_t>((byte & 0xF0) | nib)
                      : static_cast<uint8_t>((byte & 0x0F) | (nib << 4));
    return;
  }
  int n = ir::DTypeBits(dtype_) / 8;
  StoreLE(bytes_.data() + i * n, n, bits);
}

double Tensor::GetDouble(int64_t i) const {
  if (ir::IsFloat(dtype_)) return DecodeFloat(GetBits(i), dtype_);
  return IntAsDouble(GetInt(i), dtype_);
}

void Tensor::SetDouble(int64_t i, double v) {
  if (ir::IsFloat(dtype_)) {
    SetBits(i, EncodeFloat(v, dtype_));
  } else {
    SetInt(i, FloatToInt(v, dtype_));
  }
}

int64_t Tensor::GetInt(int64_t i) const {
  if (ir::IsFloat(dtype_)) return FloatToInt(GetDouble(i), DType::kInt64);
  uint64_t bits = GetBits(i);
  // Sign-extend from the storage width; unsigned and bool values stay as they are.
  int width = ir::DTypeBits(dtype_);
  if (ir::IsSigned(dtype_) && width < 64) {
    return WrapInt(static_cast<int64_t>(bits), dtype_);
  }
  return static_cast<int64_t>(bits);
}

void Tensor::SetInt(int64_t i, int64_t v) {
  if (ir::IsFloat(dtype_)) {
    SetDouble(i, IntToFloat(v, dtype_));
    return;
  }
  SetBits(i, static_cast<uint64_t>(WrapInt(v, dtype_)));
}

int64_t Tensor::FlatIndex(absl::Span<const int64_t> index) const {
  int64_t flat = 0;
  for (size_t d = 0; d < shape_.size(); ++d) flat = flat * shape_[d] + index[d];
  return flat;
}

std::vector<int64_t> Tensor::Unflatten(int64_t i) const {
  std::vector<int64_t> index(shape_.size());
  for (int d = rank() - 1; d >= 0; --d) {
    if (shape_[d] == 0) continue;
    index[d] = i % shape_[d];
    i /= shape_[d];
  }
  return index;
}

std::string Tensor::TypeString() const {
  return absl::StrCat(Sv(ir::DTypeName(dtype_)), ShapeString(shape_));
}

std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

Tensor RandomTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed, Distribution dist) {
  Tensor t(dtype, std::move(shape));
  std::mt19937_64 rng(seed);
  const int64_t n = t.num_elements();
  if (ir::IsFloat(dtype)) {
    for (int64_t i = 0; i < n; ++i) {
      double v;
      if (dist == Distribution::kUniform) {
        v = 2.0 * Unit(rng) - 1.0;
      } else {  // Box-Muller; 1 - Unit is in (0, 1], so the log is finite.
        double u1 = 1.0 - Unit(rng), u2 = Unit(rng);
        v = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      }
      t.SetDouble(i, v);
    }
  } else {
    if (dtype == DType::kUInt16 || dtype == DType::kUInt32 || dtype == DType::kUInt64) {
      // Every bit pattern, so values with the top bit set are common: the
      // unsigned types exist for bit manipulation.
      for (int64_t i = 0; i < n; ++i) t.SetBits(i, rng());
    } else {
      int64_t lo = -8, hi = 8;
      if (dtype == DType::kInt4) hi = 7;
      if (dtype == DType::kUInt8) lo = 0, hi = 15;
      if (dtype == DType::kBool) lo = 0, hi = 1;
      const uint64_t span = static_cast<uint64_t>(hi - lo + 1);
      for (int64_t i = 0; i < n; ++i) t.SetInt(i, lo + static_cast<int64_t>(rng() % span));
    }
  }
  bool all_zero = n > 0;
  for (int64_t i = 0; i < n && all_zero; ++i) all_zero = t.GetDouble(i) == 0.0;
  if (all_zero) t.SetInt(static_cast<int64_t>(seed % static_cast<uint64_t>(n)), 1);
  return t;
}

}  // namespace tilec::interp
