// Crash consistency on a real tilecd: the server killed with SIGKILL at
// random moments during cold compiles on one cache directory, restarted each
// time, must never serve a torn or corrupt artifact, must keep every compile
// it answered, and must leave no temporary files after its next start; a
// compile child killed mid-compile fails that request alone.
//
// TILEC_CRASH_ROUNDS sets the rounds (ctest runs a few; benchmarks/crash.sh
// runs 100), TILEC_CRASH_SEED the seed (printed).
#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "compiler/cache/disk_store.h"
#include "gtest/gtest.h"
#include "tests/e2e/tilecd_process.h"

namespace tilec::e2e {
namespace {

int Rounds(int fallback) {
  const char* v = std::getenv("TILEC_CRASH_ROUNDS");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

uint64_t Seed() {
  const char* v = std::getenv("TILEC_CRASH_SEED");
  uint64_t seed = v != nullptr ? std::strtoull(v, nullptr, 10) : std::random_device{}();
  std::printf("crash test seed %llu (TILEC_CRASH_SEED)\n", static_cast<unsigned long long>(seed));
  return seed;
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Temporary files and folders a writer or a compile left: the store's
// tmp/, the tuning database's "*.tmp.*", the compile children's folders.
std::vector<std::string> Leftovers(const std::string& cache, const std::string& work) {
  std::vector<std::string> found;
  for (const std::string& n : List(cache + "/tmp")) found.push_back("tmp/" + n);
  for (const std::string& n : List(cache + "/tuning")) {
    if (n.find(".tmp.") != std::string::npos) found.push_back("tuning/" + n);
  }
  for (const std::string& n : List(work)) {
    if (n.rfind("tilec-compile-", 0) == 0) found.push_back(n);
  }
  return found;
}

// The processes whose parent is `parent`, from /proc.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> kids;
  for (const std::string& n : List("/proc")) {
    if (n.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = ReadFile("/proc/" + n + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      kids.push_back(static_cast<pid_t>(std::stoi(n)));
    }
  }
  return kids;
}

// A running compile child of tilecd `server` (a descendant whose command
// line says compile-child), or -1.
pid_t CompileChildOf(pid_t server) {
  std::vector<pid_t> todo = ChildrenOf(server);
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    std::string cmd = ReadFile(absl::StrCat("/proc/", p, "/cmdline"));
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find("compile-child") != std::string::npos) return p;
    for (pid_t k : ChildrenOf(p)) todo.push_back(k);
  }
  return -1;
}

TEST(CrashE2E, ServerKilledDuringColdCompilesNeverServesATornArtifact) {
  const int rounds = Rounds(4);
  std::mt19937_64 rng(Seed());
  const std::string cache = MakeTempDir("crash_cache"), work = MakeTempDir("crash_work");
  constexpr int kClients = 3, kPerClient = 10;
  std::map<int, std::string> answered;  // M -> the digest answered before a kill
  std::set<int> submitted;
  std::mutex mu;
  int next_m = 64, leftovers_seen = 0;
  for (int round = 0; round < rounds; ++round) {
    Tilecd d;
    d.work_dir = work;
    ASSERT_TRUE(d.Start(cache, {"--jobs=2"})) << "round " << round;
    // What the last kill left is gone once the server has started.
    EXPECT_EQ(Leftovers(cache, work), std::vector<std::string>()) << "round " << round;
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      std::vector<int> ms;
      for (int i = 0; i < kPerClient; ++i) ms.push_back(next_m++);
      // Each client has its own connection: the kill resets the test's.
      std::shared_ptr<tilec::v1::Tilec::Stub> stub = tilec::v1::Tilec::NewStub(
          grpc::CreateChannel(d.address(), grpc::InsecureChannelCredentials()));
      clients.emplace_back([stub, &mu, &answered, &submitted, ms] {
        for (int m : ms) {
          {
            std::lock_guard<std::mutex> lock(mu);
            submitted.insert(m);
          }
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(170));
          tilec::v1::CompileResponse resp;
          grpc::Status s = stub->Compile(&ctx, GemmRequest(m), &resp);
          if (!s.ok()) return;  // the server was killed
          std::lock_guard<std::mutex> lock(mu);
          answered[m] = resp.results(0).digest();
        }
      });
    }
    // Anywhere from before the first compile starts to about when the last ends.
    absl::SleepFor(absl::Milliseconds(std::uniform_int_distribution<int>(0, 2000)(rng)));
    const pid_t server = d.pid();
    d.Kill();
    for (std::thread& t : clients) t.join();
    // The compile children die with their server (PR_SET_PDEATHSIG).
    for (int i = 0; i < 100 && !ChildrenOf(server).empty(); ++i) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    leftovers_seen += static_cast<int>(Leftovers(cache, work).size());
  }

