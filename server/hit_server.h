// The hit path's HTTP/1.1 listener: cache hits at key-value speed.
//
// A small epoll server for read-only GETs, as remote build caches serve
// them (server/hit_path.h says what it serves). gRPC costs a client and a
// server tens of microseconds of CPU per call; a kept-alive HTTP/1.1
// connection answered from memory costs about what a Redis GET does.
//
// Each of `threads` event loops accepts from the one listening socket and
// serves its connections; a handler answers on the loop thread (memory
// only) or hands its work to another thread and answers later (a disk or
// Redis read). What one connection may hold is bounded: a request's line
// and headers (max_request_bytes, else 431), one request handled at a
// time (pipelined requests wait in the socket), one response in flight.
// Only GET and HEAD; a request body, Transfer-Encoding, or a malformed
// request is answered 4xx and the connection closed. A connection idle
// (or sending its request) for idle_timeout is closed; past
// max_connections, new connections are closed at once. A connection whose
// reply is being prepared elsewhere is kept until the reply is sent (a
// client that half-closes after its request still gets it); a reset closes
// it, and its reply, when it comes, goes nowhere.
#ifndef TILEC_SERVER_HIT_SERVER_H_
#define TILEC_SERVER_HIT_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tilec::server {

struct HitRequest {
  std::string method;         // GET or HEAD
  std::string path;           // the target before '?', as sent (not decoded)
  std::string query;          // after '?', "" when none
  std::string authorization;  // the Authorization header's value, "" when absent
};

struct HitReply {
  int status = 200;
  std::string content_type = "application/octet-stream";
  std::shared_ptr<const std::string> body;  // null: empty
  std::string headers;                      // more header lines, each ending "\r\n"

  // A text/plain reply carrying `message` (and a newline).
  static HitReply Text(int status, const std::string& message);
};

// Called from any thread, at most once, to answer a request later.
using HitResponder = std::function<void(HitReply)>;
// The reply now, or nullopt after arranging for `later` to be called.
using HitHandler = std::function<std::optional<HitReply>(const HitRequest&, HitResponder later)>;

struct HitServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 picks a free one
  int threads = 1;
  int max_connections = 4096;
  size_t max_request_bytes = 8192;
  absl::Duration idle_timeout = absl::Seconds(60);
};

class HitServer {
 public:
  // Listens and starts the loops; an error names the address.
  static absl::StatusOr<std::unique_ptr<HitServer>> Start(const HitServerOptions& options,
                                                          HitHandler handler);
  ~HitServer();  // stops the loops and closes every connection
  HitServer(const HitServer&) = delete;
  HitServer& operator=(const HitServer&) = delete;

  int port() const { return port_; }
  int64_t open_connections() const { return open_.load(); }
  int64_t requests() const { return requests_.load(); }

  class Loop;  // hit_server.cc

 private:
  HitServer() = default;

  HitServerOptions options_;
  HitHandler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> open_{0};
  std::atomic<int64_t> requests_{0};
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::thread> threads_;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_HIT_SERVER_H_
