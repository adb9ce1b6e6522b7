#include "compiler/cache/cache_key.h"

#include <fstream>
#include <iterator>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/digest.h"
#include "compiler/device/device_headers.h"

#ifndef TILEC_GIT_VERSION
#error "TILEC_GIT_VERSION must be defined by the build"
#endif

namespace tilec::cache {

std::string CacheKey::Encode() const {
  const bool amd = absl::StartsWith(target, "gfx");
  return absl::StrCat("schema=", kCacheSchema, "\nprogram=", program_hash, "\ntarget=", target,
                      "\ncompiler=", toolchain.compiler_version,
                      amd ? "\nclang=" : "\nnvrtc=",
                      amd ? toolchain.clang_version : toolchain.nvrtc_version,
                      "\ndevice_headers=",
                      amd ? toolchain.amd_headers_hash : toolchain.device_headers_hash,
                      "\nline_info=", options.line_info ? 1 : 0,
                      "\nmax_registers=", options.max_registers, "\n");
}

std::string CacheKey::Digest() const { return Sha256Hex(Encode()); }

CacheKey MakeCacheKey(const CompileJob& job, const ToolchainInfo& toolchain) {
  CacheKey key;
  key.program_hash = job.program_hash;
  key.target = job.target;
  key.options = job.options;
  key.toolchain = toolchain;
  return key;
}

std::string CompilerVersion() {
  static const std::string* version = [] {
    std::string v = TILEC_GIT_VERSION;
    if (absl::EndsWith(v, "-dirty")) {
      std::ifstream exe("/proc/self/exe", std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(exe)), std::istreambuf_iterator<char>());
      absl::StrAppend(&v, "+exe.", Sha256Hex(bytes).substr(0, 16));
    }
    return new std::string(std::move(v));
  }();
  return *version;
}

std::string DeviceHeadersHash(device::DeviceTarget target) {
  std::string all;
  for (const device::DeviceHeader& h : device::DeviceHeaders(target)) {
    absl::StrAppend(&all, h.path.size(), ":", std::string(h.path), h.text.size(), ":",
                    std::string(h.text));
  }
  return Sha256Hex(all);
}

}  // namespace tilec::cache
