"""Tests of the tilec Python package on the SIMT emulator (no GPU needed).

Run from the repository root, with a build in build/ (or TILEC_BUILD_DIR):

    TILEC_BUILD_DIR=build python3 -m unittest discover -s tests/python -v

Inputs are random with a printed seed; set TILEC_TEST_SEED to replay one.
Every kernel is compiled once per run into a private cache folder.
"""

import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLES = os.path.join(REPO, "examples")

try:
    import tilec
except ImportError:  # not installed: use the source tree's package
    sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
    import tilec
from tilec import _discovery

import numpy as np
from tilec import testing as tt

SEED = int(os.environ.get("TILEC_TEST_SEED", random.SystemRandom().randrange(1 << 31)))
print("test_tilec: seed %d (TILEC_TEST_SEED=%d replays it)" % (SEED, SEED), file=sys.stderr)

_cache_dir = None
_kernels = {}


def setUpModule():
    global _cache_dir
    _cache_dir = tempfile.mkdtemp(prefix="tilec-pytest-cache-")


def tearDownModule():
    for k in _kernels.values():
        k.close()
    _kernels.clear()
    if _cache_dir:
        shutil.rmtree(_cache_dir, ignore_errors=True)


def read_cases():
    cases = {}
    with open(os.path.join(EXAMPLES, "cases.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, path, fn, *binds = line.split()
            bindings = {}
            for b in binds:
                k, v = b.split("=", 1)
                try:
                    bindings[k] = ast.literal_eval(v)
                except (ValueError, SyntaxError):
                    bindings[k] = v  # a bare dtype name
            cases[name] = (os.path.join(EXAMPLES, path), fn, bindings)
    return cases


CASES = read_cases()


def kernel(case):
    """The case's kernel on the emulator, compiled once per run."""
    if case not in _kernels:
        path, fn, bindings = CASES[case]
        _kernels[case] = tilec.compile(path, fn, device="emulator", cache_dir=_cache_dir,
                                       **bindings)
    return _kernels[case]


def rng_for(test_name):
    return np.random.default_rng([SEED, sum(map(ord, test_name))])


def arg(storage, dtype):
    """The argument for a storage array: bits arrays are passed with tilec.view."""
    return tilec.view(storage, dtype) if dtype in ("bfloat16", "float8_e4m3",
                                                   "float8_e5m2") else storage


class NumericsTest(unittest.TestCase):
    """Kernels from examples/ against float64 numpy references."""

    def check(self, got, ref, atol, rtol, what):
        ok, max_err, _, msg = tt.compare(got, ref, atol, rtol)
        self.assertTrue(ok, "%s (seed %d): %s" % (what, SEED, msg))
        return max_err

    def run_elementwise_add(self, case):
        _, _, b = CASES[case]
        k = kernel(case)
        rng = rng_for(case)
        shape = (b["M"], b["N"])
        a_s, a = tt.random_tensor(rng, shape, b["in_dtype"])
        b_s, bb = tt.random_tensor(rng, shape, b["in_dtype"])
        c_s = tt.empty(shape, b["out_dtype"])
        k(arg(a_s, b["in_dtype"]), arg(b_s, b["in_dtype"]), arg(c_s, b["out_dtype"]))
        # The sum is rounded to in_dtype, then converted to out_dtype.
        ref = tt.round_to(tt.round_to(a + bb, b["in_dtype"]), b["out_dtype"])
        # bfloat16 sums may be double-rounded through float32: one ulp.
        ulp = 2 * tt.UNIT_ROUNDOFF[b["in_dtype"]]
        got = tt.to_float(c_s, b["out_dtype"])
        self.check(got, ref, 0.0, ulp, case)

    def test_elementwise_add_float16_to_float32(self):
        self.run_elementwise_add("elementwise_add_small")

    def test_elementwise_add_bfloat16_ragged(self):
        self.run_elementwise_add("elementwise_add_ragged")

    def run_softmax(self, case):
        _, _, b = CASES[case]
        k = kernel(case)
        rng = rng_for(case)
        shape = (b["M"], b["N"])
        x_s, x = tt.random_tensor(rng, shape, b["dtype"], scale=2.0)
        y_s = tt.empty(shape, b["dtype"])
        k(arg(x_s, b["dtype"]), arg(y_s, b["dtype"]))
        e = np.exp(x - x.max(axis=1, keepdims=True))
        ref = e / e.sum(axis=1, keepdims=True)
        got = tt.to_float(y_s, b["dtype"])
        # Output rounding plus exp2's error in float32, relative to each value.
        rtol = 2 * tt.UNIT_ROUNDOFF[b["dtype"]] + 1e-5
        self.check(got, ref, 1e-6, rtol, case)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=b["N"] * 1e-3)

    def test_softmax_small(self):
        self.run_softmax("softmax_small")

    def test_softmax_ragged(self):
        self.run_softmax("softmax_ragged")

    def gemm_inputs(self, case):
        _, _, b = CASES[case]
        rng = rng_for(case)
        M, N, K = b["M"], b["N"], b["K"]
        a_shape = (K, M) if b["transpose_A"] else (M, K)
        b_shape = (N, K) if b["transpose_B"] else (K, N)
        a_s, a = tt.random_tensor(rng, a_shape, b["dtype"])
        b_s, bm = tt.random_tensor(rng, b_shape, b["dtype"])
        ref = (a.T if b["transpose_A"] else a) @ (bm.T if b["transpose_B"] else bm)
        return b, a_s, b_s, ref

    def run_gemm(self, case):
        b, a_s, b_s, ref = self.gemm_inputs(case)
        k = kernel(case)
        c_s = tt.empty((b["M"], b["N"]), b["dtype"])
        k(arg(a_s, b["dtype"]), arg(b_s, b["dtype"]), arg(c_s, b["dtype"]))
        atol, rtol = tt.tolerance(b["dtype"], ref, b["accum_dtype"], terms=b["K"])
        self.check(tt.to_float(c_s, b["dtype"]), ref, atol, rtol, case)
        return c_s

    def test_gemm_float16_ragged(self):
        self.run_gemm("gemm_f16_nn_ragged")

    def test_gemm_float16_transposed_b_ragged(self):
        self.run_gemm("gemm_f16_nt_ragged")

    def test_gemm_bfloat16_transposed_ragged(self):
        self.run_gemm("gemm_bf16_tt_ragged")

    def test_gemm_fp8(self):
        case = "gemm_fp8_mixed_nn_ragged"
        _, _, b = CASES[case]
        rng = rng_for(case)
        M, N, K = b["M"], b["N"], b["K"]
        a_s, a = tt.random_tensor(rng, (M, K), b["a_dtype"])
        b_shape = (N, K) if b["transpose_B"] else (K, N)
        b_s, bm = tt.random_tensor(rng, b_shape, b["b_dtype"])
        c_s = tt.empty((M, N), "float32")
        kernel(case)(arg(a_s, b["a_dtype"]), arg(b_s, b["b_dtype"]), c_s)
        ref = a @ (bm.T if b["transpose_B"] else bm)
        atol, rtol = tt.tolerance("float32", ref, "float32", terms=K)
        self.check(c_s, ref, atol, rtol, case)

    def test_gemm_matches_interpreter(self):
        """The emulated artifact and `tilec run --interp` agree on the same inputs."""
        case = "gemm_f16_nn_ragged"
        path, fn, bindings = CASES[case]
        b, a_s, b_s, _ = self.gemm_inputs(case)
        c_s = self.run_gemm(case)
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "a.npy"), a_s)
            np.save(os.path.join(d, "b.npy"), b_s)
            cmd = [tilec.find_cli(), "run", path, "--fn", fn]
            for k, v in bindings.items():
                cmd += ["-D", "%s=%s" % (k, tilec.render_value(v))]
            cmd += ["--interp", "--in", os.path.join(d, "a.npy"), "--in",
                    os.path.join(d, "b.npy"), "--out", os.path.join(d, "out")]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            interp = np.load(os.path.join(d, "out", "C.npy")).astype(np.float64)
        got = c_s.astype(np.float64)
        # Both accumulate in float32 (perhaps in another order): one float16 ulp.
        self.check(got, interp, 0.0, 2 * tt.UNIT_ROUNDOFF["float16"], case + " vs interpreter")


