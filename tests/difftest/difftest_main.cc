// tilec-difftest: differential testing of tilec with random tile programs.
//
//   tilec-difftest run --n N --seed S [--jobs J] [--batch B] [--targets sm_80,sm_90a]
//                      [--device cuda:N]  (run on that GPU, not the emulator; give
//                                          --targets the GPU runs, e.g. sm_90a on Hopper)
//                      [--no-metamorphic] [--fail-on-bug] [--reduce DIR]
//                      [--max-reduce K] [--features] [--verbose]
//                      [--avoid-open-bugs]  (GeneratorOptions::avoid_open_bugs)
//   tilec-difftest show --seed S      the program of seed S, its dims and features
//   tilec-difftest check FILE.py      re-runs a regression file written by --reduce
//   tilec-difftest emit ARCH --seed S the CUDA source emitted for seed S's program
//
// `run` checks the programs of seeds S .. S+N-1 (B programs per child
// process and host build) on J processes and prints programs per second, the count per
// outcome, the refusal histogram and every bug; with --reduce it shrinks one
// program per distinct bug and writes it to DIR as a ready regression file.
// Exit status: 0, or 1 with --fail-on-bug when any mismatch, internal
// error, crash or hang occurred; 2 for bad usage.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/difftest/generator.h"
#include "tests/difftest/reducer.h"
#include "tests/difftest/runner.h"

namespace tilec::difftest {
namespace {

struct Flags {
  std::string command;
  int64_t n = 100;
  uint64_t seed = 1;
  int jobs = 2;
  int batch = 8;  // programs per child and host build
  RunnerOptions runner;
  GeneratorOptions gen;
  bool fail_on_bug = false;
  std::string reduce_dir;
  int max_reduce = 5;
  bool features = false;
  bool verbose = false;
  std::string file;
};

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "tilec-difftest: %s\n"
               "usage: tilec-difftest run --n N --seed S [--jobs J] [--batch B] [--targets a,b] "
               "[--device cuda:N] "
               "[--no-metamorphic] [--fail-on-bug] [--reduce DIR] [--max-reduce K] "
               "[--features] [--verbose] [--avoid-open-bugs]\n"
               "       tilec-difftest show --seed S\n"
               "       tilec-difftest check FILE.py\n"
               "       tilec-difftest emit sm_80|sm_90a --seed S\n",
               why.c_str());
  return 2;
}

std::string Clean(std::string s) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\t') ch = ' ';
  }
  return s;
}

// One result line from a shard: seed, seconds, family, features, target,
// outcome, category, detail.
struct Row {
  uint64_t seed = 0;
  double seconds = 0;
  std::string family, features;
  TargetResult r;
};

