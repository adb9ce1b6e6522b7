// tilec-worker: a GPU worker of tilecd, one per device. It opens the
// device, checks that it matches a hardware profile (profile_match.h), and
// serves measurement jobs over the WorkerSession stream (session.h,
// measure.h) until SIGTERM/SIGINT, which finish the current job first.
// The flags are in flags.h, including two that are for tests only and
// inject faults: --test_corrupt_output NAME=VALUE (sampled outputs of jobs
// whose config binds NAME=VALUE are reported plus 1.0, for tests of the
// server's result checks) and --test_job_delay_s S (a sleep after
// MeasureStarted, for tests that kill a worker mid-job). A worker started
// with either says so on stderr.
//
// Exit codes: 0 drained after a signal; 1 the server ended the session with
// an error (a refused profile, a bad token) or the device or the cache
// folder cannot be used; 2 usage, or the device matches no profile or not
// --profile.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "compiler/cache/cache_key.h"
#include "compiler/recommend/profile.h"
#include "worker/artifact_cache.h"
#include "worker/flags.h"
#include "worker/grpc_fetch.h"
#include "worker/measure.h"
#include "worker/profile_match.h"
#include "worker/session.h"

namespace tilec::worker {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "tilec-worker: %s\n", message.c_str());
  return code;
}

tilec::v1::DeviceDescription Describe(const runtime::DeviceSpec& spec,
                                      const runtime::DeviceInfo& info) {
  tilec::v1::DeviceDescription d;
  d.set_device(spec.ToString());
  d.set_name(info.name);
  d.set_arch(info.arch);
  d.set_multiprocessors(info.multiprocessors);
  d.set_clock_khz(info.clock_khz);
  d.set_memory_clock_khz(info.memory_clock_khz);
  d.set_memory_bytes(info.memory_bytes);
  d.set_l2_bytes(info.l2_bytes);
  d.set_driver_version(info.driver_version);
  d.set_toolkit_version(cache::CompilerVersion());
  return d;
}

// Jobs of every session, one at a time on the device (timings must not
// overlap).
class OneJobAtATime : public JobRunner {
 public:
  OneJobAtATime(JobRunner* runner, absl::Mutex* device) : runner_(runner), device_(device) {}
  tilec::v1::MeasureResult Run(const tilec::v1::MeasureJob& job) override {
    absl::MutexLock lock(device_);
    return runner_->Run(job);
  }

 private:
  JobRunner* runner_;
  absl::Mutex* device_;
};