class Float8FnuzTest(unittest.TestCase):
    """AMD's float8 (fnuz) in the Python helpers: bias 8 / 16, so 1.0 is 0x40;
    no infinities and no -0 (0x80 is the NaN); views of uint8 bits."""

    def test_tables(self):
        e4 = tt.FP8_VALUES["float8_e4m3fnuz"]
        e5 = tt.FP8_VALUES["float8_e5m2fnuz"]
        for table, top, tiny in ((e4, 240.0, 2.0**-10), (e5, 57344.0, 2.0**-17)):
            self.assertEqual(table[0x40], 1.0)
            self.assertEqual(table[0x7F], top)
            self.assertEqual(table[0xFF], -top)
            self.assertEqual(table[0x01], tiny)
            self.assertEqual(table[0x00], 0.0)
            self.assertTrue(np.isnan(table[0x80]))
            self.assertEqual(int(np.isnan(table).sum()), 1)
            self.assertFalse(np.isinf(table).any())

    def test_views(self):
        bits = np.array([0x40, 0x80], dtype=np.uint8)
        for name in ("float8_e4m3fnuz", "float8_e5m2fnuz", "torch.float8_e4m3fnuz"):
            self.assertIn(tilec.view(bits, name).dtype, ("float8_e4m3fnuz", "float8_e5m2fnuz"))


