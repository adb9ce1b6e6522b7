// Host tensors in the storage format of their element type.
//
// A Tensor owns a dense row-major array of `shape` elements stored exactly as
// the device stores them: little-endian IEEE bits for float64/32/16, the raw
// 16-bit pattern for bfloat16, one byte per element for float8 (e4m3, e5m2),
// int8, uint8 and bool (0 or 1), and two signed nibbles per byte for int4,
// low nibble first: element i lives in byte i / 2, in bits 0-3 when i is even
// and bits 4-7 when odd, over the flattened row-major index, so an int4
// tensor of n elements occupies ceil(n / 2) bytes. A 0-d tensor (shape {})
// holds one element.
//
// Elements are read and written as double or int64_t; writes convert and
// round by the rules of numerics.h (a write of 0.1 into a float16 tensor
// stores the nearest float16; a write of 300 into an int8 tensor wraps).
#ifndef TILEC_COMPILER_INTERP_TENSOR_H_
#define TILEC_COMPILER_INTERP_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "compiler/ir/dtype.h"

namespace tilec::interp {

class Tensor {
 public:
  // A 0-d float32 zero.
  Tensor() : Tensor(ir::DType::kFloat32, {}) {}
  // Zero-filled. Every dimension must be >= 0.
  Tensor(ir::DType dtype, std::vector<int64_t> shape);

  static Tensor Scalar(ir::DType dtype, double value);
  static Tensor ScalarInt(ir::DType dtype, int64_t value);

  ir::DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }

  // The storage bytes (StorageBytes(dtype, num_elements) of them).
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& mutable_bytes() { return bytes_; }
  static int64_t StorageBytes(ir::DType dtype, int64_t num_elements);

  // Element access by flat row-major index, which must be in
  // [0, num_elements()). Reading an integer tensor as double and a float
  // tensor as int64 converts (float -> int truncates and saturates).
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double v);
  int64_t GetInt(int64_t i) const;
  void SetInt(int64_t i, int64_t v);
  // Raw storage bits of one element, in the low DTypeBits(dtype) bits.
  uint64_t GetBits(int64_t i) const;
  void SetBits(int64_t i, uint64_t bits);

  // Row-major flat index of a full index (one entry per dimension, each in
  // range), and the inverse.
  int64_t FlatIndex(absl::Span<const int64_t> index) const;
  std::vector<int64_t> Unflatten(int64_t i) const;

  // "float16[4, 8]"
  std::string TypeString() const;

  // Byte-wise equality of dtype, shape and storage.
  bool operator==(const Tensor& other) const = default;

 private:
  ir::DType dtype_;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 1;
  std::vector<uint8_t> bytes_;
};

// "[4, 8]"
std::string ShapeString(absl::Span<const int64_t> shape);

enum class Distribution : uint8_t {
  kUniform,  // floats uniform in [-1, 1)
  kNormal,   // floats standard normal
};

// A tensor of random contents, reproducible from the seed on every platform
// (a std::mt19937_64 stream and our own transforms, not the standard
// library's distributions). Floats follow `dist` and are rounded to the dtype;
// integers are uniform in a small range whatever `dist` says: int4 in
// [-8, 7], uint8 in [0, 15], other signed types in [-8, 8]; uint16, uint32
// and uint64 take every bit pattern (their full range); bool is 0 or 1.
// A non-empty result is never all zeros: if the draw is, one element is set
// to 1.
Tensor RandomTensor(ir::DType dtype, std::vector<int64_t> shape, uint64_t seed,
                    Distribution dist = Distribution::kUniform);

}  // namespace tilec::interp

#endif  // TILEC_COMPILER_INTERP_TENSOR_H_
