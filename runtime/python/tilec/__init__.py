"""tilec: compile TileLang kernels with tilec and run them from Python.

    import tilec, torch
    kernel = tilec.compile("examples/gemm.py", "matmul", M=1024, N=1024, K=1024,
                           block_M=128, block_N=128, block_K=32, dtype="float16")
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = torch.empty(1024, 1024, device="cuda", dtype=torch.float16)
    kernel(a, b, c)                      # arguments in kernel.params order
    print(kernel.time(a, b, c))          # ms of each timed run

Compiling runs the `tilec compile` CLI; launching goes through the runtime
library libtilec_runtime.so (its C API, with ctypes). Where both are found:
see tilec._discovery (TILEC_BUILD_DIR, TILEC_RUNTIME_LIB, TILEC_BIN, PATH,
the source tree's build/).

On the emulator (device="emulator", the default without a CUDA GPU) tensors
are numpy arrays or CPU torch tensors; tilec.view(a, "bfloat16") passes the
raw bits of a uint16 array as bfloat16 (and uint8 as float8_e4m3/e5m2).
"""

from ._args import TensorView, view
from ._device import Device, default_device, device
from ._discovery import find_cli, find_runtime_library
from ._errors import CompileError, LibraryNotFound, TilecError
from ._kernel import Kernel, Param, compile, default_target, load, render_value

__all__ = [
    "CompileError", "Device", "Kernel", "LibraryNotFound", "Param", "TensorView", "TilecError",
    "compile", "default_device", "default_target", "device", "find_cli", "find_runtime_library",
    "load", "render_value", "view"
]

__version__ = "0.1.0"
