"""Layer normalisation of each row, with affine parameters:

    mean_i = mean_j(X[i, j])
    var_i  = mean_j((X[i, j] - mean_i)^2)          (biased, as in torch)
    Y[i, j] = (X[i, j] - mean_i) / sqrt(var_i + eps) * gamma[j] + beta[j]

X and Y are (M, N), gamma and beta are (N,), all in `dtype`; statistics are
kept in `accum_dtype`. Three passes over block_N-wide tiles: the mean, the
variance around the mean (columns past N are masked out, since there x - mean
is not zero), and the normalisation.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def layer_norm(M, N, block_M, block_N, eps=1e-5, dtype="float16", accum_dtype="float32",
               threads=128):

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            gamma: T.Tensor((N,), dtype),
            beta: T.Tensor((N,), dtype),
            Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            centered_sq = T.alloc_fragment((block_M, block_N), accum_dtype)
            gamma_local = T.alloc_fragment((block_N,), accum_dtype)
            beta_local = T.alloc_fragment((block_N,), accum_dtype)
            y_local = T.alloc_fragment((block_M, block_N), dtype)
            mean = T.alloc_fragment((block_M,), accum_dtype)
            var = T.alloc_fragment((block_M,), accum_dtype)
            inv_std = T.alloc_fragment((block_M,), accum_dtype)

            T.clear(mean)
            for ko in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, ko * block_N], x_local)
                T.reduce_sum(x_local, mean, dim=1, clear=False)
            for i in T.Parallel(block_M):
                mean[i] = mean[i] / N

            T.clear(var)
            for ko in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, ko * block_N], x_local)
                for i, j in T.Parallel(block_M, block_N):
                    centered_sq[i, j] = T.if_then_else(
                        ko * block_N + j < N,
                        (x_local[i, j] - mean[i]) * (x_local[i, j] - mean[i]),
                        0,
                    )
                T.reduce_sum(centered_sq, var, dim=1, clear=False)
            for i in T.Parallel(block_M):
                inv_std[i] = T.rsqrt(var[i] / N + eps)

            for ko in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, ko * block_N], x_local)
                T.copy(gamma[ko * block_N], gamma_local)
                T.copy(beta[ko * block_N], beta_local)
                for i, j in T.Parallel(block_M, block_N):
                    y_local[i, j] = ((x_local[i, j] - mean[i]) * inv_std[i] * gamma_local[j] +
                                     beta_local[j])
                T.copy(y_local, Y[bx * block_M, ko * block_N])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang LayerNorm")
    parser.add_argument("--m", type=int, default=8192)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--eps", type=float, default=1e-5)
    args = parser.parse_args()

    import torch

    kernel = layer_norm(args.m, args.n, 4, 1024, eps=args.eps)
    x = torch.randn(args.m, args.n, device="cuda", dtype=torch.float16)
    gamma = torch.randn(args.n, device="cuda", dtype=torch.float16)
    beta = torch.randn(args.n, device="cuda", dtype=torch.float16)
    y = kernel(x, gamma, beta)
    ref = torch.nn.functional.layer_norm(x.float(), (args.n,), gamma.float(), beta.float(),
                                         args.eps)
    torch.testing.assert_close(y, ref.half(), rtol=1e-2, atol=1e-2)
    print("layernorm: results match")


if __name__ == "__main__":
    main()
