#include "compiler/ir/wire.h"

#include <climits>

#include "compiler/ir/limits.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace tilec::ir {

bool ParseWire(google::protobuf::io::ZeroCopyInputStream* stream,
               google::protobuf::MessageLite* message) {
  google::protobuf::io::CodedInputStream in(stream);
  in.SetRecursionLimit(kWireRecursionLimit);
  in.SetTotalBytesLimit(INT_MAX);
  return message->ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

bool ParseWire(std::string_view bytes, google::protobuf::MessageLite* message) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  return ParseWire(&stream, message);
}

}  // namespace tilec::ir
