"""GEMM in the eager @tilelang.jit style: C = A @ B.

The problem sizes M, N, K are constants taken from the tensors passed at the
first call; the output C is created by the kernel and returned. A is (M, K),
B is (K, N), C is (M, N), all in `dtype`; accumulation is in `accum_dtype`.
Ragged sizes are handled by the clipping of T.copy at the tensor borders.
"""

import argparse

import torch
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(
    A,
    B,
    block_M: int = 128,
    block_N: int = 128,
    block_K: int = 32,
    num_stages: int = 3,
    threads: int = 128,
    dtype: T.dtype = T.float16,
    accum_dtype: T.dtype = T.float32,
):
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)

        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


def main():
    parser = argparse.ArgumentParser(description="TileLang eager GEMM")
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=1024)
    args = parser.parse_args()

    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.k, args.n, device="cuda", dtype=torch.float16)
    c = matmul(a, b, block_M=128, block_N=128, block_K=32)

    torch.testing.assert_close(c, a @ b, rtol=1e-2, atol=1e-2)
    print("gemm_eager: results match")


if __name__ == "__main__":
    main()
