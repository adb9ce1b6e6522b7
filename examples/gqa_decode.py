"""Grouped-query attention for decoding, with the keys split across blocks.

One new token per sequence attends to a KV cache:

    O[b, h, :] = sum_j softmax_j(Q[b, h, :] . K[b, j, g, :] * sm_scale) V[b, j, g, :]

where g = h // (heads // groups) is the KV head shared by a group of query
heads and sm_scale = 1 / sqrt(dim). Q and O are (batch, heads, dim); K and V
are (batch, seqlen_kv, groups, dim); all in `dtype`.

Two kernels run one after the other:
  1. split: block (b, g, s) attends the query heads of group g to the s-th
     slice of the cache (num_split slices of whole block_N tiles) and writes
     the slice's normalised output and its log-sum-exp (base 2, scaled) to
     global workspaces;
  2. combine: block (h, b) merges the slices, weighting each by
     2^(lse_s - max_s lse_s). A slice that holds no keys has lse = -inf and
     weight 0.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def gqa_decode(batch, heads, groups, seqlen_kv, dim, num_split, block_N, block_H,
               num_stages=1, threads=128, dtype="float16", accum_dtype="float32"):
    scale = (1.0 / dim)**0.5 * 1.44269504  # log2(e), for exp2
    kv_group_num = heads // groups  # query heads per KV head
    valid_block_H = min(block_H, kv_group_num)
    # Each split covers a whole number of key tiles.
    tiles_per_split = ((seqlen_kv + num_split - 1) // num_split + block_N - 1) // block_N
    split_len = tiles_per_split * block_N

    @T.prim_func
    def main(
            Q: T.Tensor([batch, heads, dim], dtype),
            K: T.Tensor([batch, seqlen_kv, groups, dim], dtype),
            V: T.Tensor([batch, seqlen_kv, groups, dim], dtype),
            Output: T.Tensor([batch, heads, dim], dtype),
    ):
        glse = T.alloc_global([batch, heads, num_split], accum_dtype)
        Output_partial = T.alloc_global([batch, heads, num_split, dim], accum_dtype)

        with T.Kernel(batch, groups, num_split, threads=threads) as (bid, hid, sid):
            Q_shared = T.alloc_shared([block_H, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            acc_s = T.alloc_fragment([block_H, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_H, block_N], dtype)
            acc_o = T.alloc_fragment([block_H, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_H], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_H], accum_dtype)
            scores_scale = T.alloc_fragment([block_H], accum_dtype)
            scores_sum = T.alloc_fragment([block_H], accum_dtype)
            logsum = T.alloc_fragment([block_H], accum_dtype)

            # Rows past valid_block_H hold other groups' heads (or zeros past
            # the last head); they are computed and never stored.
            T.copy(Q[bid, hid * valid_block_H:hid * valid_block_H + block_H, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            # Only the tiles that hold at least one key: each tile then has a
            # finite score in every row, and an empty split runs no tile.
            split_start = sid * split_len
            num_tiles = T.ceildiv(T.max(T.min(split_len, seqlen_kv - split_start), 0), block_N)
            for k in T.Pipelined(num_tiles, num_stages=num_stages):
                kv_start = split_start + k * block_N
                T.copy(K[bid, kv_start:kv_start + block_N, hid, :], K_shared)
                T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.if_then_else(kv_start + j < seqlen_kv, acc_s[i, j],
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
                T.copy(acc_s, acc_s_cast)
                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bid, kv_start:kv_start + block_N, hid, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o)

            for i, j in T.Parallel(block_H, dim):
                if i < valid_block_H:
                    Output_partial[bid, hid * valid_block_H + i, sid, j] = T.if_then_else(
                        logsum[i] > 0, acc_o[i, j] / logsum[i], 0)
            for i in T.Parallel(block_H):
                if i < valid_block_H:
                    glse[bid, hid * valid_block_H + i, sid] = T.if_then_else(
                        logsum[i] > 0,
                        T.log2(logsum[i]) + scores_max[i] * scale,
                        -T.infinity(accum_dtype),
                    )

        with T.Kernel(heads, batch, threads=threads) as (by, bz):
            lse_local = T.alloc_fragment([num_split], accum_dtype)
            lse_max = T.alloc_fragment([1], accum_dtype)
            o_partial = T.alloc_fragment([dim], accum_dtype)
            o_acc = T.alloc_fragment([dim], accum_dtype)
            weight_sum = T.alloc_var(accum_dtype, init=0)

            T.copy(glse[bz, by, :], lse_local)
            T.reduce_max(lse_local, lse_max, dim=0)
            T.clear(o_acc)
            for s in T.serial(num_split):
                T.copy(Output_partial[bz, by, s, :], o_partial)
                weight = T.exp2(lse_local[s] - lse_max[0])
                weight_sum += weight
                for j in T.Parallel(dim):
                    o_acc[j] += weight * o_partial[j]
            for j in T.Parallel(dim):
                o_acc[j] = o_acc[j] / weight_sum
            T.copy(o_acc, Output[bz, by, :])

    return main


def ref_program(Q, K, V, groups):
    import torch

    heads, dim = Q.size(1), Q.size(2)
    k = K.float().repeat_interleave(heads // groups, dim=2)  # (b, s, heads, d)
    v = V.float().repeat_interleave(heads // groups, dim=2)
    scores = torch.einsum("bhd,bshd->bhs", Q.float(), k) / dim**0.5
    attn = torch.softmax(scores, dim=-1)
    return torch.einsum("bhs,bshd->bhd", attn, v).to(Q.dtype)


def main():
    parser = argparse.ArgumentParser(description="TileLang GQA split-KV decode")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--kv_seqlen", type=int, default=8192)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--num_split", type=int, default=8)
    args = parser.parse_args()

    import torch

    kernel = gqa_decode(args.batch, args.heads, args.groups, args.kv_seqlen, args.dim,
                        args.num_split, block_N=64, block_H=64, num_stages=2)
    q = torch.randn(args.batch, args.heads, args.dim, device="cuda", dtype=torch.float16)
    kv_shape = (args.batch, args.kv_seqlen, args.groups, args.dim)
    k = torch.randn(kv_shape, device="cuda", dtype=torch.float16)
    v = torch.randn(kv_shape, device="cuda", dtype=torch.float16)
    o = kernel(q, k, v)
    torch.testing.assert_close(o, ref_program(q, k, v, args.groups), rtol=1e-2, atol=1e-2)
    print("gqa_decode: results match")


if __name__ == "__main__":
    main()
