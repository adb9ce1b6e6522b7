#include "server/redis_tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tilec::server {
namespace {

// The first queued OpenSSL error, or `fallback`.
std::string SslError(const char* fallback) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return fallback;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

int PollMs(absl::Duration d) {
  return static_cast<int>(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)));
}

void SetTimeouts(int fd, absl::Duration d) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(absl::ToInt64Seconds(d));
  tv.tv_usec = static_cast<suseconds_t>(absl::ToInt64Microseconds(d) % 1000000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool SetBlocking(int fd, bool blocking) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0) return false;
  return ::fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK) == 0;
}

// A TCP connection to host:port within `timeout`, blocking; -1 and `why`.
int ConnectTcp(const std::string& host, int port, absl::Duration timeout, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int e = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); e != 0) {
    *why = absl::StrCat("cannot resolve '", host, "': ", ::gai_strerror(e));
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    SetBlocking(fd, false);
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, PollMs(timeout)) == 1 ? 0 : -1;
      int err = rc == 0 ? 0 : ETIMEDOUT;
      socklen_t len = sizeof err;
      if (rc == 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        errno = err;
        rc = -1;
      }
    }
    if (rc != 0) {
      *why = absl::StrCat("cannot connect: ", std::strerror(errno));
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) return -1;
  SetBlocking(fd, true);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool SendAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Waits for `events` on fd; false on timeout or error.
bool WaitFor(int fd, short events, absl::Duration timeout) {
  pollfd p{fd, events, 0};
  int r;
  do {
    r = ::poll(&p, 1, PollMs(timeout));
  } while (r < 0 && errno == EINTR);
  return r == 1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RedisTls>> RedisTls::Create(RedisTlsOptions options) {
  std::unique_ptr<RedisTls> t(new RedisTls(std::move(options)));
  const RedisTlsOptions& o = t->options_;
  if (o.cert_file.empty() != o.key_file.empty()) {
    return absl::InvalidArgumentError(
        "a Redis TLS client certificate needs both its certificate and its key file");
  }
  t->ctx_ = SSL_CTX_new(TLS_client_method());
  if (t->ctx_ == nullptr) return absl::InternalError(SslError("SSL_CTX_new failed"));
  SSL_CTX_set_min_proto_version(t->ctx_, TLS1_2_VERSION);
  SSL_CTX_set_verify(t->ctx_, SSL_VERIFY_PEER, nullptr);
  const bool roots = o.ca_file.empty()
                         ? SSL_CTX_set_default_verify_paths(t->ctx_) == 1
                         : SSL_CTX_load_verify_locations(t->ctx_, o.ca_file.c_str(), nullptr) == 1;
  if (!roots) {
    return absl::InvalidArgumentError(absl::StrCat("cannot load the Redis TLS roots '",
                                                   o.ca_file.empty() ? "(the system's)" : o.ca_file,
                                                   "': ", SslError("no certificates")));
  }
  if (!o.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(t->ctx_, o.cert_file.c_str()) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot load the Redis TLS client certificate '", o.cert_file, "': ", SslError("")));
    }
    if (SSL_CTX_use_PrivateKey_file(t->ctx_, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(t->ctx_) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot load the Redis TLS client key '", o.key_file,
                       "' (or it does not match the certificate): ", SslError("")));
    }
  }
  return t;
}

RedisTls::~RedisTls() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

