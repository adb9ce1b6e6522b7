"""2-D convolution as an implicit GEMM (im2col gathered into shared memory).

    out[n, oh, ow, f] = sum_{kh, kw, c} data[n, oh*S + kh - P, ow*S + kw - P, c]
                                        * weight[kh, kw, c, f]

with stride S and zero padding P (input positions outside the image read as
zero); OH = (H + 2P - KH) // S + 1 and OW = (W + 2P - KW) // S + 1. data is
NHWC (N, H, W, C), weight is HWIO (KH, KW, C, F), out is NHWC (N, OH, OW, F);
all in `dtype`, accumulated in `accum_dtype`.

As a GEMM: row m = (n * OH + oh) * OW + ow of the (N*OH*OW, KH*KW*C) im2col
matrix times row k = (kh * KW + kw) * C + c of the (KH*KW*C, F) weight matrix.
Both tiles are gathered with index arithmetic; the output tile is stored
element by element, guarded at the edges.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def conv2d(N, C, H, W, F, KH, KW, S, P, block_M, block_N, block_K, num_stages=2, threads=128,
           dtype="float16", accum_dtype="float32"):
    OH = (H + 2 * P - KH) // S + 1
    OW = (W + 2 * P - KW) // S + 1
    gemm_m = N * OH * OW
    gemm_k = KH * KW * C

    @T.prim_func
    def main(
            data: T.Tensor((N, H, W, C), dtype),
            weight: T.Tensor((KH, KW, C, F), dtype),
            out: T.Tensor((N, OH, OW, F), dtype),
    ):
        with T.Kernel(
                T.ceildiv(F, block_N), T.ceildiv(gemm_m, block_M), threads=threads) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            weight_shared = T.alloc_shared((block_K, block_N), dtype)
            out_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(out_local)
            for ko in T.Pipelined(T.ceildiv(gemm_k, block_K), num_stages=num_stages):
                # im2col: one row per output pixel, one column per (kh, kw, c).
                for i, j in T.Parallel(block_M, block_K):
                    m = by * block_M + i
                    k = ko * block_K + j
                    ih = m % (OH * OW) // OW * S + k // (KW * C) - P
                    iw = m % OW * S + k // C % KW - P
                    in_bound = ((m < gemm_m) and (k < gemm_k) and (ih >= 0) and (ih < H) and
                                (iw >= 0) and (iw < W))
                    data_shared[i, j] = T.if_then_else(in_bound, data[m // (OH * OW), ih, iw,
                                                                      k % C], 0)
                for j, f in T.Parallel(block_K, block_N):
                    k = ko * block_K + j
                    fo = bx * block_N + f
                    weight_shared[j, f] = T.if_then_else(
                        (k < gemm_k) and (fo < F), weight[k // (KW * C), k // C % KW, k % C, fo],
                        0)
                T.gemm(data_shared, weight_shared, out_local)

            for i, f in T.Parallel(block_M, block_N):
                m = by * block_M + i
                fo = bx * block_N + f
                if (m < gemm_m) and (fo < F):
                    out[m // (OH * OW), m % (OH * OW) // OW, m % OW, fo] = out_local[i, f]

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang conv2d (implicit GEMM)")
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--c", type=int, default=128)
    parser.add_argument("--h", type=int, default=64)
    parser.add_argument("--w", type=int, default=64)
    parser.add_argument("--f", type=int, default=128)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--s", type=int, default=1)
    parser.add_argument("--p", type=int, default=1)
    args = parser.parse_args()

    import torch
    import torch.nn.functional as F

    kernel = conv2d(args.n, args.c, args.h, args.w, args.f, args.k, args.k, args.s, args.p,
                    block_M=128, block_N=128, block_K=32, num_stages=3, threads=256)
    data = torch.randn(args.n, args.h, args.w, args.c, device="cuda", dtype=torch.float16)
    weight = torch.randn(args.k, args.k, args.c, args.f, device="cuda", dtype=torch.float16)
    out = kernel(data, weight)

    ref = F.conv2d(data.permute(0, 3, 1, 2), weight.permute(3, 2, 0, 1), stride=args.s,
                   padding=args.p).permute(0, 2, 3, 1)
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=1e-2)
    print("conv2d_im2col: results match")


if __name__ == "__main__":
    main()
