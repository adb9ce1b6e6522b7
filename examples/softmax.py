"""Row softmax: Y[i, :] = softmax(X[i, :]).

X and Y are (M, N) in `dtype`. Each block owns block_M rows and walks the row
in block_N-wide tiles twice: the first pass keeps a running maximum and a
running sum of exponentials (rescaled whenever the maximum grows), the second
writes exp(x - max) / sum. Exponentials use exp2 with the log2(e) factor.
Columns past N are masked to -inf so that they add nothing to the sum.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def softmax(M, N, block_M, block_N, dtype="float16", accum_dtype="float32", threads=128):
    log2e = 1.44269504088896

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x_tile = T.alloc_fragment((block_M, block_N), accum_dtype)
            y_tile = T.alloc_fragment((block_M, block_N), dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)
            tile_sum = T.alloc_fragment((block_M,), accum_dtype)

            T.fill(row_max, -T.infinity(accum_dtype))
            T.fill(row_sum, 0)
            for ko in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, ko * block_N], x_tile)
                for i, j in T.Parallel(block_M, block_N):
                    x_tile[i, j] = T.if_then_else(ko * block_N + j < N, x_tile[i, j],
                                                  -T.infinity(accum_dtype))
                T.copy(row_max, row_max_prev)
                # clear=False: the new maximum also covers the previous tiles.
                T.reduce_max(x_tile, row_max, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    x_tile[i, j] = T.exp2((x_tile[i, j] - row_max[i]) * log2e)
                T.reduce_sum(x_tile, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    row_sum[i] = row_sum[i] * T.exp2(
                        (row_max_prev[i] - row_max[i]) * log2e) + tile_sum[i]

            for ko in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, ko * block_N], x_tile)
                for i, j in T.Parallel(block_M, block_N):
                    y_tile[i, j] = T.exp2((x_tile[i, j] - row_max[i]) * log2e) / row_sum[i]
                T.copy(y_tile, Y[bx * block_M, ko * block_N])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang row softmax")
    parser.add_argument("--m", type=int, default=8192)
    parser.add_argument("--n", type=int, default=4096)
    args = parser.parse_args()

    import torch

    kernel = softmax(args.m, args.n, 8, 512)
    x = torch.randn(args.m, args.n, device="cuda", dtype=torch.float16)
    y = kernel(x)
    torch.testing.assert_close(y, torch.softmax(x.float(), dim=1).half(), rtol=1e-2, atol=1e-3)
    print("softmax: results match")


if __name__ == "__main__":
    main()
