// Binding tile parameters: turns a program with unbound tile parameters into
// the program the user would have written with `-D name=value` for them.
//
// Before: `program` verifies. `values` names unbound tile parameters of the
// program (by TileParam var name) with the value to give each.
// After (OK): every occurrence of a bound parameter's variable, in the body
// and in buffer shapes, is replaced by an int32 IntImm; integer expressions
// that became constant (+ - * / % // min max ceildiv) are folded; each
// buffer whose shape changed is replaced by one new buffer node everywhere
// it is used; Program.tile_params records the value (the config). Parameters
// not in `values` stay unbound.
// Errors: a name that is not an unbound tile parameter of the program, or a
// value < 1, INVALID_ARGUMENT.
#ifndef TILEC_COMPILER_RECOMMEND_BIND_H_
#define TILEC_COMPILER_RECOMMEND_BIND_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"

namespace tilec::recommend {

absl::StatusOr<ir::Program> BindTileParams(const ir::Program& program,
                                           const std::map<std::string, int64_t>& values);

}  // namespace tilec::recommend

#endif  // TILEC_COMPILER_RECOMMEND_BIND_H_
