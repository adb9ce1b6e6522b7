// The canonical hash of a tile program: the key that names a program across
// processes, machines and tilec versions (the compile cache is keyed by it).
//
// ProgramHash is the lowercase hex SHA-256 of a canonical byte encoding that
// tilec writes itself (not a protobuf serialization, whose bytes protobuf does
// not promise to keep). The encoding is tagged (every node and list starts
// with a tag byte), length-prefixed (counts and string lengths as uint64) and
// little-endian; integers are int64, floats the bit pattern of the value as a
// double, enums fixed codes written out in hash.cc (never the C++ enum's
// numeric value).
//
// In the hash, i.e. a change to any of these changes it:
//   - the program's interface: its name; each parameter in ABI order (tensor
//     or scalar, name, dtype, and for tensors scope and shape); each dynamic
//     dim (name, dtype); each tile parameter (name, dtype, bound value or
//     none, candidates);
//   - every semantic field of every statement and expression: kinds, dtypes,
//     operators, constants, loop kinds, pipeline stages/order, gemm flags and
//     policy, reduce kind/dim/clear, scopes and shapes of allocated buffers,
//     layouts, kernel preludes, and the structure of the tree.
// Out of the hash:
//   - names of local variables (loop, kernel block, let and layout vars) and
//     of allocated (non-parameter) buffers. These are numbered by binding
//     site in program order and referenced by that number, so renaming them,
//     or building the same program twice with distinct nodes, gives the same
//     hash (alpha-equivalence). A variable or buffer that is neither bound nor
//     part of the interface (an ill-formed program) is hashed by its order of
//     first use, name and dtype, so the hash is defined for every program.
//   - node identity and sharing of expression subtrees; memory addresses.
//
// Changing the encoding in any way that changes some program's bytes requires
// bumping kHashSchemaVersion, which is itself the first field hashed: old and
// new hashes then never collide and caches keyed by them miss rather than
// serve stale entries. The golden value in tests/compiler/ir/hash_test.cc
// guards against accidental changes.
#ifndef TILEC_COMPILER_IR_HASH_H_
#define TILEC_COMPILER_IR_HASH_H_

#include <cstdint>
#include <string>

#include "compiler/ir/ir.h"

namespace tilec::ir {

inline constexpr uint32_t kHashSchemaVersion = 2;

// 64 lowercase hex digits.
std::string ProgramHash(const Program& program);

// The hash of one expression on its own (under a domain separate from
// ProgramHash). Every variable is free here: identified by its order of first
// use, its name and its dtype; buffers are identified by order of first use,
// name, dtype, scope and shape.
std::string ExprHash(const Expr& expr);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_HASH_H_
