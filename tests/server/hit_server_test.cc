// The hit path's HTTP/1.1 listener (server/hit_server.h) on loopback, with
// handlers written here: kept-alive connections, replies from other threads,
// pipelined requests in order, malformed and oversized requests refused with
// the connection closed while the server keeps serving, idle and stalled
// connections closed, the connection limit.
#include "server/hit_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/hit_client.h"
#include "gtest/gtest.h"

namespace tilec::server {
namespace {

using cli::HitClient;

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// Everything `fd` receives until the peer closes or `limit` passes.
std::string ReadUntilClosed(int fd, absl::Duration limit = absl::Seconds(5)) {
  std::string in;
  const absl::Time end = absl::Now() + limit;
  char buf[4096];
  while (absl::Now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r <= 0) break;
    in.append(buf, static_cast<size_t>(r));
  }
  return in;
}

// Sends `bytes` on a new connection; what comes back until it is closed.
std::string Exchange(int port, const std::string& bytes) {
  const int fd = Connect(port);
  EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
  std::string out = ReadUntilClosed(fd);
  ::close(fd);
  return out;
}

// Whether the server closed `fd` within `limit`.
bool ClosedWithin(int fd, absl::Duration limit) {
  const absl::Time end = absl::Now() + limit;
  char c;
  while (absl::Now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) return ::recv(fd, &c, 1, 0) <= 0;
  }
  return false;
}

HitReply Echo(const HitRequest& r) {
  return HitReply::Text(
      200, absl::StrCat(r.method, " ", r.path, " ", r.query, " [", r.authorization, "]"));
}

std::unique_ptr<HitServer> StartEcho(HitServerOptions o = {}) {
  auto s = HitServer::Start(o, [](const HitRequest& r, HitResponder) { return Echo(r); });
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

TEST(HitServer, ServesManyRequestsOnOneKeptConnection) {
  HitServerOptions o;
  o.threads = 2;
  auto server = StartEcho(o);
  HitClient client(absl::StrCat("127.0.0.1:", server->port()), "tok");
  for (int i = 0; i < 200; ++i) {
    auto r = client.Get(absl::StrCat("/p/", i, "?q=", i));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, absl::StrCat("GET /p/", i, " q=", i, " [Bearer tok]\n"));
  }
  EXPECT_EQ(server->open_connections(), 1);
  EXPECT_EQ(server->requests(), 200);
}

