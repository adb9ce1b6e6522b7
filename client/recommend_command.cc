#include "client/recommend_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/commands.h"
#include "client/embedded.h"
#include "client/remote.h"

namespace tilec::cli {
namespace {

std::string Json(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) { return absl::StrFormat("%.6g", v); }

std::string JsonOf(std::string_view function, const tilec::v1::RecommendResponse& r) {
  std::vector<std::string> deduced, searched, recs, rejections;
  for (const tilec::v1::Rejection& j : r.rejections()) {
    rejections.push_back(
        absl::StrCat("{\"reason\": ", Json(j.reason()), ", \"count\": ", j.count(), "}"));
  }
  for (const tilec::v1::DeducedParam& d : r.deduced()) {
    deduced.push_back(absl::StrCat("{\"name\": ", Json(d.name()), ", ",
                                   d.has_value() ? absl::StrCat("\"value\": ", d.value())
                                                 : absl::StrCat("\"equals\": ", Json(d.equals())),
                                   ", \"reason\": ", Json(d.reason()), "}"));
  }
  for (const tilec::v1::SearchedParam& s : r.searched()) {
    searched.push_back(absl::StrCat("{\"name\": ", Json(s.name()), ", \"role\": ", Json(s.role()),
                                    ", \"values\": [", absl::StrJoin(s.values(), ", "),
                                    "], \"origin\": ", Json(s.origin()), "}"));
  }
  for (const tilec::v1::RankedConfig& c : r.recommendations()) {
    std::vector<std::string> config, kernels;
    for (const tilec::v1::NamedValue& v : c.config()) {
      config.push_back(absl::StrCat(Json(v.name()), ": ", v.value()));
    }
    for (const tilec::v1::KernelResources& k : c.kernels()) {
      kernels.push_back(absl::StrCat("{\"index\": ", k.index(), ", \"blocks\": ", k.blocks(),
                                     ", \"threads\": ", k.threads(), ", \"shared_bytes\": ",
                                     k.shared_bytes(), ", \"registers\": ", k.registers(), "}"));
    }
    recs.push_back(absl::StrCat("{\"rank\": ", c.rank(), ", \"config\": {",
                                absl::StrJoin(config, ", "),
                                "}, \"predicted_us\": ", JsonNumber(c.predicted_us()),
                                c.measured_ms() > 0
                                    ? absl::StrCat(", \"measured_ms\": ", JsonNumber(c.measured_ms()),
                                                   ", \"measured_timing\": ", Json(c.measured_timing()))
                                    : "",
                                ", \"limiter\": ", Json(c.limiter()), ", \"reason\": ",
                                Json(c.reason()), ", \"kernels\": [", absl::StrJoin(kernels, ", "),
                                "]}"));
  }
  return absl::StrCat(
      "{\"function\": ", Json(function), ", \"target\": ", Json(r.profile()),
      ", \"program_hash\": ", Json(r.program_hash()), ", \"configs\": ", r.configs(),
      ", \"over_limits\": ", r.over_limits(), ", \"lowered\": ", r.lowered(),
      ", \"rejected_by_lowering\": ", r.rejected_by_lowering(), ", \"deduced\": [",
      absl::StrJoin(deduced, ", "), "], \"searched\": [", absl::StrJoin(searched, ", "),
      "], \"rejections\": [", absl::StrJoin(rejections, ", "), "], \"recommendations\": [",
      absl::StrJoin(recs, ", "), "]}\n");
}

std::string TableOf(std::string_view function, const tilec::v1::RecommendResponse& r) {
  std::string out = absl::StrFormat(
      "%s on %s (%s): %d configs, %d over the limits, %d lowered, %d rejected\n", function,
      r.profile(), r.profile_name(), r.configs(), r.over_limits(), r.lowered(),
      r.rejected_by_lowering());
  for (const tilec::v1::DeducedParam& d : r.deduced()) {
    absl::StrAppend(&out, "deduced  ", d.name(), " = ",
                    d.has_value() ? absl::StrCat(d.value()) : d.equals(), "  (", d.reason(),
                    ")\n");
  }
  for (const tilec::v1::SearchedParam& s : r.searched()) {
    absl::StrAppend(&out, "searched ", s.name(), " in {", absl::StrJoin(s.values(), ", "), "}  (",
                    s.origin(), ")\n");
  }
  for (int i = 0; i < r.rejections_size() && i < 3; ++i) {
    absl::StrAppend(&out, "rejected ", r.rejections(i).count(), " x ", r.rejections(i).reason(),
                    "\n");
  }
  if (r.recommendations().empty()) return out;
  std::vector<std::string> names;
  for (const tilec::v1::NamedValue& v : r.recommendations(0).config()) names.push_back(v.name());
  std::string header = "rank";
  for (const std::string& n : names) absl::StrAppend(&header, "  ", n);
  bool measured = false;
  for (const tilec::v1::RankedConfig& c : r.recommendations()) measured |= c.measured_ms() > 0;
  absl::StrAppend(&out, "\n", header, "  time_us", measured ? "  measured_ms" : "",
                  "  limiter    smem_B  regs  reason\n");
  for (const tilec::v1::RankedConfig& c : r.recommendations()) {
    std::string line = absl::StrFormat("%4d", c.rank());
    for (size_t i = 0; i < names.size(); ++i) {
      int64_t value = i < static_cast<size_t>(c.config_size()) ? c.config(i).value() : 0;
      absl::StrAppend(&line, absl::StrFormat("  %*d", static_cast<int>(names[i].size()), value));
    }
    // The largest per-block shared memory and per-thread registers over the
    // kernels: what bounds the config.
    int64_t smem = 0, regs = 0;
    for (const tilec::v1::KernelResources& k : c.kernels()) {
      smem = std::max(smem, k.shared_bytes());
      regs = std::max(regs, k.registers());
    }
    absl::StrAppend(&line, absl::StrFormat("  %7.1f", c.predicted_us()));
    if (measured) {
      absl::StrAppend(&line, c.measured_ms() > 0 ? absl::StrFormat("  %11.4f", c.measured_ms())
                                                 : std::string("            -"));
    }
    absl::StrAppend(&line, absl::StrFormat("  %-9s  %6d  %4d  %s\n", c.limiter(), smem, regs,
                                           c.reason()));
    absl::StrAppend(&out, line);
  }
  if (measured) {
    absl::StrAppend(&out, "measured_ms: from the server's tuning database (",
                    r.recommendations(0).measured_timing().empty()
                        ? std::string("see tilec autotune")
                        : r.recommendations(0).measured_timing(),
                    ")\n");
  }
  return out;
}

}  // namespace

std::string FormatRecommendation(std::string_view function,
                                 const tilec::v1::RecommendResponse& response, bool json) {
  return json ? JsonOf(function, response) : TableOf(function, response);
}

int RecommendCommand(const Flags& flags) {
  tilec::v1::RecommendRequest request;
  tilec::v1::TileLangSource* src = request.mutable_source();
  {
    std::ifstream in(flags.file, std::ios::binary);
    if (!in) {
      return ReportError(absl::NotFoundError(absl::StrCat("tilec: cannot read ", flags.file)));
    }
    std::stringstream text;
    text << in.rdbuf();
    src->set_text(text.str());
  }
  src->set_path(flags.file);
  src->set_function(flags.function);
  for (const auto& [k, v] : flags.defines) {
    tilec::v1::Binding* b = src->add_bindings();
    b->set_name(k);
    b->set_value(v);
  }
  for (const std::string& u : flags.unbound) src->add_unbound(u);
  request.set_profile(flags.target);
  request.set_top_k(flags.top);
  for (const auto& [name, size] : flags.dims) {
    tilec::v1::NamedValue* d = request.add_dyn_dims();
    d->set_name(name);
    d->set_value(size);
  }
  std::string server = flags.server;
  if (server.empty()) {
    if (const char* s = std::getenv("TILEC_SERVER"); s != nullptr) server = s;
  }
  tilec::v1::RecommendResponse response;
  if (!server.empty()) {
    if (!flags.profiles_dir.empty()) {
      std::fprintf(stderr,
                   "tilec: --profiles applies to the recommender in this process; a server "
                   "uses its own profiles (tilecd --profiles DIR)\n");
      return kUsageError;
    }
    ServerConnection connection{server, flags.token_file, flags.tls_ca, flags.timeout_s};
    if (int code = RemoteRecommend(connection, request, &response); code != 0) return code;
  } else {
    absl::StatusOr<tilec::v1::RecommendResponse> r = RecommendEmbedded(
        request, flags.profiles_dir, absl::Now() + absl::Seconds(flags.timeout_s));
    if (!r.ok()) return ReportError(r.status());
    response = *std::move(r);
  }
  std::fputs(FormatRecommendation(flags.function, response, flags.json).c_str(), stdout);
  return kOk;
}

}  // namespace tilec::cli
