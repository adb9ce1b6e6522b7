#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/hash.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/proto_convert.h"
#include "compiler/ir/verifier.h"
#include "compiler/recommend/auto_bind.h"
#include "compiler/recommend/profile.h"
#include "compiler/targets/cuda/artifact.h"
#include "google/protobuf/util/json_util.h"

namespace tilec::cli {

// The device a kernel's queries of the device are answered for: the
// profile of --target (recommend: the profile it names; otherwise --profile
// or the target arch's own), sm_90a's when there is none (tilec parse).
absl::StatusOr<frontend::DeviceFacts> DeviceFor(const Flags& flags) {
  absl::StatusOr<std::vector<recommend::HardwareProfile>> profiles =
      recommend::LoadProfiles(flags.profiles_dir);
  if (!profiles.ok()) return profiles.status();
  const std::string target = flags.target.empty() ? "sm_90a" : flags.target;
  absl::StatusOr<recommend::HardwareProfile> p =
      flags.command == "recommend" ? recommend::FindProfile(*profiles, target)
                                   : recommend::ProfileForTarget(*profiles, target, flags.profile);
  if (!p.ok()) return p.status();
  return recommend::DeviceFactsOf(*p);
}

absl::StatusOr<ir::Program> LoadProgram(const Flags& flags) {
  std::ifstream in(flags.file, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("tilec: cannot read ", flags.file));
  std::stringstream text;
  text << in.rdbuf();
  frontend::SourceFile file{flags.file, text.str()};
  frontend::Bindings bindings;
  for (const auto& [k, v] : flags.defines) bindings.values.emplace_back(k, v);
  bindings.unbound.insert(flags.unbound.begin(), flags.unbound.end());
  // Only a kernel that asks the device needs one; a target without a profile
  // is reported where the kernel asks.
  if (absl::StatusOr<frontend::DeviceFacts> device = DeviceFor(flags); device.ok()) {
    bindings.device = *std::move(device);
  }
  auto program = frontend::CompileTileLang(file, flags.function, bindings);
  if (!program.ok()) return program.status();
  if (absl::Status st = ir::Verify(*program); !st.ok()) {
    // The frontend produced a program the verifier rejects: that is ours.
    return absl::InternalError(absl::StrCat("the frontend built an ill-formed program for ",
                                            flags.function, ": ", st.message()));
  }
  return program;
}

int ReportError(const absl::Status& status) {
  int code = ExitCodeFor(status);
  std::string msg(status.message());
  if (code == kInternalError) {
    std::fprintf(stderr, "tilec: internal error (this is a compiler bug; please report it): %s\n",
                 msg.c_str());
  } else {
    if (msg.empty() || msg.back() != '\n') msg += '\n';
    std::fputs(msg.c_str(), stderr);
  }
  return code;
}

int ParseCommand(const Flags& flags) {
  auto program = LoadProgram(flags);
  if (!program.ok()) return ReportError(program.status());
  const std::string hash = ir::ProgramHash(*program);
  if (flags.json) {
    std::string wire;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    auto st = google::protobuf::util::MessageToJsonString(ir::ToProto(*program), &wire, options);
    if (!st.ok()) {
      return ReportError(absl::InternalError(absl::StrCat("wire form to JSON: ", st.ToString())));
    }
    std::printf("{\"function\": %s, \"hash\": %s, \"ir\": %s, \"program\": %s}\n",
                cuda::JsonQuote(flags.function).c_str(), cuda::JsonQuote(hash).c_str(),
                cuda::JsonQuote(ir::Print(*program)).c_str(), wire.c_str());
    return kOk;
  }
  if (flags.print) std::printf("%s\n", ir::Print(*program).c_str());
  std::printf("hash %s\n", hash.c_str());
  return kOk;
}

}  // namespace tilec::cli
