"""Compile one example with upstream TileLang, for parity.py; no GPU needed.

Runs under the yardstick venv's Python (README.md), never under ours:

    upstream_compile.py EXAMPLE.py FN BINDINGS_JSON ARCH OUT_DIR

EXAMPLE.py's FN is bound with the JSON object BINDINGS_JSON and lowered for
the CUDA target ARCH (sm_90a) by TileLang's own pipeline, with the pass
configs and compile flags the function declares. The CUDA source it emits is
then compiled by TileLang's own nvcc step (the compile callback its CUDA
backend registers, so the flags are TileLang's: --use_fast_math only when the
pass configs ask). The kernel is never loaded, so torch needs no device.

Writes OUT_DIR/kernel.cu, OUT_DIR/kernel.cubin and OUT_DIR/meta.json:
    {"kernels": {name: {"dyn_smem": bytes, "threads": n}}, "ptxas": log,
     "pass_configs": {...}, "ws_applied": flag from TileLang's host module}
On failure prints one line "upstream: <reason>" to stderr and exits 1.
"""

import importlib.util
import json
import logging
import os
import re
import sys
import traceback


def load_function(example, fn):
    sys.path.insert(0, os.path.dirname(os.path.abspath(example)))
    spec = importlib.util.spec_from_file_location("parity_example", example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, fn)


def prim_func_of(obj, bindings):
    """(PrimFunc, pass configs, compile flags) of a jit object or generator.

    bindings["__tensors__"] ({name: [shape, torch dtype]}) become tensors on
    torch's "meta" device, for an eager @tilelang.jit function, which takes
    its sizes from its tensor arguments; they hold no memory.
    """
    from tilelang.jit import JITImpl
    from tvm.tirx import PrimFunc

    bindings = dict(bindings)
    tensors = bindings.pop("__tensors__", {})
    if tensors:
        import torch
        for name, (shape, dtype) in tensors.items():
            bindings[name] = torch.empty(shape, dtype=getattr(torch, dtype), device="meta")
    configs, flags = {}, []
    if isinstance(obj, JITImpl):
        func = obj.get_tir(**bindings)
        configs = dict(obj.pass_configs or {})
        flags = list([obj.compile_flags] if isinstance(obj.compile_flags, str) else
                     (obj.compile_flags or []))
    else:
        func = obj if isinstance(obj, PrimFunc) else obj(**bindings)
    if not isinstance(func, PrimFunc):
        raise RuntimeError(f"{type(func).__name__} is not a PrimFunc")
    attrs = func.attrs or {}
    # What the function itself declares (T.annotate_pass_configs and the
    # like); what the decorator says wins, as in tilelang.compile.
    if "tilelang_pass_configs" in attrs:
        configs = dict(dict(attrs["tilelang_pass_configs"]), **configs)
    if "tilelang_compile_flags" in attrs:
        flags = list(attrs["tilelang_compile_flags"]) + flags
    return func, configs, flags


class LogTap(logging.Handler):
    """Keeps TileLang's log records: ptxas -v output arrives through them."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def compile_upstream(example, fn, bindings, arch, out_dir):
    # Verbose makes TileLang's nvcc step pass ptxas --verbose (spill counts)
    # and log the output; it does not change the code ptxas generates.
    os.environ["TILELANG_VERBOSE"] = "1"
    import tilelang
    from tilelang import tvm
    from tilelang.backend.module import create_backend_context
    from tilelang.cuda.backend import tilelang_callback_cuda_compile
    from tilelang.engine.lower import lower_with_context
    from tilelang.transform import PassConfigKey
    from tilelang.transform.pass_config import normalize_pass_configs

    tap = LogTap()
    logging.getLogger("tilelang").addHandler(tap)

    func, configs, flags = prim_func_of(load_function(example, fn), bindings)
    configs = normalize_pass_configs(configs)
    if flags:
        key = PassConfigKey.TL_DEVICE_COMPILE_FLAGS.value
        configs[key] = list(configs.get(key) or []) + flags
    context = create_backend_context({"kind": "cuda", "arch": arch}, None, "auto")
    with tvm.transform.PassContext(opt_level=3, config=configs), context.target:
        artifact = lower_with_context(func, context)
        source = artifact.kernel_source
        cubin = tilelang_callback_cuda_compile(source, context.target, configs)

    kernels = {}
    for gvar, dev in artifact.device_mod.functions.items():
        attrs = dev.attrs or {}
        extent = dict(attrs.get("thread_extent", {}) or {})
        threads = 1
        for axis in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
            threads *= int(extent.get(axis, 1))
        kernels[str(attrs.get("global_symbol", gvar.name_hint))] = {
            "dyn_smem": int(attrs.get("dyn_shared_memory_buf", 0) or 0),
            "threads": threads,
        }
    ws = None
    for _, host in artifact.host_mod.functions.items():
        if host.attrs and "tl_tiled_ws_applied" in host.attrs:
            ws = bool(int(host.attrs["tl_tiled_ws_applied"]))
    ptxas = "\n".join(l for l in tap.lines if "ptxas" in l.lower() or "spill" in l)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "kernel.cu"), "w") as f:
        f.write(source)
    with open(os.path.join(out_dir, "kernel.cubin"), "wb") as f:
        f.write(bytes(cubin))
    meta = {"tilelang": tilelang.__version__, "kernels": kernels, "ptxas": ptxas,
            "pass_configs": {str(k): str(v) for k, v in configs.items()},
            "ws_applied": ws}
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def one_line(exc):
    """The most telling line of an exception, for the table.

    nvcc's first "error:" line (file name without its folder), else the last
    line that names an error (TVM puts the reason last), else the first line.
    """
    lines = [l.strip() for l in str(exc).splitlines() if l.strip()]
    for line in lines:
        m = re.match(r"(\S+\(\d+\)): error: (.*)", line)
        if m:
            return f"nvcc: {os.path.basename(m.group(1))}: {m.group(2)}"[:300]
    for line in reversed(lines):
        if "Error" in line or "error" in line:
            return line[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    example, fn, bindings, arch, out_dir = argv[1:]
    try:
        compile_upstream(example, fn, json.loads(bindings), arch, out_dir)
    except Exception as exc:  # one row of the table; the trace goes to the log
        traceback.print_exc()
        print(f"upstream: {one_line(exc)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
