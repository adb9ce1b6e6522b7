// Autotuning on a real pool on loopback: tilecd and three tilec-worker
// processes on the emulator device (their times are emulator wall times,
// labelled so; the protocol, leases, checks and database are the real ones).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/tilecd_process.h"
#include "tests/testing/ed25519_key.h"

namespace tilec::e2e {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small GEMM with its tile sizes left to autotuning.
tilec::v1::TileLangSource UnboundGemm() {
  tilec::v1::TileLangSource src;
  src.set_path("examples/gemm.py");
  src.set_text(ReadFile(std::string(TILEC_SOURCE_DIR) + "/examples/gemm.py"));
  src.set_function("matmul");
  const std::map<std::string, std::string> binds = {{"M", "128"},
                                                    {"N", "128"},
                                                    {"K", "64"},
                                                    {"dtype", "float16"},
                                                    {"accum_dtype", "float32"},
                                                    {"num_stages", "2"},
                                                    {"threads", "128"}};
  for (const auto& [k, v] : binds) {
    tilec::v1::Binding* b = src.add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  for (const char* u : {"block_M", "block_N", "block_K"}) src.add_unbound(u);
  return src;
}

class WorkerProcess {
 public:
  WorkerProcess(const std::string& server, const std::string& id,
                std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {TILEC_WORKER_BINARY,
                                     "--server",
                                     server,
                                     "--device",
                                     "emulator",
                                     "--id",
                                     id,
                                     "--cache_dir",
                                     MakeTempDir("worker_cache")};
    args.insert(args.end(), extra.begin(), extra.end());
    // The emulator's build directories of a worker the test kills go with
    // the test's temporary directories.
    const std::string tmp = MakeTempDir("worker_tmp");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setenv("TMPDIR", tmp.c_str(), 1);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~WorkerProcess() { Signal(SIGKILL); }
  // Sends `sig` and waits for the process; its exit status.
  int Signal(int sig) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
};

// Waits until the server lists `n` workers.
bool WaitForWorkers(Tilecd& d, int n, absl::Duration limit = absl::Seconds(60)) {
  const absl::Time end = absl::Now() + limit;
  while (absl::Now() < end) {
    if (Stats(d).workers_size() == n) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

struct AutotuneRun {
  grpc::Status status;
  std::vector<tilec::v1::AutotuneProgress> progress;
  const tilec::v1::AutotuneProgress& last() const { return progress.back(); }
};

tilec::v1::AutotuneRequest Request(bool retune) {
  tilec::v1::AutotuneRequest req;
  *req.mutable_source() = UnboundGemm();
  req.set_profile("host_emulator");
  req.set_top_k(3);
  req.set_iterations(3);
  req.set_warmup(1);
  req.set_retune(retune);
  return req;
}

AutotuneRun Autotune(Tilecd& d, const tilec::v1::AutotuneRequest& req,
                     std::function<void(const tilec::v1::AutotuneProgress&)> on = nullptr) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
  auto reader = d.stub()->Autotune(&ctx, req);
  AutotuneRun run;
  tilec::v1::AutotuneProgress p;
  while (reader->Read(&p)) {
    if (on) on(p);
    run.progress.push_back(p);
  }
  run.status = reader->Finish();
  return run;
}

std::map<std::string, int64_t> Config(
    const google::protobuf::RepeatedPtrField<tilec::v1::NamedValue>& c) {
  std::map<std::string, int64_t> out;
  for (const auto& v : c) out[v.name()] = v.value();
  return out;
}

TEST(AutotuneE2E, PoolLeasesChecksDatabaseAndRestart) {
  const std::string cache = MakeTempDir("autotune_cache");
  Tilecd d;
  const std::vector<std::string> flags = {"--worker_timeout_s=3", "--worker_heartbeat_s=0.5"};
  ASSERT_TRUE(d.Start(cache, flags));
  // w1 sleeps a second into each job, so that the test can kill it mid-job.
  auto w1 = std::make_unique<WorkerProcess>(d.address(), "w1",
                                            std::vector<std::string>{"--test_job_delay_s", "1"});
  auto w2 = std::make_unique<WorkerProcess>(d.address(), "w2");
  auto w3 = std::make_unique<WorkerProcess>(d.address(), "w3");
  ASSERT_TRUE(WaitForWorkers(d, 3));
  {
    tilec::v1::StatsResponse s = Stats(d);
    for (const auto& w : s.workers()) {
      EXPECT_EQ(w.profile(), "host_emulator");
      EXPECT_EQ(w.device().device(), "emulator");
    }
  }

  // 1. Autotune completes: every candidate measured, checked, ranked, stored.
  AutotuneRun first = Autotune(d, Request(false));
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_TRUE(first.last().has_record());
  const tilec::v1::TuningRecord record = first.last().record();
  EXPECT_FALSE(first.last().from_database());
  ASSERT_EQ(record.candidates_size(), 3);
  std::set<std::string> workers_used;
  for (const auto& c : record.candidates()) {
    EXPECT_EQ(c.status(), "ok") << c.ShortDebugString();
    EXPECT_GT(c.median_ms(), 0);
    EXPECT_EQ(c.runs(), 3);
    EXPECT_EQ(c.timing(), "emulator wall time");
    workers_used.insert(c.worker_id());
  }
  EXPECT_GE(workers_used.size(), 2u) << "measured in parallel across the workers";
  const std::map<std::string, int64_t> best = Config(record.best());
  EXPECT_EQ(best.size(), 3u);
  const int64_t jobs_after_first = Stats(d).jobs_completed();
  EXPECT_EQ(jobs_after_first, 3);

  // 2. The same autotune is answered from the database without measuring.
  AutotuneRun again = Autotune(d, Request(false));
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_TRUE(again.last().from_database());
  EXPECT_EQ(Config(again.last().record().best()), best);
  EXPECT_EQ(Stats(d).jobs_submitted(), jobs_after_first);

  // The CLI: `tilec autotune` prints the table, here from the database.
  {
    const std::string dir = MakeTempDir("autotune_cli");
    std::ofstream(dir + "/gemm.py") << UnboundGemm().text();
    const std::string cmd = absl::StrCat(
        TILEC_BINARY, " autotune ", dir, "/gemm.py --fn matmul -D M=128 -D N=128 -D K=64",
        " -D dtype=float16 -D accum_dtype=float32 -D num_stages=2 -D threads=128",
        " -U block_M -U block_N -U block_K --target host_emulator --top 3 --server ", d.address(),
        " 2>&1");
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(::pclose(p), 0) << out;
    EXPECT_THAT(out, HasSubstr("from the tuning database: nothing measured")) << out;
    EXPECT_THAT(out, HasSubstr("Spearman rank correlation")) << out;
    EXPECT_THAT(out, HasSubstr("emulator wall time")) << out;
  }

  // Recommend shows the measured times beside the predicted ones.
  {
    tilec::v1::RecommendRequest rr;
    *rr.mutable_source() = UnboundGemm();
    rr.set_profile("host_emulator");
    rr.set_top_k(3);
    grpc::ClientContext ctx;
    tilec::v1::RecommendResponse resp;
    ASSERT_TRUE(d.stub()->Recommend(&ctx, rr, &resp).ok());
    int measured = 0;
    for (const auto& c : resp.recommendations()) {
      if (c.measured_ms() > 0) {
        ++measured;
        EXPECT_EQ(c.measured_timing(), "emulator wall time");
      }
    }
    EXPECT_EQ(measured, 3);
  }

  // 3. An unbound Compile uses the tuned config and says so.
  tilec::v1::CompileRequest compile;
  *compile.mutable_source() = UnboundGemm();
  compile.add_targets("sm_90a");
  compile.mutable_options()->set_profile("host_emulator");
  {
    tilec::v1::CompileResponse resp;
    grpc::Status s = Compile(d, compile, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.results(0).config_source(), "autotune");
    EXPECT_EQ(Config(resp.results(0).config()), best);
    EXPECT_GT(resp.results(0).measured_ms(), 0);
  }

  // 4. A worker killed with SIGKILL mid-job: its job goes to another worker
  // and the autotune completes with every candidate measured.
  {
    std::atomic<bool> killed{false};
    AutotuneRun run = Autotune(d, Request(true), [&](const tilec::v1::AutotuneProgress& p) {
      if (killed || p.stage() != "compile") return;
      // Once jobs are out, kill a busy worker.
      for (int i = 0; i < 100 && !killed; ++i) {
        const tilec::v1::StatsResponse stats = Stats(d);
        for (const auto& w : stats.workers()) {
          if (w.state() == "busy" && w.worker_id() == "w1") {
            w1->Signal(SIGKILL);
            killed = true;
          }
        }
        if (!killed) absl::SleepFor(absl::Milliseconds(50));
      }
    });
    ASSERT_TRUE(run.status.ok()) << run.status.error_message();
    ASSERT_TRUE(killed) << "w1 never took a job";
    EXPECT_GE(Stats(d).jobs_requeued(), 1);
    for (const auto& c : run.last().record().candidates())
      EXPECT_EQ(c.status(), "ok") << c.ShortDebugString();
    EXPECT_EQ(Config(run.last().record().best()), best)
        << "the same measurements choose the same config:\n"
        << run.last().record().DebugString() << "\nfirst:\n"
        << record.DebugString();
  }
  ASSERT_TRUE(WaitForWorkers(d, 2, absl::Seconds(20)));

  // 5. A candidate whose output differs is rejected with the numbers: the
  // workers add 1 to the outputs of one config.
  std::string binding;
  {
    std::map<std::string, int> seen;
    for (const auto& c : record.candidates())
      for (const auto& v : c.config()) ++seen[absl::StrCat(v.name(), "=", v.value())];
    for (const auto& c : record.candidates())
      for (const auto& v : c.config())
        if (seen[absl::StrCat(v.name(), "=", v.value())] == 1 && binding.empty())
          binding = absl::StrCat(v.name(), "=", v.value());
  }
  ASSERT_FALSE(binding.empty()) << "no binding unique to one candidate";
  EXPECT_EQ(w2->Signal(SIGTERM) & 0x7f, 0) << "a drained worker exits";
  w3->Signal(SIGTERM);
  ASSERT_TRUE(WaitForWorkers(d, 0, absl::Seconds(20)));
  std::vector<std::unique_ptr<WorkerProcess>> corrupt;
  for (const char* id : {"c1", "c2", "c3"})
    corrupt.push_back(std::make_unique<WorkerProcess>(
        d.address(), id, std::vector<std::string>{"--test_corrupt_output", binding}));
  ASSERT_TRUE(WaitForWorkers(d, 3));
  {
    AutotuneRun run = Autotune(d, Request(true));
    ASSERT_TRUE(run.status.ok()) << run.status.error_message();
    int rejected = 0;
    for (const auto& c : run.last().record().candidates()) {
      bool has = false;
      for (const auto& v : c.config()) has |= absl::StrCat(v.name(), "=", v.value()) == binding;
      if (has) {
        EXPECT_THAT(c.status(), HasSubstr("rejected: "));
        EXPECT_THAT(c.status(), HasSubstr("the reference interpreter gives"));
        ++rejected;
      } else {
        EXPECT_EQ(c.status(), "ok");
      }
    }
    EXPECT_EQ(rejected, 1);
  }
  corrupt.clear();

  // 6. A restarted server keeps its records.
  d.Stop();
  Tilecd restarted;
  ASSERT_TRUE(restarted.Start(cache, flags));
  tilec::v1::AutotuneRequest no_workers_needed = Request(false);
  AutotuneRun after = Autotune(restarted, no_workers_needed);
  ASSERT_TRUE(after.status.ok()) << after.status.error_message();
  EXPECT_TRUE(after.last().from_database());
  EXPECT_EQ(Stats(restarted).tuning_records(), 1);

  // 7. Without workers, a retune says which profile lacks them.
  AutotuneRun none = Autotune(restarted, Request(true));
  EXPECT_EQ(none.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(none.status.error_message(), HasSubstr("no worker serves profile host_emulator"));
}

// A signing tilecd signs each job (cache key, digest, metadata); a worker
// given the fleet's public key measures them, one given another key refuses
// to load them and the autotune says why.
TEST(AutotuneE2E, WorkersWithAVerifyKeyLoadOnlyWhatTheServerSigned) {
  const std::string keys = MakeTempDir("autotune_keys");
  ASSERT_TRUE(tilec::testing::WriteEd25519Key(keys + "/fleet"));
  ASSERT_TRUE(tilec::testing::WriteEd25519Key(keys + "/other"));
  const std::vector<std::string> flags = {"--signing_key=" + keys + "/fleet.pem"};
  {
    Tilecd d;
    ASSERT_TRUE(d.Start(MakeTempDir("autotune_cache"), flags));
    WorkerProcess w(d.address(), "verifying",
                    std::vector<std::string>{"--verify_key", keys + "/fleet.pub.pem"});
    ASSERT_TRUE(WaitForWorkers(d, 1));
    AutotuneRun run = Autotune(d, Request(false));
    ASSERT_TRUE(run.status.ok()) << run.status.error_message();
    for (const auto& c : run.last().record().candidates()) {
      EXPECT_EQ(c.status(), "ok") << c.ShortDebugString();
    }
  }
  Tilecd d;
  ASSERT_TRUE(d.Start(MakeTempDir("autotune_cache"), flags));
  WorkerProcess w(d.address(), "other_key",
                  std::vector<std::string>{"--verify_key", keys + "/other.pub.pem"});
  ASSERT_TRUE(WaitForWorkers(d, 1));
  AutotuneRun run = Autotune(d, Request(false));
  EXPECT_FALSE(run.status.ok());
  EXPECT_THAT(run.status.error_message(),
              HasSubstr("not signed by the key in --verify_key; refusing to load it"));
}

// One worker serving two tilecd (a fleet without a shared pool): it holds a
// session with each, both list it, and an autotune through either is
// measured on it; SIGTERM drains both sessions and exits 0.
TEST(AutotuneE2E, OneWorkerServesSeveralServers) {
  Tilecd a, b;
  ASSERT_TRUE(a.Start(MakeTempDir("autotune_cache_a")));
  ASSERT_TRUE(b.Start(MakeTempDir("autotune_cache_b")));
  WorkerProcess w(a.address() + "," + b.address(), "shared");
  ASSERT_TRUE(WaitForWorkers(a, 1));
  ASSERT_TRUE(WaitForWorkers(b, 1));
  for (Tilecd* d : {&a, &b}) {
    AutotuneRun run = Autotune(*d, Request(false));
    ASSERT_TRUE(run.status.ok()) << run.status.error_message();
    ASSERT_EQ(run.last().record().candidates_size(), 3);
    for (const auto& c : run.last().record().candidates()) {
      EXPECT_EQ(c.status(), "ok") << c.ShortDebugString();
      EXPECT_EQ(c.worker_id(), "shared");
    }
  }
  const int status = w.Signal(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace tilec::e2e
