"""numpy helpers for tests and benchmarks on the emulator: bfloat16 and
float8 bits (numpy has neither type), int4 packing, dtype-fitted tolerances.

Inputs are drawn as values exactly representable in the kernel's dtype, so a
float64 reference computed from them sees exactly what the kernel read.
"""

import numpy as np

# Unit roundoff (half an ulp at 1.0) of each element type.
UNIT_ROUNDOFF = {
    "float8_e4m3": 2.0**-4,
    "float8_e5m2": 2.0**-3,
    "float8_e4m3fnuz": 2.0**-4,
    "float8_e5m2fnuz": 2.0**-3,
    "bfloat16": 2.0**-8,
    "float16": 2.0**-11,
    "float32": 2.0**-24,
    "float64": 2.0**-53,
}

NUMPY_DTYPES = {
    "float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8,
    "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
    "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64, "bool": np.bool_,
}

# The numpy storage type of each runtime dtype (bits for bfloat16 and float8).
STORAGE = dict(NUMPY_DTYPES, bfloat16=np.uint16, float8_e4m3=np.uint8, float8_e5m2=np.uint8,
               float8_e4m3fnuz=np.uint8, float8_e5m2fnuz=np.uint8)


# -- bfloat16 -----------------------------------------------------------------


def bf16_bits(x):
    """float values -> uint16 bfloat16 bits, rounded to nearest even."""
    f = np.ascontiguousarray(x, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(f)
    out = rounded.astype(np.uint16)
    out[nan] = 0x7FC0
    return out


def bf16_to_float(bits):
    """uint16 bfloat16 bits -> float32 values."""
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


# -- float8 -------------------------------------------------------------------


def _fp8_table(exp_bits, man_bits, bias, ieee_inf, fnuz=False):
    vals = np.empty(256, dtype=np.float64)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        e = (b >> man_bits) & ((1 << exp_bits) - 1)
        m = b & ((1 << man_bits) - 1)
        emax = (1 << exp_bits) - 1
        if fnuz:
            if b == 0x80:
                vals[b] = np.nan  # fnuz: no -0, no infinities; 0x80 is the NaN
            elif e == 0:
                vals[b] = sign * m / (1 << man_bits) * 2.0**(1 - bias)
            else:
                vals[b] = sign * (1 + m / (1 << man_bits)) * 2.0**(e - bias)
        elif ieee_inf and e == emax:
            vals[b] = sign * np.inf if m == 0 else np.nan
        elif not ieee_inf and e == emax and m == (1 << man_bits) - 1:
            vals[b] = np.nan  # e4m3fn: S.1111.111 is NaN, no infinities
        elif e == 0:
            vals[b] = sign * m / (1 << man_bits) * 2.0**(1 - bias)
        else:
            vals[b] = sign * (1 + m / (1 << man_bits)) * 2.0**(e - bias)
    return vals


FP8_VALUES = {
    "float8_e4m3": _fp8_table(4, 3, 7, False),
    "float8_e5m2": _fp8_table(5, 2, 15, True),
    "float8_e4m3fnuz": _fp8_table(4, 3, 8, False, fnuz=True),
    "float8_e5m2fnuz": _fp8_table(5, 2, 16, False, fnuz=True),
}


def fp8_to_float(bits, dtype):
    """uint8 float8 bits -> float64 values."""
    return FP8_VALUES[dtype][np.asarray(bits, dtype=np.uint8)]


def fp8_random_bits(rng, shape, dtype, max_abs=4.0):
    """Random float8 bits of finite values with |v| <= max_abs."""
    table = FP8_VALUES[dtype]
    ok = np.flatnonzero(np.isfinite(table) & (np.abs(table) <= max_abs))
    return ok[rng.integers(0, len(ok), size=shape)].astype(np.uint8)


# -- int4 -----------------------------------------------------------------------


def pack_int4(w):
    """(N, K) ints in [-8, 7] -> (N, K // 2) uint8: element 2b in the low nibble of
    byte b, 2b + 1 in the high nibble."""
    u = (np.asarray(w).astype(np.int16) & 0xF).astype(np.uint8)
    return u[:, 0::2] | (u[:, 1::2] << 4)


# -- random inputs and decoding ---------------------------------------------------


def random_tensor(rng, shape, dtype, scale=1.0):
    """(storage array to pass, float64 values it holds) for a random tensor of
    `dtype`; the storage array is passed with tilec.view when it holds bits."""
    x = rng.standard_normal(shape) * scale
    if dtype == "bfloat16":
        bits = bf16_bits(x)
        return bits, bf16_to_float(bits).astype(np.float64)
    if dtype in FP8_VALUES:
        bits = fp8_random_bits(rng, shape, dtype, max_abs=4.0 * scale)
        return bits, fp8_to_float(bits, dtype)
    if dtype.startswith("float"):
        a = x.astype(NUMPY_DTYPES[dtype])
        return a, a.astype(np.float64)
    a = rng.integers(-8, 8, size=shape).astype(NUMPY_DTYPES[dtype])
    return a, a.astype(np.float64)


def empty(shape, dtype, fill=None):
    """A storage array for an output of `dtype` (NaN-filled for floats by
    default, so that an element the kernel never writes shows up)."""
    a = np.zeros(shape, dtype=STORAGE[dtype])
    if fill is None and dtype in ("float16", "float32", "float64"):
        a[...] = np.nan
    elif fill is None and dtype == "bfloat16":
        a[...] = 0x7FC0
    elif fill is not None:
        a[...] = fill
    return a


def to_float(a, dtype):
    """A storage array of `dtype` -> float64 values."""
    if dtype == "bfloat16":
        return bf16_to_float(a).astype(np.float64)
    if dtype in FP8_VALUES:
        return fp8_to_float(a, dtype)
    return np.asarray(a).astype(np.float64)


def round_to(x, dtype):
    """float64 values rounded to `dtype` and back (what storing them does)."""
    if dtype == "bfloat16":
        return bf16_to_float(bf16_bits(x)).astype(np.float64)
    return np.asarray(x).astype(NUMPY_DTYPES[dtype]).astype(np.float64)


def tolerance(out_dtype, ref, accum_dtype="float32", terms=1, ulps=2.0):
    """(atol, rtol) for a result stored in `out_dtype`: `ulps` roundings of the
    output plus an accumulation error of `terms` additions in accum_dtype,
    scaled by the largest magnitude of the reference."""
    u_out = UNIT_ROUNDOFF[out_dtype]
    u_acc = UNIT_ROUNDOFF.get(accum_dtype, 2.0**-24)
    scale = float(np.max(np.abs(ref))) if np.size(ref) else 1.0
    rtol = ulps * u_out
    atol = (terms * u_acc * 4 + u_out) * max(scale, 1e-30)
    return atol, rtol


def compare(got, ref, atol, rtol):
    """(ok, max abs error, index of the worst element, message)."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return False, np.inf, None, "shape %s != reference %s" % (got.shape, ref.shape)
    err = np.abs(got - ref)
    err = np.where(np.isnan(got) & ~np.isnan(ref), np.inf, err)
    bound = atol + rtol * np.abs(ref)
    bad = ~(err <= bound)
    max_err = float(np.max(err)) if err.size else 0.0
    if not bad.any():
        return True, max_err, None, "max error %.3g (atol %.3g, rtol %.3g)" % (max_err, atol, rtol)
    idx = np.unravel_index(np.argmax(np.where(bad, err - bound, -np.inf)), err.shape)
    return False, max_err, idx, ("%d of %d elements out of tolerance; worst at %s: got %r, "
                                 "expected %r (atol %.3g, rtol %.3g)" %
                                 (int(bad.sum()), err.size, tuple(int(i) for i in idx),
                                  float(got[idx]), float(ref[idx]), atol, rtol))
