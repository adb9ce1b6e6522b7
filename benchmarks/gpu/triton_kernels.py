"""Triton baselines for the GPU benchmark: GEMM, FlashAttention forward, row
softmax, LayerNorm and RMSNorm, written for this harness (imported only on
the GPU path).

Each wrapper writes into a preallocated `out` so that a timed call is one
kernel launch and nothing else.
"""

import math

import triton
import triton.language as tl


def _gemm_configs():
    out = []
    for bm, bn, bk, warps, stages in [
        (128, 256, 64, 8, 3),
        (256, 128, 64, 8, 3),
        (128, 128, 64, 4, 4),
        (128, 128, 32, 4, 4),
        (64, 256, 32, 4, 4),
    ]:
        out.append(
            triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                          num_warps=warps, num_stages=stages))
    return out


@triton.autotune(configs=_gemm_configs(), key=["M", "N", "K"])
@triton.jit
def _gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                 stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Output tiles in column panels of GROUP_M tile rows, for L2 reuse.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # Rows/columns past the edge load a valid (wrapped) address; their
    # results are never stored.
    safe_m = offs_m % M
    safe_n = offs_n % N
    a_ptrs = a_ptr + safe_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + safe_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def matmul(a, b, out, config=None):
    """out = a @ b for 2-D float16/bfloat16 tensors (any strides). config:
    {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"} to skip autotuning."""
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and tuple(out.shape) == (M, N)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    kernel = _gemm_kernel if config is None else _gemm_kernel.fn
    kernel[grid](a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                 out.stride(0), out.stride(1), **(config or {}))
    return out


def _row_warps(block_n):
    if block_n >= 8192:
        return 16
    if block_n >= 2048:
        return 8
    return 4


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x, out):
    """Row softmax of a 2-D tensor whose rows fit one block (N <= 64K)."""
    M, N = x.shape
    block = triton.next_power_of_2(N)
    _softmax_kernel[(M,)](x, out, N, x.stride(0), out.stride(0), BLOCK_N=block,
                          num_warps=_row_warps(block))
    return out


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, stride_x, stride_y, eps,
                       BLOCK_N: tl.constexpr, HAS_BIAS: tl.constexpr, RMS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    if RMS:
        xc = x
    else:
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w
    if HAS_BIAS:
        y += tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def layer_norm(x, weight, bias, eps, out):
    M, N = x.shape
    block = triton.next_power_of_2(N)
    _layer_norm_kernel[(M,)](x, weight, bias, out, N, x.stride(0), out.stride(0), eps,
                             BLOCK_N=block, HAS_BIAS=True, RMS=False,
                             num_warps=_row_warps(block))
    return out


def rms_norm(x, weight, eps, out):
    M, N = x.shape
    block = triton.next_power_of_2(N)
    _layer_norm_kernel[(M,)](x, weight, weight, out, N, x.stride(0), out.stride(0), eps,
                             BLOCK_N=block, HAS_BIAS=False, RMS=True,
                             num_warps=_row_warps(block))
    return out


# -- FlashAttention forward ------------------------------------------------------------
# One program per (BLOCK_M queries, batch * head): Q stays in registers, K and
# V blocks stream through with the online softmax (running max m, sum l, the
# accumulator rescaled by exp2(m_old - m_new)); q, k, v, o are (batch, seq,
# heads, dim) as the example takes them. Causal masking is top-left aligned
# (query i sees keys 0..i), as the example's.


def _attn_configs():
    out = []
    for bm, bn, warps, stages in [(128, 128, 8, 3), (128, 64, 8, 3), (128, 64, 4, 3),
                                  (64, 64, 4, 4)]:
        out.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=warps,
                                 num_stages=stages))
    return out


@triton.autotune(configs=_attn_configs(), key=["seq_q", "seq_kv", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_q, seq_kv, heads, qk_scale,
                     stride_qb, stride_qs, stride_qh, stride_kb, stride_ks, stride_kh,
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // heads
    h = bh % heads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_kb + h * stride_kh
    row_ok = offs_m[:, None] < seq_q
    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :], mask=row_ok, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = seq_kv
    if CAUSAL:
        hi = tl.minimum(seq_kv, (start_m + 1) * BLOCK_M)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None],
                    mask=cols[None, :] < seq_kv, other=0.0)
        s = tl.dot(q, k) * qk_scale
        keep = cols[None, :] < seq_kv
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + cols[:, None] * stride_ks + offs_d[None, :],
                    mask=cols[:, None] < seq_kv, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    o_base = o_ptr + b * stride_qb + h * stride_qh
    tl.store(o_base + offs_m[:, None] * stride_qs + offs_d[None, :],
             acc.to(o_ptr.dtype.element_ty), mask=row_ok)


def flash_attention(q, k, v, out, causal):
    batch, seq_q, heads, dim = q.shape
    seq_kv = k.shape[1]
    assert k.stride() == v.stride() and q.stride() == out.stride()
    # exp(x / sqrt(d)) = exp2(x * log2(e) / sqrt(d))
    qk_scale = 1.4426950408889634 / math.sqrt(dim)

    def grid(meta):
        return (triton.cdiv(seq_q, meta["BLOCK_M"]), batch * heads)

    _attn_fwd_kernel[grid](q, k, v, out, seq_q, seq_kv, heads, qk_scale, q.stride(0),
                           q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                           HEAD_DIM=dim, CAUSAL=causal)
    return out
