// Conversion between the in-memory tile IR (ir::Program) and its wire form
// (tilec.v1.Program, proto/tilec/v1/ir.proto).
//
// ToProto is total: it encodes any program, field for field. Each distinct
// VarNode and BufferNode becomes one entry of the program's var or buffer
// table (ids from 1, in order of first use: parameters, dynamic dims and tile
// parameters first, then the body), so a node used in several places keeps one
// identity. A null operand is left unset; an unset operand in a repeated field
// is written as an empty message.
//
// FromProto reads a wire program back. Every var and buffer id maps to one
// node, so FromProto(ToProto(p)) is structurally equal to p with the same
// sharing of vars and buffers, and has the same ProgramHash. Expression
// subtrees that p shares are duplicated (the wire form is a tree); the IR
// gives shared expression nodes no meaning.
//
// FromProto validates what it reads and never crashes: it returns
// INVALID_ARGUMENT naming the problem and where it is, e.g.
//   "kernel 0 / stmt 3 (store) / value: load references buffer id 17, which
//    is not in the buffer table"
// for unknown or unspecified enum values, duplicate or dangling var/buffer ids,
// missing required operands (every operand the IR does not document as
// optional), wrong operand counts (call arguments against the function's
// arity, load/store indices and region mins/extents against the buffer's
// rank, one block var per grid extent, 1 to 3 grid extents), a buffer whose
// shape refers to itself, a tile-form and scalar-form atomic add at once, and
// nesting deeper than kMaxProtoNesting. It does not run the verifier: a
// program FromProto accepts may still be ill-typed or ill-scoped.
//
// Parsing serialized bytes into tilec.v1.Program is the caller's job, through
// ParseWire (wire.h), which raises protobuf's recursion limit to what valid
// programs need.
#ifndef TILEC_COMPILER_IR_PROTO_CONVERT_H_
#define TILEC_COMPILER_IR_PROTO_CONVERT_H_

#include "absl/status/statusor.h"
#include "compiler/ir/ir.h"
#include "proto/tilec/v1/ir.pb.h"

namespace tilec::ir {

// Deepest nesting of statements and expressions FromProto accepts.
inline constexpr int kMaxProtoNesting = 1000;

tilec::v1::Program ToProto(const Program& program);

absl::StatusOr<Program> FromProto(const tilec::v1::Program& proto);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_PROTO_CONVERT_H_
