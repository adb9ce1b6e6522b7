// Starts a real tilecd on 127.0.0.1 with free ports for a test, and stops it.
#ifndef TILEC_TESTS_E2E_TILECD_PROCESS_H_
#define TILEC_TESTS_E2E_TILECD_PROCESS_H_

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tilec/v1/service.grpc.pb.h"
#include "tests/testing/temp_dir.h"

namespace tilec::e2e {

// Removed when the test process exits.
inline std::string MakeTempDir(const std::string& name) {
  return tilec::testing::MakeTempDir(name);
}

class Tilecd {
 public:
  // Starts tilecd on `cache_dir` with extra flags; waits until it listens.
  bool Start(const std::string& cache_dir, std::vector<std::string> extra = {}) {
    work_ = MakeTempDir("tilecd");
    std::string port_file = work_ + "/port", metrics_file = work_ + "/metrics_port";
    std::vector<std::string> args = {TILECD_BINARY,      "--cache_dir=" + cache_dir,
                                     "--port=0",         "--port_file=" + port_file,
                                     "--metrics_port=0", "--metrics_port_file=" + metrics_file,
                                     "--host=127.0.0.1"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 600; ++i) {
      std::ifstream pf(port_file), mf(metrics_file);
      if (pf >> port_ && mf >> metrics_port_) break;
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    if (port_ <= 0) return false;
    address_ = absl::StrCat("127.0.0.1:", port_);
    grpc::ChannelArguments args_;
    channel_ = grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args_);
    stub_ = tilec::v1::Tilec::NewStub(channel_);
    return true;
  }

  // Stops the server (SIGTERM, as an operator would) and waits for it. The
  // test's channel is closed first so the server's graceful shutdown has no
  // connection to drain.
  void Stop() {
    stub_.reset();
    channel_.reset();
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
  ~Tilecd() { Stop(); }

  tilec::v1::Tilec::Stub* stub() { return stub_.get(); }
  const std::string& address() const { return address_; }
  int metrics_port() const { return metrics_port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0, metrics_port_ = 0;
  std::string work_, address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<tilec::v1::Tilec::Stub> stub_;
};

}  // namespace tilec::e2e

#endif  // TILEC_TESTS_E2E_TILECD_PROCESS_H_
