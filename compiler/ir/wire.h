// Parsing tilec messages that carry a program (tilec.v1.Program inside a
// CompileRequest, RecommendRequest or CompileChildRequest) from bytes.
//
// protobuf's default recursion limit (100 nested messages) is below what a
// valid program needs (each IR level is two message levels), so every reader
// of a program from the wire parses through here, with the limit raised to
// kWireRecursionLimit (limits.h): deep but valid programs parse everywhere
// alike, and the verifier's kMaxNesting refuses the too deep ones with a
// located message.
#ifndef TILEC_COMPILER_IR_WIRE_H_
#define TILEC_COMPILER_IR_WIRE_H_

#include <string_view>

#include "google/protobuf/io/zero_copy_stream.h"
#include "google/protobuf/message_lite.h"

namespace tilec::ir {

// True when `bytes` (or the whole stream) parse into `message`.
bool ParseWire(std::string_view bytes, google::protobuf::MessageLite* message);
bool ParseWire(google::protobuf::io::ZeroCopyInputStream* stream,
               google::protobuf::MessageLite* message);

}  // namespace tilec::ir

#endif  // TILEC_COMPILER_IR_WIRE_H_
