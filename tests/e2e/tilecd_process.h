// Starts a real tilecd on 127.0.0.1 with free ports for a test, and stops it;
// the Compile RPC and the metrics endpoint as the tests call them.
#ifndef TILEC_TESTS_E2E_TILECD_PROCESS_H_
#define TILEC_TESTS_E2E_TILECD_PROCESS_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tilec/v1/service.grpc.pb.h"
#include "tests/testing/loopback.h"
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
    work_ = work_dir.empty() ? MakeTempDir("tilecd") : work_dir;
    std::string port_file = work_ + "/port", metrics_file = work_ + "/metrics_port";
    ::unlink(port_file.c_str());
    ::unlink(metrics_file.c_str());
    const std::string http_file = work_ + "/http_port";
    ::unlink(http_file.c_str());
    port_ = metrics_port_ = http_port_ = 0;
    std::vector<std::string> args = {TILECD_BINARY,      "--cache_dir=" + cache_dir,
                                     "--port=0",         "--port_file=" + port_file,
                                     "--metrics_port=0", "--metrics_port_file=" + metrics_file,
                                     "--host=127.0.0.1"};
    if (hit_path) {
      args.push_back("--http_port=0");
      args.push_back("--http_port_file=" + http_file);
    }
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      // The server's per-compile directories go under the test's work
      // directory, removed at exit even when a test kills the server.
      ::setenv("TMPDIR", work_.c_str(), 1);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // not left behind by a crashed test
      if (fsize_limit > 0) {  // a full disk, unprivileged: writes past it fail with EFBIG
        ::signal(SIGXFSZ, SIG_IGN);
        rlimit lim{fsize_limit, fsize_limit};
        ::setrlimit(RLIMIT_FSIZE, &lim);
      }
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 600; ++i) {
      std::ifstream pf(port_file), mf(metrics_file);
      std::ifstream hf(http_file);
      if (pf >> port_ && mf >> metrics_port_ && (!hit_path || hf >> http_port_)) break;
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
  void Stop() { End(SIGTERM); }
  ~Tilecd() { Stop(); }

  // SIGTERM, then the seconds until the server exited (SIGKILL and -1 past
  // `limit`).
  double Terminate(absl::Duration limit) {
    stub_.reset();
    channel_.reset();
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    const absl::Time start = absl::Now();
    int status;
    while (::waitpid(pid_, &status, WNOHANG) != pid_) {
      if (absl::Now() - start > limit) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return -1;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    pid_ = -1;
    return absl::ToDoubleSeconds(absl::Now() - start);
  }

  // SIGKILL, as a crash would end it, and waits for it.
  void Kill() { End(SIGKILL); }

  // Sends the server `signal` (false when it is not running).
  bool Signal(int signal) { return pid_ > 0 && ::kill(pid_, signal) == 0; }

  // Serve the hit path (--http_port) too; set before Start.
  bool hit_path = false;
  // RLIMIT_FSIZE of the server (0: none); set before Start.
  rlim_t fsize_limit = 0;
  // The server's TMPDIR and port files (a new temporary folder when empty);
  // set before Start, to find what one server left for the next.
  std::string work_dir;
  pid_t pid() const { return pid_; }

  tilec::v1::Tilec::Stub* stub() { return stub_.get(); }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  const std::string& address() const { return address_; }
  int metrics_port() const { return metrics_port_; }
  std::string http_address() const { return absl::StrCat("127.0.0.1:", http_port_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0, metrics_port_ = 0, http_port_ = 0;
  std::string work_, address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<tilec::v1::Tilec::Stub> stub_;

  // Closes the test's channel, sends `signal` and waits for the server.
  void End(int signal) {
    stub_.reset();
    channel_.reset();
    if (pid_ > 0) {
      ::kill(pid_, signal);
      int status;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
  }
};

// The whole of a file ("" when it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The Stats RPC (a failed call fails the test).
inline tilec::v1::StatsResponse Stats(Tilecd& d) {
  grpc::ClientContext ctx;
  tilec::v1::StatsResponse r;
  EXPECT_TRUE(d.stub()->Stats(&ctx, {}, &r).ok());
  return r;
}

#ifdef TILEC_SOURCE_DIR
// examples/gemm.py's matmul with every parameter bound and M = m (each m a
// different kernel), for `targets`.
inline tilec::v1::CompileRequest GemmRequest(int m,
                                             const std::vector<std::string>& targets = {"sm_80"}) {
  tilec::v1::CompileRequest req;
  auto* src = req.mutable_source();
  src->set_path("examples/gemm.py");
  src->set_text(ReadFile(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py"));
  src->set_function("matmul");
  const std::pair<const char*, std::string> binds[] = {{"M", std::to_string(m)},
                                                       {"N", "128"},
                                                       {"K", "64"},
                                                       {"block_M", "64"},
                                                       {"block_N", "64"},
                                                       {"block_K", "32"},
                                                       {"dtype", "float16"},
                                                       {"accum_dtype", "float32"},
                                                       {"transpose_A", "False"},
                                                       {"transpose_B", "False"},
                                                       {"num_stages", "2"},
                                                       {"threads", "128"},
                                                       {"enable_rasterization", "True"}};
  for (const auto& [k, v] : binds) {
    auto* b = src->add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  for (const std::string& t : targets) req.add_targets(t);
  return req;
}
#endif

// The Compile RPC with a 170 s deadline, as `token`'s bearer when not empty.
inline grpc::Status Compile(Tilecd& d, const tilec::v1::CompileRequest& req,
                            tilec::v1::CompileResponse* resp, const std::string& token = "") {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(170));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  return d.stub()->Compile(&ctx, req, resp);
}

// GetArtifact of `digest` (60 s deadline), every chunk appended to `bytes`.
inline grpc::Status GetArtifact(Tilecd& d, const std::string& digest, std::string* bytes) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  tilec::v1::GetArtifactRequest get;
  get.set_digest(digest);
  auto reader = d.stub()->GetArtifact(&ctx, get);
  tilec::v1::ArtifactChunk chunk;
  while (reader->Read(&chunk)) *bytes += chunk.data();
  return reader->Finish();
}

// The body of GET http://127.0.0.1:<port><path> (HTTP/1.0); "" when the
// connection fails or the response has no body.
inline std::string HttpGet(int port, const std::string& path) {
  const int fd = tilec::testing::ConnectLoopback(port);
  if (fd < 0) return "";
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  (void)::write(fd, req.data(), req.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t body = out.find("\r\n\r\n");
  return body == std::string::npos ? "" : out.substr(body + 4);
}

}  // namespace tilec::e2e

#endif  // TILEC_TESTS_E2E_TILECD_PROCESS_H_
