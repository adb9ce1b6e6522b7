#include "compiler/interp/compare.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "compiler/ir/visitor.h"

namespace tilec::interp {

using ir::DType;

Tolerance DefaultTolerance(DType t) {
  switch (t) {
    case DType::kFloat64: return {1e-9, 1e-9};
    case DType::kFloat32: return {1e-5, 1e-5};
    case DType::kFloat16: return {1e-2, 1e-2};
    case DType::kBFloat16: return {1.6e-2, 1.6e-2};
    case DType::kFloat8E4M3: return {0.125, 0.125};
    case DType::kFloat8E5M2: return {0.25, 0.25};
    case DType::kFloat8E4M3FNUZ: return {0.125, 0.125};
    case DType::kFloat8E5M2FNUZ: return {0.25, 0.25};
    default: return {0, 0};
  }
}

Tolerance ProgramTolerance(const ir::Program& program, DType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t != DType::kFloat32 && t != DType::kFloat64 && t != DType::kFloat16 &&
      t != DType::kBFloat16) {
    return tol;
  }
  struct Float8Gemm : ir::IRVisitor {
    bool found = false;
    void Visit(const ir::Stmt& s) override {
      if (s == nullptr || found) return;
      if (const auto* g = s->as<ir::GemmNode>()) {
        found = ir::IsFloat8(g->a.buffer->dtype) || ir::IsFloat8(g->b.buffer->dtype);
      }
      ir::IRVisitor::Visit(s);
    }
    using ir::IRVisitor::Visit;
  } v;
  if (program.body) v.Visit(program.body);
  if (v.found) tol = {std::max(tol.atol, 1e-2), std::max(tol.rtol, 1e-2)};
  return tol;
}

std::string CompareResult::Summary() const {
  std::string errors =
      absl::StrCat("max abs error ", max_abs_error, ", rel L2 error ", rel_l2_error);
  if (ok) return absl::StrCat("ok: ", errors);
  std::string nonfinite;
  if (nonfinite_mismatches > 0) {
    nonfinite = absl::StrCat(" over the finite elements; ", nonfinite_mismatches,
                             nonfinite_mismatches == 1 ? " mismatch is" : " mismatches are",
                             " NaN or infinite");
  }
  return absl::StrCat(num_mismatches, " of ", num_elements, " elements differ; first at ",
                      ShapeString(first_mismatch_index), ": actual ", first_actual, " expected ",
                      first_expected, " (atol ", tolerance.atol, " rtol ", tolerance.rtol, "); ",
                      errors, nonfinite);
}

absl::StatusOr<CompareResult> CompareTensors(const Tensor& actual, const Tensor& expected,
                                             Tolerance tol) {
  if (actual.shape() != expected.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot compare ", actual.TypeString(), " with ",
                                                   expected.TypeString(), ": the shapes differ"));
  }
  CompareResult r;
  r.tolerance = tol;
  r.num_elements = actual.num_elements();
  double diff2 = 0, ref2 = 0;
  const bool exact_ints = !ir::IsFloat(actual.dtype()) && !ir::IsFloat(expected.dtype()) &&
                          tol.atol == 0 && tol.rtol == 0;
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    const double a = actual.GetDouble(i), e = expected.GetDouble(i);
    bool match;
    if (exact_ints) {
      // Integers compare exactly, also beyond 2^53 where doubles lose bits.
      match = actual.GetInt(i) == expected.GetInt(i);
      const double d = std::fabs(a - e);
      r.max_abs_error = std::max(r.max_abs_error, d);
      diff2 += d * d;
      ref2 += e * e;
    } else if (std::isnan(a) || std::isnan(e)) {
      match = std::isnan(a) && std::isnan(e);
      r.nonfinite_mismatches += !match;
    } else if (std::isinf(a) || std::isinf(e)) {
      match = a == e;
      r.nonfinite_mismatches += !match;
    } else {
      const double d = std::fabs(a - e);
      match = d <= tol.atol + tol.rtol * std::fabs(e);
      r.max_abs_error = std::max(r.max_abs_error, d);
      diff2 += d * d;
      ref2 += e * e;
    }
    if (!match) {
      if (r.ok) {
        r.first_mismatch_index = actual.Unflatten(i);
        r.first_actual = a;
        r.first_expected = e;
      }
      r.ok = false;
      ++r.num_mismatches;
    }
  }
  r.rel_l2_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return r;
}

}  // namespace tilec::interp
