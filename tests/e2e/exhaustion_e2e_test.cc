// Resources running out on a real tilecd: a cache on a file system with no
// space left, connections that never handshake or stay idle, and requests
// over the size limits. Each costs its request at most; the server stays up
// and nothing in the cache is corrupt. (Many clients at once: benchmarks/
// load.cc, ctest load_short.)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "gtest/gtest.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

int OpenFds(pid_t pid) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

int ConnectTo(const std::string& address) {
  return tilec::testing::ConnectLoopback(std::stoi(address.substr(address.rfind(':') + 1)));
}

// Whether the server closed `fd` (EOF or reset) within `limit`; what it
// sends first (a SETTINGS frame, a GOAWAY) is read and dropped.
bool ClosedWithin(int fd, absl::Duration limit) {
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  const absl::Time end = absl::Now() + limit;
  char buf[4096];
  while (absl::Now() < end) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
    if (n < 0) absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

// A cache on a tmpfs of 256 KiB, filled: compiles are answered with their
// bytes and the reason (ENOSPC) and nothing is stored, torn or left in
// tmp/; once space is freed the same server stores and serves them.
TEST(ExhaustionE2E, ACacheOnAFullFileSystem) {
  // A mount namespace of this thread (and the tilecd it starts): the tmpfs
  // is gone with them, whatever happens to the test.
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    GTEST_SKIP() << "no mount namespace here (" << strerror(errno)
                 << "): needs root; the RLIMIT_FSIZE version is AvailabilityE2E.AFullDisk...";
  }
  const std::string mnt = MakeTempDir("full_fs");
  // The mount point is a folder of the real file system: removed at the end
  // (after the server below, which is destroyed first).
  struct RemoveMountPoint {
    std::string dir;
    ~RemoveMountPoint() {
      ::umount2(dir.c_str(), MNT_DETACH);
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove_mount_point{mnt};
  ASSERT_EQ(::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k"), 0) << strerror(errno);
  const std::string cache = mnt + "/cache";
  Tilecd d;
  ASSERT_TRUE(d.Start(cache, {"--metrics_port=-1"}));
  // Fill what is left.
  const std::string filler = mnt + "/filler";
  {
    int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    std::string block(4096, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    EXPECT_EQ(errno, ENOSPC);
    ::close(fd);
  }
  std::vector<tilec::v1::CompileResult> answered;  // for M = 128, 192
  for (int m : {128, 192}) {
    tilec::v1::CompileResponse resp;
    grpc::Status s = Compile(d, GemmRequest(m), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    const tilec::v1::CompileResult& r = resp.results(0);
    EXPECT_TRUE(absl::StrContains(r.store_error(), "No space left on device")) << r.store_error();
    EXPECT_EQ(cache::Sha256Hex(r.artifact()), r.digest());
    std::string bytes;
    EXPECT_EQ(GetArtifact(d, r.digest(), &bytes).error_code(), grpc::StatusCode::NOT_FOUND);
    answered.push_back(r);
  }
  for (const char* sub : {"/tmp", "/blobs", "/keys"}) {
    EXPECT_TRUE(std::filesystem::is_empty(cache + sub)) << sub;
  }
  EXPECT_EQ(Stats(d).cache_corrupt(), 0);
  // Space again: the same server stores, then serves, the same bytes.
  std::filesystem::remove(filler);
  const int ms[] = {128, 192};
  for (int i = 0; i < 2; ++i) {
    const int m = ms[i];
    tilec::v1::CompileResponse stored, hit;
    ASSERT_TRUE(Compile(d, GemmRequest(m), &stored).ok());
    EXPECT_TRUE(stored.results(0).store_error().empty()) << stored.results(0).store_error();
    ASSERT_TRUE(Compile(d, GemmRequest(m), &hit).ok());
    EXPECT_TRUE(hit.results(0).cache_hit());
    std::string bytes;
    ASSERT_TRUE(GetArtifact(d, answered[i].digest(), &bytes).ok());
    EXPECT_EQ(bytes, answered[i].artifact());
  }
}

// Connections that open and never finish the HTTP/2 handshake (nothing
// sent, or the preface cut short) are closed after --handshake_timeout_s,
// and their descriptors with them; calls go on meanwhile.
TEST(ExhaustionE2E, ConnectionsThatNeverHandshakeAreClosed) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"), {"--metrics_port=-1", "--handshake_timeout_s=1"}));
  tilec::v1::StatsResponse first = Stats(d);  // the test's own connection is up
  const int fds_before = OpenFds(d.pid());
  std::vector<int> socks;
  for (int i = 0; i < 40; ++i) {
    int fd = ConnectTo(d.address());
    ASSERT_GE(fd, 0);
    if (i % 2 == 1) {
      ASSERT_EQ(::write(fd, "PRI * HTTP/2.0\r\n", 16), 16);
    }
    socks.push_back(fd);
  }
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_GE(OpenFds(d.pid()), fds_before + 40);
  EXPECT_TRUE(Stats(d).compiler_version() == first.compiler_version());
  for (int fd : socks) {
    EXPECT_TRUE(ClosedWithin(fd, absl::Seconds(5)));
    ::close(fd);
  }
  // The server closes its ends a moment after the client sees them closed.
  bool released = false;
  for (int i = 0; i < 50 && !released; ++i) {
    released = OpenFds(d.pid()) <= fds_before + 2;
    if (!released) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(released) << OpenFds(d.pid()) << " descriptors, " << fds_before << " before";
}

// A connection with no call for --max_connection_idle_s is closed; the
// client's next call opens a new one.
TEST(ExhaustionE2E, IdleConnectionsAreClosed) {
  Tilecd d;
  ASSERT_TRUE(
      d.Start(MakeTempDir("cache"), {"--metrics_port=-1", "--max_connection_idle_s=1"}));
  const int fds_idle = OpenFds(d.pid());
  std::vector<std::unique_ptr<tilec::v1::Tilec::Stub>> clients;
  for (int i = 0; i < 20; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);
    clients.push_back(tilec::v1::Tilec::NewStub(
        grpc::CreateCustomChannel(d.address(), grpc::InsecureChannelCredentials(), args)));
    grpc::ClientContext ctx;
    tilec::v1::StatsResponse st;
    ASSERT_TRUE(clients.back()->Stats(&ctx, {}, &st).ok());
  }
  EXPECT_GE(OpenFds(d.pid()), fds_idle + 20);
  bool back = false;
  for (int i = 0; i < 50 && !back; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    back = OpenFds(d.pid()) <= fds_idle + 1;  // the test's own channel may remain
  }
  EXPECT_TRUE(back) << OpenFds(d.pid()) << " descriptors, " << fds_idle << " before";
  grpc::ClientContext ctx;
  tilec::v1::StatsResponse st;
  EXPECT_TRUE(clients.front()->Stats(&ctx, {}, &st).ok());
}

// Requests over the limits are refused with a message naming the limit,
// and the server goes on.
TEST(ExhaustionE2E, OversizedRequestsAreRefusedWithTheLimit) {
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("cache"),
                      {"--metrics_port=-1", "--max_message_bytes=1000000",
                       "--max_source_bytes=100000"}));
  tilec::v1::CompileRequest big = GemmRequest(128);
  big.mutable_source()->mutable_text()->append(2'000'000, '#');
  tilec::v1::CompileResponse resp;
  grpc::Status s = Compile(d, big, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "1000000")) << s.error_message();
  tilec::v1::CompileRequest source = GemmRequest(128);
  source.mutable_source()->mutable_text()->append(200'000, '#');
  s = Compile(d, source, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "100000")) << s.error_message();
  EXPECT_TRUE(Compile(d, GemmRequest(128), &resp).ok());
}

}  // namespace
}  // namespace tilec::e2e
