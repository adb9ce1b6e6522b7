"""The benchmark cases: which example, bound how, fed what, checked and
baselined against what.

Each case names an example function of examples/, its bindings for the GPU
(LLM-sized shapes, the tile configuration of the example's own main()), and
a case of examples/cases.txt for the dry run on the emulator. A Kind knows the
kernel's argument list, a float64 numpy reference (dry run), a float32 torch
reference, the torch (and Triton) operation it is compared with, and how much
work it does (FLOPs or bytes).

torch is imported by the caller and passed in: this module imports neither
torch nor triton, so the dry run needs numpy only.
"""

import math

try:  # the dry run's references; the GPU run needs neither
    import numpy as np
    from tilec import testing as tt
except ImportError:
    np = tt = None

# Unit roundoff (half an ulp at 1.0) of each element type.
UNIT_ROUNDOFF = {
    "float8_e4m3": 2.0**-4,
    "float8_e5m2": 2.0**-3,
    "bfloat16": 2.0**-8,
    "float16": 2.0**-11,
    "float32": 2.0**-24,
}

TORCH_DTYPES = {
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float8_e4m3": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "uint8": "uint8",
}


def torch_dtype(torch, name):
    return getattr(torch, TORCH_DTYPES[name])


def np_arg(storage, dtype):
    import tilec
    return tilec.view(storage, dtype) if dtype in ("bfloat16", "float8_e4m3",
                                                   "float8_e5m2") else storage


def nan_like(torch, shape, dtype, device):
    t = torch.empty(shape, dtype=torch_dtype(torch, dtype), device=device)
    if t.is_floating_point() and t.element_size() >= 2:
        t.fill_(float("nan"))
    return t


def triton_fn(name):
    """A baseline of triton_kernels.py, or None where Triton is missing."""
    try:
        import triton_kernels
    except ImportError:
        return None
    return getattr(triton_kernels, name)


def randn(torch, shape, dtype, device, scale=1.0):
    return (torch.randn(shape, device=device, dtype=torch.float32) * scale).to(
        torch_dtype(torch, dtype))


class Kind:
    """Base of the per-kernel recipes. `b` is the case's bindings dict."""
    example = None
    fn = None
    out_index = -1
    triton = False

    def out_dtype(self, b):
        return b["dtype"]

    def tolerance(self, b, ref_scale):
        """(atol, rtol) for the GPU check against a float32 reference."""
        u = UNIT_ROUNDOFF[self.out_dtype(b)]
        return 4 * u * max(ref_scale, 1e-6), 4 * u

    def np_tolerance(self, b, ref):
        return tt.tolerance(self.out_dtype(b), ref, b.get("accum_dtype", "float32"),
                            terms=self.terms(b))

    def terms(self, b):
        return 1

    def work(self, b):
        """(flops, bytes moved): the performance column uses flops when set."""
        return None, None


# -- GEMM ------------------------------------------------------------------------


class Gemm(Kind):
    example, fn = "gemm.py", "matmul"
    triton = True

    def terms(self, b):
        return b["K"]

    def shapes(self, b):
        M, N, K = b["M"], b["N"], b["K"]
        return ((K, M) if b["transpose_A"] else (M, K)), ((N, K) if b["transpose_B"] else
                                                           (K, N)), (M, N)

    def np_case(self, b, rng):
        sa, sb, sc = self.shapes(b)
        a_s, a = tt.random_tensor(rng, sa, b["dtype"])
        b_s, bm = tt.random_tensor(rng, sb, b["dtype"])
        c_s = tt.empty(sc, b["dtype"])
        ref = (a.T if b["transpose_A"] else a) @ (bm.T if b["transpose_B"] else bm)
        return [np_arg(a_s, b["dtype"]), np_arg(b_s, b["dtype"]), np_arg(c_s, b["dtype"])], \
            c_s, ref

    def torch_case(self, torch, b, dev):
        sa, sb, sc = self.shapes(b)
        a = randn(torch, sa, b["dtype"], dev)
        bm = randn(torch, sb, b["dtype"], dev)
        c = nan_like(torch, sc, b["dtype"], dev)
        op_a = a.t() if b["transpose_A"] else a
        op_b = bm.t() if b["transpose_B"] else bm
        ref = op_a.float() @ op_b.float()
        out = torch.empty(sc, dtype=a.dtype, device=dev)
        base = ("torch.matmul (cuBLAS)", lambda: torch.matmul(op_a, op_b, out=out), out)
        tri = None
        matmul = triton_fn("matmul") if self.triton else None
        if matmul is not None:
            out_t = torch.empty(sc, dtype=a.dtype, device=dev)
            tri = (lambda: matmul(op_a, op_b, out=out_t), out_t)
        return [a, bm, c], c, ref, base, tri

    def work(self, b):
        M, N, K = b["M"], b["N"], b["K"]
        return 2.0 * M * N * K, None


