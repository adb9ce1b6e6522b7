#include "server/hit_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace tilec::server {
namespace {

using Clock = std::chrono::steady_clock;

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
  }
}

// A request's line and headers (without the blank line that ends them),
// parsed; `error` the status refusing it (the connection is then closed).
struct Parsed {
  HitRequest request;
  bool keep_alive = true;
  int error = 0;
  std::string why;
};

Parsed Refuse(int status, std::string why) {
  Parsed p;
  p.error = status;
  p.why = std::move(why);
  return p;
}

Parsed ParseHead(absl::string_view head) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  std::vector<absl::string_view> first = absl::StrSplit(lines[0], ' ');
  if (first.size() != 3 || first[0].empty() || first[1].empty()) {
    return Refuse(400, "the request line is not `METHOD TARGET HTTP/1.1`");
  }
  Parsed p;
  if (first[2] == "HTTP/1.1") {
    p.keep_alive = true;
  } else if (first[2] == "HTTP/1.0") {
    p.keep_alive = false;
  } else {
    return Refuse(505, "only HTTP/1.1 and HTTP/1.0 are served");
  }
  if (first[0] != "GET" && first[0] != "HEAD") {
    return Refuse(405, absl::StrCat("method ", first[0].substr(0, 32),
                                    " is not served: this endpoint is read-only (GET, HEAD)"));
  }
  if (first[1][0] != '/') return Refuse(400, "the request target must be a path (origin form)");
  p.request.method = std::string(first[0]);
  const size_t q = first[1].find('?');
  p.request.path = std::string(first[1].substr(0, q));
  if (q != absl::string_view::npos) p.request.query = std::string(first[1].substr(q + 1));
  bool saw_authorization = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    const size_t colon = line.find(':');
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || colon == absl::string_view::npos ||
        colon == 0 || line.substr(0, colon).find_first_of(" \t") != absl::string_view::npos) {
      return Refuse(400, absl::StrCat("header line ", i, " is malformed"));
    }
    absl::string_view name = line.substr(0, colon);
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "content-length")) {
      if (value != "0") return Refuse(413, "a request here has no body");
    } else if (absl::EqualsIgnoreCase(name, "transfer-encoding")) {
      return Refuse(400, "a request here has no body (Transfer-Encoding)");
    } else if (absl::EqualsIgnoreCase(name, "connection")) {
      if (absl::EqualsIgnoreCase(value, "close")) p.keep_alive = false;
      if (absl::EqualsIgnoreCase(value, "keep-alive")) p.keep_alive = true;
    } else if (absl::EqualsIgnoreCase(name, "authorization")) {
      if (saw_authorization) return Refuse(400, "more than one Authorization header");
      saw_authorization = true;
      p.request.authorization = std::string(value);
    }
  }
  return p;
}

// Replies handed back from other threads (HitResponder), woken by an
// eventfd. Shared with the responders, so a reply posted after its loop
// has gone is dropped, not delivered to freed memory.
struct Mailbox {
  struct Letter {
    int fd;
    uint64_t id;
    HitReply reply;
  };
  std::mutex mu;
  std::deque<Letter> letters;
  bool closed = false;
  int event_fd = -1;

  ~Mailbox() {
    if (event_fd >= 0) ::close(event_fd);
  }
  void Post(Letter letter) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (closed) return;
      letters.push_back(std::move(letter));
    }
    Wake();
  }
  void Wake() {
    const uint64_t one = 1;
    (void)!::write(event_fd, &one, sizeof one);
  }
};

}  // namespace

HitReply HitReply::Text(int status, const std::string& message) {
  HitReply r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::make_shared<const std::string>(message + "\n");
  return r;
}

class HitServer::Loop {
 public:
  explicit Loop(HitServer* server) : server_(server), mailbox_(std::make_shared<Mailbox>()) {}

