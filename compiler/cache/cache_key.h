// The cache key of a compiled artifact: every input that changes the
// artifact's bytes, and nothing else (docs: ../../shared design "Cache key").
//
// Fields, in the order they are encoded:
//   schema          kCacheSchema: bumped whenever the encoding below, the
//                   entry format or the artifact format changes, so old
//                   entries miss instead of being misread.
//   program         ir::ProgramHash of the program with every parameter
//                   bound (itself versioned by ir::kHashSchemaVersion).
//                   Local names are out of it; everything semantic is in.
//   target          the hardware profile compiled for ("sm_80", "sm_90a"):
//                   different instructions and limits, different bytes.
//   compiler        the tilec compiler version (CompilerVersion()): a new
//                   emitter or inference can produce different code.
//   nvrtc           NVRTC's version ("13.0"): the toolkit turns the same
//                   source into different SASS.
//   device_headers  SHA-256 of the embedded tl device headers the generated
//                   code includes (DeviceHeadersHash()).
//   For an AMD target (gfx942, gfx90a) nvrtc is replaced by clang (clang-19's
//   `--version` line) and device_headers hashes the AMD device headers: the
//   CUDA entries' encoding is unchanged.
//   line_info, max_registers
//                   the compile options (CompileOptions), each changing the
//                   cubin.
// Deliberately out: the request's file path, function and binding spelling
// (the bound program's hash already covers what they produce), client
// identity, time.
#ifndef TILEC_COMPILER_CACHE_CACHE_KEY_H_
#define TILEC_COMPILER_CACHE_CACHE_KEY_H_

#include <string>

#include "compiler/cache/compiler.h"
#include "compiler/device/device_headers.h"

namespace tilec::cache {

inline constexpr char kCacheSchema[] = "tilec-cache-1";

// Versions of the tools that turn a program into bytes. Fill it once per
// process with ToolchainInfo::Current() (the CUDA one needs NVRTC loaded).
struct ToolchainInfo {
  std::string compiler_version;
  std::string nvrtc_version;
  std::string device_headers_hash;
  std::string clang_version = {};     // AMD targets
  std::string amd_headers_hash = {};  // AMD targets
};

struct CacheKey {
  std::string program_hash;
  std::string target;
  CompileOptions options;
  ToolchainInfo toolchain;

  // One "field=value" line per field in the documented order; the bytes the
  // digest is taken over, and what an entry stores to explain itself.
  std::string Encode() const;
  // Sha256Hex(Encode()).
  std::string Digest() const;
};

CacheKey MakeCacheKey(const CompileJob& job, const ToolchainInfo& toolchain);

// The tilec version this binary was configured from (git describe at
// configure time). A build from a modified tree ("-dirty") also carries the
// SHA-256 of its own executable, so a rebuilt compiler never hits entries an
// older build of the same commit wrote.
std::string CompilerVersion();

// SHA-256 over a target's device headers' paths and texts, in their sorted
// order.
std::string DeviceHeadersHash(device::DeviceTarget target = device::DeviceTarget::kCuda);

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_CACHE_KEY_H_
