// What the service benchmarks share: a temporary folder, a free port, a
// child process (tilecd, redis-server) started and stopped, a client
// connection of its own, and the GEMM requests they send.
#ifndef TILEC_BENCHMARKS_BENCH_PROCESS_H_
#define TILEC_BENCHMARKS_BENCH_PROCESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "proto/tilec/v1/service.grpc.pb.h"

namespace tilec::bench {

// The whole of a file ("" when unreadable).
inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A new folder /tmp/<name>_XXXXXX (exits when it cannot be made).
inline std::string MakeTempDir(const char* name) {
  std::string tmpl = std::string("/tmp/") + name + "_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return buf.data();
}

// A TCP port free on 127.0.0.1 a moment ago.
inline int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// Starts `args`; with `quiet`, its stdout and stderr go to /dev/null.
inline pid_t Spawn(std::vector<std::string> args, bool quiet) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (quiet) {
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::perror(argv[0]);
    ::_exit(127);
  }
  return pid;
}

// SIGTERM, then waits for it.
inline void Stop(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status;
  ::waitpid(pid, &status, 0);
}

// examples/gemm.py's matmul (`text`) for M = m, N = K = 1024, 128x128x32
// tiles: each m a distinct program, compiled for `target`.
inline tilec::v1::CompileRequest GemmRequest(const std::string& text, int m,
                                             const std::string& target) {
  tilec::v1::CompileRequest req;
  auto* src = req.mutable_source();
  src->set_path("examples/gemm.py");
  src->set_text(text);
  src->set_function("matmul");
  const std::pair<const char*, std::string> binds[] = {
      {"M", std::to_string(m)}, {"N", "1024"},     {"K", "1024"},       {"block_M", "128"},
      {"block_N", "128"},       {"block_K", "32"}, {"num_stages", "2"}, {"threads", "128"}};
  for (const auto& [k, v] : binds) {
    auto* b = src->add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  req.add_targets(target);
  return req;
}

// A client with a connection of its own to `address`.
inline std::unique_ptr<tilec::v1::Tilec::Stub> NewStub(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection per client
  args.SetMaxReceiveMessageSize(64 << 20);
  return tilec::v1::Tilec::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

}  // namespace tilec::bench

#endif  // TILEC_BENCHMARKS_BENCH_PROCESS_H_
