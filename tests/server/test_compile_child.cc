// A compile-child test double for subprocess_compiler_test: speaks the
// compile-child protocol (CompileChildRequest on stdin, CompileChildResult on stdout) and
// misbehaves on request, by target name: "hang" never answers, "crash"
// aborts, "silent" exits without a result, "fail" reports INVALID_ARGUMENT,
// "alloc" allocates until the memory limit stops it (and dies of the
// uncaught std::bad_alloc, as NVRTC does), "probe" reports what its sandbox
// lets it do as "env=<entries>;read=<errno reading the file named by the
// program's name, 0 when readable>;cwd_write=<errno>;cpu=<RLIMIT_CPU>;
// uid=<uid>"; any other target answers with artifact bytes derived from the
// request.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <iostream>
#include <iterator>
#include <string>

#include "proto/tilec/v1/service.pb.h"

int main() {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  tilec::v1::CompileChildRequest request;
  if (!request.ParseFromString(input)) return 3;
  const std::string& t = request.target();
  if (t == "hang") {
    while (true) ::pause();
  }
  if (t == "crash") std::abort();
  if (t == "killed") ::raise(SIGKILL);  // as an operator or the OOM killer would
  if (t == "silent") return 0;
  if (t == "alloc") {
    std::vector<char*> blocks;
    while (true) {
      char* b = new char[16 << 20];
      std::memset(b, 1, 16 << 20);
      blocks.push_back(b);
    }
  }
  tilec::v1::CompileChildResult result;
  if (t == "probe") {
    extern char** environ;
    int env = 0;
    for (char** e = environ; *e != nullptr; ++e) ++env;
    int fd = ::open(request.program().name().c_str(), O_RDONLY);
    int read_errno = fd >= 0 ? 0 : errno;
    if (fd >= 0) ::close(fd);
    fd = ::open("scratch", O_CREAT | O_WRONLY, 0600);
    int write_errno = fd >= 0 ? 0 : errno;
    if (fd >= 0) ::close(fd);
    rlimit cpu{};
    ::getrlimit(RLIMIT_CPU, &cpu);
    result.set_artifact("env=" + std::to_string(env) + ";read=" + std::to_string(read_errno) +
                        ";cwd_write=" + std::to_string(write_errno) +
                        ";cpu=" + std::to_string(cpu.rlim_cur) + ";uid=" +
                        std::to_string(::getuid()));
    std::cout << result.SerializeAsString();
    return 0;
  }
  if (t == "fail") {
    result.set_code(3);  // INVALID_ARGUMENT
    result.set_message("gemm.py:4:7: error: test diagnostic");
  } else {
    result.set_artifact("cubin:" + request.program_hash() + ":" + t + ":" +
                        request.program().name());
    result.set_metadata_json("{\"target\":\"" + t + "\"}");
    result.set_compile_seconds(0.01);
  }
  std::cout << result.SerializeAsString();
  return 0;
}
