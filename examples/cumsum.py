"""Inclusive prefix sum along each row.

    forward:  Y[i, j] = sum_{j' <= j} X[i, j']
    reverse:  Y[i, j] = sum_{j' >= j} X[i, j']

X and Y are (M, N) in `dtype`; sums are kept in `accum_dtype`. Each block owns
block_M rows and walks them in block_N-wide tiles (right to left when
reversed): it scans the tile with T.cumsum and adds the carry, the total of
the tiles already visited. Columns past N read as zero, which leaves the
sums of the real columns unchanged.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def cumsum(M, N, block_M, block_N, reverse=False, dtype="float32", accum_dtype="float32",
           threads=128):
    num_tiles = (N + block_N - 1) // block_N
    # The column of a scanned tile that holds the running total.
    total_col = 0 if reverse else block_N - 1

    @T.prim_func
    def main(
            X: T.Tensor((M, N), dtype),
            Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x_shared = T.alloc_shared((block_M, block_N), accum_dtype)
            carry = T.alloc_fragment((block_M,), accum_dtype)

            T.clear(carry)
            for ko in T.serial(num_tiles):
                if reverse:
                    T.copy(X[bx * block_M, (num_tiles - 1 - ko) * block_N], x_shared)
                else:
                    T.copy(X[bx * block_M, ko * block_N], x_shared)
                T.cumsum(x_shared, dim=1, reverse=reverse)
                for i, j in T.Parallel(block_M, block_N):
                    x_shared[i, j] += carry[i]
                for i in T.Parallel(block_M):
                    carry[i] = x_shared[i, total_col]
                if reverse:
                    T.copy(x_shared, Y[bx * block_M, (num_tiles - 1 - ko) * block_N])
                else:
                    T.copy(x_shared, Y[bx * block_M, ko * block_N])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang row cumsum")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--reverse", action="store_true")
    args = parser.parse_args()

    import torch

    kernel = cumsum(args.m, args.n, 32, 256, reverse=args.reverse)
    x = torch.randn(args.m, args.n, device="cuda", dtype=torch.float32)
    y = kernel(x)
    if args.reverse:
        ref = x.flip(1).cumsum(dim=1).flip(1)
    else:
        ref = x.cumsum(dim=1)
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-3)
    print("cumsum: results match")


if __name__ == "__main__":
    main()