void Shard(const Flags& f, int shard, int fd) {
  // Shard s takes programs s, s + jobs, ...; `batch` of them share a child
  // and a host build.
  std::vector<int64_t> mine;
  for (int64_t i = shard; i < f.n; i += f.jobs) mine.push_back(i);
  for (size_t first = 0; first < mine.size(); first += static_cast<size_t>(f.batch)) {
    std::vector<Program> programs;
    std::vector<Case> cases;
    for (size_t k = first; k < mine.size() && k < first + static_cast<size_t>(f.batch); ++k) {
      programs.push_back(Generate(f.seed + static_cast<uint64_t>(mine[k]), f.gen));
      cases.push_back(CaseOf(programs.back()));
    }
    std::vector<CaseResult> results = RunIsolatedBatch(cases, f.runner);
    std::string lines;
    for (size_t k = 0; k < results.size(); ++k) {
      const Program& p = programs[k];
      for (const TargetResult& t : results[k].targets) {
        absl::StrAppend(&lines, p.seed, "\t", results[k].seconds, "\t", p.family, "\t",
                        absl::StrJoin(p.features, ","), "\t", t.target, "\t",
                        static_cast<int>(t.outcome), "\t", Clean(t.category), "\t",
                        Clean(t.detail).substr(0, 1000), "\n");
      }
    }
    size_t done = 0;
    while (done < lines.size()) {
      ssize_t w = write(fd, lines.data() + done, lines.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
  }
}

int Run(const Flags& f) {
  auto start = std::chrono::steady_clock::now();
  std::vector<int> fds;
  std::vector<pid_t> pids;
  for (int s = 0; s < f.jobs; ++s) {
    int p[2];
    if (pipe(p) != 0) return Usage("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      Shard(f, s, p[1]);
      close(p[1]);
      _exit(0);
    }
    close(p[1]);
    fds.push_back(p[0]);
    pids.push_back(pid);
  }
  std::vector<Row> rows;
  std::vector<std::string> buffers(fds.size());
  std::set<uint64_t> seen;
  size_t open = fds.size();
  while (open > 0) {
    std::vector<pollfd> polls;
    std::vector<size_t> index;  // polls[j] watches fds[index[j]]
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k] < 0) continue;
      polls.push_back({fds[k], POLLIN, 0});
      index.push_back(k);
    }
    if (poll(polls.data(), polls.size(), -1) < 0) continue;
    for (size_t j = 0; j < polls.size(); ++j) {
      size_t k = index[j];
      if (!(polls[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[8192];
      ssize_t n = read(fds[k], chunk, sizeof chunk);
      if (n <= 0) {
        close(fds[k]);
        fds[k] = -1;
        --open;
        continue;
      }
      buffers[k].append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buffers[k].find('\n')) != std::string::npos) {
        std::vector<std::string> c = absl::StrSplit(buffers[k].substr(0, nl), '\t');
        buffers[k].erase(0, nl + 1);
        if (c.size() < 8) continue;
        Row row;
        (void)absl::SimpleAtoi(c[0], &row.seed);
        (void)absl::SimpleAtod(c[1], &row.seconds);
        row.family = c[2];
        row.features = c[3];
        int o = 0;
        (void)absl::SimpleAtoi(c[5], &o);
        row.r = {c[4], static_cast<Outcome>(o), c[6], c[7]};
        rows.push_back(row);
        if (seen.insert(row.seed).second && f.verbose) {
          std::fprintf(stderr, "[%zu/%lld] seed %llu\n", seen.size(), static_cast<long long>(f.n),
                       static_cast<unsigned long long>(row.seed));
        }
        if (f.verbose || IsBug(row.r.outcome)) {
          std::fprintf(stderr, "seed %llu %s: %s %s\n", static_cast<unsigned long long>(row.seed),
                       row.r.target.c_str(), OutcomeName(row.r.outcome), row.r.category.c_str());
        }
      }
    }
  }
  for (pid_t pid : pids) waitpid(pid, nullptr, 0);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::map<Outcome, int64_t> counts;
  std::map<std::string, int64_t> refusals, families, features, invalid;
  std::vector<const Row*> bugs;
  std::set<uint64_t> programs;
  for (const Row& row : rows) {
    ++counts[row.r.outcome];
    if (programs.insert(row.seed).second) {
      ++families[row.family];
      for (absl::string_view ft : absl::StrSplit(row.features, ',', absl::SkipEmpty()))
        ++features[std::string(ft)];
    }
    if (row.r.outcome == Outcome::kRefused) ++refusals[row.r.category];
    if (row.r.outcome == Outcome::kInvalid) ++invalid[row.r.category];
    if (IsBug(row.r.outcome)) bugs.push_back(&row);
  }
  std::printf("difftest: %zu programs (seeds %llu..%llu), targets %s%s, %d jobs\n", programs.size(),
              static_cast<unsigned long long>(f.seed),
              static_cast<unsigned long long>(f.seed + f.n - 1),
              absl::StrJoin(f.runner.targets, ",").c_str(),
              f.runner.metamorphic ? " + metamorphic variant" : "", f.jobs);
  std::printf("time: %.1f s, %.2f programs/s, %.2f runs/s\n", secs,
              static_cast<double>(programs.size()) / secs, static_cast<double>(rows.size()) / secs);
  std::printf("families:");
  for (const auto& [k, v] : families) std::printf(" %s %lld", k.c_str(), static_cast<long long>(v));
  std::printf("\noutcomes (program x target runs, %zu):\n", rows.size());
  for (Outcome o : {Outcome::kMatch, Outcome::kRefused, Outcome::kMismatch, Outcome::kInternalError,
                    Outcome::kCrash, Outcome::kHang, Outcome::kInvalid}) {
    std::printf("  %-16s %lld\n", OutcomeName(o), static_cast<long long>(counts[o]));
  }
  auto histogram = [](const char* title, const std::map<std::string, int64_t>& m) {
    if (m.empty()) return;
    std::vector<std::pair<int64_t, std::string>> v;
    for (const auto& [k, c] : m) v.push_back({-c, k});
    std::sort(v.begin(), v.end());
    std::printf("%s:\n", title);
    for (const auto& [c, k] : v)
      std::printf("  %6lld  %s\n", static_cast<long long>(-c), k.c_str());
  };
  histogram("refusal histogram", refusals);
  histogram("invalid programs (generator)", invalid);
  if (f.features) histogram("features (programs)", features);
  // The slowest cases, where the time goes.
  std::map<uint64_t, double> case_seconds;
  for (const Row& row : rows) case_seconds[row.seed] = row.seconds;
  std::vector<std::pair<double, uint64_t>> slow;
  double total = 0;
  for (const auto& [seed, sec] : case_seconds) {
    slow.push_back({-sec, seed});
    total += sec;
  }
  std::sort(slow.begin(), slow.end());
  std::printf("case time: mean %.2f s;", case_seconds.empty() ? 0.0 : total / case_seconds.size());
  for (size_t i = 0; i < slow.size() && i < 5; ++i) {
    std::printf(" seed %llu %.1f s%s", static_cast<unsigned long long>(slow[i].second),
                -slow[i].first, i + 1 < 5 && i + 1 < slow.size() ? "," : "");
  }
  std::printf("\n");
  if (!bugs.empty()) {
    std::printf("bugs (%zu):\n", bugs.size());
    for (const Row* b : bugs) {
      std::printf("  seed %llu %s %s: %s | %s\n", static_cast<unsigned long long>(b->seed),
                  b->r.target.c_str(), OutcomeName(b->r.outcome), b->r.category.c_str(),
                  b->r.detail.substr(0, 240).c_str());
    }
  }
  if (!f.reduce_dir.empty()) {
    std::set<std::string> done;
    int reduced = 0;
    for (const Row* b : bugs) {
      std::string key = absl::StrCat(OutcomeName(b->r.outcome), "|", b->r.category);
      if (done.contains(key) || reduced >= f.max_reduce) continue;
      done.insert(key);
      ++reduced;
      Program p = Generate(b->seed, f.gen);
      Reduced r = Reduce(p, b->r, SameFailure(b->r.target, b->r.outcome, f.runner), 120);
      std::string target = b->r.target;
      for (char& ch : target) {
        if (ch == '+') ch = '_';
      }
      std::string path = absl::StrCat(f.reduce_dir, "/seed_", b->seed, "_", target, ".py");
      std::ofstream(path) << RegressionFile(r, "open");
      std::printf("reduced seed %llu %s (%s) in %d checks -> %s\n",
                  static_cast<unsigned long long>(b->seed), b->r.target.c_str(),
                  OutcomeName(r.result.outcome), r.checks, path.c_str());
    }
  }
  return f.fail_on_bug && !bugs.empty() ? 1 : 0;
}