int Main(const std::vector<std::string>& args) {
  // Before any thread exists, so that every thread inherits the mask and
  // the signal thread alone sees SIGTERM/SIGINT.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<WorkerFlags> flags = ParseWorkerFlags(args);
  if (!flags.ok()) {
    std::fprintf(stderr, "tilec-worker: %s\n%s", std::string(flags.status().message()).c_str(),
                 Usage().c_str());
    return 2;
  }
  if (flags->help) {
    std::printf("%s", Usage().c_str());
    return 0;
  }
  std::string token;
  if (const char* t = std::getenv("TILEC_TOKEN")) token = t;
  if (!flags->token_file.empty()) {
    if (!ReadFile(flags->token_file, &token))
      return Fail(2, "cannot read --token_file " + flags->token_file);
    token = std::string(absl::StripAsciiWhitespace(token));
    token = token.substr(0, token.find_first_of(" \t\r\n"));
  }
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!flags->tls_ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!ReadFile(flags->tls_ca, &ssl.pem_root_certs))
      return Fail(2, "cannot read --tls_ca " + flags->tls_ca);
    creds = grpc::SslCredentials(ssl);
  }

  absl::StatusOr<std::unique_ptr<runtime::Backend>> backend = runtime::OpenBackend(flags->device);
  if (!backend.ok()) {
    return Fail(1, absl::StrCat("cannot open ", flags->device.ToString(), ": ",
                                backend.status().message()));
  }
  absl::StatusOr<runtime::DeviceInfo> info = (*backend)->Info();
  if (!info.ok()) {
    return Fail(1, absl::StrCat("cannot read ", flags->device.ToString(),
                                "'s properties: ", info.status().message()));
  }
  absl::StatusOr<std::string> matched = MatchProfile(flags->device.backend, info->name);
  if (!matched.ok()) return Fail(2, std::string(matched.status().message()));
  absl::StatusOr<std::string> profile =
      ResolveProfile(info->name, *matched, flags->profile, recommend::BuiltinProfiles());
  if (!profile.ok()) return Fail(2, std::string(profile.status().message()));

  std::unique_ptr<cache::Verifier> verifier;
  if (!flags->verify_key.empty()) {
    absl::StatusOr<std::unique_ptr<cache::Verifier>> v =
        cache::Verifier::FromFiles({flags->verify_key});
    if (!v.ok()) return Fail(2, absl::StrCat("--verify_key: ", v.status().message()));
    verifier = *std::move(v);
  }
  MeasureOptions measure;
  measure.verifier = verifier.get();
  measure.corrupt_output = flags->test_corrupt_output;
  measure.job_delay_s = flags->test_job_delay_s;

  SessionOptions session;
  session.token = token;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  session.hello.set_worker_id(
      flags->id.empty() ? absl::StrCat(host, ":", ::getpid(), ":", flags->device.ToString())
                        : flags->id);
  *session.hello.mutable_device() = Describe(flags->device, *info);
  session.hello.set_profile(*profile);

  // A session with each server, each with its own artifact fetcher (the
  // folder is shared: files are named by digest) and kernels; the device
  // runs one job at a time, whichever server sent it.
  const std::string cache_dir =
      flags->cache_dir.empty() ? DefaultWorkerCacheDir() : flags->cache_dir;
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(64 << 20);
  absl::Mutex device;
  struct Served {
    std::unique_ptr<ArtifactCache> cache;
    std::unique_ptr<Measurer> measurer;
    std::unique_ptr<OneJobAtATime> runner;
    std::unique_ptr<WorkerLoop> loop;
  };
  std::vector<Served> served;
  for (const std::string& server : flags->servers) {
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateCustomChannel(server, creds, channel_args);
    Served s;
    s.cache = std::make_unique<ArtifactCache>(cache_dir, GrpcFetcher(channel, token));
    if (absl::Status st = s.cache->Init(); !st.ok()) return Fail(1, std::string(st.message()));
    s.measurer = std::make_unique<Measurer>(backend->get(), s.cache.get(), measure);
    s.runner = std::make_unique<OneJobAtATime>(s.measurer.get(), &device);
    SessionOptions options = session;
    options.channel = channel;
    s.loop = std::make_unique<WorkerLoop>(options, s.runner.get());
    served.push_back(std::move(s));
  }
  std::fprintf(stderr, "tilec-worker %s: %s (%s), profile %s, server%s %s, cache %s\n",
               session.hello.worker_id().c_str(), flags->device.ToString().c_str(),
               info->name.c_str(), profile->c_str(), flags->servers.size() > 1 ? "s" : "",
               absl::StrJoin(flags->servers, ", ").c_str(), cache_dir.c_str());
  if (flags->test_corrupt_output || flags->test_job_delay_s > 0) {
    std::fprintf(stderr, "tilec-worker: TEST-ONLY fault injection is on\n");
  }

  std::atomic<bool> done{false};
  std::thread signal_thread([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (done) return;
      std::fprintf(stderr, "tilec-worker: %s: draining (finishing the current job)\n",
                   sig == SIGINT ? "SIGINT" : "SIGTERM");
      for (Served& s : served) s.loop->Drain();
    }
  });
  // Each session on its own thread; 1 when any server refused its session.
  std::atomic<int> code{0};
  std::vector<std::thread> sessions;
  for (Served& s : served) {
    sessions.emplace_back([&code, &s] {
      if (s.loop->Run() != 0) code = 1;
    });
  }
  for (std::thread& t : sessions) t.join();
  done = true;
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  return code;
}

}  // namespace
}  // namespace tilec::worker

int main(int argc, char** argv) {
  return tilec::worker::Main(std::vector<std::string>(argv + 1, argv + argc));
}
