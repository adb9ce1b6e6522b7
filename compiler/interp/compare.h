// Comparing a computed tensor with a reference.
//
// Element i matches when |actual - expected| <= atol + rtol * |expected|
// (NumPy's allclose rule), or when both are NaN, or both are the same
// infinity. The two tensors must have the same shape; their dtypes may differ
// (a bfloat16 kernel output against a float64 reference): values are compared
// as doubles.
#ifndef TILEC_COMPILER_INTERP_COMPARE_H_
#define TILEC_COMPILER_INTERP_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/interp/tensor.h"
#include "compiler/ir/ir.h"

namespace tilec::interp {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// The default tolerance for an output of dtype t, about two units in the last
// place of t's precision near 1 (NumPy/PyTorch practice for accumulations
// whose order differs between a kernel and its reference):
//   float64 1e-9/1e-9, float32 1e-5/1e-5, float16 1e-2/1e-2 (what TileLang's
//   own tests use), bfloat16 1.6e-2/1.6e-2, float8_e4m3 (and
//   e4m3fnuz) 0.125/0.125, float8_e5m2 (and e5m2fnuz) 0.25/0.25; integers and bool compare exactly (0/0).
Tolerance DefaultTolerance(ir::DType t);

// The tolerance for an output of dtype t of `program` run on a GPU: the
// default, widened to 1e-2/1e-2 for float outputs of a program whose T.gemm
// takes float8 operands: Hopper's float8 wgmma sums products with about 13
// bits (2^-13 of the running sum of |products|, which for K = 128 random
// products is some hundred times 2^-13 of the result; 3e-3 relative was seen
// on an H200 at K = 128).
Tolerance ProgramTolerance(const ir::Program& program, ir::DType t);

struct CompareResult {
  bool ok = true;  // no mismatching element
  int64_t num_mismatches = 0;
  // Over the elements where both values are finite.
  double max_abs_error = 0;
  // ||actual - expected||_2 / ||expected||_2 over the finite elements
  // (the absolute norm when the expected norm is 0).
  double rel_l2_error = 0;
  // The first mismatching element in row-major order, when !ok.
  std::vector<int64_t> first_mismatch_index;
  double first_actual = 0;
  double first_expected = 0;
  // Mismatches where one side is NaN or infinite (not in the errors above).
  int64_t nonfinite_mismatches = 0;

  // "ok: max abs error 1e-06, rel L2 error 2e-07" or "3 of 128 elements
  // differ; first at [0, 5]: actual 1.5 expected 1.25 (atol 1e-05 rtol 1e-05);
  // max abs error ..., rel L2 error ..." (", over the finite elements; 3
  // mismatches are NaN or infinite" when some are).
  std::string Summary() const;
  Tolerance tolerance;
  int64_t num_elements = 0;
};

// InvalidArgument when the shapes differ.
absl::StatusOr<CompareResult> CompareTensors(const Tensor& actual, const Tensor& expected,
                                             Tolerance tol);

}  // namespace tilec::interp

#endif  // TILEC_COMPILER_INTERP_COMPARE_H_