  Tilecd d;
  d.work_dir = work;
  ASSERT_TRUE(d.Start(cache, {"--jobs=2"}));
  EXPECT_EQ(Leftovers(cache, work), std::vector<std::string>());
  // Every entry on disk: verified by the store's own reader (metadata hash,
  // blob digest) and served, byte for byte, by the restarted server.
  auto store = cache::DiskStore::Open(cache, int64_t{1} << 40);
  ASSERT_TRUE(store.ok()) << store.status();
  int entries = 0;
  for (const std::string& key : List(cache + "/keys")) {
    auto got = (*store)->Get(key);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(got->has_value()) << "entry " << key << " is corrupt or points at a torn blob";
    EXPECT_EQ(cache::Sha256Hex((*got)->bytes), (*got)->digest);
    std::string served;
    EXPECT_TRUE(GetArtifact(d, (*got)->digest, &served).ok()) << key;
    EXPECT_EQ(served, (*got)->bytes) << key;
    ++entries;
  }
  EXPECT_EQ((*store)->Stats().corrupt, 0);
  // Every compile answered before a kill is still there, a hit with the
  // same digest; a sample matches a cold compile on a fresh cache.
  int hits = 0;
  for (const auto& [m, digest] : answered) {
    tilec::v1::CompileResponse resp;
    ASSERT_TRUE(Compile(d, GemmRequest(m), &resp).ok()) << "M=" << m;
    EXPECT_TRUE(resp.results(0).cache_hit()) << "M=" << m << " was answered, then lost";
    EXPECT_EQ(resp.results(0).digest(), digest) << "M=" << m;
    hits += resp.results(0).cache_hit() ? 1 : 0;
  }
  EXPECT_EQ(Stats(d).cache_corrupt(), 0);
  Tilecd fresh;
  ASSERT_TRUE(fresh.Start(MakeTempDir("crash_fresh"), {"--jobs=2"}));
  int compared = 0;
  for (const auto& [m, digest] : answered) {
    if (compared == 3) break;
    tilec::v1::CompileResponse resp;
    ASSERT_TRUE(Compile(fresh, GemmRequest(m), &resp).ok());
    EXPECT_EQ(resp.results(0).digest(), digest) << "M=" << m;
    ++compared;
  }
  std::printf(
      "crash rounds %d: %zu programs submitted, %zu answered before a kill, %d entries on disk "
      "after (all verified and served intact), %d answered ones still hits, %d compared with a "
      "fresh compile, %d temporary files left by the kills (all removed at the next start)\n",
      rounds, submitted.size(), answered.size(), entries, hits, compared, leftovers_seen);
}

TEST(CrashE2E, ACompileChildKilledMidCompileFailsOnlyThatRequest) {
  const int rounds = Rounds(2);
  std::mt19937_64 rng(Seed());
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("child_kill"), {"--jobs=1"}));
  int killed_mid_compile = 0;
  for (int round = 0; round < rounds; ++round) {
    const int m = 1000 + round;
    tilec::v1::CompileResponse resp;
    grpc::Status status;
    std::thread client([&] { status = Compile(d, GemmRequest(m), &resp); });
    pid_t child = -1;
    for (int i = 0; i < 1500 && child < 0; ++i) {
      child = CompileChildOf(d.pid());
      if (child < 0) absl::SleepFor(absl::Milliseconds(2));
    }
    ASSERT_GT(child, 0) << "no compile child appeared";
    absl::SleepFor(absl::Milliseconds(std::uniform_int_distribution<int>(0, 150)(rng)));
    const bool killed = ::kill(child, SIGKILL) == 0;
    client.join();
    if (!killed || status.ok()) continue;  // it finished first
    ++killed_mid_compile;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    EXPECT_NE(status.error_message().find("killed (SIGKILL) from outside tilecd"),
              std::string::npos)
        << status.error_message();
    // The server is up, and the retry compiles and stores it.
    tilec::v1::CompileResponse again;
    ASSERT_TRUE(Compile(d, GemmRequest(m), &again).ok());
    EXPECT_FALSE(again.results(0).cache_hit());
    EXPECT_FALSE(again.results(0).digest().empty());
  }
  EXPECT_EQ(Stats(d).cache_corrupt(), 0);
  // A compile takes far longer than the 150 ms the kill waits at most.
  EXPECT_GT(killed_mid_compile, 0);
  std::printf("compile children killed mid-compile: %d of %d rounds\n", killed_mid_compile,
              rounds);
}

}  // namespace
}  // namespace tilec::e2e
