// Reading and writing tensors as NumPy .npy files (format versions 1.0 and
// 2.0 written, 1.0 to 3.0 read; little-endian data only).
//
// Element types map to NumPy descriptors as follows:
//   bool '|b1', int8 '|i1', uint8 '|u1', int16 '<i2', uint16 '<u2',
//   int32 '<i4', uint32 '<u4', int64 '<i8', uint64 '<u8', float16 '<f2',
//   float32 '<f4', float64 '<f8'.
// NumPy has no bfloat16 or float8 types. We write them as '<f4' values: the
// widening is exact, and every NumPy and PyTorch user can read the file
// (torch.from_numpy(a).to(torch.bfloat16) gives back the same tensor). int4
// is written as its packed storage bytes ('|u1', two signed nibbles per
// byte, low nibble first, see tensor.h), with the shape of the packed array:
// the logical shape with the last dimension halved when it is even (TileLang's
// convention for packed int4 weights: int8 [N, K / 2] for int4 [N, K]),
// otherwise the flat [ceil(n / 2)].
//
// DecodeNpy reads a file's own type. DecodeNpyAs reads into a given dtype and
// logical shape: bfloat16 from '<u2' raw bits or from float values (rounded),
// float8 from '|u1' raw bits or from float values (satfinite rounding), int4
// from packed '|u1'/'|i1' bytes, and any other dtype from any numeric
// descriptor by converting each element (as a cast would).
#ifndef TILEC_COMPILER_INTERP_NPY_H_
#define TILEC_COMPILER_INTERP_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/interp/tensor.h"

namespace tilec::interp {

// The complete .npy file contents for t.
std::string EncodeNpy(const Tensor& t);
absl::Status WriteNpy(const std::string& path, const Tensor& t);

// Parses .npy contents into a tensor of the file's own element type. Errors
// (InvalidArgument) say what is wrong with the file: bad magic, unsupported
// descriptor, truncated data, big-endian data.
absl::StatusOr<Tensor> DecodeNpy(std::string_view data);
absl::StatusOr<Tensor> ReadNpy(const std::string& path);

// The shape stored in a .npy file's header (any descriptor the readers above
// accept, '<u2' raw bfloat16 bits included), without converting its data.
absl::StatusOr<std::vector<int64_t>> DecodeNpyShape(std::string_view data);
absl::StatusOr<std::vector<int64_t>> ReadNpyShape(const std::string& path);

// Parses .npy contents into dtype and shape (see above). The file's shape
// must equal `shape`, except for int4, whose packed byte count must match.
absl::StatusOr<Tensor> DecodeNpyAs(std::string_view data, ir::DType dtype,
                                   absl::Span<const int64_t> shape);
absl::StatusOr<Tensor> ReadNpyAs(const std::string& path, ir::DType dtype,
                                 absl::Span<const int64_t> shape);

}  // namespace tilec::interp

#endif  // TILEC_COMPILER_INTERP_NPY_H_
