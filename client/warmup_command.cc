#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/remote.h"
#include "client/warmup.h"
#include "google/protobuf/util/json_util.h"

namespace tilec::cli {
namespace {

// One compile of the warmup: a kernel, its merged defines, a target.
struct Job {
  const tilec::v1::WarmupKernel* kernel = nullptr;
  std::string path;  // the source file, resolved against the manifest's folder
  std::map<std::string, std::string> defines;
  std::map<std::string, std::string> shape;  // the shape's own defines (progress lines)
  std::string target;
  int tune = -1;  // index into the autotunes this job waits for, or -1
};

std::string DefinesText(const std::map<std::string, std::string>& d) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : d) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, " ");
}

void FillSource(const Job& j, const std::string& text, tilec::v1::TileLangSource* src) {
  src->set_path(j.path);
  src->set_text(text);
  src->set_function(j.kernel->fn());
  for (const auto& [k, v] : j.defines) {
    tilec::v1::Binding* b = src->add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  for (const std::string& u : j.kernel->unbound()) src->add_unbound(u);
}

}  // namespace

int Warmup(const WarmupOptions& o, const CompileBackend& backend) {
  std::ifstream in(o.manifest);
  if (!in) {
    std::fprintf(stderr, "tilec: cannot read the manifest %s\n", o.manifest.c_str());
    return 4;
  }
  std::stringstream text;
  text << in.rdbuf();
  tilec::v1::WarmupManifest manifest;
  google::protobuf::util::JsonParseOptions parse;
  if (auto st = google::protobuf::util::JsonStringToMessage(text.str(), &manifest, parse);
      !st.ok()) {
    std::fprintf(stderr, "tilec: %s: not a warmup manifest: %s\n", o.manifest.c_str(),
                 std::string(st.message()).c_str());
    return 2;
  }
  const std::filesystem::path base = std::filesystem::path(o.manifest).parent_path();
  std::vector<Job> jobs;
  std::map<std::string, std::string> sources;  // path -> text
  std::vector<Job> tunes;  // autotunes to run first: one per kernel x shape (no target)
  for (int k = 0; k < manifest.kernels_size(); ++k) {
    const tilec::v1::WarmupKernel& kern = manifest.kernels(k);
    const std::string where = absl::StrCat(o.manifest, ": kernels[", k, "]");
    if (kern.file().empty() || kern.fn().empty() || kern.targets().empty()) {
      std::fprintf(stderr, "tilec: %s needs file, fn and at least one target\n", where.c_str());
      return 2;
    }
    if (kern.autotune() && kern.profile().empty()) {
      std::fprintf(stderr, "tilec: %s: autotune needs a profile\n", where.c_str());
      return 2;
    }
    if (kern.autotune() && !backend.autotune) {
      std::fprintf(stderr, "tilec: %s: autotune needs a server (--server HOST:PORT)\n",
                   where.c_str());
      return 2;
    }
    std::filesystem::path file(kern.file());
    const std::string path = file.is_absolute() ? file.string() : (base / file).string();
    if (!sources.count(path)) {
      std::ifstream src(path);
      if (!src) {
        std::fprintf(stderr, "tilec: %s: cannot read %s\n", where.c_str(), path.c_str());
        return 4;
      }
      std::stringstream ss;
      ss << src.rdbuf();
      sources[path] = ss.str();
    }
    std::vector<std::map<std::string, std::string>> shapes;
    if (kern.shapes().empty()) shapes.emplace_back();
    for (const tilec::v1::WarmupShape& s : kern.shapes()) {
      shapes.emplace_back(s.defines().begin(), s.defines().end());
    }
    for (const auto& shape : shapes) {
      std::map<std::string, std::string> d(kern.defines().begin(), kern.defines().end());
      for (const auto& [n, v] : shape) d[n] = v;
      int tune = -1;
      if (kern.autotune()) {
        tune = static_cast<int>(tunes.size());
        tunes.push_back({&kern, path, d, shape, "", -1});
      }
      for (const std::string& t : kern.targets()) {
        jobs.push_back({&kern, path, d, shape, t, tune});
      }
    }
  }

  const absl::Time start = absl::Now();
  std::mutex mu;
  tilec::v1::WarmupReport report;
  std::vector<tilec::v1::WarmupItem> items(jobs.size());
  int first_failure = 0;
  auto fail_code = [&](const grpc::Status& s) {
    std::lock_guard<std::mutex> l(mu);
    if (first_failure == 0) first_failure = ExitCodeForStatus(s, backend.remote);
  };
  // Autotunes first (in order: each occupies the fleet's workers).
  std::vector<grpc::Status> tuned(tunes.size());
  for (size_t t = 0; t < tunes.size(); ++t) {
    const Job& j = tunes[t];
    tilec::v1::AutotuneRequest req;
    FillSource(j, sources[j.path], req.mutable_source());
    req.set_profile(j.kernel->profile());
    std::fprintf(stderr, "tilec: autotuning %s:%s %s on %s ...\n", j.kernel->file().c_str(),
                 j.kernel->fn().c_str(), DefinesText(j.shape).c_str(), j.kernel->profile().c_str());
    tuned[t] = backend.autotune(req);
    if (!tuned[t].ok()) {
      std::fprintf(stderr, "tilec: autotune failed: %s\n", tuned[t].error_message().c_str());
      fail_code(tuned[t]);
    }
  }
  std::atomic<size_t> next{0}, finished{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      const Job& j = jobs[i];
      tilec::v1::WarmupItem& item = items[i];
      item.set_file(j.kernel->file());
      item.set_fn(j.kernel->fn());
      for (const auto& [k, v] : j.defines) (*item.mutable_defines())[k] = v;
      item.set_target(j.target);
      item.set_autotuned(j.tune >= 0 && tuned[j.tune].ok());
      tilec::v1::CompileRequest req;
      FillSource(j, sources[j.path], req.mutable_source());
      req.add_targets(j.target);
      req.mutable_options()->set_profile(j.kernel->profile());
      tilec::v1::CompileResponse resp;
      const absl::Time t0 = absl::Now();
      grpc::Status s = backend.compile(req, &resp);
      item.set_seconds(absl::ToDoubleSeconds(absl::Now() - t0));
      if (s.ok() && resp.results_size() == 1) {
        const tilec::v1::CompileResult& r = resp.results(0);
        item.set_ok(true);
        item.set_digest(r.digest());
        item.set_cache_hit(r.cache_hit());
        *item.mutable_config() = r.config();
      } else {
        if (s.ok()) s = grpc::Status(grpc::StatusCode::INTERNAL, "the response has no result");
        item.set_error(s.error_message());
        fail_code(s);
      }
      const size_t n = finished.fetch_add(1) + 1;
      std::lock_guard<std::mutex> l(mu);
      std::fprintf(stderr, "[%zu/%zu] %s:%s %s %s: %s\n", n, jobs.size(), j.kernel->file().c_str(),
                   j.kernel->fn().c_str(), DefinesText(j.shape).c_str(), j.target.c_str(),
                   !item.ok()         ? absl::StrCat("FAILED: ", item.error()).c_str()
                   : item.cache_hit() ? absl::StrCat("cache hit, ", item.seconds(), " s").c_str()
                                      : absl::StrCat("compiled, ", item.seconds(), " s").c_str());
    }
  };
  std::vector<std::thread> threads;
  const int n = backend.remote ? std::max(1, o.jobs) : 1;
  for (int t = 0; t < n; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();

  for (tilec::v1::WarmupItem& item : items) {
    if (!item.ok()) report.set_failed(report.failed() + 1);
    if (item.ok() && item.cache_hit()) report.set_cache_hits(report.cache_hits() + 1);
    if (item.ok() && !item.cache_hit()) report.set_compiled(report.compiled() + 1);
    *report.add_items() = std::move(item);
  }
  report.set_total(static_cast<int>(jobs.size()));
  report.set_seconds(absl::ToDoubleSeconds(absl::Now() - start));
  std::fprintf(stderr,
               "tilec: warmup of %d compiles on %s: %d compiled, %d cache hits, %d failed "
               "(%.2f s)\n",
               report.total(), backend.where.c_str(), report.compiled(), report.cache_hits(),
               report.failed(), report.seconds());
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  opts.add_whitespace = true;
  (void)google::protobuf::util::MessageToJsonString(report, &json, opts);
  if (!o.report.empty()) {
    std::ofstream out(o.report);
    out << json;
    if (!out) {
      std::fprintf(stderr, "tilec: cannot write the report %s\n", o.report.c_str());
      return 4;
    }
  }
  if (o.json) std::printf("%s", json.c_str());
  return first_failure;
}

}  // namespace tilec::cli