int Show(const Flags& f) {
  Program p = Generate(f.seed, f.gen);
  std::printf("%s", p.Render().c_str());
  std::printf("# family: %s\n# features: %s\n", p.family.c_str(),
              absl::StrJoin(p.features, ", ").c_str());
  for (const auto& [k, v] : p.DynamicDims())
    std::printf("# dynamic dim %s = %lld\n", k.c_str(), static_cast<long long>(v));
  Case c = CaseOf(p);
  std::printf("# tolerance dtype %s, accumulation depth %lld\n", c.tolerance_dtype.c_str(),
              static_cast<long long>(c.accum_depth));
  return 0;
}

int Emit(const Flags& f) {
  absl::StatusOr<std::string> code = EmitSource(CaseOf(Generate(f.seed, f.gen)), f.file);
  if (!code.ok()) {
    std::fprintf(stderr, "%s\n", std::string(code.status().message()).c_str());
    return 1;
  }
  std::printf("%s", code->c_str());
  return 0;
}

int Check(const Flags& f) {
  std::ifstream in(f.file);
  if (!in) return Usage("cannot read " + f.file);
  std::stringstream ss;
  ss << in.rdbuf();
  Regression reg;
  if (!ParseRegression(ss.str(), &reg)) return Usage(f.file + " is no difftest regression file");
  RunnerOptions o = f.runner;
  o.only = {reg.target};
  CaseResult r = RunIsolated(reg.c, o);
  bool bug = false;
  for (const TargetResult& t : r.targets) {
    std::printf("%s: %s %s\n%s\n", t.target.c_str(), OutcomeName(t.outcome), t.category.c_str(),
                t.detail.c_str());
    bug |= IsBug(t.outcome);
  }
  return bug ? 1 : 0;
}

}  // namespace
}  // namespace tilec::difftest

