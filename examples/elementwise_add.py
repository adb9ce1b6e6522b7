"""Element-wise add with a cast: C = cast(A + B, out_dtype).

A and B are (M, N) in `in_dtype`, C is (M, N) in `out_dtype`; the sum is
taken in `in_dtype` and then converted. Each thread block covers a
block_M x block_N tile and reads global memory directly, so the loop guards
the elements of the last tiles that lie outside the tensors.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def elementwise_add(M, N, block_M, block_N, in_dtype="float16", out_dtype="float32", threads=128):

    @T.prim_func
    def main(
            A: T.Tensor((M, N), in_dtype),
            B: T.Tensor((M, N), in_dtype),
            C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                y = by * block_M + i
                x = bx * block_N + j
                if y < M and x < N:
                    C[y, x] = T.cast(A[y, x] + B[y, x], out_dtype)

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang element-wise add")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    args = parser.parse_args()

    import torch

    kernel = elementwise_add(args.m, args.n, 32, 128)
    a = torch.randn(args.m, args.n, device="cuda", dtype=torch.float16)
    b = torch.randn(args.m, args.n, device="cuda", dtype=torch.float16)
    c = kernel(a, b)
    torch.testing.assert_close(c, (a + b).float(), rtol=1e-3, atol=1e-3)
    print("elementwise_add: results match")


if __name__ == "__main__":
    main()
