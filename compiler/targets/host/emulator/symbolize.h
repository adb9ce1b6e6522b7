// Source lines for code addresses inside a loaded host kernel module: the
// emulator's messages say where in the generated source a thread faulted or
// waits.
//
// SourceLine(pc, symbolizer) finds the module holding `pc` (dladdr), runs
// `symbolizer` (llvm-symbolizer, looked up on PATH unless it is a path) on
// the module file with the module offset, and returns "file:line:col" of the
// innermost frame (inlined frames included) whose file is a .cu source (the
// host toolchain compiles the generated source under its .cu name), else of
// the innermost frame with a line, with directories removed. `pc` is a
// return address; the call before it is looked up. An empty string when the
// address, the module file, the tool or the debug info is missing.
#ifndef TILEC_COMPILER_TARGETS_HOST_EMULATOR_SYMBOLIZE_H_
#define TILEC_COMPILER_TARGETS_HOST_EMULATOR_SYMBOLIZE_H_

#include <string>

namespace tilec::host {

std::string SourceLine(const void* pc, const std::string& symbolizer);

}  // namespace tilec::host

#endif  // TILEC_COMPILER_TARGETS_HOST_EMULATOR_SYMBOLIZE_H_