class SignedArtifactTest(unittest.TestCase):
    """Artifacts from a tilecd that signs (--signing_key), opened only with
    the fleet's public key: verify_key refuses another key's signature, a
    changed metadata file and a missing signature before loading."""

    @classmethod
    def setUpClass(cls):
        build = os.environ.get("TILEC_BUILD_DIR", os.path.join(REPO, "build"))
        tilecd = os.path.join(build, "server", "tilecd")
        if not os.access(tilecd, os.X_OK) or not shutil.which("openssl"):
            raise unittest.SkipTest("needs %s and openssl" % tilecd)
        cls.dir = tempfile.mkdtemp(prefix="tilec-pytest-signed-")
        for name in ("fleet", "other"):
            key = os.path.join(cls.dir, name + ".pem")
            subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", key],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out",
                            os.path.join(cls.dir, name + ".pub.pem")], check=True)
        port_file = os.path.join(cls.dir, "port")
        cls.server_proc = subprocess.Popen(
            [tilecd, "--cache_dir=" + os.path.join(cls.dir, "cache"), "--host=127.0.0.1",
             "--port=0", "--port_file=" + port_file, "--metrics_port=-1",
             "--signing_key=" + os.path.join(cls.dir, "fleet.pem")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = ""
        for _ in range(600):
            if os.path.isfile(port_file):
                with open(port_file) as f:
                    port = f.read().strip()
            if port or cls.server_proc.poll() is not None:
                break
            time.sleep(0.05)
        if not port:
            cls.tearDownClass()
            raise AssertionError("tilecd did not start")
        cls.server = "127.0.0.1:" + port

    @classmethod
    def tearDownClass(cls):
        cls.server_proc.terminate()
        cls.server_proc.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def key(self, name):
        return os.path.join(self.dir, name + ".pub.pem")

    def test_only_the_fleet_key_opens_the_artifact(self):
        path, fn, b = CASES["elementwise_add_small"]
        out = tempfile.mkdtemp(dir=self.dir)
        k = tilec.compile(path, fn, device="emulator", server=self.server, out_dir=out,
                          verify_key=self.key("fleet"), **b)
        base = os.path.join(out, "%s.sm_80" % fn)
        self.assertTrue(os.path.isfile(base + ".sig"))
        # It runs: C = A + B, against numpy.
        rng = rng_for("signed")
        shape = (b["M"], b["N"])
        a_s, a = tt.random_tensor(rng, shape, b["in_dtype"])
        b_s, bb = tt.random_tensor(rng, shape, b["in_dtype"])
        c_s = tt.empty(shape, b["out_dtype"])
        k(a_s, b_s, c_s)
        ref = tt.round_to(a + bb, b["in_dtype"])
        ok, _, _, msg = tt.compare(tt.to_float(c_s, b["out_dtype"]), ref, 0.0,
                                   2 * tt.UNIT_ROUNDOFF[b["in_dtype"]])
        self.assertTrue(ok, "seed %d: %s" % (SEED, msg))
        k.close()
        tilec.load(base + ".json", "emulator", verify_key=self.key("fleet")).close()

        def refused(what):
            with self.assertRaises(tilec.TilecError, msg=what) as e:
                tilec.load(base + ".json", "emulator", verify_key=self.key("fleet"))
            self.assertEqual(e.exception.code, tilec._errors.PERMISSION_DENIED, what)

        with self.assertRaises(tilec.TilecError) as e:
            tilec.load(base + ".json", "emulator", verify_key=self.key("other"))
        self.assertEqual(e.exception.code, tilec._errors.PERMISSION_DENIED)
        with open(base + ".json") as f:
            meta = f.read()
        with open(base + ".json", "w") as f:
            f.write(meta.replace('"grid"', '"grid" ', 1))  # same JSON, other bytes
        refused("changed metadata")
        tilec.load(base + ".json", "emulator").close()  # unverified: opens
        with open(base + ".json", "w") as f:
            f.write(meta)
        os.unlink(base + ".sig")
        refused("no signature")

    def test_the_cli_refuses_a_result_the_key_did_not_sign(self):
        path, fn, b = CASES["elementwise_add_small"]
        with self.assertRaises(tilec.CompileError) as e:
            tilec.compile(path, fn, device="emulator", server=self.server,
                          out_dir=tempfile.mkdtemp(dir=self.dir), verify_key=self.key("other"),
                          **b)
        self.assertIn("not signed", e.exception.stderr)


class KernelObjectTest(unittest.TestCase):

    def test_metadata_params_config_source(self):
        k = kernel("gemm_f16_nn_ragged")
        self.assertEqual([p.name for p in k.params], ["A", "B", "C"])
        self.assertEqual([p.dtype for p in k.params], ["float16"] * 3)
        self.assertEqual(k.params[0].shape, (100, 56))
        self.assertEqual(k.params[1].static_shape, (56, 72))
        self.assertEqual(k.params[2].kind, "tensor")
        self.assertEqual(k.config.get("block_M"), 64)
        self.assertEqual(k.config.get("block_K"), 32)
        self.assertEqual(k.metadata["program"], "matmul")
        self.assertEqual(k.metadata["target"], "sm_80")
        self.assertEqual(k.target, "sm_80")
        self.assertIsInstance(k.source, str)
        self.assertIn("__global__", k.source)
        self.assertEqual(k.device.name, "emulator")
        self.assertEqual(k.device.info.get("arch"), "host")
        self.assertIn("matmul", repr(k))

    def test_time_returns_each_run(self):
        case = "elementwise_add_small"
        _, _, b = CASES[case]
        k = kernel(case)
        rng = rng_for("time")
        shape = (b["M"], b["N"])
        a_s, _ = tt.random_tensor(rng, shape, "float16")
        b_s, _ = tt.random_tensor(rng, shape, "float16")
        c_s = tt.empty(shape, "float32")
        ms = k.time(a_s, b_s, c_s, warmup=1, iterations=3)
        self.assertEqual(len(ms), 3)
        for t in ms:
            self.assertGreater(t, 0.0)
        # The timed runs did run the kernel.
        self.assertFalse(np.isnan(c_s).any())

    def test_render_value(self):
        r = tilec.render_value
        self.assertEqual(r(True), "True")
        self.assertEqual(r(False), "False")
        self.assertEqual(r(64), "64")
        self.assertEqual(r(1e-6), "1e-06")
        self.assertEqual(r("float16"), '"float16"')
        self.assertEqual(r(np.float16), "float16")
        self.assertEqual(r(np.dtype("float32")), "float32")
        self.assertEqual(r((1, 2)), "(1,2)")
        with self.assertRaises(tilec.TilecError):
            r(float("nan"))


class ArgumentErrorTest(unittest.TestCase):
    """A launch the ABI does not accept raises TilecError naming the parameter."""

    case = "gemm_f16_nn_ragged"

    def setUp(self):
        self.k = kernel(self.case)
        rng = rng_for(self.id())
        self.a, _ = tt.random_tensor(rng, (100, 56), "float16")
        self.b, _ = tt.random_tensor(rng, (56, 72), "float16")
        self.c = tt.empty((100, 72), "float16")

    def assertArgError(self, args, *words):
        with self.assertRaises(tilec.TilecError) as cm:
            self.k(*args)
        msg = str(cm.exception)
        self.assertEqual(cm.exception.code, 3, msg)
        for w in words:
            self.assertIn(w, msg)
        # Nothing was written.
        self.assertTrue(np.isnan(self.c).all(), "C was written by a refused launch")
        return msg

    def test_wrong_dtype(self):
        msg = self.assertArgError((self.a.astype(np.float32), self.b, self.c), "A")
        self.assertTrue("float32" in msg or "dtype" in msg, msg)

    def test_wrong_shape(self):
        self.assertArgError((self.a, np.zeros((56, 71), np.float16), self.c), "B")

    def test_wrong_rank(self):
        self.assertArgError((self.a, self.b, self.c.reshape(-1)), "C")

    def test_non_contiguous(self):
        wide = np.zeros((100, 112), np.float16)
        wide[:, ::2] = self.a
        strided = wide[:, ::2]
        self.assertFalse(strided.flags.c_contiguous)
        self.assertArgError((strided, self.b, self.c), "A")

    def test_transposed_view(self):
        at = np.ascontiguousarray(self.a.T).T  # right shape, column-major
        self.assertArgError((at, self.b, self.c), "A")

    def test_too_few_args(self):
        msg = self.assertArgError((self.a, self.b), "C", "missing")
        self.assertIn("3", msg)

    def test_too_many_args(self):
        self.assertArgError((self.a, self.b, self.c, self.c), "too many")

    def test_scalar_for_tensor(self):
        self.assertArgError((self.a, 3, self.c), "B")

    def test_unsupported_object(self):
        self.assertArgError((self.a, "not a tensor", self.c), "B", "str")

    def test_view_itemsize_mismatch(self):
        self.assertArgError((tilec.view(self.a.astype(np.float32), "bfloat16"), self.b, self.c),
                            "A", "bfloat16")

    def test_unknown_device(self):
        with self.assertRaises(tilec.TilecError) as cm:
            tilec.device("tpu:0")
        self.assertIn("tpu:0", str(cm.exception))


class InteropTest(unittest.TestCase):
    """Tensors given through DLPack, __cuda_array_interface__ and torch."""

    case = "softmax_ragged"

    def softmax_inputs(self):
        _, _, b = CASES[self.case]
        x, xf = tt.random_tensor(rng_for(self.id()), (b["M"], b["N"]), "float16")
        e = np.exp(xf - xf.max(axis=1, keepdims=True))
        return x, e / e.sum(axis=1, keepdims=True)

    def test_dlpack(self):
        if not hasattr(np.ndarray, "__dlpack__"):
            self.skipTest("numpy without __dlpack__")

        class OnlyDlpack:  # hides numpy's other interfaces
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        x, ref = self.softmax_inputs()
        y = tt.empty(x.shape, "float16")
        kernel(self.case)(OnlyDlpack(x), OnlyDlpack(y))
        ok, _, _, msg = tt.compare(y, ref, 1e-6, 2 * tt.UNIT_ROUNDOFF["float16"] + 1e-5)
        self.assertTrue(ok, msg)

    def test_device_memory_refused_on_the_emulator(self):
        """A __cuda_array_interface__ tensor (device memory) given to an emulator
        kernel is refused, naming the parameter. In a child process: a runtime
        that dereferenced the pointer would crash the whole test run."""
        path, fn, bindings = CASES[self.case]
        code = textwrap.dedent("""\
            import sys, numpy as np, tilec
            k = tilec.compile(%r, %r, device="emulator", cache_dir=%r, **%r)
            class DeviceTensor:
                __cuda_array_interface__ = {"shape": (%d, %d), "typestr": "<f2",
                                            "data": (0xdead0000, False), "version": 3}
            y = np.zeros((%d, %d), np.float16)
            try:
                k(DeviceTensor(), y)
            except tilec.TilecError as e:
                print(e)
                sys.exit(0)
            print("launched")
            sys.exit(1)
            """) % (path, fn, _cache_dir, bindings, bindings["M"], bindings["N"], bindings["M"],
                    bindings["N"])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.dirname(os.path.dirname(tilec.__file__)), os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(proc.returncode, 0, "exit %d: %s%s" % (proc.returncode, proc.stdout,
                                                                  proc.stderr))
        self.assertIn("X", proc.stdout)
        self.assertIn("INVALID_ARGUMENT", proc.stdout)

    def test_torch_cpu_tensors(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not installed")
        x, ref = self.softmax_inputs()
        y = torch.full(x.shape, float("nan"), dtype=torch.float16)
        kernel(self.case)(torch.from_numpy(x), y)
        ok, _, _, msg = tt.compare(y.float().numpy(), ref, 1e-6,
                                   2 * tt.UNIT_ROUNDOFF["float16"] + 1e-5)
        self.assertTrue(ok, msg)
        # bfloat16 from the torch dtype, no tilec.view needed.
        case = "gemm_bf16_tt_ragged"
        _, _, b = CASES[case]
        g = torch.Generator().manual_seed(SEED)
        a = torch.randn(b["K"], b["M"], generator=g).to(torch.bfloat16)
        bm = torch.randn(b["N"], b["K"], generator=g).to(torch.bfloat16)
        c = torch.full((b["M"], b["N"]), float("nan"), dtype=torch.bfloat16)
        kernel(case)(a, bm, c)
        ref = a.double().t() @ bm.double().t()
        atol, rtol = tt.tolerance("bfloat16", ref.numpy(), terms=b["K"])
        ok, _, _, msg = tt.compare(c.double().numpy(), ref.numpy(), atol, rtol)
        self.assertTrue(ok, msg)
        # A transposed view is refused, naming the parameter.
        with self.assertRaises(tilec.TilecError) as cm:
            kernel(case)(a.t().contiguous().t(), bm, c)
        self.assertIn("A", str(cm.exception))


class CompileErrorTest(unittest.TestCase):

    def test_located_diagnostic(self):
        src = textwrap.dedent("""\
            import tilelang.language as T


            def broken(M):
                @T.prim_func
                def main(A: T.Tensor((M,), "float16")):
                    with T.Kernel(1) as bx:
                        A[0] = undefined_name + 1
                return main
            """)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "broken.py")
            with open(path, "w") as f:
                f.write(src)
            with self.assertRaises(tilec.CompileError) as cm:
                tilec.compile(path, "broken", device="emulator", cache_dir=_cache_dir, M=16)
        e = cm.exception
        self.assertNotEqual(e.returncode, 0)
        col = src.splitlines()[7].index("undefined_name") + 1
        self.assertIn("%s:8:%d" % (path, col), e.stderr)
        self.assertIn("undefined_name", e.stderr)
        self.assertIn("undefined_name", str(e))

    def test_unknown_function(self):
        with self.assertRaises(tilec.CompileError) as cm:
            tilec.compile(os.path.join(EXAMPLES, "softmax.py"), "no_such_fn", device="emulator",
                          cache_dir=_cache_dir)
        self.assertIn("no_such_fn", cm.exception.stderr)


class DiscoveryTest(unittest.TestCase):
    """Where the library and the CLI are looked for (no library needed)."""

    def test_nothing_found_lists_every_place(self):
        with tempfile.TemporaryDirectory() as d:
            fake_bin = os.path.join(d, "bin", "tilec")
            with self.assertRaises(tilec.LibraryNotFound) as cm:
                _discovery.find_runtime_library(env={}, which=lambda n: fake_bin,
                                                source_root=d)
        msg = str(cm.exception)
        self.assertIn("libtilec_runtime.so", msg)
        self.assertIn(os.path.join(d, "runtime", "libtilec_runtime.so"), msg)
        self.assertIn(os.path.join(d, "lib", "libtilec_runtime.so"), msg)
        self.assertIn(os.path.join(d, "build", "runtime", "libtilec_runtime.so"), msg)
        self.assertIn("TILEC_BUILD_DIR", msg)
        self.assertEqual(cm.exception.code, 5)

    def test_build_dir_is_authoritative(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(tilec.LibraryNotFound) as cm:
                _discovery.find_runtime_library(env={"TILEC_BUILD_DIR": d},
                                                which=lambda n: None, source_root=REPO)
            self.assertIn(os.path.join(d, "runtime", "libtilec_runtime.so"), str(cm.exception))
            with self.assertRaises(tilec.LibraryNotFound) as cm:
                _discovery.find_cli(env={"TILEC_BUILD_DIR": d}, which=lambda n: None,
                                    source_root=REPO)
            self.assertIn(os.path.join(d, "client", "tilec"), str(cm.exception))

    def test_explicit_paths_and_installed_layout(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "bin"))
            os.makedirs(os.path.join(d, "lib"))
            lib = os.path.join(d, "lib", "libtilec_runtime.so")
            cli = os.path.join(d, "bin", "tilec")
            for p in (lib, cli):
                with open(p, "w") as f:
                    f.write("")
            os.chmod(cli, 0o755)
            found = _discovery.find_runtime_library(env={}, which=lambda n: cli,
                                                    source_root=None)
            self.assertEqual(found, lib)
            self.assertEqual(
                _discovery.find_runtime_library(env={"TILEC_RUNTIME_LIB": lib},
                                                which=lambda n: None, source_root=None), lib)
            self.assertEqual(_discovery.find_cli(env={"TILEC_BIN": cli}, which=lambda n: None,
                                                 source_root=None), cli)
            with self.assertRaises(tilec.LibraryNotFound) as cm:
                _discovery.find_runtime_library(env={"TILEC_RUNTIME_LIB": lib + ".missing"},
                                                which=lambda n: cli, source_root=None)
            self.assertIn("TILEC_RUNTIME_LIB", str(cm.exception))

    def test_import_succeeds_and_first_use_fails_clearly(self):
        """In a fresh process with nothing to find, importing works and opening a
        device raises LibraryNotFound naming the place it looked."""
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, TILEC_BUILD_DIR=d)
            env.pop("TILEC_RUNTIME_LIB", None)
            env.pop("TILEC_BIN", None)
            env["PYTHONPATH"] = os.pathsep.join(
                [os.path.dirname(os.path.dirname(tilec.__file__)),
                 env.get("PYTHONPATH", "")])
            code = ("import tilec\n"
                    "try:\n"
                    "    tilec.device('emulator')\n"
                    "except tilec.LibraryNotFound as e:\n"
                    "    print(e)\n"
                    "    raise SystemExit(3)\n")
            proc = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn(os.path.join(d, "runtime", "libtilec_runtime.so"), proc.stdout)


if __name__ == "__main__":
    unittest.main()
