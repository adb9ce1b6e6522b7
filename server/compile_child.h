// The compile child: the child-process side of SubprocessCompiler. Reads a
// tilec.v1.CompileChildRequest from stdin, runs the real pipeline
// (cache::CudaCompiler) on it, writes a tilec.v1.CompileChildResult to stdout and
// returns the process exit code (0 when a result was written, whatever the
// compile's status).
//
// Running out of memory (RLIMIT_AS) is reported as a RESOURCE_EXHAUSTED
// result: from a result prepared at startup when operator new fails (so it
// needs no memory), and when the toolchain reports that it ran out (NVRTC's
// "out of memory", libnvrtc failing to map under the limit).
#ifndef TILEC_SERVER_COMPILE_CHILD_H_
#define TILEC_SERVER_COMPILE_CHILD_H_

namespace tilec::server {

inline constexpr char kCompileChildCommand[] = "compile-child";

int RunCompileChild();

}  // namespace tilec::server

#endif  // TILEC_SERVER_COMPILE_CHILD_H_
