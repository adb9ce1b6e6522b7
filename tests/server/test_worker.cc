// A compile-worker test double for subprocess_compiler_test: speaks the
// worker protocol (WorkerRequest on stdin, WorkerResult on stdout) and
// misbehaves on request, by target name: "hang" never answers, "crash"
// aborts, "silent" exits without a result, "fail" reports INVALID_ARGUMENT;
// any other target answers with artifact bytes derived from the request.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include "proto/tilec/v1/service.pb.h"

int main() {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  tilec::v1::WorkerRequest request;
  if (!request.ParseFromString(input)) return 3;
  const std::string& t = request.target();
  if (t == "hang") {
    while (true) ::pause();
  }
  if (t == "crash") std::abort();
  if (t == "silent") return 0;
  tilec::v1::WorkerResult result;
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
