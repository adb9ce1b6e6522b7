#include "worker/flags.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tilec::worker {

std::string Usage() {
  return "usage: tilec-worker --server HOST:PORT --device cuda:N|hip:N|emulator\n"
         "                    [--profile P] [--token_file F] [--tls_ca F]\n"
         "                    [--cache_dir DIR] [--id NAME] [--verify_key PEM]\n"
         "\n"
         "A GPU worker of tilecd: measures autotuning candidates on one device.\n"
         "  --server HOST:PORT  the tilecd to serve; repeat it (or separate by commas) to\n"
         "                      serve several (a fleet): a session with each, one job at\n"
         "                      a time on the device\n"
         "  --device D          cuda:N, hip:N or emulator\n"
         "  --profile P         the hardware profile (id or alias) the device must match;\n"
         "                      default: the one it matches\n"
         "  --token_file F      bearer token (first word of the file); default $TILEC_TOKEN\n"
         "  --tls_ca F          TLS with this root certificate (PEM)\n"
         "  --cache_dir DIR     artifact cache; default $XDG_CACHE_HOME/tilec-worker or\n"
         "                      ~/.cache/tilec-worker\n"
         "  --id NAME           worker id; default host:pid:device\n"
         "  --verify_key PEM    the fleet's Ed25519 public key: load only artifacts whose\n"
         "                      job carries its signature (tilecd --signing_key)\n"
         "Test-only fault injection (for tests of the server; never in production):\n"
         "  --test_corrupt_output NAME=VALUE  add 1.0 to every sampled output of jobs\n"
         "                      whose artifact config binds NAME=VALUE\n"
         "  --test_job_delay_s S  sleep S seconds after reporting a job started\n"
         "SIGTERM/SIGINT: finish the current job, report it, exit 0.\n"
         "Exit codes: 0 drained; 1 the server ended the session with an error;\n"
         "2 usage, or the device matches no profile (or not --profile).\n";
}

absl::StatusOr<WorkerFlags> ParseWorkerFlags(const std::vector<std::string>& args) {
  WorkerFlags f;
  bool device_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    bool has_value = false;
    if (name == "--help" || name == "-h") {
      f.help = true;
      continue;
    }
    if (name.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", name, "'"));
    }
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> absl::StatusOr<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size())
        return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
      return args[++i];
    };
    absl::StatusOr<std::string> v;
    if (name == "--server" || name == "--device" || name == "--profile" || name == "--token_file" ||
        name == "--tls_ca" || name == "--cache_dir" || name == "--id" || name == "--verify_key" ||
        name == "--test_corrupt_output" || name == "--test_job_delay_s") {
      v = take();
      if (!v.ok()) return v.status();
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", name));
    }
    if (v->empty()) return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
    if (name == "--server") {
      for (absl::string_view s : absl::StrSplit(*v, ',', absl::SkipWhitespace())) {
        f.servers.emplace_back(absl::StripAsciiWhitespace(s));
      }
    } else if (name == "--device") {
      absl::StatusOr<runtime::DeviceSpec> d = runtime::DeviceSpec::Parse(*v);
      if (!d.ok())
        return absl::InvalidArgumentError(absl::StrCat("--device: ", d.status().message()));
      f.device = *d;
      device_given = true;
    } else if (name == "--profile") {
      f.profile = *v;
    } else if (name == "--token_file") {
      f.token_file = *v;
    } else if (name == "--tls_ca") {
      f.tls_ca = *v;
    } else if (name == "--cache_dir") {
      f.cache_dir = *v;
    } else if (name == "--id") {
      f.id = *v;
    } else if (name == "--verify_key") {
      f.verify_key = *v;
    } else if (name == "--test_corrupt_output") {
      const size_t eq = v->find('=');
      int64_t n = 0;
      if (eq == std::string::npos || eq == 0 || !absl::SimpleAtoi(v->substr(eq + 1), &n)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--test_corrupt_output: '", *v, "' is not NAME=INTEGER"));
      }
      f.test_corrupt_output = std::make_pair(v->substr(0, eq), n);
    } else if (name == "--test_job_delay_s") {
      double s = 0;
      if (!absl::SimpleAtod(*v, &s) || !std::isfinite(s) || s < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--test_job_delay_s: '", *v, "' is not a number of seconds >= 0"));
      }
      f.test_job_delay_s = s;
    }
  }
  if (f.help) return f;
  if (f.servers.empty()) return absl::InvalidArgumentError("--server HOST:PORT is required");
  if (!device_given) {
    return absl::InvalidArgumentError("--device is required (cuda:N, hip:N or emulator)");
  }
  return f;
}

}  // namespace tilec::worker
