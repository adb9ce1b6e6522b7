#include "compiler/targets/host/launch.h"

#include "absl/strings/str_cat.h"

namespace tilec::host {

absl::Status Launch(const HostModule& module, const std::string& kernel, Dim3 grid, Dim3 block,
                    size_t smem_bytes, std::vector<void*> args, const LaunchOptions& options) {
  absl::StatusOr<KernelEntry> entry = module.Entry(kernel);
  if (!entry.ok()) return entry.status();
  absl::StatusOr<int> arity = module.Arity(kernel);
  if (!arity.ok()) return arity.status();
  if (static_cast<size_t>(*arity) != args.size()) {
    return absl::InvalidArgumentError(absl::StrCat("launch of kernel ", kernel, ": it takes ",
                                                   *arity, " parameters, ", args.size(),
                                                   " arguments given"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("launch of kernel ", kernel, ": argument ", i,
                       " is a null pointer (pass the address of the parameter's value)"));
    }
  }
  return RunGrid(kernel, *entry, args.data(), grid, block, smem_bytes, options);
}

}  // namespace tilec::host