class GemmFp8(Gemm):
    example, fn = "gemm_fp8.py", "matmul_fp8"
    triton = False

    def out_dtype(self, b):
        return b["accum_dtype"]

    def tolerance(self, b, ref_scale):
        # float32 out; Hopper's float8 wgmma sums with about 13 bits, an error
        # that grows like the square root of the number of k32 instructions:
        # 2e-3 of the result's scale at K = 128.
        grow = max(1.0, (b["K"] / 128) ** 0.5)
        return 2e-3 * grow * max(ref_scale, 1e-6), 2e-3 * grow

    def shapes(self, b):
        M, N, K = b["M"], b["N"], b["K"]
        return (M, K), ((N, K) if b["transpose_B"] else (K, N)), (M, N)

    def np_case(self, b, rng):
        sa, sb, sc = self.shapes(b)
        a_s, a = tt.random_tensor(rng, sa, b["a_dtype"])
        b_s, bm = tt.random_tensor(rng, sb, b["b_dtype"])
        c_s = tt.empty(sc, "float32")
        ref = a @ (bm.T if b["transpose_B"] else bm)
        return [np_arg(a_s, b["a_dtype"]), np_arg(b_s, b["b_dtype"]), c_s], c_s, ref

    def torch_case(self, torch, b, dev):
        sa, sb, sc = self.shapes(b)
        a = randn(torch, sa, b["a_dtype"], dev)
        bm = randn(torch, sb, b["b_dtype"], dev)
        c = nan_like(torch, sc, "float32", dev)
        op_b = bm.t() if b["transpose_B"] else bm
        ref = a.float() @ op_b.float()
        base = None
        if b["transpose_B"] and hasattr(torch, "_scaled_mm"):
            one = torch.ones((), device=dev, dtype=torch.float32)
            # cuBLASLt's fp8 GEMM wants B column-major: B (N, K) row-major, transposed.
            base = ("torch._scaled_mm (cuBLASLt fp8)",
                    lambda: torch._scaled_mm(a, op_b, scale_a=one, scale_b=one,
                                             out_dtype=torch.float32), None)
        return [a, bm, c], c, ref, base, None


class DequantGemm(Kind):
    example, fn = "dequant_gemm.py", "dequant_matmul"

    def out_dtype(self, b):
        return b["out_dtype"]

    def terms(self, b):
        return b["K"]

    def groups(self, b):
        return (b["K"] + b["group_size"] - 1) // b["group_size"]

    def np_case(self, b, rng):
        M, N, K, g = b["M"], b["N"], b["K"], b["group_size"]
        a_s, a = tt.random_tensor(rng, (M, K), b["in_dtype"])
        w_int = rng.integers(-8, 8, size=(N, K))
        scale_s, scale = tt.random_tensor(rng, (N, self.groups(b)), b["in_dtype"], scale=0.1)
        packed = tt.pack_int4(w_int)
        c_s = tt.empty((M, N), b["out_dtype"])
        # The kernel stores the dequantised weights in in_dtype before the GEMM.
        w = tt.round_to(w_int * np.repeat(scale, g, axis=1)[:, :K], b["in_dtype"])
        ref = a @ w.T
        return [np_arg(a_s, b["in_dtype"]), packed, np_arg(scale_s, b["in_dtype"]),
                np_arg(c_s, b["out_dtype"])], c_s, ref

    def torch_case(self, torch, b, dev):
        M, N, K, g = b["M"], b["N"], b["K"], b["group_size"]
        a = randn(torch, (M, K), b["in_dtype"], dev)
        w_int = torch.randint(-8, 8, (N, K), device=dev)
        scale = randn(torch, (N, self.groups(b)), b["in_dtype"], dev, scale=0.1)
        u = (w_int.to(torch.int16) & 0xF).to(torch.uint8)
        packed = (u[:, 0::2] | (u[:, 1::2] << 4)).contiguous()
        c = nan_like(torch, (M, N), b["out_dtype"], dev)
        # The kernel stores the dequantised weights in in_dtype before the GEMM.
        w16 = (w_int.float() * scale.float().repeat_interleave(g, dim=1)[:, :K]).to(a.dtype)
        ref = a.float() @ w16.float().t()
        out = torch.empty((M, N), dtype=a.dtype, device=dev)
        # No int4 GEMM in torch: the baseline is the fp16 GEMM on the
        # already-dequantised weights (what the layer costs unquantised).
        base = ("torch.matmul on pre-dequantised W (cuBLAS)",
                lambda: torch.matmul(a, w16.t(), out=out), None)
        return [a, packed, scale, c], c, ref, base, None

    def work(self, b):
        M, N, K = b["M"], b["N"], b["K"]
        return 2.0 * M * N * K, None


