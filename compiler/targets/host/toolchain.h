// The host toolchain: builds generated CUDA C++ into a shared object for the
// SIMT emulator, and loads it.
//
// CompileHost writes the source into a fresh temporary directory, appends one
// emulator entry point per `__global__` function it finds in the source
// (TILEC_HOST_ENTRY, tl/entry.h: the generated code carries nothing
// host-specific), runs
//   clang++-19 -std=c++20 -O1 -g -fPIC -shared -DTILEC_HOST
// against the embedded host device headers (compiler/device:
// DeviceHeaders(kHost), i.e. host/tl/ + common/tl/) and dlopens the result.
// The headers live in a cache directory keyed by their text, the flags and
// the compiler, together with a precompiled tl/tl.h (about 1 s saved per
// compile). The temporary directory (with the shared object, which the
// emulator reads the debug info of to name source lines) lives as long as the
// loaded module, and is removed then unless `keep_files` is set.
//
// Errors: FAILED_PRECONDITION when clang cannot be run; INTERNAL when clang
// rejects the source (for generated code that is a tilec bug; the message
// holds the head and tail of clang's log) or the object does not load;
// INVALID_ARGUMENT when the source defines no __global__ function.
#ifndef TILEC_COMPILER_TARGETS_HOST_TOOLCHAIN_H_
#define TILEC_COMPILER_TARGETS_HOST_TOOLCHAIN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/targets/host/emulator/emulator.h"

namespace tilec::host {

struct HostOptions {
  std::string clang = "clang++-19";  // a path, or a name looked up on PATH
  std::string opt_level = "-O1";
  bool debug_info = true;                // -g
  std::vector<std::string> extra_flags;  // appended to the command line
  std::string work_dir;                  // parent of the temporary directory; $TMPDIR or /tmp
  bool keep_files = false;               // keep the source and .so for debugging
  // Where the headers (and their precompiled form) are kept between compiles;
  // default <work_dir>/tilec-host-cache-<uid>. Safe to share and to delete.
  std::string cache_dir;
  bool use_pch = true;  // precompile tl/tl.h once per cache entry
  // The file name the source is compiled under (a `#line` directive), which
  // the emulator's messages name with the line of a fault ("matmul.cu:57:9").
  std::string source_name = "kernel.cu";
};

// A loaded kernel module. Copies share the loaded object, which is unloaded
// when the last copy goes away.
class HostModule {
 public:
  // The __global__ functions of the source, in source order.
  const std::vector<std::string>& kernels() const { return kernels_; }
  // The build directory (removed with the last copy of the module unless
  // HostOptions::keep_files).
  const std::string& dir() const { return dir_; }

  // The entry of `kernel` and its parameter count; NOT_FOUND naming the
  // module's kernels when it has none of that name.
  absl::StatusOr<KernelEntry> Entry(const std::string& kernel) const;
  absl::StatusOr<int> Arity(const std::string& kernel) const;

 private:
  friend absl::StatusOr<HostModule> CompileHost(const std::string&, const HostOptions&);
  std::shared_ptr<void> handle_;  // dlopen handle
  std::vector<std::string> kernels_;
  std::string dir_;
};

absl::StatusOr<HostModule> CompileHost(const std::string& source, const HostOptions& options);

// The names of the `__global__` functions defined in `source`, in order
// (comments, string literals and `__launch_bounds__(...)` are skipped).
std::vector<std::string> FindKernels(const std::string& source);

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_TOOLCHAIN_H_
