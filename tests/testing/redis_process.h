// A redis-server for tests: on 127.0.0.1 at a free port, no persistence,
// killed (SIGKILL, as a crash) and restarted on the same port at will.
#ifndef TILEC_TESTS_TESTING_REDIS_PROCESS_H_
#define TILEC_TESTS_TESTING_REDIS_PROCESS_H_

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/time/clock.h"

namespace tilec::testing {

// A free TCP port on 127.0.0.1 (bound, read, released).
inline int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// redis-server on 127.0.0.1:port, no persistence.
class Redis {
 public:
  // `binary`: the redis-server to run; `extra`: more of its flags
  // ("--requirepass", "secret").
  Redis(int port, std::string binary, std::vector<std::string> extra = {})
      : port_(port), binary_(std::move(binary)), extra_(std::move(extra)) {}
  ~Redis() { Kill(); }
  bool Start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string port = std::to_string(port_);
      ::freopen("/dev/null", "w", stdout);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // not left behind by a crashed test
      std::vector<std::string> args = {binary_,     "--port",     port,     "--bind",
                                       "127.0.0.1", "--save",     "",       "--appendonly",
                                       "no",        "--loglevel", "warning"};
      args.insert(args.end(), extra_.begin(), extra_.end());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      if (Ping()) return true;
      absl::SleepFor(absl::Milliseconds(25));
    }
    return false;
  }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // PING answered (NOAUTH counts: the server is up).
  bool Ping() {
    redisContext* c = Connect();
    if (c == nullptr) return false;
    auto* r = static_cast<redisReply*>(redisCommand(c, "PING"));
    const bool ok = r != nullptr && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR);
    if (r) freeReplyObject(r);
    redisFree(c);
    return ok;
  }
  // SET name value (binary safe).
  bool Set(const std::string& name, const std::string& value) {
    redisContext* c = Connect();
    if (c != nullptr && !password.empty())
      freeReplyObject(redisCommand(c, "AUTH %s", password.c_str()));
    if (c == nullptr) return false;
    auto* r = static_cast<redisReply*>(
        redisCommand(c, "SET %b %b", name.data(), name.size(), value.data(), value.size()));
    const bool ok = r != nullptr && r->type == REDIS_REPLY_STATUS;
    if (r) freeReplyObject(r);
    redisFree(c);
    return ok;
  }
  int port() const { return port_; }
  std::string password;  // for Set, when the server requires one

 private:
  redisContext* Connect() {
    timeval tv{0, 200000};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c == nullptr || c->err) {
      if (c) redisFree(c);
      return nullptr;
    }
    return c;
  }
  int port_;
  std::string binary_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
};

}  // namespace tilec::testing

#endif  // TILEC_TESTS_TESTING_REDIS_PROCESS_H_
