"""RMS normalisation of each row, with a learned scale:

    Y[i, j] = X[i, j] / sqrt(mean_j(X[i, :]^2) + eps) * W[j]

X and Y are (M, N) and W is (N,), all in `dtype`; statistics are kept in
`accum_dtype`. The first pass sums squares over block_N-wide tiles (columns
past N read as zero and add nothing), the second pass normalises.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rms_norm(M, N, block_M, block_N, eps=1e-6, dtype="float16", accum_dtype="float32",
             threads=128):

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            W: T.Tensor((N,), dtype),
            Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            x_sq = T.alloc_fragment((block_M, block_N), accum_dtype)
            w_local = T.alloc_fragment((block_N,), accum_dtype)
            y_local = T.alloc_fragment((block_M, block_N), dtype)
            sum_sq = T.alloc_fragment((block_M,), accum_dtype)
            inv_rms = T.alloc_fragment((block_M,), accum_dtype)

            T.clear(sum_sq)
            for ko in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, ko * block_N], x_local)
                for i, j in T.Parallel(block_M, block_N):
                    x_sq[i, j] = x_local[i, j] * x_local[i, j]
                T.reduce_sum(x_sq, sum_sq, dim=1, clear=False)

            for i in T.Parallel(block_M):
                inv_rms[i] = T.rsqrt(sum_sq[i] / N + eps)

            for ko in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, ko * block_N], x_local)
                T.copy(W[ko * block_N], w_local)
                for i, j in T.Parallel(block_M, block_N):
                    y_local[i, j] = x_local[i, j] * inv_rms[i] * w_local[j]
                T.copy(y_local, Y[bx * block_M, ko * block_N])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang RMSNorm")
    parser.add_argument("--m", type=int, default=8192)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--eps", type=float, default=1e-6)
    args = parser.parse_args()

    import torch

    kernel = rms_norm(args.m, args.n, 4, 1024, eps=args.eps)
    x = torch.randn(args.m, args.n, device="cuda", dtype=torch.float16)
    w = torch.randn(args.n, device="cuda", dtype=torch.float16)
    y = kernel(x, w)
    xf = x.float()
    ref = xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + args.eps) * w.float()
    torch.testing.assert_close(y, ref.half(), rtol=1e-2, atol=1e-2)
    print("rmsnorm: results match")


if __name__ == "__main__":
    main()
