#include "client/hit_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "compiler/cache/digest.h"

namespace tilec::cli {
namespace {

constexpr size_t kMaxHeadBytes = 16 << 10;
constexpr size_t kMaxBodyBytes = size_t{1} << 30;

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status Wait(int fd, short events, absl::Time deadline, const std::string& address) {
  for (;;) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) {
      return absl::DeadlineExceededError(absl::StrCat("hit path ", address, ": timed out"));
    }
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1 << 30)));
    if (r > 0) return absl::OkStatus();
    if (r < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("hit path ", address, ": ", std::strerror(errno)));
    }
  }
}

}  // namespace

HitClient::HitClient(std::string address, std::string token, absl::Duration timeout)
    : address_(std::move(address)), token_(std::move(token)), timeout_(timeout) {
  const size_t colon = address_.rfind(':');
  host_ = colon == std::string::npos ? address_ : address_.substr(0, colon);
  port_ = colon == std::string::npos ? "" : address_.substr(colon + 1);
  if (host_.size() >= 2 && host_.front() == '[' && host_.back() == ']') {
    host_ = host_.substr(1, host_.size() - 2);
  }
}

HitClient::~HitClient() { Close(); }

void HitClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

absl::Status HitClient::Connect(absl::Time deadline) {
  if (port_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("hit path address '", address_, "' is not HOST:PORT"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int e = ::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found); e != 0) {
    return absl::UnavailableError(
        absl::StrCat("hit path ", address_, ": cannot resolve: ", ::gai_strerror(e)));
  }
  absl::Status last = absl::UnavailableError(absl::StrCat("hit path ", address_, ": no address"));
  for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int err = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      last = Wait(fd, POLLOUT, deadline, address_);
      socklen_t len = sizeof err;
      err = last.ok() ? (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len), err) : ETIMEDOUT;
    }
    if (err != 0) {
      if (last.ok() || err != ETIMEDOUT) {
        last = absl::UnavailableError(
            absl::StrCat("hit path ", address_, ": cannot connect: ", std::strerror(err)));
      }
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fd_ = fd;
  }
  ::freeaddrinfo(found);
  return fd_ >= 0 ? absl::OkStatus() : last;
}

absl::StatusOr<HitClient::Response> HitClient::Get(const std::string& target) {
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time deadline = absl::Now() + timeout_;
  std::string request = absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: ", host_, "\r\n");
  if (!token_.empty()) absl::StrAppend(&request, "Authorization: Bearer ", token_, "\r\n");
  request += "\r\n";
  for (int attempt = 0;; ++attempt) {
    const bool reused = fd_ >= 0;
    if (!reused) {
      if (absl::Status s = Connect(deadline); !s.ok()) return s;
    }
    bool nothing_back = false;
    absl::StatusOr<Response> r = Exchange(request, deadline, &nothing_back);
    if (r.ok()) return r;
    Close();
    // A kept connection the server closed (its idle timeout): once more.
    if (!(reused && nothing_back && attempt == 0)) return r.status();
  }
}

