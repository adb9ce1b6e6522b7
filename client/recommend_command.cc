#include "client/recommend_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "compiler/recommend/recommend.h"

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

void PrintJson(const Flags& flags, const recommend::HardwareProfile& profile,
               const recommend::RecommendReport& report) {
  std::vector<std::string> deduced, searched, recs, rejections;
  for (const auto& [reason, count] : report.rejections) {
    rejections.push_back(absl::StrCat("{\"reason\": ", Json(reason), ", \"count\": ", count, "}"));
  }
  for (const auto& d : report.space.deduced) {
    deduced.push_back(absl::StrCat("{\"name\": ", Json(d.name), ", ",
                                   d.value ? absl::StrCat("\"value\": ", *d.value)
                                           : absl::StrCat("\"equals\": ", Json(d.equals)),
                                   ", \"reason\": ", Json(d.reason), "}"));
  }
  for (const auto& s : report.space.searched) {
    searched.push_back(absl::StrCat(
        "{\"name\": ", Json(s.name), ", \"role\": ", Json(recommend::ParamRoleName(s.role)),
        ", \"values\": [", absl::StrJoin(s.values, ", "), "], \"origin\": ", Json(s.origin), "}"));
  }
  for (const auto& r : report.recommendations) {
    std::vector<std::string> config;
    for (const auto& [k, v] : r.config) config.push_back(absl::StrCat(Json(k), ": ", v));
    recs.push_back(
        absl::StrCat("{\"rank\": ", r.rank, ", \"config\": {", absl::StrJoin(config, ", "),
                     "}, \"predicted_us\": ", JsonNumber(r.predicted_us),
                     ", \"limiter\": ", Json(r.limiter), ", \"reason\": ", Json(r.reason), "}"));
  }
  std::printf(
      "{\"function\": %s, \"target\": %s, \"configs\": %lld, \"over_limits\": %lld, "
      "\"lowered\": %lld, \"rejected_by_lowering\": %lld, \"deduced\": [%s], \"searched\": [%s], "
      "\"rejections\": [%s], \"recommendations\": [%s]}\n",
      Json(flags.function).c_str(), Json(profile.id()).c_str(),
      static_cast<long long>(report.configs), static_cast<long long>(report.over_limits),
      static_cast<long long>(report.lowered), static_cast<long long>(report.rejected_by_lowering),
      absl::StrJoin(deduced, ", ").c_str(), absl::StrJoin(searched, ", ").c_str(),
      absl::StrJoin(rejections, ", ").c_str(), absl::StrJoin(recs, ", ").c_str());
}

void PrintTable(const Flags& flags, const recommend::HardwareProfile& profile,
                const recommend::RecommendReport& report) {
  std::printf("%s on %s (%s): %lld configs, %lld over the limits, %lld lowered, %lld rejected\n",
              flags.function.c_str(), profile.id().c_str(), profile.name().c_str(),
              static_cast<long long>(report.configs), static_cast<long long>(report.over_limits),
              static_cast<long long>(report.lowered),
              static_cast<long long>(report.rejected_by_lowering));
  for (const auto& d : report.space.deduced) {
    std::printf("deduced  %s = %s  (%s)\n", d.name.c_str(),
                d.value ? absl::StrCat(*d.value).c_str() : d.equals.c_str(), d.reason.c_str());
  }
  for (const auto& s : report.space.searched) {
    std::printf("searched %s in {%s}  (%s)\n", s.name.c_str(),
                absl::StrJoin(s.values, ", ").c_str(), s.origin.c_str());
  }
  for (size_t i = 0; i < report.rejections.size() && i < 3; ++i) {
    std::printf("rejected %lld x %s\n", static_cast<long long>(report.rejections[i].second),
                report.rejections[i].first.c_str());
  }
  if (report.recommendations.empty()) return;
  std::vector<std::string> names;
  for (const auto& [k, v] : report.recommendations[0].config) names.push_back(k);
  std::string header = "rank";
  for (const std::string& n : names) absl::StrAppend(&header, "  ", n);
  absl::StrAppend(&header, "  time_us  limiter    reason");
  std::printf("\n%s\n", header.c_str());
  for (const auto& r : report.recommendations) {
    std::string line = absl::StrFormat("%4d", r.rank);
    for (const std::string& n : names) {
      absl::StrAppend(&line, absl::StrFormat("  %*lld", static_cast<int>(n.size()),
                                             static_cast<long long>(r.config.at(n))));
    }
    absl::StrAppend(&line,
                    absl::StrFormat("  %7.1f  %-9s  %s", r.predicted_us, r.limiter, r.reason));
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace

int RecommendCommand(const Flags& flags) {
  auto profiles = recommend::LoadProfiles(flags.profiles_dir);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto profile = recommend::FindProfile(*profiles, flags.target);
  if (!profile.ok()) return ReportError(absl::InvalidArgumentError(profile.status().message()));
  auto program = LoadProgram(flags);
  if (!program.ok()) return ReportError(program.status());
  recommend::RecommendOptions options;
  options.top_k = flags.top;
  for (const auto& [name, size] : flags.dims) options.dyn_dims[name] = size;
  auto report = recommend::RecommendWithReport(*program, *profile, options);
  if (!report.ok()) {
    // No valid config is a property of the program on this target.
    if (report.status().code() == absl::StatusCode::kNotFound) {
      return ReportError(absl::FailedPreconditionError(report.status().message()));
    }
    return ReportError(report.status());
  }
  if (flags.json) {
    PrintJson(flags, *profile, *report);
  } else {
    PrintTable(flags, *profile, *report);
  }
  return kOk;
}

}  // namespace tilec::cli
