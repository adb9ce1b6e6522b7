"""Split-K GEMM: C += A @ B, with K split across `split_k` blocks.

A is (M, K) and B is (K, N) in `dtype`; C is (M, N) in float32 and is both
read and written: every block adds its partial product into C with
T.atomic_add, so C must hold zeros before the launch to get A @ B.

K is cut into `split_k` slices of a whole number of block_K tiles; slices and
tiles past the end of K read zeros, so K need not divide anything.
"""

import argparse

import tilelang
import tilelang.language as T


def matmul_splitk(
    M,
    N,
    K,
    block_M,
    block_N,
    block_K,
    split_k,
    dtype="float16",
    accum_dtype="float32",
    num_stages=2,
    threads=128,
):
    # Length of one K slice, rounded up to whole tiles so that slices never
    # overlap.
    k_tiles_per_split = ((K + split_k - 1) // split_k + block_K - 1) // block_K
    split_size = k_tiles_per_split * block_K

    @T.prim_func
    def main(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(
                T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k,
                threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(k_tiles_per_split, num_stages=num_stages):
                T.copy(A[by * block_M, bz * split_size + ko * block_K], A_shared)
                T.copy(B[bz * split_size + ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.atomic_add(C[by * block_M, bx * block_N], C_local)

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang split-K GEMM")
    parser.add_argument("--m", type=int, default=256)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--k", type=int, default=8192)
    parser.add_argument("--split_k", type=int, default=8)
    args = parser.parse_args()

    import torch

    func = matmul_splitk(args.m, args.n, args.k, 64, 64, 64, args.split_k)
    kernel = tilelang.compile(func)

    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.k, args.n, device="cuda", dtype=torch.float16)
    c = torch.zeros(args.m, args.n, device="cuda", dtype=torch.float32)
    kernel(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-2, atol=1e-2)
    print("gemm_splitk: results match")


if __name__ == "__main__":
    main()
