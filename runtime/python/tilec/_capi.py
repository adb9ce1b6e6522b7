"""ctypes declarations of the runtime's C API (runtime/c_api.h)."""

import ctypes
import threading

from . import _discovery
from ._errors import TilecError

C_API_VERSION = 1

TILEC_ARG_TENSOR = 0
TILEC_ARG_INT = 1
TILEC_ARG_FLOAT = 2

# DLPack's device type codes.
DEVICE_CPU = 1
DEVICE_CUDA = 2
DEVICE_HIP = 10
# DLPack codes that share memory with one of the above.
DEVICE_CUDA_HOST = 3
DEVICE_CUDA_MANAGED = 13


class TilecArg(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("dtype", ctypes.c_char_p),
        ("data", ctypes.c_void_p),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("int_value", ctypes.c_int64),
        ("float_value", ctypes.c_double),
    ]


_P = ctypes.c_void_p
_lock = threading.Lock()
_lib = None
_lib_path = None


def _declare(lib):
    sigs = {
        "tilec_c_api_version": (ctypes.c_int, []),
        "tilec_last_error": (ctypes.c_char_p, []),
        "tilec_device_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P)]),
        "tilec_device_info": (ctypes.c_char_p, [_P]),
        "tilec_device_alloc": (ctypes.c_int, [_P, ctypes.c_uint64, ctypes.POINTER(_P)]),
        "tilec_device_free": (ctypes.c_int, [_P, _P]),
        "tilec_device_copy_to_device": (ctypes.c_int, [_P, _P, _P, ctypes.c_uint64]),
        "tilec_device_copy_to_host": (ctypes.c_int, [_P, _P, _P, ctypes.c_uint64]),
        "tilec_device_synchronize": (ctypes.c_int, [_P, _P]),
        "tilec_device_close": (None, [_P]),
        "tilec_kernel_open": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(_P)]),
        "tilec_kernel_open_verified": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p,
                                                      ctypes.POINTER(_P)]),
        "tilec_kernel_metadata": (ctypes.c_char_p, [_P]),
        "tilec_kernel_launch": (ctypes.c_int, [_P, ctypes.POINTER(TilecArg), ctypes.c_int32, _P]),
        "tilec_kernel_time": (ctypes.c_int, [
            _P, ctypes.POINTER(TilecArg), ctypes.c_int32, _P, ctypes.c_int32, ctypes.c_int32,
            ctypes.c_int32, ctypes.POINTER(ctypes.c_double)
        ]),
        "tilec_kernel_close": (None, [_P]),
    }
    for name, (restype, argtypes) in sigs.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise TilecError(
                9, "%s does not export %s: is it a tilec runtime library of another version?" %
                (_lib_path, name)) from None
        fn.restype = restype
        fn.argtypes = argtypes


def lib():
    """The loaded runtime library (found and loaded on first use)."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        path = _discovery.find_runtime_library()
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            raise TilecError(
                9, "cannot load the tilec runtime library %s: %s (are its shared libraries on "
                "LD_LIBRARY_PATH?)" % (path, e)) from None
        _lib_path = path
        _declare(handle)
        version = handle.tilec_c_api_version()
        if version != C_API_VERSION:
            raise TilecError(
                9, "%s has C API version %d; this package speaks version %d" %
                (path, version, C_API_VERSION))
        _lib = handle
        return _lib


def lib_path():
    lib()
    return _lib_path


def last_error():
    msg = lib().tilec_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def check(code, what=None):
    """Raises TilecError for a non-zero status from the C API."""
    if code != 0:
        msg = last_error() or "(the runtime gave no message)"
        if what:
            msg = "%s: %s" % (what, msg)
        raise TilecError(code, msg)