  absl::Status Init() {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    mailbox_->event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd_ < 0 || mailbox_->event_fd < 0) {
      return absl::InternalError(absl::StrCat("hit path: epoll: ", std::strerror(errno)));
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = mailbox_->event_fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, mailbox_->event_fd, &ev);
    WatchListener();
    return absl::OkStatus();
  }

  ~Loop() {
    {
      std::lock_guard<std::mutex> lock(mailbox_->mu);
      mailbox_->closed = true;
      mailbox_->letters.clear();
    }
    while (!conns_.empty()) Close(*conns_.begin()->second);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }

  void Wake() { mailbox_->Wake(); }

  void Run() {
    epoll_event events[128];
    Clock::time_point swept = Clock::now();
    while (!server_->stop_.load()) {
      const int n = ::epoll_wait(epoll_fd_, events, 128, 250);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == server_->listen_fd_) {
          Accept();
        } else if (fd == mailbox_->event_fd) {
          Deliver();
        } else if (auto it = conns_.find(fd); it != conns_.end()) {
          OnEvent(*it->second, events[i].events);
        }
      }
      const Clock::time_point now = Clock::now();
      if (paused_ && now >= resume_) WatchListener();
      if (now - swept > std::chrono::seconds(1)) {
        Sweep(now);
        swept = now;
      }
    }
  }

 private:
  enum class State { kReading, kWaiting, kWriting };
  struct Conn {
    int fd = -1;
    uint64_t id = 0;
    State state = State::kReading;
    uint32_t events = 0;  // what epoll watches for
    std::string in;
    std::string head;  // the response's status line and headers
    std::shared_ptr<const std::string> body;
    size_t head_sent = 0, body_sent = 0;
    bool keep_alive = true, head_only = false, close_after = false;
    Clock::time_point last;
  };

  void WatchListener() {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.fd = server_->listen_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, server_->listen_fd_, &ev);
    paused_ = false;
  }

  void Accept() {
    for (;;) {
      const int fd = ::accept4(server_->listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop accepting for a moment rather than spin.
          ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, server_->listen_fd_, nullptr);
          paused_ = true;
          resume_ = Clock::now() + std::chrono::milliseconds(100);
        }
        return;
      }
      if (server_->open_.load() >= server_->options_.max_connections) {
        ::close(fd);
        continue;
      }
      server_->open_.fetch_add(1);
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto conn = std::make_unique<Conn>();
      conn->fd = fd;
      conn->id = ++next_id_;
      conn->last = Clock::now();
      Conn& c = *conn;
      conns_[fd] = std::move(conn);
      epoll_event ev{};
      ev.events = c.events = EPOLLIN;
      ev.data.fd = fd;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    }
  }

  void Interest(Conn& c, uint32_t events) {
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = c.events = events;
    ev.data.fd = c.fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  }

  void Close(Conn& c) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
    server_->open_.fetch_sub(1);
    conns_.erase(c.fd);  // destroys c
  }

  void OnEvent(Conn& c, uint32_t events) {
    if (c.state == State::kWriting && (events & EPOLLOUT) != 0) {
      if (!Write(c)) return;
      if (c.state == State::kReading) {
        Process(c);
        return;
      }
    }
    if (c.state == State::kReading && (events & EPOLLIN) != 0) {
      Read(c);
      return;
    }
    if ((events & (EPOLLHUP | EPOLLERR)) != 0) Close(c);  // also while its reply is awaited
  }

  void Read(Conn& c) {
    char buf[16384];
    const size_t limit = server_->options_.max_request_bytes;
    while (c.in.size() < limit + 4) {
      const ssize_t r = ::read(c.fd, buf, sizeof buf);
      if (r > 0) {
        c.in.append(buf, static_cast<size_t>(r));
        if (static_cast<size_t>(r) < sizeof buf) break;
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Close(c);  // closed by the peer, or an error
      return;
    }
    c.last = Clock::now();
    Process(c);
  }

  // Handles the requests `c` has received, one at a time, while each is
  // answered at once.
  void Process(Conn& c) {
    const size_t limit = server_->options_.max_request_bytes;
    while (c.state == State::kReading) {
      const size_t end = c.in.find("\r\n\r\n");
      if (end == std::string::npos || end + 4 > limit) {
        if (c.in.size() >= limit || end != std::string::npos) {
          Reply(c,
                HitReply::Text(
                    431, absl::StrCat("the request line and headers exceed ", limit, " bytes")),
                /*close=*/true);
        }
        return;  // the rest of the request is still to come
      }
      Parsed p = ParseHead(absl::string_view(c.in).substr(0, end));
      c.in.erase(0, end + 4);
      server_->requests_.fetch_add(1);
      if (p.error != 0) {
        Reply(c, HitReply::Text(p.error, p.why), /*close=*/true);
        return;
      }
      c.keep_alive = p.keep_alive;
      c.head_only = p.request.method == "HEAD";
      c.state = State::kWaiting;
      std::shared_ptr<Mailbox> mailbox = mailbox_;
      const int fd = c.fd;
      const uint64_t id = c.id;
      std::optional<HitReply> now = server_->handler_(p.request, [mailbox, fd, id](HitReply reply) {
        mailbox->Post(Mailbox::Letter{fd, id, std::move(reply)});
      });
      if (!now) {
        Interest(c, 0);  // nothing to read or write until the reply comes
        return;
      }
      if (!Reply(c, std::move(*now), /*close=*/false)) return;
    }
  }

  // Starts sending `reply`; false when the connection is gone.
  bool Reply(Conn& c, HitReply reply, bool close) {
    const size_t size = reply.body ? reply.body->size() : 0;
    c.close_after = close || !c.keep_alive;
    c.head =
        absl::StrCat("HTTP/1.1 ", reply.status, " ", Reason(reply.status),
                     "\r\nContent-Type: ", reply.content_type, "\r\nContent-Length: ", size, "\r\n",
                     reply.headers, c.close_after ? "Connection: close\r\n" : "", "\r\n");
    c.body = c.head_only ? nullptr : std::move(reply.body);
    c.head_sent = c.body_sent = 0;
    c.state = State::kWriting;
    return Write(c);
  }

  // Sends what it can of the response; false when the connection is gone.
  bool Write(Conn& c) {
    for (;;) {
      iovec iov[2];
      int n = 0;
      if (c.head_sent < c.head.size()) {
        iov[n].iov_base = c.head.data() + c.head_sent;
        iov[n++].iov_len = c.head.size() - c.head_sent;
      }
      if (c.body && c.body_sent < c.body->size()) {
        iov[n].iov_base = const_cast<char*>(c.body->data()) + c.body_sent;
        iov[n++].iov_len = c.body->size() - c.body_sent;
      }
      if (n == 0) break;
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(n);
      const ssize_t w = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          Interest(c, EPOLLOUT);
          return true;
        }
        Close(c);
        return false;
      }
      size_t sent = static_cast<size_t>(w);
      const size_t from_head = std::min(sent, c.head.size() - c.head_sent);
      c.head_sent += from_head;
      c.body_sent += sent - from_head;
      c.last = Clock::now();
    }
    if (c.close_after) {
      Close(c);
      return false;
    }
    c.head.clear();
    c.body.reset();
    c.state = State::kReading;
    Interest(c, EPOLLIN);
    return true;
  }

  void Deliver() {
    uint64_t count;
    (void)!::read(mailbox_->event_fd, &count, sizeof count);
    std::deque<Mailbox::Letter> letters;
    {
      std::lock_guard<std::mutex> lock(mailbox_->mu);
      letters.swap(mailbox_->letters);
    }
    for (Mailbox::Letter& l : letters) {
      auto it = conns_.find(l.fd);
      if (it == conns_.end() || it->second->id != l.id) continue;  // closed meanwhile
      Conn& c = *it->second;
      if (c.state != State::kWaiting) continue;
      if (Reply(c, std::move(l.reply), /*close=*/false) && c.state == State::kReading) Process(c);
    }
  }

  // Closes connections idle, or stalled sending a request or reading a
  // response, for the idle timeout; those awaiting a reply are left.
  void Sweep(Clock::time_point now) {
    const auto limit = absl::ToChronoNanoseconds(server_->options_.idle_timeout);
    std::vector<Conn*> stale;
    for (auto& [fd, c] : conns_) {
      if (c->state != State::kWaiting && now - c->last > limit) stale.push_back(c.get());
    }
    for (Conn* c : stale) Close(*c);
  }

  HitServer* server_;
  std::shared_ptr<Mailbox> mailbox_;
  int epoll_fd_ = -1;
  uint64_t next_id_ = 0;
  bool paused_ = false;
  Clock::time_point resume_;
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;
};