absl::StatusOr<std::unique_ptr<RedisTlsLink>> RedisTls::Connect(const std::string& host, int port,
                                                                absl::Duration connect_timeout,
                                                                absl::Duration io_timeout) {
  std::unique_ptr<RedisTlsLink> link(new RedisTlsLink());
  link->io_timeout_ = io_timeout;
  std::string why;
  link->tcp_fd_ = ConnectTcp(host, port, connect_timeout, &why);
  if (link->tcp_fd_ < 0) return absl::UnavailableError(why);
  SetTimeouts(link->tcp_fd_, connect_timeout);  // the handshake's bound

  link->ssl_ = SSL_new(ctx_);
  if (link->ssl_ == nullptr) return absl::InternalError(SslError("SSL_new failed"));
  SSL_set_fd(link->ssl_, link->tcp_fd_);
  const std::string& name = options_.server_name.empty() ? host : options_.server_name;
  unsigned char ip[sizeof(in6_addr)];
  const bool is_ip =
      ::inet_pton(AF_INET, name.c_str(), ip) == 1 || ::inet_pton(AF_INET6, name.c_str(), ip) == 1;
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(link->ssl_), name.c_str());
  } else {
    SSL_set_tlsext_host_name(link->ssl_, name.c_str());
    SSL_set1_host(link->ssl_, name.c_str());
  }
  ERR_clear_error();
  if (SSL_connect(link->ssl_) != 1) {
    const long verify = SSL_get_verify_result(link->ssl_);
    if (verify != X509_V_OK) {
      ERR_clear_error();
      return absl::UnavailableError(
          absl::StrCat("TLS handshake: the server's certificate does not verify for '", name,
                       "': ", X509_verify_cert_error_string(verify)));
    }
    return absl::UnavailableError(
        absl::StrCat("TLS handshake failed: ", SslError("the connection was closed")));
  }
  SetBlocking(link->tcp_fd_, false);

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::UnavailableError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  link->relay_fd_ = sv[0];
  link->hiredis_fd_ = sv[1];
  link->thread_ = std::thread([l = link.get()] { l->Relay(); });
  return link;
}

int RedisTlsLink::TakeHiredisFd() {
  const int fd = hiredis_fd_;
  hiredis_fd_ = -1;
  return fd;
}

std::string RedisTlsLink::error() const {
  std::lock_guard<std::mutex> l(mu_);
  return error_;
}

RedisTlsLink::~RedisTlsLink() {
  if (hiredis_fd_ >= 0) ::close(hiredis_fd_);  // ends the relay if hiredis never took it
  if (thread_.joinable()) thread_.join();
  if (relay_fd_ >= 0) ::close(relay_fd_);
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (tcp_fd_ >= 0) ::close(tcp_fd_);
}

// Carries bytes both ways until either side closes or fails; then closes
// hiredis's side, so that hiredis sees the end of the connection.
void RedisTlsLink::Relay() {
  char buf[16384];
  // SSL_write on the non-blocking socket, waiting (within the I/O
  // timeout) for whatever the TLS layer needs.
  auto ssl_write_all = [&](const char* p, int n) {
    while (n > 0) {
      const int w = SSL_write(ssl_, p, n);
      if (w > 0) {
        p += w;
        n -= w;
        continue;
      }
      const int e = SSL_get_error(ssl_, w);
      if (e == SSL_ERROR_WANT_WRITE && WaitFor(tcp_fd_, POLLOUT, io_timeout_)) continue;
      if (e == SSL_ERROR_WANT_READ && WaitFor(tcp_fd_, POLLIN, io_timeout_)) continue;
      return false;
    }
    return true;
  };
  bool open = true;
  while (open) {
    bool from_redis = SSL_pending(ssl_) > 0, from_hiredis = false;
    if (!from_redis) {
      pollfd p[2] = {{relay_fd_, POLLIN, 0}, {tcp_fd_, POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      from_hiredis = p[0].revents != 0;
      from_redis = p[1].revents != 0;
    }
    if (from_redis) {
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n > 0) {
        open = SendAll(relay_fd_, buf, static_cast<size_t>(n));
      } else {
        const int e = SSL_get_error(ssl_, n);
        // WANT_READ: a record without application data (a session ticket).
        open = e == SSL_ERROR_WANT_READ ||
               (e == SSL_ERROR_WANT_WRITE && WaitFor(tcp_fd_, POLLOUT, io_timeout_));
        if (e == SSL_ERROR_SSL) {  // an alert: e.g. Redis wanted a client certificate
          std::lock_guard<std::mutex> l(mu_);
          error_ = SslError("protocol error");
        }
      }
    }
    if (open && from_hiredis) {
      const ssize_t n = ::read(relay_fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      open = n > 0 && ssl_write_all(buf, static_cast<int>(n));
    }
  }
  ERR_clear_error();
  // hiredis reads the end of the stream; its writes still land (in the
  // socket's buffer, unread) rather than raise SIGPIPE.
  ::shutdown(relay_fd_, SHUT_WR);
  SSL_shutdown(ssl_);  // best effort: the socket does not block
  ERR_clear_error();
}

}  // namespace tilec::server
