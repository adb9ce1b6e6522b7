"""Devices: "cuda:N", "hip:N" or "emulator", opened once per process."""

import ctypes
import json
import threading

from . import _capi
from ._errors import INVALID_ARGUMENT, TilecError


class Device:
    """An open runtime device. Use tilec.device(name) to get the shared one."""

    def __init__(self, name):
        self.name = normalize(name)
        kind, _, ordinal = self.name.partition(":")
        self.kind = kind  # "cuda", "hip", "emulator"
        self.ordinal = int(ordinal) if ordinal else 0
        self.memory_type = {
            "cuda": _capi.DEVICE_CUDA,
            "hip": _capi.DEVICE_HIP,
        }.get(kind, _capi.DEVICE_CPU)
        self._lib = _capi.lib()
        handle = ctypes.c_void_p()
        _capi.check(self._lib.tilec_device_open(self.name.encode(), ctypes.byref(handle)),
                    "opening device %s" % self.name)
        self._handle = handle

    @property
    def handle(self):
        if self._handle is None:
            raise TilecError(9, "device %s is closed" % self.name)
        return self._handle

    @property
    def info(self):
        """{"name", "arch", "multiprocessors", "clock_khz", ...} from the runtime."""
        text = self._lib.tilec_device_info(self.handle)
        if not text:
            _capi.check(13, "device info of %s" % self.name)
        return json.loads(text.decode("utf-8"))

    def synchronize(self, stream=None):
        _capi.check(self._lib.tilec_device_synchronize(self.handle, stream_handle(stream)),
                    "synchronize %s" % self.name)

    def close(self):
        if getattr(self, "_handle", None) is not None:
            self._lib.tilec_device_close(self._handle)
            self._handle = None

    def __repr__(self):
        return "tilec.Device(%r)" % self.name


def normalize(name):
    if isinstance(name, Device):
        return name.name
    text = str(name).strip()
    if text == "cpu":
        text = "emulator"
    if text in ("cuda", "hip"):
        text += ":0"
    kind, sep, ordinal = text.partition(":")
    if text == "emulator" or (kind in ("cuda", "hip") and sep and ordinal.isdigit()):
        return text
    raise TilecError(INVALID_ARGUMENT,
                     "device %r: expected \"cuda:N\", \"hip:N\" or \"emulator\"" % (name,))


_devices = {}
_devices_lock = threading.Lock()
_default = None


def device(name=None):
    """The process's Device for `name` (default: default_device())."""
    if name is None:
        return default_device()
    if isinstance(name, Device):
        return name
    key = normalize(name)
    with _devices_lock:
        d = _devices.get(key)
        if d is None:
            d = Device(key)
            _devices[key] = d
        return d


def default_device():
    """cuda:0 when a CUDA GPU can be opened, else the emulator."""
    global _default
    if _default is None:
        _capi.lib()  # a missing library is an error, not "no GPU"
        try:
            _default = device("cuda:0")
        except TilecError:
            _default = device("emulator")
    return _default


def stream_handle(stream):
    """A CUDA/HIP stream as a void* value: None, an int, or an object with
    .cuda_stream (torch.cuda.Stream) or .ptr (cupy)."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(stream, attr, None)
        if isinstance(v, int):
            return v or None
    raise TilecError(INVALID_ARGUMENT,
                     "stream: expected an int handle or an object with .cuda_stream, got %r" %
                     (stream,))
