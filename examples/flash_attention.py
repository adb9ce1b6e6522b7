"""Flash attention, forward pass.

    O[b, i, h, :] = sum_j softmax_j(Q[b, i, h, :] . K[b, j, h, :] * sm_scale) V[b, j, h, :]

with sm_scale = 1 / sqrt(dim). Q and O are (batch, seq_q, heads, dim); K and V
are (batch, seq_kv, heads, dim); all in `dtype`. With is_causal, query i sees
keys j <= i only (positions counted from the start of both sequences).

Each block owns block_M queries of one head and streams the keys in block_N
tiles with an online softmax: scores_max is the running row maximum,
scores_scale rescales what was accumulated before the maximum grew, logsum is
the running softmax denominator. Keys past seq_kv (and, when causal, keys
after the query) get a score of -inf.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def flashattn(batch, heads, seq_q, seq_kv, dim, is_causal, block_M, block_N, num_stages=1,
              threads=128, dtype="float16", accum_dtype="float32"):
    # exp(x) == exp2(x * log2(e)): fold log2(e) into the softmax scale.
    scale = (1.0 / dim)**0.5 * 1.44269504
    q_shape = [batch, seq_q, heads, dim]
    kv_shape = [batch, seq_kv, heads, dim]

    @T.prim_func
    def main(
            Q: T.Tensor(q_shape, dtype),
            K: T.Tensor(kv_shape, dtype),
            V: T.Tensor(kv_shape, dtype),
            Output: T.Tensor(q_shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            # A causal block needs no key tile that starts after its last query.
            loop_range = (
                T.min(T.ceildiv(seq_kv, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal else T.ceildiv(seq_kv, block_N))

            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(
                            (bx * block_M + i >= k * block_N + j) and (k * block_N + j < seq_kv),
                            0,
                            -T.infinity(acc_s.dtype),
                        )
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j < seq_kv, 0,
                                                     -T.infinity(acc_s.dtype))
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                # Online softmax. Every row sees key 0 in the first tile, so
                # scores_max is finite from the first iteration on.
                T.copy(scores_max, scores_max_prev)
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)

                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return main


def ref_program(Q, K, V, is_causal):
    import torch
    import torch.nn.functional as F

    dim = Q.size(-1)
    scores = torch.einsum("bqhd,bkhd->bhqk", Q.float(), K.float()) / dim**0.5
    if is_causal:
        seq_q, seq_kv = Q.size(1), K.size(1)
        mask = torch.ones(seq_q, seq_kv, device=Q.device, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    attn = F.softmax(scores, dim=-1)
    return torch.einsum("bhqk,bkhd->bqhd", attn, V.float()).to(Q.dtype)


def main():
    parser = argparse.ArgumentParser(description="TileLang flash attention forward")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--seq_len", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--is_causal", action="store_true")
    args = parser.parse_args()

    import torch

    kernel = flashattn(args.batch, args.heads, args.seq_len, args.seq_len, args.dim,
                       args.is_causal, block_M=128, block_N=128, num_stages=2, threads=256)
    shape = (args.batch, args.seq_len, args.heads, args.dim)
    q = torch.randn(shape, device="cuda", dtype=torch.float16)
    k = torch.randn(shape, device="cuda", dtype=torch.float16)
    v = torch.randn(shape, device="cuda", dtype=torch.float16)
    o = kernel(q, k, v)
    torch.testing.assert_close(o, ref_program(q, k, v, args.is_causal), rtol=1e-2, atol=1e-2)
    print("flash_attention: results match")

    latency = kernel.get_profiler().do_bench()
    flops = 4 * args.batch * args.heads * args.seq_len * args.seq_len * args.dim
    if args.is_causal:
        flops *= 0.5
    print(f"latency: {latency:.3f} ms, {flops / latency * 1e-9:.2f} TFLOPS")


if __name__ == "__main__":
    main()
