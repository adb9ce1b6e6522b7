// Reading the SASS of a cubin, for static checks of generated code: which
// instructions a kernel uses (HMMA for mma.sync, LDSM for ldmatrix, LDGSTS for
// cp.async) and whether it touches local memory (LDL/STL: register spills or
// stack arrays, a performance bug in a tile kernel).
//
// Disassembly runs NVIDIA's cuobjdump on a temporary copy of the cubin. It
// is found, in order, at $TILEC_CUOBJDUMP, $CUDA_HOME/bin, /usr/local/cuda/bin,
// on $PATH, and where the build found it (the PyPI package
// nvidia-cuda-cuobjdump installed by deploy/install-deps.sh).
#ifndef TILEC_COMPILER_TARGETS_CUDA_SASS_H_
#define TILEC_COMPILER_TARGETS_CUDA_SASS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilec::cuda {

// The cuobjdump executable; FAILED_PRECONDITION saying where it looked.
absl::StatusOr<std::string> FindCuobjdump();

// `cuobjdump -sass` of the cubin bytes. FAILED_PRECONDITION when cuobjdump is
// missing; INTERNAL (with its trimmed output) when it fails.
absl::StatusOr<std::string> DisassembleCubin(std::string_view cubin);

// One function's part of a disassembly ("Function : <name>").
struct SassFunction {
  std::string name;
  std::string text;
};
std::vector<SassFunction> SplitSassFunctions(std::string_view sass);

// Number of instructions whose opcode is `opcode` or starts with `opcode`
// followed by '.', so "HMMA" counts HMMA.16816.F32 and "LDSM.16.MT88" counts
// only transposing ldmatrix. Predicates (@P0) are skipped.
int CountOpcode(std::string_view sass, std::string_view opcode);

// Local-memory instructions (LDL, STL and their variants).
struct LocalMemoryTraffic {
  int loads = 0;
  int stores = 0;
  bool any() const { return loads + stores > 0; }
};
LocalMemoryTraffic CountLocalMemoryTraffic(std::string_view sass);

}  // namespace tilec::cuda

#endif  // TILEC_COMPILER_TARGETS_CUDA_SASS_H_
