"""Row reduction: Y[i] = sum_j X[i, j].

X is (M, N) in `dtype`; Y is (M,) in `out_dtype`. Each block owns block_M
rows and accumulates block_N-wide tiles into a running sum; columns past N
read as zero and rows past M are not stored.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def reduce_sum(M, N, block_M, block_N, dtype="float16", out_dtype="float32",
               accum_dtype="float32", threads=128):

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            Y: T.Tensor((M,), out_dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)

            T.clear(row_sum)
            for ko in T.Pipelined(T.ceildiv(N, block_N), num_stages=1):
                T.copy(X[bx * block_M, ko * block_N], x_local)
                T.reduce_sum(x_local, row_sum, dim=1, clear=False)

            T.copy(row_sum, Y[bx * block_M])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang row sum")
    parser.add_argument("--m", type=int, default=8192)
    parser.add_argument("--n", type=int, default=8192)
    args = parser.parse_args()

    import torch

    kernel = reduce_sum(args.m, args.n, 16, 256)
    x = torch.randn(args.m, args.n, device="cuda", dtype=torch.float16)
    y = kernel(x)
    torch.testing.assert_close(y, x.float().sum(dim=1), rtol=1e-3, atol=1e-2)
    print("reduce_sum: results match")


if __name__ == "__main__":
    main()
