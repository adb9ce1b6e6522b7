"""Kernels: compile with the tilec CLI, open with the runtime, launch, time."""

import ctypes
import glob
import json
import numbers
import os
import subprocess
import tempfile

from . import _args, _capi, _discovery
from ._device import device as get_device, stream_handle
from ._errors import CompileError, INVALID_ARGUMENT, TilecError


class Param:
    """One parameter of a kernel's ABI (metadata "params")."""

    def __init__(self, d):
        self.name = d["name"]
        self.kind = d["kind"]  # "tensor" or "scalar"
        self.dtype = d["dtype"]
        # Dims are integers where static, expression strings where dynamic.
        self.shape = tuple(_static(s) for s in d.get("shape", []))

    @property
    def static_shape(self):
        """The shape as ints, or None when a dim is dynamic."""
        if all(isinstance(s, int) for s in self.shape):
            return self.shape
        return None

    def __repr__(self):
        if self.kind == "scalar":
            return "Param(%s: scalar %s)" % (self.name, self.dtype)
        return "Param(%s: %s%s)" % (self.name, self.dtype, list(self.shape))


def _static(s):
    if isinstance(s, int):
        return s
    text = str(s).strip()
    return int(text) if text.lstrip("-").isdigit() else text


class Kernel:
    """A compiled artifact opened on a device.

    kernel(*args, stream=None) launches it with one argument per parameter, in
    `kernel.params` order: tensors (torch, numpy on the emulator,
    __cuda_array_interface__ or DLPack objects) and ints/floats for scalars.
    Outputs are written into the tensors passed for them.

    verify_key: the fleet's Ed25519 public key (PEM file): the artifact is
    opened only if <base>.sig holds that key's signature of it (tilec compile
    --server writes it when tilecd signs); anything else is refused with
    PERMISSION_DENIED before the binary is loaded.
    """

    def __init__(self, json_path, device=None, verify_key=None):
        self.device = get_device(device)
        self._lib = _capi.lib()
        self._handle = None
        handle = ctypes.c_void_p()
        if verify_key is not None:
            code = self._lib.tilec_kernel_open_verified(
                self.device.handle, os.fsencode(json_path), os.fsencode(verify_key),
                ctypes.byref(handle))
        else:
            code = self._lib.tilec_kernel_open(self.device.handle, os.fsencode(json_path),
                                               ctypes.byref(handle))
        _capi.check(code, "opening %s on %s" % (json_path, self.device.name))
        self._handle = handle
        text = self._lib.tilec_kernel_metadata(handle)
        self.metadata = json.loads(text.decode("utf-8")) if text else {}
        self.params = [Param(p) for p in self.metadata.get("params", [])]
        self.config = dict(self.metadata.get("config", {}))
        self.name = self.metadata.get("program", os.path.basename(json_path))
        self.target = self.metadata.get("target")
        src = self.metadata.get("source")
        if src is None:
            cu = os.path.splitext(json_path)[0] + ".cu"
            if os.path.isfile(cu):
                with open(cu, encoding="utf-8") as f:
                    src = f.read()
        self.source = src

    # -- launching -------------------------------------------------------

    def _build(self, args):
        if len(args) != len(self.params):
            names = [p.name for p in self.params]
            if len(args) < len(self.params):
                missing = ", ".join(names[len(args):])
                detail = "missing %s" % missing
            else:
                detail = "%d too many" % (len(args) - len(self.params))
            raise TilecError(
                INVALID_ARGUMENT, "%s takes %d arguments (%s), got %d: %s" %
                (self.name, len(self.params), ", ".join(names), len(args), detail))
        arr = (_capi.TilecArg * max(1, len(args)))()
        keep = []
        for i, (p, a) in enumerate(zip(self.params, args)):
            arg, k = _args.build_arg(a, "%s: parameter %s" % (self.name, p.name), self.device)
            arr[i] = arg
            keep.append(k)
        return arr, keep

    def _stream(self, stream, args):
        if stream is not None:
            return stream_handle(stream)
        if self.device.kind != "cuda":
            return None
        for a in args:
            a = a.obj if isinstance(a, _args.TensorView) else a
            if _args._is_torch_tensor(a) and a.device.type == "cuda":
                import torch
                return torch.cuda.current_stream(a.device).cuda_stream or None
        return None

    def __call__(self, *args, stream=None):
        arr, keep = self._build(args)
        _capi.check(
            self._lib.tilec_kernel_launch(self.handle, arr, len(args), self._stream(stream, args)),
            None)
        del keep

    def time(self, *args, warmup=3, iterations=20, flush_cache=True, stream=None):
        """Milliseconds of each of `iterations` timed runs (device events; CPU
        wall time on the emulator), after `warmup` untimed ones, the
        last-level cache flushed before each when flush_cache."""
        if iterations < 1:
            raise TilecError(INVALID_ARGUMENT, "time: iterations must be >= 1")
        arr, keep = self._build(args)
        ms = (ctypes.c_double * iterations)()
        _capi.check(
            self._lib.tilec_kernel_time(self.handle, arr, len(args), self._stream(stream, args),
                                        int(warmup), int(iterations), 1 if flush_cache else 0, ms),
            None)
        del keep
        return list(ms)

    # -- lifetime --------------------------------------------------------

    @property
    def handle(self):
        if self._handle is None:
            raise TilecError(9, "kernel %s is closed" % self.name)
        return self._handle

    def close(self):
        if getattr(self, "_handle", None) is not None:
            self._lib.tilec_kernel_close(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "tilec.Kernel(%s, target=%s, device=%s, params=%s)" % (
            self.name, self.target, self.device.name, [p.name for p in self.params])


def load(json_path, device=None, verify_key=None):
    """Opens an artifact written by `tilec compile --out DIR` (<base>.json);
    with verify_key, only one signed by that key (see Kernel)."""
    return Kernel(json_path, device, verify_key)


# -- compiling -----------------------------------------------------------


def render_value(v):
    """A binding as the Python literal `tilec compile -D name=value` reads."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        if f != f or f in (float("inf"), float("-inf")):
            raise TilecError(INVALID_ARGUMENT, "binding %r: not a finite number" % (v,))
        return repr(f)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (tuple, list)):
        inner = ",".join(render_value(x) for x in v)
        return "(%s,)" % inner if isinstance(v, tuple) and len(v) == 1 else (
            "(%s)" % inner if isinstance(v, tuple) else "[%s]" % inner)
    mod = type(v).__module__ or ""
    if mod.startswith("torch") and type(v).__name__ == "dtype":
        return _args.dtype_name(v)
    if mod.startswith("numpy") or (isinstance(v, type) and (v.__module__ or "").startswith(
            "numpy")):
        import numpy as np
        return _args.dtype_name(np.dtype(v).name)
    raise TilecError(INVALID_ARGUMENT, "binding %r: cannot render a %s as a literal" %
                     (v, type(v).__name__))


def default_target(dev):
    if dev.kind == "emulator":
        return "sm_80"
    arch = str(dev.info.get("arch", ""))
    if dev.kind == "cuda" and arch.startswith("sm_"):
        digits = "".join(c for c in arch[3:] if c.isdigit())
        cc = int(digits) if digits else 0
        if cc == 90:
            return "sm_90a"
        if 80 <= cc < 90:
            return "sm_80"
    raise TilecError(
        9, "no default tilec target for %s (arch %s): tilec builds sm_80 and sm_90a; pass "
        "target=" % (dev.name, arch or "unknown"))


def compile_command(path, fn, target, out_dir, server=None, cache_dir=None, unbound=(),
                    bindings=None, cli=None, verify_key=None):
    cmd = [cli or _discovery.find_cli(), "compile", os.fspath(path), "--fn", fn]
    for k, v in (bindings or {}).items():
        cmd += ["-D", "%s=%s" % (k, render_value(v))]
    for u in unbound:
        cmd += ["-U", u]
    cmd += ["--target", target, "--out", os.fspath(out_dir)]
    if server:
        cmd += ["--server", server]
    if cache_dir:
        cmd += ["--cache_dir", os.fspath(cache_dir)]
    if verify_key:
        cmd += ["--verify_key", os.fspath(verify_key)]
    return cmd


def compile(path, fn, target=None, server=None, device=None, cache_dir=None, unbound=(),
            out_dir=None, timeout=None, verify_key=None, **bindings):
    """Compiles function `fn` of the TileLang file `path` with the tilec CLI
    and opens the artifact on `device`; keyword arguments bind the function's
    parameters (tilec compile -D name=value).

    target: "sm_80" or "sm_90a" (default: from the device's arch; sm_80 on
    the emulator). server: HOST:PORT of a tilecd (default: the CLI's embedded
    cache, or $TILEC_SERVER). out_dir: keep the artifact there (default: a
    temporary folder, removed once the kernel is open). verify_key: the
    fleet's public key (PEM): the server's result must carry its signature,
    checked by the CLI and again when the artifact is opened (needs server).

    Raises CompileError (the CLI's diagnostic in .stderr) or TilecError.
    """
    dev = get_device(device)
    if target is None:
        target = default_target(dev)
    if isinstance(unbound, str):
        unbound = [unbound]
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="tilec-py-")
        out_dir = tmp.name
    try:
        cmd = compile_command(path, fn, target, out_dir, server, cache_dir, unbound, bindings,
                              verify_key=verify_key)
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise CompileError(124, "tilec compile did not finish within %s s" % timeout, cmd,
                               (e.stdout or b"").decode("utf-8", "replace")) from None
        stdout = proc.stdout.decode("utf-8", "replace")
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0:
            raise CompileError(proc.returncode, stderr, cmd, stdout)
        json_path = os.path.join(out_dir, "%s.%s.json" % (fn, target))
        if not os.path.isfile(json_path):
            found = sorted(glob.glob(os.path.join(out_dir, "*.%s.json" % target)))
            if len(found) != 1:
                raise CompileError(
                    0, "tilec compile succeeded but wrote no %s.%s.json in %s (found %s)\n%s" %
                    (fn, target, out_dir, found or "nothing", stderr), cmd, stdout)
            json_path = found[0]
        kernel = Kernel(json_path, dev, verify_key)
        kernel.compile_output = stdout
        kernel.artifact_path = None if tmp else json_path
        return kernel
    finally:
        if tmp is not None:
            tmp.cleanup()
