// TLS to Redis for the shared tier. Debian 12's hiredis (0.14) speaks only
// plaintext, so each TLS connection is an OpenSSL client to Redis's
// tls-port and a relay thread that carries the plaintext to hiredis over a
// local socket pair (hiredis takes its end with redisConnectFd). Commands,
// timeouts and errors stay hiredis's; the relay closes hiredis's side as
// soon as the TLS side fails, and ends when hiredis closes it.
#ifndef TILEC_SERVER_REDIS_TLS_H_
#define TILEC_SERVER_REDIS_TLS_H_

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

struct ssl_ctx_st;
struct ssl_st;

namespace tilec::server {

struct RedisTlsOptions {
  std::string ca_file;      // PEM roots the server's certificate must chain to
  std::string cert_file;    // optional client certificate (Redis's tls-auth-clients)
  std::string key_file;     // its private key
  std::string server_name;  // the name checked in the certificate; empty: the host
};

// One TLS connection and its relay thread.
class RedisTlsLink {
 public:
  ~RedisTlsLink();
  // The plaintext end for hiredis (redisConnectFd); owned by the caller
  // from then on (redisFree closes it).
  int TakeHiredisFd();
  // Why the TLS side ended ("" while open, or when Redis just closed it):
  // a failure hiredis sees only as a closed connection.
  std::string error() const;

 private:
  friend class RedisTls;
  RedisTlsLink() = default;
  void Relay();
  ssl_st* ssl_ = nullptr;
  int tcp_fd_ = -1, relay_fd_ = -1, hiredis_fd_ = -1;
  absl::Duration io_timeout_;
  mutable std::mutex mu_;
  std::string error_;
  std::thread thread_;
};

class RedisTls {
 public:
  // Loads the roots and the client certificate; errors name the file.
  static absl::StatusOr<std::unique_ptr<RedisTls>> Create(RedisTlsOptions options);
  ~RedisTls();
  // Connects to host:port, verifies the certificate (chain and name) and
  // starts the relay. UNAVAILABLE on any failure, saying which step.
  absl::StatusOr<std::unique_ptr<RedisTlsLink>> Connect(const std::string& host, int port,
                                                        absl::Duration connect_timeout,
                                                        absl::Duration io_timeout);

 private:
  explicit RedisTls(RedisTlsOptions o) : options_(std::move(o)) {}
  RedisTlsOptions options_;
  ssl_ctx_st* ctx_ = nullptr;
};

}  // namespace tilec::server

#endif  // TILEC_SERVER_REDIS_TLS_H_