absl::StatusOr<std::unique_ptr<HitServer>> HitServer::Start(const HitServerOptions& options,
                                                            HitHandler handler) {
  const std::string where = absl::StrCat(options.host, ":", options.port);
  if (options.threads < 1 || options.max_connections < 1 || options.max_request_bytes < 64) {
    return absl::InvalidArgumentError(
        "hit path: threads and max_connections must be positive, max_request_bytes at least 64");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(options.port);
  if (int e = ::getaddrinfo(options.host.c_str(), port_text.c_str(), &hints, &found); e != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("hit path: cannot resolve ", where, ": ", ::gai_strerror(e)));
  }
  std::unique_ptr<HitServer> s(new HitServer());
  s->options_ = options;
  s->handler_ = std::move(handler);
  s->listen_fd_ = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  int err = 0;
  if (s->listen_fd_ < 0 ||
      ::setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(s->listen_fd_, found->ai_addr, found->ai_addrlen) != 0 ||
      ::listen(s->listen_fd_, 1024) != 0) {
    err = errno;
  }
  ::freeaddrinfo(found);
  if (err != 0) {
    return absl::UnavailableError(
        absl::StrCat("hit path: cannot listen on ", where, ": ", std::strerror(err)));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  s->port_ = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  for (int i = 0; i < options.threads; ++i) {
    auto loop = std::make_unique<Loop>(s.get());
    if (absl::Status st = loop->Init(); !st.ok()) return st;
    s->loops_.push_back(std::move(loop));
  }
  for (auto& loop : s->loops_) s->threads_.emplace_back([l = loop.get()] { l->Run(); });
  return s;
}

HitServer::~HitServer() {
  stop_.store(true);
  for (auto& loop : loops_) loop->Wake();
  for (std::thread& t : threads_) t.join();
  loops_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

}  // namespace tilec::server
