// Helpers the service's handlers share (service.cc, worker_service.cc).
#ifndef TILEC_SERVER_SERVICE_INTERNAL_H_
#define TILEC_SERVER_SERVICE_INTERNAL_H_

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "compiler/cache/compiler.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/wire.h"
#include "grpcpp/grpcpp.h"

namespace tilec::server {

// How long a client refused by a full queue should wait before retrying
// (the grpc-retry-pushback-ms trailer; the message says so too).
inline constexpr char kRetryPushbackMs[] = "2000";

inline std::string Authorization(grpc::CallbackServerContext* context) {
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return "";
  return std::string(it->second.data(), it->second.size());
}

inline absl::Time DeadlineOf(grpc::CallbackServerContext* context) {
  std::chrono::system_clock::time_point d = context->deadline();
  if (d == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(d);
}

// A call's cancellation: the call's own, or the whole server's when it is
// shutting down (so that shutdown never waits on a search or a compile).
class CallCancellation : public cache::Cancellation {
 public:
  explicit CallCancellation(const std::atomic<bool>* stopping) : stopping_(stopping) {}
  bool cancelled() const override {
    return Cancellation::cancelled() ||
           (stopping_ != nullptr && stopping_->load(std::memory_order_acquire));
  }

 private:
  const std::atomic<bool>* stopping_;
};

// The request bytes as `Msg`, or INVALID_ARGUMENT saying so. (gRPC's own
// parsing would answer UNIMPLEMENTED with no message, which reads like a
// missing method; tilecd parses the raw bytes itself.)
inline std::string RequestBytes(const grpc::ByteBuffer& in) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (in.Valid() && in.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  return bytes;
}

template <class Msg>
absl::Status ParseRequestBytes(const std::string& bytes, Msg* msg) {
  // Programs nest deeper than protobuf's default limit allows: one wire
  // parser, with one limit that fits the verifier's nesting limit.
  if (ir::ParseWire(bytes, msg)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the request (", bytes.size(), " bytes) is not a valid ", msg->GetTypeName(),
      ": it is malformed, or nests messages more than ", ir::kWireRecursionLimit,
      " deep (programs may nest statements and expressions at most ", ir::kMaxNesting,
      " deep)"));
}

template <class Msg>
absl::Status ParseRequest(const grpc::ByteBuffer& in, Msg* msg) {
  return ParseRequestBytes(RequestBytes(in), msg);
}

inline void SetBytes(const std::string& bytes, grpc::ByteBuffer* out) {
  grpc::Slice slice(bytes);
  *out = grpc::ByteBuffer(&slice, 1);
}

template <class Msg>
void Serialize(const Msg& msg, grpc::ByteBuffer* out) {
  SetBytes(msg.SerializeAsString(), out);
}

}  // namespace tilec::server

#endif  // TILEC_SERVER_SERVICE_INTERNAL_H_
