// Limits every tile program meets, checked by the verifier, so that a program
// is accepted or refused the same way embedded (tilec compile) and served
// (tilecd), whether it arrives as TileLang source or in wire form.
#ifndef TILEC_COMPILER_IR_LIMITS_H_
#define TILEC_COMPILER_IR_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace tilec::ir {

// Deepest nesting of statements (statement blocks included) and expressions
// on one path from the program body down. A sum of n terms nests n deep, a
// loop nest of depth d about 2d (the loop and its body block).
inline constexpr int kMaxNesting = 256;

// Recursion limit of every protobuf parser that reads a program from the
// wire (the Compile and Recommend requests in tilecd, the compile child's
// request). Each IR level is two message levels (Stmt > ForStmt, Expr >
// BinaryExpr), so a program at kMaxNesting parses with room to spare; past
// it the parse fails with a message, not a crash.
inline constexpr int kWireRecursionLimit = 4 * kMaxNesting;

// Longest name of a program, parameter, buffer, variable or tile parameter
// (and of any identifier in TileLang source). Names end up in CUDA source,
// in kernel symbols and in messages.
inline constexpr size_t kMaxNameLength = 256;

// Most device queries one program records (Program::device_queries).
inline constexpr size_t kMaxDeviceQueries = 64;
// Requirements on the dynamic dims a program records (ir.h), and the length
// of each one's message.
inline constexpr size_t kMaxRequirements = 64;
inline constexpr size_t kMaxRequirementMessage = 512;

// CUDA's grid limits: gridDim.x < 2^31, gridDim.y and gridDim.z <= 65535.
inline constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
inline constexpr int64_t kMaxGridYZ = 65535;

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_LIMITS_H_
