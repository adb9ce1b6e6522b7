// A plain TCP connection to a port on 127.0.0.1, for tests and benchmarks
// that talk to a server below gRPC (raw HTTP, idle or half-open sockets).
#ifndef TILEC_TESTS_TESTING_LOOPBACK_H_
#define TILEC_TESTS_TESTING_LOOPBACK_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace tilec::testing {

// The connected socket, or -1.
inline int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace tilec::testing

#endif  // TILEC_TESTS_TESTING_LOOPBACK_H_