# -- attention ---------------------------------------------------------------------


def _np_softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class FlashAttention(Kind):
    example, fn = "flash_attention.py", "flashattn"
    out_index = 3
    triton = True

    def tolerance(self, b, ref_scale):
        return 1e-2 * max(ref_scale, 1e-3) + 2e-3, 1e-2

    def terms(self, b):
        return b["seq_kv"]

    def np_tolerance(self, b, ref):
        # P is rounded to dtype before the second GEMM.
        u = tt.UNIT_ROUNDOFF[b["dtype"]]
        scale = float(np.max(np.abs(ref)))
        return 4 * u * scale + 1e-3, 4 * u

    def np_case(self, b, rng):
        qs = (b["batch"], b["seq_q"], b["heads"], b["dim"])
        ks = (b["batch"], b["seq_kv"], b["heads"], b["dim"])
        q_s, q = tt.random_tensor(rng, qs, b["dtype"])
        k_s, k = tt.random_tensor(rng, ks, b["dtype"])
        v_s, v = tt.random_tensor(rng, ks, b["dtype"])
        o_s = tt.empty(qs, b["dtype"])
        s = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(b["dim"])
        if b["is_causal"]:
            mask = np.tril(np.ones((b["seq_q"], b["seq_kv"]), dtype=bool))
            s = np.where(mask, s, -np.inf)
        ref = np.einsum("bhqk,bkhd->bqhd", _np_softmax(s), v)
        d = b["dtype"]
        return [np_arg(q_s, d), np_arg(k_s, d), np_arg(v_s, d), np_arg(o_s, d)], o_s, ref

    def torch_case(self, torch, b, dev):
        import torch.nn.functional as F
        qs = (b["batch"], b["seq_q"], b["heads"], b["dim"])
        ks = (b["batch"], b["seq_kv"], b["heads"], b["dim"])
        q, k, v = (randn(torch, s, b["dtype"], dev) for s in (qs, ks, ks))
        o = nan_like(torch, qs, b["dtype"], dev)
        # The float32 reference on a slice (batch 0, 2 heads): the full score
        # matrix would not fit.
        hs = slice(0, min(2, b["heads"]))
        qf, kf, vf = (t[:1, :, hs].float() for t in (q, k, v))
        s = torch.einsum("bqhd,bkhd->bhqk", qf, kf) / math.sqrt(b["dim"])
        if b["is_causal"]:
            mask = torch.ones(b["seq_q"], b["seq_kv"], device=dev, dtype=torch.bool).tril()
            s = s.masked_fill(~mask, float("-inf"))
        ref = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, dim=-1), vf)
        qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))  # (b, h, s, d) views
        base = ("F.scaled_dot_product_attention",
                lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=b["is_causal"]),
                None)
        tri = None
        fa = triton_fn("flash_attention") if self.triton else None
        if fa is not None:
            o_t = nan_like(torch, qs, b["dtype"], dev)
            tri = (lambda: fa(q, k, v, o_t, b["is_causal"]), o_t[:1, :, hs])
        return [q, k, v, o], (o, (slice(0, 1), slice(None), hs)), ref, base, tri

    def work(self, b):
        f = 4.0 * b["batch"] * b["heads"] * b["seq_q"] * b["seq_kv"] * b["dim"]
        return (f / 2 if b["is_causal"] else f), None


