// Operands of tile operators, shared by tl_ops.cc and tl_atomic.cc: a
// buffer, region or head address as the user wrote it, and the pairing of
// a source with a destination (head addresses take the other's extents).
#ifndef TILEC_COMPILER_FRONTEND_TL_OPERANDS_H_
#define TILEC_COMPILER_FRONTEND_TL_OPERANDS_H_

#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "compiler/frontend/builder.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

// An operand of a tile operator before head addresses are resolved.
struct Operand {
  std::optional<ir::Region> region;  // a buffer or a region
  std::optional<ElementValue> head;  // a head address
  SourceLoc loc;
};

absl::StatusOr<Operand> ReadOperand(Builder& b, const Arg& a, std::string_view fn, bool allow_head);

// Resolves a pair of operands (head addresses take the other's extents) and
// checks that their extents agree after dropping extent-1 dims, where that is
// decidable.
absl::StatusOr<std::pair<ir::Region, ir::Region>> ResolvePair(Builder& b, const Operand& x,
                                                              const Operand& y, SourceLoc loc,
                                                              std::string_view fn);

// T.atomic_add / addx2 / addx4 / max / min (tl_atomic.cc): nullopt when
// `name` is none of them.
std::optional<absl::StatusOr<Value>> CallTileAtomic(Builder& b, std::string_view name,
                                                    CallArgs& args);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_TL_OPERANDS_H_
