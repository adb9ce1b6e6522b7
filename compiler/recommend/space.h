// Parameter deduction and the search space of a program's unbound tile
// parameters for one hardware profile.
//
// Before: `program` verifies. After: every unbound tile parameter is either
// deduced (its value, or its equality with a searched parameter, follows
// from the program) or searched over a finite, non-empty, ascending list.
//
// Deduction. The shape equalities the tile operators impose (T.copy and tile
// T.atomic_add extents after dropping extent-1 dims, T.gemm's M/N/K across
// its operands, reduce and cumsum shapes) are collected; one that reads
// `param == constant` (or `c * param == constant`) fixes the parameter, one
// that reads `param1 == param2` ties the later parameter to the earlier one
// (program order of Program.tile_params). A parameter whose candidates are
// cut to a single value by a divisibility requirement is deduced as well.
// Contradictions (two different constants) are INVALID_ARGUMENT naming the
// parameter and both sources.
//
// Default candidates, by the role the parameter plays (the first that
// applies):
//  - threads of a T.Kernel: the powers of two from the warp size to the
//    profile's max threads per block;
//  - num_stages of a T.Pipelined loop: 1 .. the profile's max_pipeline_stages;
//  - a size (buffer shape, loop or region extent): the powers of two from 16
//    (when it sizes a T.gemm operand, as the matrix instructions need) or 1
//    up to 256, and not past the next power of two of the global tensor
//    dimension it tiles when that is a constant.
// Declared candidates (TileParam.candidates) replace the defaults; for
// threads they must be whole warps (others are dropped, and none left is
// INVALID_ARGUMENT).
#ifndef TILEC_COMPILER_RECOMMEND_SPACE_H_
#define TILEC_COMPILER_RECOMMEND_SPACE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"
#include "compiler/recommend/profile.h"

namespace tilec::recommend {

enum class ParamRole : uint8_t { kThreads, kStages, kSize };
std::string_view ParamRoleName(ParamRole role);  // "threads", "num_stages", "size"

struct SearchedParam {
  std::string name;
  ParamRole role = ParamRole::kSize;
  std::vector<int64_t> values;  // ascending, distinct, >= 1
  std::string origin;           // "declared candidates", "powers of two in [16, 128]"
};

struct DeducedParam {
  std::string name;
  // Exactly one of: a fixed value, or the name of the searched parameter it
  // equals.
  std::optional<int64_t> value;
  std::string equals;
  std::string reason;  // "T.copy extents: B_shared dim 0 == 64"
};

// A configuration: a value for every unbound tile parameter, by name.
using Config = std::map<std::string, int64_t>;

struct SearchSpace {
  std::vector<SearchedParam> searched;  // in Program.tile_params order
  std::vector<DeducedParam> deduced;    // in Program.tile_params order
  // Number of configs; only meaningful once CheckSize passed (the product
  // of candidate counts can overflow int64).
  int64_t Size() const;
  // OK when the product of candidate counts is at most `max_configs`
  // (computed with overflow checks); otherwise INVALID_ARGUMENT naming every
  // searched parameter with its count.
  absl::Status CheckSize(int64_t max_configs) const;
  // The i-th config (0 <= i < Size()): the cartesian product, the last
  // searched parameter varying fastest; deduced parameters filled in.
  Config At(int64_t i) const;
};

absl::StatusOr<SearchSpace> BuildSearchSpace(const ir::Program& program,
                                             const HardwareProfile& profile);

}  // namespace tilec::recommend

#endif  // TILEC_COMPILER_RECOMMEND_SPACE_H_
