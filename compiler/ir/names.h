// Names in the tile IR (the program, its parameters, buffers and variables).
//
// Every name the verifier accepts is a C identifier of ASCII letters, digits
// and '_' (not starting with a digit), at most kMaxNameLength characters, so
// that a name can never be more than a name in generated CUDA or HIP source,
// comments included: no newline ends a comment, no quote opens a string, no
// backslash continues a line. TileLang source may use non-ASCII identifiers
// (Python does); MakeVar and MakeBuffer spell their bytes as `_xHH`.
#ifndef TILEC_COMPILER_IR_NAMES_H_
#define TILEC_COMPILER_IR_NAMES_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tilec::ir {

struct Program;

// [A-Za-z_][A-Za-z0-9_]* and at most kMaxNameLength characters.
bool IsIdentifier(std::string_view name);

// Why `name` is not an identifier ("" when it is), naming the first
// offending byte: "byte 0x0a (a newline) at offset 1 is not a letter, digit
// or '_'".
std::string NameProblem(std::string_view name);

// NameProblem without the length limit: names the compiler derives from
// accepted ones ("A_shared_stage2") may be longer.
std::string CharacterProblem(std::string_view name);

// `name` fit for a message: printable ASCII kept, every other byte as \xHH,
// more than 40 characters shortened with the full length said.
std::string QuoteName(std::string_view name);

// `name` with every byte outside ASCII spelled `_xHH` (lowercase hex);
// ASCII names are returned unchanged.
std::string SpellNonAscii(std::string name);

// INVALID_ARGUMENT naming the first name of `program` (its own, a
// parameter's, a buffer's or a variable's) that is not made of identifier
// characters (CharacterProblem): the emitters' own check of what they write.
absl::Status CheckNames(const Program& program);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_NAMES_H_