int main(int argc, char** argv) {
  using namespace tilec::difftest;
  Flags f;
  if (argc < 2) return Usage("no command");
  f.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--n") {
      if (!absl::SimpleAtoi(value(), &f.n) || f.n < 1) return Usage("--n expects a count >= 1");
    } else if (a == "--seed") {
      if (!absl::SimpleAtoi(value(), &f.seed)) return Usage("--seed expects an integer");
    } else if (a == "--jobs") {
      if (!absl::SimpleAtoi(value(), &f.jobs) || f.jobs < 1) return Usage("--jobs expects >= 1");
    } else if (a == "--batch") {
      if (!absl::SimpleAtoi(value(), &f.batch) || f.batch < 1) return Usage("--batch expects >= 1");
    } else if (a == "--device") {
      f.runner.device = value();
    } else if (a == "--targets") {
      f.runner.targets = absl::StrSplit(value(), ',', absl::SkipEmpty());
    } else if (a == "--no-metamorphic") {
      f.runner.metamorphic = false;
    } else if (a == "--fail-on-bug") {
      f.fail_on_bug = true;
    } else if (a == "--reduce") {
      f.reduce_dir = value();
    } else if (a == "--max-reduce") {
      if (!absl::SimpleAtoi(value(), &f.max_reduce)) return Usage("--max-reduce expects a count");
    } else if (a == "--avoid-open-bugs") {
      f.gen.avoid_open_bugs = true;
    } else if (a == "--host-opt") {
      f.runner.host_opt_level = value();
    } else if (a == "--host-debug-info") {
      f.runner.host_debug_info = true;
    } else if (a == "--features") {
      f.features = true;
    } else if (a == "--verbose") {
      f.verbose = true;
    } else if ((f.command == "check" || f.command == "emit") && f.file.empty() && a[0] != '-') {
      f.file = a;
    } else {
      return Usage("unknown argument " + a);
    }
  }
  // Programs for AMD targets only use AMD's float8 (fnuz) types.
  f.gen.fnuz_float8 =
      !f.runner.targets.empty() &&
      std::all_of(f.runner.targets.begin(), f.runner.targets.end(),
                  [](const std::string& t) { return t.rfind("gfx", 0) == 0; });
  if (f.command == "run") return Run(f);
  if (f.command == "show") return Show(f);
  if (f.command == "check") return Check(f);
  if (f.command == "emit") return Emit(f);
  return Usage("unknown command " + f.command);
}
