// The TileLang frontend: compiles a kernel written for TileLang, unchanged,
// into the tile IR.
//
// The named function is either
// (a) a generator: a Python function whose parameters configure a nested
//     `@T.prim_func` that it returns (it may be decorated `@tilelang.jit(...)`
//     or `@tilelang.autotune(...)`; their arguments are skipped), possibly
//     computing things in Python first;
// (b) an eager `@tilelang.jit` function whose body is the kernel: tensor
//     parameters are declared by annotation statements `A: T.Tensor(shape,
//     dtype)`, problem sizes by `M, N = T.const("M, N")`, outputs by
//     `C = T.empty(shape, dtype)`; or
// (c) a `@T.prim_func` itself.
// Host code in the file (torch, argparse, `main()`) is never evaluated: only
// the named function and what it references (module-level constants and
// imports, other functions, T.macro definitions).
//
// Bindings (`-D name=value` on the command line) set the function's
// parameters (and, in the eager style, the T.const names). A value is a
// Python literal: an int, a float, a bool, a string with or without quotes,
// a dtype (`float16`, `T.float16`, `torch.float16`), a tuple. Parameters
// without a binding take their Python default, unless named in
// Bindings.unbound (`-U name`): then they are left unbound as if they had no
// default. A parameter left unbound
// becomes symbolic: a dynamic dim (Program.dyn_dims) when a tensor shape uses
// it, otherwise an unbound tile parameter (Program.tile_params without a
// value) that appears in the IR as its variable. Bound int parameters used as
// tile sizes (allocation shapes, threads, num_stages, loop and region
// extents, swizzle panels) and not in any tensor shape are recorded in
// Program.tile_params with their value. T.const names left unbound and
// T.dynamic symbols are dynamic dims.
//
// Program.params is the ABI order: the tensor and scalar parameters in the
// order of the function's parameters, then (eager style) the T.empty outputs
// in creation order. Program.name is the name of the compiled function.
//
// The program is returned unverified: callers run ir::Verify. Every user
// error is an INVALID_ARGUMENT status whose message starts with
// `path:line:col: error: message` (see source.h); the frontend never crashes.
#ifndef TILEC_COMPILER_FRONTEND_FRONTEND_H_
#define TILEC_COMPILER_FRONTEND_FRONTEND_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/source.h"
#include "compiler/frontend/staging_budget.h"
#include "compiler/ir/ir.h"

namespace tilec::frontend {

// What a kernel may ask of the device it is built for (the number of SMs,
// the compute capability, ...), answered from the target's hardware profile
// instead of a GPU (tl_device.cc). Each answer given is recorded in
// ir::Program::device_queries and in the artifact.
struct DeviceFacts {
  std::string profile;       // the hardware profile's id: "h100_sxm"
  std::string name;          // "NVIDIA H100 SXM5 80GB"
  std::string vendor;        // "nvidia" | "amd"
  int major = 0, minor = 0;  // compute capability (sm_90a: 9, 0)
  int64_t sm_count = 0;
  int64_t warp_size = 32;
  int64_t shared_memory_per_block = 0;          // bytes, the most one block may use
  int64_t shared_memory_per_block_default = 0;  // bytes without opting in (48 KB on NVIDIA)
  int64_t shared_memory_per_sm = 0;
  int64_t registers_per_block = 0;
  int64_t registers_per_sm = 0;
  int64_t max_threads_per_block = 0;
  int64_t max_threads_per_sm = 0;
  int64_t l2_cache_bytes = 0;
};

// Parameter values, in the order given; a later value for a name replaces an
// earlier one.
struct Bindings {
  std::vector<std::pair<std::string, std::string>> values;
  // Parameters to leave unbound even though they have a Python default
  // (`-U threads`), so that recommendation chooses them. A name here must be
  // a bindable parameter (or T.const name) of the function and must not
  // also have a value (INVALID_ARGUMENT, located at the function).
  std::set<std::string> unbound;
  // The device the program is built for; a query of the device without it
  // is refused, naming the query.
  std::optional<DeviceFacts> device;
  // Time and stop bounds on staging, beyond its step budget.
  StagingLimits staging;

  // Sets `name` to `value`, replacing an earlier binding of the same name.
  void Set(std::string name, std::string value);
};

absl::StatusOr<ir::Program> CompileTileLang(const SourceFile& file, std::string_view function,
                                            const Bindings& bindings);

}  // namespace tilec::frontend

#endif  // TILEC_COMPILER_FRONTEND_FRONTEND_H_