TEST(HitServer, RepliesFromOtherThreadsReachTheirConnections) {
  HitServerOptions o;
  o.threads = 2;
  auto s = HitServer::Start(o, [](const HitRequest& r, HitResponder later) {
    std::thread([r, later] {
      absl::SleepFor(absl::Milliseconds(r.path.size() % 3));
      later(Echo(r));
    }).detach();
    return std::nullopt;
  });
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<std::thread> clients;
  std::atomic<int> good{0};
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      HitClient client(absl::StrCat("127.0.0.1:", (*s)->port()), "");
      for (int i = 0; i < 25; ++i) {
        const std::string path = absl::StrCat("/c", c, "/", i);
        auto r = client.Get(path);
        if (r.ok() && r->body == absl::StrCat("GET ", path, "  []\n")) good.fetch_add(1);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(good.load(), 200);
}

TEST(HitServer, AReplyForAConnectionClosedMeanwhileIsDropped) {
  std::mutex mu;
  std::vector<HitResponder> waiting;
  auto s =
      HitServer::Start({}, [&](const HitRequest& r, HitResponder later) -> std::optional<HitReply> {
        if (r.path != "/wait") return Echo(r);
        std::lock_guard<std::mutex> lock(mu);
        waiting.push_back(std::move(later));
        return std::nullopt;
      });
  ASSERT_TRUE(s.ok()) << s.status();
  const int port = (*s)->port();
  const int fd = Connect(port);
  const std::string req = "GET /wait HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  for (int i = 0; i < 200 && waiting.empty(); ++i) absl::SleepFor(absl::Milliseconds(10));
  // The client goes away abruptly (a reset), as a killed process's would.
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
  for (int i = 0; i < 200 && (*s)->open_connections() > 0; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ((*s)->open_connections(), 0);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(waiting.size(), 1u);
  waiting[0](HitReply::Text(200, "late"));  // its connection is gone
  HitClient client(absl::StrCat("127.0.0.1:", port), "");
  auto r = client.Get("/after");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "GET /after  []\n");
}

TEST(HitServer, PipelinedRequestsAreAnsweredInOrder) {
  auto server = StartEcho();
  std::string out = Exchange(server->port(),
                             "GET /first HTTP/1.1\r\n\r\nGET /second HTTP/1.1\r\n\r\n"
                             "HEAD /third HTTP/1.1\r\nConnection: close\r\n\r\n");
  const size_t first = out.find("GET /first"), second = out.find("GET /second");
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(second, std::string::npos) << out;
  EXPECT_LT(first, second);
  // HEAD: the length of the body it would have, and no body.
  const size_t third = out.rfind("HTTP/1.1 200");
  EXPECT_TRUE(absl::StrContains(out.substr(third), "Content-Length: 16\r\n")) << out;
  EXPECT_TRUE(absl::EndsWith(out, "Connection: close\r\n\r\n")) << out;
}

TEST(HitServer, MalformedRequestsAreRefusedAndTheServerKeepsServing) {
  HitServerOptions o;
  o.max_request_bytes = 1024;
  auto server = StartEcho(o);
  struct Case {
    std::string bytes;
    int status;
  };
  const Case cases[] = {
      {"POST /x HTTP/1.1\r\n\r\n", 405},
      {"DELETE /v1/artifacts/x HTTP/1.1\r\n\r\n", 405},
      {"GET /x HTTP/2.0\r\n\r\n", 505},
      {"GET x HTTP/1.1\r\n\r\n", 400},
      {"GET /x\r\n\r\n", 400},
      {std::string("\x00\x01\xff garbage\r\n\r\n", 15), 400},
      {"GET /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 413},
      {"GET /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
      {"GET /x HTTP/1.1\r\nno colon here\r\n\r\n", 400},
      {"GET /x HTTP/1.1\r\n folded: header\r\n\r\n", 400},
      {"GET /x HTTP/1.1\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n", 400},
      {"GET /x HTTP/1.1\r\nX-Long: " + std::string(2000, 'a') + "\r\n\r\n", 431},
      {"GET /" + std::string(4000, 'b'), 431},  // no end of headers in sight
  };
  for (const Case& c : cases) {
    std::string out = Exchange(server->port(), c.bytes);
    EXPECT_TRUE(absl::StartsWith(out, absl::StrCat("HTTP/1.1 ", c.status, " ")))
        << c.bytes.substr(0, 60) << " -> " << out;
    EXPECT_TRUE(absl::StrContains(out, "Connection: close")) << out;
  }
  HitClient client(absl::StrCat("127.0.0.1:", server->port()), "");
  auto r = client.Get("/still");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
}

TEST(HitServer, IdleAndStalledConnectionsAreClosedWhileOthersAreServed) {
  HitServerOptions o;
  o.idle_timeout = absl::Seconds(1);
  auto server = StartEcho(o);
  const int stalled = Connect(server->port());
  const std::string part = "GET /slow HTTP/1.1\r\nHost: x\r\n";  // never finished
  ASSERT_GT(::send(stalled, part.data(), part.size(), MSG_NOSIGNAL), 0);
  const int idle = Connect(server->port());
  HitClient client(absl::StrCat("127.0.0.1:", server->port()), "");
  auto r = client.Get("/meanwhile");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(ClosedWithin(stalled, absl::Seconds(4)));
  EXPECT_TRUE(ClosedWithin(idle, absl::Seconds(4)));
  ::close(stalled);
  ::close(idle);
  // The client's kept connection was closed too: it opens another.
  r = client.Get("/later");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "GET /later  []\n");
}

TEST(HitServer, ConnectionsPastTheLimitAreClosed) {
  HitServerOptions o;
  o.max_connections = 2;
  auto server = StartEcho(o);
  auto a = std::make_unique<HitClient>(absl::StrCat("127.0.0.1:", server->port()), "");
  HitClient b(absl::StrCat("127.0.0.1:", server->port()), "");
  ASSERT_TRUE(a->Get("/a").ok());
  ASSERT_TRUE(b.Get("/b").ok());
  const int third = Connect(server->port());
  EXPECT_TRUE(ClosedWithin(third, absl::Seconds(4)));
  ::close(third);
  EXPECT_EQ(server->open_connections(), 2);
  {
    HitClient c(absl::StrCat("127.0.0.1:", server->port()), "", absl::Seconds(2));
    EXPECT_FALSE(c.Get("/c").ok());
  }
  a.reset();  // closes its connection: room for another
  bool served = false;
  for (int i = 0; i < 100 && !served; ++i) {
    HitClient c(absl::StrCat("127.0.0.1:", server->port()), "", absl::Seconds(2));
    auto r = c.Get("/c");
    served = r.ok() && r->status == 200;
    if (!served) absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(served);
}

TEST(HitServer, AnAddressThatCannotBeHadIsAnError) {
  auto first = StartEcho();
  HitServerOptions o;
  o.port = first->port();
  o.host = "127.0.0.1";
  auto second = HitServer::Start(o, [](const HitRequest& r, HitResponder) { return Echo(r); });
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::StrContains(second.status().message(), "cannot listen on 127.0.0.1:"))
      << second.status();
}

}  // namespace
}  // namespace tilec::server
