// Deterministic data for measuring artifacts: the inputs a seed stands for
// and the output elements compared between runs. A worker filling a
// candidate's inputs and the server computing the reference both call these,
// so every run of every candidate sees the same values.
//
//   std::vector<HostValue> in = FillInputs(artifact, dims, seed);
//   ... launch ...
//   std::vector<int64_t> at = SamplePositions(seed, elements, 64);
//   double v = ReadElement(dtype, data, at[0]);
#ifndef TILEC_RUNTIME_TENSOR_DATA_H_
#define TILEC_RUNTIME_TENSOR_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/artifact.h"

namespace tilec::runtime {

// One argument's value on the host: a tensor's bytes (row-major; int4 packed
// two per byte in flat element order, low nibble first) or a scalar. A
// strided tensor's bytes span its elements at `strides`, gaps included.
struct HostValue {
  std::string bytes;  // tensors
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // elements; empty: row-major
  double f = 0;                  // scalars
  int64_t i = 0;
  bool is_tensor = true;
};

// Floats uniform in [-1, 1) rounded to the dtype (nearest, ties to even);
// signed integers uniform in [-4, 4], unsigned in [0, 8], bool 0/1; scalars
// ints in [1, 8], floats in [0.5, 1.5). Parameter i draws from its own
// stream of `seed`. INVALID_ARGUMENT when a shape does not evaluate.
absl::StatusOr<std::vector<HostValue>> FillInputs(const Artifact& artifact,
                                                  const std::map<std::string, int64_t>& dims,
                                                  uint64_t seed);

// Where element `index` (row-major over v.shape) lies in v.bytes, in
// elements: `index` itself unless v is strided.
int64_t ElementOffset(const HostValue& v, int64_t index);

// Element `index` (logical, row-major) of a tensor of `dtype` as a double.
double ReadElement(const DTypeInfo& dtype, const void* data, int64_t index);

// Up to `samples` distinct positions in [0, count), sorted, drawn from
// `seed`; every position when count <= samples.
std::vector<int64_t> SamplePositions(uint64_t seed, int64_t count, int samples);

// float <-> float16 / bfloat16 bits, round to nearest even.
uint16_t FloatToHalf(float f);
uint16_t FloatToBFloat16(float f);
float HalfToFloat(uint16_t h);

}  // namespace tilec::runtime

#endif  // TILEC_RUNTIME_TENSOR_DATA_H_
