"""Multi-head latent attention (MLA) for decoding.

All query heads share one compressed KV cache: a latent vector per position
(KV, `dim` wide, 512 in DeepSeek-V2/V3) that serves as both key and value, and
a small rotary part of the key (K_pe, `pe_dim` wide, 64 there). One new token
per sequence:

    s_j = (Q[b, h, :] . KV[b, j, :] + Q_pe[b, h, :] . K_pe[b, j, :]) * sm_scale
    O[b, h, :] = sum_j softmax_j(s_j) KV[b, j, :]

with sm_scale = 1 / sqrt(dim + pe_dim). Q and O are (batch, heads, dim), Q_pe
is (batch, heads, pe_dim), KV is (batch, seqlen_kv, dim), K_pe is
(batch, seqlen_kv, pe_dim); all in `dtype`.

Each block owns block_H heads of one sequence and streams the cache in
block_N tiles with an online softmax; positions past seqlen_kv score -inf.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[4])
def mla_decode(batch, heads, seqlen_kv, dim, pe_dim, block_N, block_H, num_stages=1,
               threads=128, dtype="float16", accum_dtype="float32"):
    scale = (1.0 / (dim + pe_dim))**0.5 * 1.44269504  # log2(e), for exp2

    @T.prim_func
    def main(
            Q: T.Tensor([batch, heads, dim], dtype),
            Q_pe: T.Tensor([batch, heads, pe_dim], dtype),
            KV: T.Tensor([batch, seqlen_kv, dim], dtype),
            K_pe: T.Tensor([batch, seqlen_kv, pe_dim], dtype),
            Output: T.Tensor([batch, heads, dim], dtype),
    ):
        with T.Kernel(T.ceildiv(heads, block_H), batch, threads=threads) as (hx, bid):
            Q_shared = T.alloc_shared([block_H, dim], dtype)
            Q_pe_shared = T.alloc_shared([block_H, pe_dim], dtype)
            KV_shared = T.alloc_shared([block_N, dim], dtype)
            K_pe_shared = T.alloc_shared([block_N, pe_dim], dtype)
            O_shared = T.alloc_shared([block_H, dim], dtype)
            acc_s = T.alloc_fragment([block_H, block_N], accum_dtype)
            S_shared = T.alloc_shared([block_H, block_N], dtype)
            acc_o = T.alloc_fragment([block_H, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_H], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_H], accum_dtype)
            scores_scale = T.alloc_fragment([block_H], accum_dtype)
            scores_sum = T.alloc_fragment([block_H], accum_dtype)
            logsum = T.alloc_fragment([block_H], accum_dtype)

            T.annotate_layout({
                O_shared: tilelang.layout.make_swizzled_layout(O_shared),
            })

            T.copy(Q[bid, hx * block_H:(hx + 1) * block_H, :], Q_shared)
            T.copy(Q_pe[bid, hx * block_H:(hx + 1) * block_H, :], Q_pe_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            for k in T.Pipelined(T.ceildiv(seqlen_kv, block_N), num_stages=num_stages):
                T.copy(KV[bid, k * block_N:(k + 1) * block_N, :], KV_shared)
                T.copy(K_pe[bid, k * block_N:(k + 1) * block_N, :], K_pe_shared)
                # The score is the sum of the latent and the rotary products.
                T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True, clear_accum=True,
                       policy=T.GemmWarpPolicy.FullCol)
                T.gemm(Q_pe_shared, K_pe_shared, acc_s, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullCol)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.if_then_else(k * block_N + j < seqlen_kv, acc_s[i, j],
                                                 -T.infinity(accum_dtype))

                T.copy(scores_max, scores_max_prev)
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_H):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, S_shared)

                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] *= scores_scale[i]
                # The latent tile is the value tile too.
                T.gemm(S_shared, KV_shared, acc_o, policy=T.GemmWarpPolicy.FullCol)

            for i, j in T.Parallel(block_H, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bid, hx * block_H:(hx + 1) * block_H, :])

    return main


def ref_program(q, q_pe, kv, k_pe):
    import torch

    dim, pe_dim = q.size(-1), q_pe.size(-1)
    scores = (torch.einsum("bhd,bsd->bhs", q.float(), kv.float()) +
              torch.einsum("bhp,bsp->bhs", q_pe.float(), k_pe.float()))
    attn = torch.softmax(scores / (dim + pe_dim)**0.5, dim=-1)
    return torch.einsum("bhs,bsd->bhd", attn, kv.float()).to(q.dtype)


def main():
    parser = argparse.ArgumentParser(description="TileLang MLA decode")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--heads", type=int, default=128)
    parser.add_argument("--kv_seqlen", type=int, default=8192)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--pe_dim", type=int, default=64)
    args = parser.parse_args()

    import torch

    kernel = mla_decode(args.batch, args.heads, args.kv_seqlen, args.dim, args.pe_dim,
                        block_N=64, block_H=64, num_stages=2, threads=256)
    b, h, s = args.batch, args.heads, args.kv_seqlen
    q = torch.randn(b, h, args.dim, device="cuda", dtype=torch.float16)
    q_pe = torch.randn(b, h, args.pe_dim, device="cuda", dtype=torch.float16)
    kv = torch.randn(b, s, args.dim, device="cuda", dtype=torch.float16)
    k_pe = torch.randn(b, s, args.pe_dim, device="cuda", dtype=torch.float16)
    o = kernel(q, q_pe, kv, k_pe)
    torch.testing.assert_close(o, ref_program(q, q_pe, kv, k_pe), rtol=1e-2, atol=1e-2)
    print("mla_decode: results match")


if __name__ == "__main__":
    main()
