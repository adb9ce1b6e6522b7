"""Batched GEMM: C[b] = A[b] @ B[b] for every b in the batch.

A is (batch, M, K), B is (batch, K, N), C is (batch, M, N), all in `dtype`;
accumulation is in `accum_dtype`. The third grid dimension walks the batch.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def batched_matmul(
    batch,
    M,
    N,
    K,
    block_M,
    block_N,
    block_K,
    dtype="float16",
    accum_dtype="float32",
    num_stages=2,
    threads=128,
):

    @T.prim_func
    def main(
            A: T.Tensor((batch, M, K), dtype),
            B: T.Tensor((batch, K, N), dtype),
            C: T.Tensor((batch, M, N), dtype),
    ):
        with T.Kernel(
                T.ceildiv(N, block_N), T.ceildiv(M, block_M), batch,
                threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                # Head-address form: the batch index is a dimension of extent 1.
                T.copy(A[bz, by * block_M, ko * block_K], A_shared)
                T.copy(B[bz, ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.copy(C_local, C[bz, by * block_M, bx * block_N])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang batched GEMM")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=512)
    args = parser.parse_args()

    import torch

    kernel = batched_matmul(args.batch, args.m, args.n, args.k, 128, 128, 32)
    a = torch.randn(args.batch, args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.batch, args.k, args.n, device="cuda", dtype=torch.float16)
    c = kernel(a, b)
    torch.testing.assert_close(c, torch.bmm(a, b), rtol=1e-2, atol=1e-2)
    print("batched_gemm: results match")


if __name__ == "__main__":
    main()
