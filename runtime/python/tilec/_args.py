"""Python objects -> tilec_arg: tensors (torch, numpy, __cuda_array_interface__,
DLPack) and scalars (int, float, bool)."""

import ctypes
import numbers

from . import _capi
from ._errors import INVALID_ARGUMENT, TilecError

# numpy/torch dtype names -> the runtime's names (metadata "dtype").
_RENAME = {
    "float8_e4m3fn": "float8_e4m3",
    "float8_e5m2": "float8_e5m2",
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "bool_": "bool",
}

# __cuda_array_interface__ / __array_interface__ typestr kind+size -> name.
_TYPESTR = {
    "f2": "float16", "f4": "float32", "f8": "float64",
    "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
    "b1": "bool",
}

# DLPack (code, bits) -> name.
_DLPACK_DTYPES = {
    (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
    (4, 16): "bfloat16", (6, 8): "bool",
    (10, 8): "float8_e4m3", (12, 8): "float8_e5m2",
    (11, 8): "float8_e4m3fnuz", (13, 8): "float8_e5m2fnuz",
}

# Bytes per element, for checks made before the runtime sees the tensor.
ITEMSIZE = {
    "bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
    "int64": 8, "uint64": 8, "float8_e4m3": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1, "float16": 2,
    "bfloat16": 2, "float32": 4, "float64": 8,
}


def dtype_name(name):
    """A numpy/torch/runtime dtype name in the runtime's spelling."""
    name = str(name)
    if name.startswith("torch."):
        name = name[len("torch."):]
    return _RENAME.get(name, name)


class TensorView:
    """A tensor argument whose element type is given explicitly.

    NumPy has no bfloat16 or float8 types: `tilec.view(a_uint16, "bfloat16")`
    passes the raw bits of a uint16 array as bfloat16 (and a uint8 array as
    float8_e4m3 / float8_e5m2). The item sizes must agree.
    """

    def __init__(self, obj, dtype):
        self.obj = obj
        self.dtype = dtype_name(dtype)
        if self.dtype not in ITEMSIZE:
            raise TilecError(INVALID_ARGUMENT, "tilec.view: unknown dtype %r" % (dtype,))

    def __repr__(self):
        return "tilec.view(%s, %r)" % (type(self.obj).__name__, self.dtype)


def view(obj, dtype):
    return TensorView(obj, dtype)


class _Tensor:
    """What a tensor argument resolves to before it becomes a tilec_arg."""

    def __init__(self, data, dtype, shape, strides, device_type, device_id, itemsize=None,
                 contiguous=None, keep=None):
        self.data = data or 0
        self.dtype = dtype
        self.shape = [int(s) for s in shape]
        self.strides = None if strides is None else [int(s) for s in strides]  # elements
        self.device_type = device_type
        self.device_id = device_id
        self.itemsize = itemsize
        self.contiguous = contiguous
        self.keep = keep  # objects that must live until the launch returns


def is_c_contiguous(shape, strides):
    """Row-major contiguity, in elements; dims of size 1 may have any stride."""
    if strides is None:
        return True
    if any(s == 0 for s in shape):
        return True
    expected = 1
    for size, stride in reversed(list(zip(shape, strides))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _byte_strides_to_elems(byte_strides, itemsize, what):
    out = []
    for s in byte_strides:
        if s % itemsize:
            raise TilecError(
                INVALID_ARGUMENT, "%s: stride of %d bytes is not a multiple of the %d-byte "
                "element" % (what, s, itemsize))
        out.append(s // itemsize)
    return out


def _is_torch_tensor(obj):
    mod = type(obj).__module__ or ""
    return mod.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "stride")


def _from_torch(obj, what):
    dev = obj.device
    if dev.type == "cpu":
        dt, did = _capi.DEVICE_CPU, 0
    elif dev.type == "cuda":
        import torch  # only reached with torch tensors
        dt = _capi.DEVICE_HIP if getattr(torch.version, "hip", None) else _capi.DEVICE_CUDA
        did = dev.index if dev.index is not None else torch.cuda.current_device()
    else:
        raise TilecError(INVALID_ARGUMENT,
                         "%s: a torch tensor on device %s; tilec runs on cuda, hip and the "
                         "emulator (cpu)" % (what, dev))
    shape = list(obj.shape)
    strides = list(obj.stride())
    return _Tensor(obj.data_ptr(), dtype_name(obj.dtype), shape, strides, dt, did,
                   itemsize=obj.element_size(), contiguous=obj.is_contiguous(), keep=obj)


def _from_interface(iface, what, device_type, device_id, keep):
    typestr = iface["typestr"]
    key = typestr[1:]
    if key not in _TYPESTR:
        raise TilecError(
            INVALID_ARGUMENT,
            "%s: element type %r has no tilec dtype (use tilec.view(x, dtype) for bfloat16 or "
            "float8 bits)" % (what, typestr))
    dtype = _TYPESTR[key]
    if typestr[0] == ">":
        raise TilecError(INVALID_ARGUMENT, "%s: big-endian data" % what)
    itemsize = int(key[1:])
    shape = list(iface["shape"])
    data = iface["data"][0] if iface.get("data") else 0
    if iface.get("offset"):
        data += iface["offset"]
    strides = iface.get("strides")
    if strides is not None:
        strides = _byte_strides_to_elems(strides, itemsize, what)
    return _Tensor(data, dtype, shape, strides, device_type, device_id, itemsize=itemsize,
                   contiguous=is_c_contiguous(shape, strides), keep=keep)


def _from_numpy(obj, what):
    import numpy as np  # only reached with numpy arrays
    name = dtype_name(obj.dtype.name)
    if obj.dtype.byteorder == ">":
        raise TilecError(INVALID_ARGUMENT, "%s: big-endian data" % what)
    if name not in ITEMSIZE:
        raise TilecError(
            INVALID_ARGUMENT, "%s: numpy dtype %s has no tilec dtype (use tilec.view(x, dtype) "
            "for bfloat16 or float8 bits)" % (what, obj.dtype))
    strides = _byte_strides_to_elems(obj.strides, obj.itemsize, what)
    return _Tensor(obj.ctypes.data, name, obj.shape, strides, _capi.DEVICE_CPU, 0,
                   itemsize=obj.itemsize, contiguous=bool(obj.flags.c_contiguous), keep=obj)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


def _from_dlpack(obj, what):
    capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ptr = get(capsule, b"dltensor")
    # DLManagedTensor starts with its DLTensor. The capsule keeps it alive and
    # calls its deleter when collected (we never rename it "used_dltensor").
    t = _DLTensor.from_address(ptr)
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _DLPACK_DTYPES:
        raise TilecError(INVALID_ARGUMENT, "%s: DLPack dtype code %d bits %d lanes %d has no "
                         "tilec dtype" % (what, t.dtype.code, t.dtype.bits, t.dtype.lanes))
    dtype = _DLPACK_DTYPES[key]
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    dev = t.device.device_type
    if dev in (_capi.DEVICE_CUDA_HOST,):
        dev = _capi.DEVICE_CPU
    elif dev == _capi.DEVICE_CUDA_MANAGED:
        dev = _capi.DEVICE_CUDA
    data = (t.data or 0) + t.byte_offset
    return _Tensor(data, dtype, shape, strides, dev, t.device.device_id,
                   itemsize=ITEMSIZE.get(dtype), contiguous=is_c_contiguous(shape, strides),
                   keep=capsule)


def resolve_tensor(obj, what, device):
    """The _Tensor an argument object describes, or None if it is no tensor."""
    if _is_torch_tensor(obj):
        return _from_torch(obj, what)
    if hasattr(obj, "__cuda_array_interface__"):
        # Device memory, whatever the kernel's device: HIP's on a HIP device
        # (ROCm builds of CuPy expose the same interface), else CUDA's. It has
        # no device id; the runtime confirms the pointer's device with the driver.
        mem = _capi.DEVICE_HIP if device.kind == "hip" else _capi.DEVICE_CUDA
        return _from_interface(obj.__cuda_array_interface__, what, mem,
                               device.ordinal if device.kind != "emulator" else 0, obj)
    if type(obj).__module__ == "numpy" and hasattr(obj, "ctypes") and hasattr(obj, "dtype"):
        return _from_numpy(obj, what)
    if hasattr(obj, "__array_interface__"):
        return _from_interface(obj.__array_interface__, what, _capi.DEVICE_CPU, 0, obj)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, what)
    return None


def build_arg(obj, what, device):
    """(TilecArg, keepalive) for one argument; `what` names the parameter."""
    arg = _capi.TilecArg()
    dtype_override = None
    if isinstance(obj, TensorView):
        dtype_override = obj.dtype
        obj = obj.obj
    if (dtype_override is None and type(obj).__module__ == "numpy" and
            not hasattr(obj, "ctypes") and hasattr(obj, "item")):
        obj = obj.item()  # a numpy scalar (np.float32(2.0), np.bool_(True), ...)
    if dtype_override is None and isinstance(obj, (bool, numbers.Integral)):
        arg.kind = _capi.TILEC_ARG_INT
        arg.int_value = int(obj)
        return arg, None
    if dtype_override is None and isinstance(obj, numbers.Real):
        arg.kind = _capi.TILEC_ARG_FLOAT
        arg.float_value = float(obj)
        return arg, None
    t = resolve_tensor(obj, what, device)
    if t is None:
        raise TilecError(
            INVALID_ARGUMENT,
            "%s: cannot pass a %s.%s: expected a torch tensor, a numpy array, an object with "
            "__cuda_array_interface__ or __dlpack__, or an int/float for a scalar" %
            (what, type(obj).__module__, type(obj).__name__))
    if dtype_override is not None:
        if t.itemsize is not None and ITEMSIZE[dtype_override] != t.itemsize:
            raise TilecError(
                INVALID_ARGUMENT, "%s: tilec.view as %s needs %d-byte elements, the array has "
                "%d-byte %s" % (what, dtype_override, ITEMSIZE[dtype_override], t.itemsize,
                                t.dtype))
        t.dtype = dtype_override
    if t.device_type == _capi.DEVICE_CPU and device.memory_type != _capi.DEVICE_CPU:
        raise TilecError(
            INVALID_ARGUMENT,
            "%s: host memory (a numpy array or CPU tensor) cannot be passed to a kernel on %s; "
            "pass device memory (a torch CUDA tensor or an object with __cuda_array_interface__)"
            ", or open the kernel on device=\"emulator\"" % (what, device.name))
    keep = [t.keep, t.dtype.encode()]
    arg.kind = _capi.TILEC_ARG_TENSOR
    arg.dtype = keep[1]
    arg.data = t.data
    arg.ndim = len(t.shape)
    shape = (ctypes.c_int64 * max(1, len(t.shape)))(*t.shape)
    keep.append(shape)
    arg.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    if t.strides is not None and not (t.contiguous and is_c_contiguous(t.shape, t.strides)):
        # Only a layout the runtime must refuse is passed on; it names the parameter.
        strides = (ctypes.c_int64 * max(1, len(t.strides)))(*t.strides)
        keep.append(strides)
        arg.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    arg.device_type = t.device_type
    arg.device_id = t.device_id
    return arg, keep
