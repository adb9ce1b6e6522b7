// The CLI against a hostile or broken server: a real gRPC server on
// loopback whose Compile answers name targets that were not asked for
// (a path outside --out among them), or too many results, and whose
// GetArtifact sends bytes other than the digest asked for. The CLI refuses
// each (exit 77) and writes nothing outside the folder it was given.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tilec/v1/service.grpc.pb.h"
#include "tests/testing/temp_dir.h"

namespace tilec {
namespace {

constexpr char kDigest[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

class Hostile final : public tilec::v1::Tilec::Service {
 public:
  std::vector<std::string> targets;  // what Compile answers for
  grpc::Status Compile(grpc::ServerContext*, const tilec::v1::CompileRequest*,
                       tilec::v1::CompileResponse* resp) override {
    for (const std::string& t : targets) {
      tilec::v1::CompileResult* r = resp->add_results();
      r->set_target(t);
      r->set_digest(kDigest);
      r->set_size_bytes(5);
      r->set_metadata_json("{}");
    }
    return grpc::Status::OK;
  }
  grpc::Status GetArtifact(grpc::ServerContext*, const tilec::v1::GetArtifactRequest*,
                           grpc::ServerWriter<tilec::v1::ArtifactChunk>* w) override {
    tilec::v1::ArtifactChunk c;
    c.set_data("EVIL!");  // not the bytes of kDigest
    c.set_total_bytes(5);
    w->Write(c);
    return grpc::Status::OK;
  }
};

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun Tilec(const std::string& args) {
  CliRun r;
  FILE* p = ::popen(absl::StrCat(TILEC_BINARY, " ", args, " 2>&1").c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class HostileServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(&service_);
    server_ = b.BuildAndStart();
    ASSERT_GT(port, 0);
    address_ = absl::StrCat("127.0.0.1:", port);
    dir_ = testing::MakeTempDir("hostile");
    std::filesystem::create_directories(dir_ + "/out");
  }
  void TearDown() override { server_->Shutdown(); }

  CliRun Compile() {
    return Tilec(absl::StrCat("compile ", TILEC_SOURCE_DIR, "/examples/gemm.py --fn matmul",
                              " -D M=128 -D N=128",
                              " -D K=64 --target sm_80 --server ", address_, " --out ", dir_,
                              "/out"));
  }

  Hostile service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_, dir_;
};

TEST_F(HostileServerTest, ATargetThatWasNotAskedForWritesNothing) {
  service_.targets = {"../escaped"};
  CliRun r = Compile();
  EXPECT_EQ(r.code, 77) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "answered for target \"../escaped\" where sm_80 was asked"))
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/matmul.../escaped.cubin"));
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/out"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);  // only out/
}

TEST_F(HostileServerTest, MoreResultsThanTargetsAreRefused) {
  service_.targets = {"sm_80", "sm_90a"};
  CliRun r = Compile();
  EXPECT_EQ(r.code, 77) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "2 results for 1 targets")) << r.out;
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/out"));
}

TEST_F(HostileServerTest, BytesThatAreNotTheDigestAreNotWritten) {
  const std::string file = dir_ + "/out/a.cubin";
  CliRun r = Tilec(absl::StrCat("get ", kDigest, " -o ", file, " --server ", address_));
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_FALSE(std::filesystem::exists(file)) << r.out;
  service_.targets = {"sm_80"};
  r = Compile();
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out/matmul.sm_80.cubin")) << r.out;
}

}  // namespace
}  // namespace tilec