class GqaDecode(Kind):
    example, fn = "gqa_decode.py", "gqa_decode"
    out_index = 3

    def tolerance(self, b, ref_scale):
        return 1e-2 * max(ref_scale, 1e-3) + 2e-3, 1e-2

    def np_tolerance(self, b, ref):
        u = tt.UNIT_ROUNDOFF[b["dtype"]]
        return 4 * u * float(np.max(np.abs(ref))) + 1e-3, 4 * u

    def np_case(self, b, rng):
        B, H, G, S, D = b["batch"], b["heads"], b["groups"], b["seqlen_kv"], b["dim"]
        q_s, q = tt.random_tensor(rng, (B, H, D), b["dtype"])
        k_s, k = tt.random_tensor(rng, (B, S, G, D), b["dtype"])
        v_s, v = tt.random_tensor(rng, (B, S, G, D), b["dtype"])
        o_s = tt.empty((B, H, D), b["dtype"])
        kk = np.repeat(k, H // G, axis=2)
        vv = np.repeat(v, H // G, axis=2)
        p = _np_softmax(np.einsum("bhd,bshd->bhs", q, kk) / math.sqrt(D))
        ref = np.einsum("bhs,bshd->bhd", p, vv)
        d = b["dtype"]
        return [np_arg(q_s, d), np_arg(k_s, d), np_arg(v_s, d), np_arg(o_s, d)], o_s, ref

    def torch_case(self, torch, b, dev):
        import torch.nn.functional as F
        B, H, G, S, D = b["batch"], b["heads"], b["groups"], b["seqlen_kv"], b["dim"]
        q = randn(torch, (B, H, D), b["dtype"], dev)
        k = randn(torch, (B, S, G, D), b["dtype"], dev)
        v = randn(torch, (B, S, G, D), b["dtype"], dev)
        o = nan_like(torch, (B, H, D), b["dtype"], dev)
        kk = k.float().repeat_interleave(H // G, dim=2)
        vv = v.float().repeat_interleave(H // G, dim=2)
        p = torch.softmax(torch.einsum("bhd,bshd->bhs", q.float(), kk) / math.sqrt(D), dim=-1)
        ref = torch.einsum("bhs,bshd->bhd", p, vv)
        del kk, vv, p
        q4 = q.unsqueeze(2)  # (B, H, 1, D)
        kt, vt = k.transpose(1, 2), v.transpose(1, 2)  # (B, G, S, D)
        try:
            F.scaled_dot_product_attention(q4, kt, vt, enable_gqa=True)
            fn = lambda: F.scaled_dot_product_attention(q4, kt, vt, enable_gqa=True)
            label = "F.scaled_dot_product_attention(enable_gqa)"
        except (TypeError, RuntimeError):  # torch < 2.5: heads expanded beforehand, untimed
            ke = kt.repeat_interleave(H // G, dim=1)
            ve = vt.repeat_interleave(H // G, dim=1)
            fn = lambda: F.scaled_dot_product_attention(q4, ke, ve)
            label = "F.scaled_dot_product_attention (KV heads pre-expanded)"
        return [q, k, v, o], o, ref, (label, fn, None), None

    def work(self, b):
        B, H, G, S, D = b["batch"], b["heads"], b["groups"], b["seqlen_kv"], b["dim"]
        # Memory-bound: GB/s of the KV cache and the query/output.
        return None, (2 * B * S * G * D + 2 * B * H * D) * 2


class MlaDecode(Kind):
    example, fn = "mla_decode.py", "mla_decode"
    out_index = 4

    def tolerance(self, b, ref_scale):
        return 1e-2 * max(ref_scale, 1e-3) + 2e-3, 1e-2

    def np_tolerance(self, b, ref):
        u = tt.UNIT_ROUNDOFF[b["dtype"]]
        return 4 * u * float(np.max(np.abs(ref))) + 1e-3, 4 * u

    def np_case(self, b, rng):
        B, H, S, D, P = b["batch"], b["heads"], b["seqlen_kv"], b["dim"], b["pe_dim"]
        d = b["dtype"]
        q_s, q = tt.random_tensor(rng, (B, H, D), d)
        qp_s, qp = tt.random_tensor(rng, (B, H, P), d)
        kv_s, kv = tt.random_tensor(rng, (B, S, D), d)
        kp_s, kp = tt.random_tensor(rng, (B, S, P), d)
        o_s = tt.empty((B, H, D), d)
        s = (np.einsum("bhd,bsd->bhs", q, kv) + np.einsum("bhp,bsp->bhs", qp, kp))
        ref = np.einsum("bhs,bsd->bhd", _np_softmax(s / math.sqrt(D + P)), kv)
        return [np_arg(x, d) for x in (q_s, qp_s, kv_s, kp_s, o_s)], o_s, ref

    def torch_case(self, torch, b, dev):
        B, H, S, D, P = b["batch"], b["heads"], b["seqlen_kv"], b["dim"], b["pe_dim"]
        d = b["dtype"]
        q, qp = randn(torch, (B, H, D), d, dev), randn(torch, (B, H, P), d, dev)
        kv, kp = randn(torch, (B, S, D), d, dev), randn(torch, (B, S, P), d, dev)
        o = nan_like(torch, (B, H, D), d, dev)
        s = (torch.einsum("bhd,bsd->bhs", q.float(), kv.float()) +
             torch.einsum("bhp,bsp->bhs", qp.float(), kp.float()))
        ref = torch.einsum("bhs,bsd->bhd", torch.softmax(s / math.sqrt(D + P), dim=-1),
                           kv.float())
        del s
        # No fused MLA op in torch: the eager baseline, batched GEMMs and a
        # softmax in the input dtype, on the concatenated [latent | rope] key.
        qc = torch.cat([q, qp], dim=-1)
        kc = torch.cat([kv, kp], dim=-1)
        scale = 1.0 / math.sqrt(D + P)

        def eager():
            p = torch.softmax(torch.bmm(qc, kc.transpose(1, 2)) * scale, dim=-1)
            return torch.bmm(p, kv)

        return [q, qp, kv, kp, o], o, ref, ("torch eager (bmm, softmax, bmm)", eager, None), None

    def work(self, b):
        B, H, S, D, P = b["batch"], b["heads"], b["seqlen_kv"], b["dim"], b["pe_dim"]
        # Memory-bound: GB/s of the latent cache and the query/output.
        return None, (B * S * (D + P) + 2 * B * H * D + B * H * P) * 2


# -- row-wise kernels ---------------------------------------------------------------


class Softmax(Kind):
    example, fn = "softmax.py", "softmax"
    triton = True

    def tolerance(self, b, ref_scale):
        u = UNIT_ROUNDOFF[b["dtype"]]
        return 1e-5, 4 * u

    def np_tolerance(self, b, ref):
        return 1e-6, 2 * tt.UNIT_ROUNDOFF[b["dtype"]] + 1e-5

    def np_case(self, b, rng):
        x_s, x = tt.random_tensor(rng, (b["M"], b["N"]), b["dtype"], scale=2.0)
        y_s = tt.empty((b["M"], b["N"]), b["dtype"])
        return [np_arg(x_s, b["dtype"]), np_arg(y_s, b["dtype"])], y_s, _np_softmax(x, axis=1)

    def torch_case(self, torch, b, dev):
        x = randn(torch, (b["M"], b["N"]), b["dtype"], dev, scale=2.0)
        y = nan_like(torch, (b["M"], b["N"]), b["dtype"], dev)
        ref = torch.softmax(x.float(), dim=1)
        base = ("torch.softmax", lambda: torch.softmax(x, dim=1), None)
        softmax = triton_fn("softmax")
        y_t = torch.empty_like(x)
        tri = (lambda: softmax(x, out=y_t), y_t) if softmax else None
        return [x, y], y, ref, base, tri

    def work(self, b):
        return None, 2.0 * b["M"] * b["N"] * 2


class RmsNorm(Kind):
    example, fn = "rmsnorm.py", "rms_norm"
    triton = True

    def tolerance(self, b, ref_scale):
        u = UNIT_ROUNDOFF[b["dtype"]]
        return 4 * u * max(ref_scale, 1e-6), 4 * u

    def np_case(self, b, rng):
        M, N, d = b["M"], b["N"], b["dtype"]
        x_s, x = tt.random_tensor(rng, (M, N), d)
        w_s, w = tt.random_tensor(rng, (N,), d)
        y_s = tt.empty((M, N), d)
        ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + b["eps"]) * w
        return [np_arg(x_s, d), np_arg(w_s, d), np_arg(y_s, d)], y_s, ref

    def torch_case(self, torch, b, dev):
        M, N, d = b["M"], b["N"], b["dtype"]
        x, w = randn(torch, (M, N), d, dev), randn(torch, (N,), d, dev)
        y = nan_like(torch, (M, N), d, dev)
        xf = x.float()
        ref = xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + b["eps"]) * w.float()
        eps = b["eps"]
        if hasattr(torch.nn.functional, "rms_norm"):
            base = ("F.rms_norm",
                    lambda: torch.nn.functional.rms_norm(x, (N,), w, eps), None)
        else:
            base = ("torch eager rms_norm",
                    lambda: x * torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + eps).to(
                        x.dtype) * w, None)
        rms_norm = triton_fn("rms_norm")
        y_t = torch.empty_like(x)
        tri = (lambda: rms_norm(x, w, eps, out=y_t), y_t) if rms_norm else None
        return [x, w, y], y, ref, base, tri

    def work(self, b):
        return None, (2.0 * b["M"] * b["N"] + b["N"]) * 2


class LayerNorm(RmsNorm):
    example, fn = "layernorm.py", "layer_norm"

    def np_case(self, b, rng):
        M, N, d = b["M"], b["N"], b["dtype"]
        x_s, x = tt.random_tensor(rng, (M, N), d)
        g_s, g = tt.random_tensor(rng, (N,), d)
        be_s, be = tt.random_tensor(rng, (N,), d)
        y_s = tt.empty((M, N), d)
        mean = x.mean(axis=1, keepdims=True)
        var = ((x - mean)**2).mean(axis=1, keepdims=True)
        ref = (x - mean) / np.sqrt(var + b["eps"]) * g + be
        return [np_arg(x_s, d), np_arg(g_s, d), np_arg(be_s, d), np_arg(y_s, d)], y_s, ref

    def torch_case(self, torch, b, dev):
        import torch.nn.functional as F
        M, N, d = b["M"], b["N"], b["dtype"]
        x, g, be = randn(torch, (M, N), d, dev), randn(torch, (N,), d, dev), randn(
            torch, (N,), d, dev)
        y = nan_like(torch, (M, N), d, dev)
        eps = b["eps"]
        ref = F.layer_norm(x.float(), (N,), g.float(), be.float(), eps)
        layer_norm = triton_fn("layer_norm")
        y_t = torch.empty_like(x)
        tri = (lambda: layer_norm(x, g, be, eps, out=y_t), y_t) if layer_norm else None
        base = ("F.layer_norm", lambda: F.layer_norm(x, (N,), g, be, eps), None)
        return [x, g, be, y], y, ref, base, tri

    def work(self, b):
        return None, (2.0 * b["M"] * b["N"] + 2 * b["N"]) * 2


# -- the case list ---------------------------------------------------------------------

GEMM_TILES = dict(block_M=128, block_N=128, block_K=32, num_stages=3, threads=128,
                  accum_dtype="float32", transpose_A=False, transpose_B=False,
                  enable_rasterization=True)


# Hopper tiles: two warpgroups, each m64n256 wgmma instructions, 4 stages
# (copies 2 iterations ahead, wgmma one group behind).
WIDE_TILES = dict(block_M=128, block_N=256, block_K=64, num_stages=4, threads=256)


def gemm(M, N, K, dtype, **tiles):
    return dict(GEMM_TILES, M=M, N=N, K=K, dtype=dtype, **tiles)


def fa(causal):
    return dict(batch=8, heads=32, seq_q=4096, seq_kv=4096, dim=128, is_causal=causal,
                block_M=128, block_N=128, num_stages=2, threads=256, dtype="float16",
                accum_dtype="float32")


# name, kind, GPU bindings (the tiles of the example's main() where they fit),
# dry-run case of examples/cases.txt, per-target overrides of the bindings
# (shared memory: sm_90a allows 227 KiB per block, sm_80 163 KiB).
CASES = [
    ("gemm_f16_4096", Gemm(), gemm(4096, 4096, 4096, "float16"), "gemm_f16_nn_small", {}),
    ("gemm_bf16_4096", Gemm(), gemm(4096, 4096, 4096, "bfloat16"), "gemm_bf16_tn_small", {}),
    ("gemm_f16_8192", Gemm(), gemm(8192, 8192, 8192, "float16"), "gemm_f16_nn_ragged", {}),
    ("gemm_bf16_8192", Gemm(), gemm(8192, 8192, 8192, "bfloat16"), "gemm_bf16_tt_ragged", {}),
    ("gemm_f16_4096_wide", Gemm(), gemm(4096, 4096, 4096, "float16", **WIDE_TILES),
     "gemm_f16_nn_small", {}),
    ("gemm_f16_8192_wide", Gemm(), gemm(8192, 8192, 8192, "float16", **WIDE_TILES),
     "gemm_f16_nn_ragged", {}),
    ("gemm_bf16_8192_wide", Gemm(), gemm(8192, 8192, 8192, "bfloat16", **WIDE_TILES),
     "gemm_bf16_tt_ragged", {}),
    # An LLM MLP layer (LLaMA-7B sizes, 4096 tokens): up and down projections.
    ("gemm_f16_llm_up", Gemm(), gemm(4096, 11008, 4096, "float16"), "gemm_f16_nt_ragged", {}),
    ("gemm_f16_llm_down", Gemm(), gemm(4096, 4096, 11008, "float16"), "gemm_f16_nn_ragged",
     {}),
    ("flash_attention_fwd", FlashAttention(), fa(False), "flash_attention_ragged",
     {"sm_80": dict(block_N=64)}),
    ("flash_attention_fwd_causal", FlashAttention(), fa(True),
     "flash_attention_causal_ragged", {"sm_80": dict(block_N=64)}),
    ("gqa_decode", GqaDecode(),
     dict(batch=8, heads=32, groups=8, seqlen_kv=8192, dim=128, num_split=8, block_N=64,
          block_H=64, num_stages=2, threads=128, dtype="float16", accum_dtype="float32"),
     "gqa_decode_ragged", {}),
    # The example's main() tiles (block_N=64, block_H=64, 2 stages) need 304 KiB
    # of shared memory at dim=512: block_H=32 here.
    ("mla_decode", MlaDecode(),
     dict(batch=64, heads=128, seqlen_kv=8192, dim=512, pe_dim=64, block_N=64, block_H=32,
          num_stages=2, threads=256, dtype="float16", accum_dtype="float32"),
     "mla_decode_ragged", {"sm_80": dict(num_stages=1)}),
    ("softmax", Softmax(),
     dict(M=8192, N=4096, block_M=8, block_N=512, dtype="float16", accum_dtype="float32",
          threads=128), "softmax_ragged", {}),
    ("rmsnorm", RmsNorm(),
     dict(M=8192, N=4096, block_M=4, block_N=1024, eps=1e-6, dtype="float16",
          accum_dtype="float32", threads=128), "rmsnorm_ragged", {}),
    ("layernorm", LayerNorm(),
     dict(M=8192, N=4096, block_M=4, block_N=1024, eps=1e-5, dtype="float16",
          accum_dtype="float32", threads=128), "layernorm_ragged", {}),
    ("gemm_fp8_e4m3", GemmFp8(),
     dict(M=4096, N=4096, K=4096, block_M=128, block_N=128, block_K=64, a_dtype="float8_e4m3",
          b_dtype="float8_e4m3", accum_dtype="float32", transpose_B=True, num_stages=3,
          threads=128), "gemm_fp8_e4m3_nt_small", {}),
    ("gemm_fp8_e4m3_wide", GemmFp8(),
     dict(M=4096, N=4096, K=4096, block_M=128, block_N=256, block_K=128, a_dtype="float8_e4m3",
          b_dtype="float8_e4m3", accum_dtype="float32", transpose_B=True, num_stages=4,
          threads=256), "gemm_fp8_e4m3_nt_small", {}),
    ("dequant_gemm_int4", DequantGemm(),
     dict(M=256, N=4096, K=4096, group_size=128, block_M=64, block_N=128, block_K=128,
          num_stages=2, threads=128, in_dtype="float16", out_dtype="float16",
          accum_dtype="float32"), "dequant_gemm_ragged", {}),
]


def bindings_for(case, target):
    """The case's GPU bindings with its overrides for `target` applied."""
    _name, _kind, bindings, _dry, overrides = case
    return dict(bindings, **overrides.get(target, {}))


# Parameters that are tile choices (left unbound with --recommend).
TILE_PARAMS = ("block_M", "block_N", "block_K", "block_H", "num_stages", "threads",
               "enable_rasterization", "num_split")
