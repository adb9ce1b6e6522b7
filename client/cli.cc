#include "client/cli.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tilec::cli {
namespace {

absl::Status Bad(const std::string& msg) {
  return absl::InvalidArgumentError(absl::StrCat("tilec: ", msg, "\n", Usage()));
}

// Splits "k=v"; both sides non-empty.
absl::StatusOr<std::pair<std::string, std::string>> SplitDefine(const std::string& flag,
                                                                const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Bad(absl::StrCat(flag, " expects name=value, got '", text, "'"));
  }
  return std::make_pair(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

}  // namespace

std::string Usage() {
  return "usage:\n"
         "  tilec parse FILE --fn NAME [-D name=value ...] [-U name ...] [--print] [--json]\n"
         "  tilec run FILE --fn NAME [-D name=value ...] --interp|--emulate|--compare\n"
         "            [--target sm_80|sm_90a|gfx942|gfx90a] [--seed S]\n"
         "            [--dim name=size ...] [--in x.npy ...] [--out DIR] [--shuffle-blocks]\n"
         "            [--timeout_s S (emulator, default 60)] [--check_uninit]\n"
         "  tilec recommend FILE --fn NAME [-D name=value ...] [-U name ...] --target PROFILE\n"
         "            [--top K] [--dim name=size ...] [--json]\n"
         "            [--profiles DIR | --server HOST:PORT [--token_file F] [--tls_ca F]]\n"
         "            [--timeout_s S]\n"
         "  tilec compile FILE --fn NAME [-D name=value ...] [-U name ...]\n"
         "            --target sm_80|sm_90a|gfx942|gfx90a\n"
         "            --local -o DIR [--profile P] [--profiles DIR] [--json] [--explain]\n"
         "            (in this process, no cache; writes .cubin .cu .json,\n"
         "            or .hsaco .hip .json for AMD; --explain: each kernel's schedule,\n"
         "            warp-specialised or which condition failed)\n"
         "  tilec bench FILE --fn NAME [-D name=value ...] [-U name ...] [--device cuda:0|emulator]\n"
         "            [--target sm_80|sm_90a|gfx942|gfx90a] [--dim name=size ...] [--seed S]\n"
         "            [--warmup W]\n"
         "            [--iters N] [--no-flush] [--no-check] [--profile P] [--json]\n"
         "            (compile, load through the runtime, check against the interpreter, time)\n"
         "  -U name leaves a parameter with a Python default unbound: recommend searches it,\n"
         "  compile binds it to the top recommendation for the target's profile.\n";
}

absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& args) {
  Flags f;
  if (args.empty()) return Bad("missing command");
  f.command = args[0];
  if (f.command != "parse" && f.command != "run" && f.command != "recommend" &&
      f.command != "compile" && f.command != "bench") {
    return Bad(absl::StrCat("unknown command '", f.command, "'"));
  }
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) -> absl::StatusOr<std::string> {
      if (i + 1 >= args.size()) return Bad(absl::StrCat(flag, " needs a value"));
      return args[++i];
    };
    if (a == "--fn") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      f.function = *v;
    } else if (a == "-D" || (a.size() > 2 && a.rfind("-D", 0) == 0)) {
      std::string text;
      if (a == "-D") {
        auto v = value(a);
        if (!v.ok()) return v.status();
        text = *v;
      } else {
        text = a.substr(2);
      }
      auto kv = SplitDefine("-D", text);
      if (!kv.ok()) return kv.status();
      f.defines.push_back(*kv);
    } else if (a == "-U" || (a.size() > 2 && a.rfind("-U", 0) == 0)) {
      std::string name;
      if (a == "-U") {
        auto v = value(a);
        if (!v.ok()) return v.status();
        name = *v;
      } else {
        name = a.substr(2);
      }
      if (name.empty() || name.find('=') != std::string::npos) {
        return Bad(absl::StrCat("-U expects a parameter name, got '", name, "'"));
      }
      f.unbound.push_back(name);
    } else if (a == "--server" || a == "--token_file" || a == "--tls_ca" || a == "--profile") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      (a == "--server"       ? f.server
       : a == "--token_file" ? f.token_file
       : a == "--tls_ca"     ? f.tls_ca
                             : f.profile) = *v;
    } else if (a == "--timeout_s") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      if (!absl::SimpleAtod(*v, &f.timeout_s) || f.timeout_s <= 0) {
        return Bad(absl::StrCat("--timeout_s expects a positive number, got '", *v, "'"));
      }
      f.timeout_given = true;
    } else if (a == "--print") {
      f.print = true;
    } else if (a == "--explain") {
      f.explain = true;
    } else if (a == "--json") {
      f.json = true;
    } else if (a == "--interp") {
      f.interp = true;
    } else if (a == "--emulate") {
      f.emulate = true;
    } else if (a == "--compare") {
      f.compare = true;
    } else if (a == "--shuffle-blocks") {
      f.shuffle_blocks = true;
    } else if (a == "--check_uninit") {
      f.check_uninit = true;
    } else if (a == "--seed") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      if (!absl::SimpleAtoi(*v, &f.seed)) return Bad(absl::StrCat("--seed expects an integer, got '", *v, "'"));
    } else if (a == "--target" || a == "--profiles") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      (a == "--target" ? f.target : f.profiles_dir) = *v;
    } else if (a == "--top") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      if (!absl::SimpleAtoi(*v, &f.top) || f.top < 1) {
        return Bad(absl::StrCat("--top expects an integer >= 1, got '", *v, "'"));
      }
    } else if (a == "--in") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      f.inputs.push_back(*v);
    } else if (a == "--local") {
      f.local = true;
    } else if (a == "--device") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      f.device = *v;
    } else if (a == "--warmup" || a == "--iters") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      int n = 0;
      if (!absl::SimpleAtoi(*v, &n) || n < (a == "--iters" ? 1 : 0) || n > 100000) {
        return Bad(absl::StrCat(a, " expects an integer ", a == "--iters" ? ">= 1" : ">= 0",
                                ", got '", *v, "'"));
      }
      (a == "--warmup" ? f.warmup : f.iters) = n;
    } else if (a == "--no-flush") {
      f.flush = false;
    } else if (a == "--no-check") {
      f.check = false;
    } else if (a == "--out" || a == "-o") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      f.out_dir = *v;
    } else if (a == "--dim") {
      auto v = value(a);
      if (!v.ok()) return v.status();
      auto kv = SplitDefine("--dim", *v);
      if (!kv.ok()) return kv.status();
      int64_t size = 0;
      if (!absl::SimpleAtoi(kv->second, &size) || size < 0) {
        return Bad(absl::StrCat("--dim ", kv->first, " expects a size >= 0, got '", kv->second, "'"));
      }
      f.dims.emplace_back(kv->first, size);
    } else if (!a.empty() && a[0] == '-') {
      return Bad(absl::StrCat("unknown flag '", a, "'"));
    } else if (f.file.empty()) {
      f.file = a;
    } else {
      return Bad(absl::StrCat("unexpected argument '", a, "'"));
    }
  }
  if (f.file.empty()) return Bad("missing FILE");
  if (f.function.empty()) return Bad("missing --fn NAME");
  if (f.command == "recommend" && f.target.empty()) {
    return Bad("recommend needs --target PROFILE (h100, h200, a100, mi300x, mi250x, host, ...)");
  }
  if ((!f.server.empty() || !f.token_file.empty() || !f.tls_ca.empty()) &&
      f.command != "recommend") {
    return Bad(absl::StrCat(f.command, " runs in this process: --server, --token_file and "
                                       "--tls_ca apply to recommend"));
  }
  if (!f.profile.empty() && f.command != "compile" && f.command != "bench") {
    return Bad("--profile applies to compile and bench (recommend takes the profile as --target)");
  }
  if (f.command == "compile" && (f.target.empty() || f.out_dir.empty())) {
    return Bad("compile --local needs --target sm_80|sm_90a|gfx942|gfx90a and -o DIR");
  }
  if (f.command == "run") {
    if (f.compare) f.interp = f.emulate = true;
    if (!f.interp && !f.emulate) {
      return Bad("run needs an executor: --interp (the reference interpreter), --emulate "
                 "--target sm_80|sm_90a|gfx942|gfx90a (the generated code on the SIMT "
                 "emulator), or --compare (both)");
    }
    if (f.emulate && f.target.empty()) {
      return Bad("run --emulate needs --target sm_80|sm_90a|gfx942|gfx90a");
    }
  }
  return f;
}

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk: return kOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kOutOfRange: return kProgramError;
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kPermissionDenied: return kIoError;
    default: return kInternalError;
  }
}

}  // namespace tilec::cli