absl::StatusOr<HitClient::Response> HitClient::Exchange(const std::string& request,
                                                        absl::Time deadline,
                                                        bool* sent_nothing_back) {
  *sent_nothing_back = true;
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t w = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (w >= 0) {
      sent += static_cast<size_t>(w);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (absl::Status s = Wait(fd_, POLLOUT, deadline, address_); !s.ok()) return s;
    } else if (errno != EINTR) {
      return absl::UnavailableError(
          absl::StrCat("hit path ", address_, ": send: ", std::strerror(errno)));
    }
  }
  std::string in;
  size_t head_end = std::string::npos, need = 0;
  Response r;
  bool close_after = false;
  char buf[65536];
  for (;;) {
    if (head_end != std::string::npos && in.size() >= need) break;
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got > 0) {
      *sent_nothing_back = false;
      in.append(buf, static_cast<size_t>(got));
    } else if (got == 0) {
      return absl::UnavailableError(
          absl::StrCat("hit path ", address_, ": the server closed the connection"));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (absl::Status s = Wait(fd_, POLLIN, deadline, address_); !s.ok()) return s;
      continue;
    } else if (errno == EINTR) {
      continue;
    } else {
      return absl::UnavailableError(
          absl::StrCat("hit path ", address_, ": receive: ", std::strerror(errno)));
    }
    if (head_end != std::string::npos) continue;
    head_end = in.find("\r\n\r\n");
    if (head_end == std::string::npos) {
      if (in.size() > kMaxHeadBytes) {
        return absl::InternalError(absl::StrCat("hit path ", address_, ": headers too long"));
      }
      continue;
    }
    std::vector<absl::string_view> lines =
        absl::StrSplit(absl::string_view(in).substr(0, head_end), "\r\n");
    std::vector<absl::string_view> status = absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
    if (status.size() < 2 || status[0] != "HTTP/1.1" || !absl::SimpleAtoi(status[1], &r.status)) {
      return absl::InternalError(
          absl::StrCat("hit path ", address_, ": not an HTTP/1.1 reply: ", lines[0].substr(0, 80)));
    }
    bool has_length = false;
    size_t length = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(lines[i], absl::MaxSplits(':', 1));
      const absl::string_view value = absl::StripAsciiWhitespace(kv.second);
      if (absl::EqualsIgnoreCase(kv.first, "content-length")) {
        has_length = absl::SimpleAtoi(value, &length) && length <= kMaxBodyBytes;
      } else if (absl::EqualsIgnoreCase(kv.first, "content-type")) {
        r.content_type = std::string(value);
      } else if (absl::EqualsIgnoreCase(kv.first, "connection")) {
        close_after = absl::EqualsIgnoreCase(value, "close");
      }
    }
    if (!has_length) {
      return absl::InternalError(
          absl::StrCat("hit path ", address_, ": a reply without a usable Content-Length"));
    }
    need = head_end + 4 + length;
  }
  if (in.size() != need) {
    return absl::InternalError(absl::StrCat("hit path ", address_, ": bytes after the reply"));
  }
  r.body = in.substr(head_end + 4);
  if (close_after) Close();
  return r;
}

absl::Status StatusOfReply(const HitClient::Response& r) {
  if (r.status == 200) return absl::OkStatus();
  const std::string message = std::string(absl::StripTrailingAsciiWhitespace(r.body));
  switch (r.status) {
    case 400: return absl::InvalidArgumentError(message);
    case 401: return absl::UnauthenticatedError(message);
    case 403: return absl::PermissionDeniedError(message);
    case 404: return absl::NotFoundError(message);
    case 503: return absl::UnavailableError(message);
    default: return absl::InternalError(absl::StrCat("hit path: HTTP ", r.status, ": ", message));
  }
}

absl::StatusOr<tilec::v1::CompileResponse> HitCompile(HitClient& client,
                                                      const std::string& program_hash,
                                                      const std::vector<std::string>& targets,
                                                      bool line_info, int max_registers) {
  std::string target = absl::StrCat("/v1/compile/", program_hash, "?");
  for (const std::string& t : targets) {
    for (char c : t) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
        return absl::InvalidArgumentError(absl::StrCat("target '", t, "' is not a target name"));
      }
    }
    absl::StrAppend(&target, "target=", t, "&");
  }
  absl::StrAppend(&target, "line_info=", line_info ? 1 : 0, "&max_registers=", max_registers);
  absl::StatusOr<HitClient::Response> r = client.Get(target);
  if (!r.ok()) return r.status();
  if (absl::Status s = StatusOfReply(*r); !s.ok()) return s;
  tilec::v1::CompileResponse response;
  if (!response.ParseFromString(r->body)) {
    return absl::InternalError("hit path: the compile reply does not parse");
  }
  return response;
}

absl::StatusOr<std::string> HitArtifact(HitClient& client, const std::string& digest) {
  if (!cache::IsHexDigest(digest)) {
    return absl::InvalidArgumentError("an artifact's digest is 64 lowercase hex digits");
  }
  absl::StatusOr<HitClient::Response> r = client.Get("/v1/artifacts/" + digest);
  if (!r.ok()) return r.status();
  if (absl::Status s = StatusOfReply(*r); !s.ok()) return s;
  if (cache::Sha256Hex(r->body) != digest) {
    return absl::DataLossError(absl::StrCat("the server sent bytes that are not the artifact ",
                                            digest, " (their SHA-256 is ",
                                            cache::Sha256Hex(r->body), ")"));
  }
  return std::move(r->body);
}

}  // namespace tilec::cli
