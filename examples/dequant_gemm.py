"""GEMM with int4 weights dequantised on the fly: C = A @ W^T.

A is (M, K) in `in_dtype`. The weights W (N, K) arrive packed two per byte:
B is (N, K // 2) uint8, and

    W[n, k] = int4(B[n, k // 2] >> (4 * (k % 2)) & 0xF) * Scale[n, k // group_size]

that is, element 2b of a row sits in the low nibble of byte b and element
2b + 1 in its high nibble, each a two's-complement value in [-8, 7]. Scale is
(N, ceil(K / group_size)) in `in_dtype`, one scale per group of group_size
consecutive k. C is (M, N) in `out_dtype`; accumulation is in `accum_dtype`.
K must be even; block_K must be a multiple of group_size.

Tiles past the ends of A, B and Scale read zeros; a zero byte with a zero
scale dequantises to zero, so the padded part of the tile adds nothing.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def dequant_matmul(M, N, K, group_size, block_M, block_N, block_K, num_stages=2, threads=128,
                   in_dtype="float16", out_dtype="float16", accum_dtype="float32"):
    num_groups = (K + group_size - 1) // group_size

    @T.prim_func
    def main(
            A: T.Tensor((M, K), in_dtype),
            B: T.Tensor((N, K // 2), "uint8"),
            Scale: T.Tensor((N, num_groups), in_dtype),
            C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype)
            B_packed_shared = T.alloc_shared((block_N, block_K // 2), "uint8")
            Scale_shared = T.alloc_shared((block_N, block_K // group_size), in_dtype)
            B_dequant_shared = T.alloc_shared((block_N, block_K), in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * (block_K // 2)], B_packed_shared)
                T.copy(Scale[bx * block_N, ko * (block_K // group_size)], Scale_shared)

                for j, k in T.Parallel(block_N, block_K):
                    nibble = (B_packed_shared[j, k // 2] >> (4 * (k % 2))) & 0xF
                    # (nibble ^ 8) - 8 sign-extends a 4-bit two's-complement value.
                    B_dequant_shared[j, k] = (T.cast(nibble ^ 8, in_dtype) -
                                              8) * Scale_shared[j, k // group_size]

                T.gemm(A_shared, B_dequant_shared, C_local, transpose_B=True)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def pack_int4(w):
    """Packs an (N, K) int tensor with values in [-8, 7] into (N, K // 2) uint8."""
    import torch

    u = (w.to(torch.int16) & 0xF).to(torch.uint8)
    return u[:, 0::2] | (u[:, 1::2] << 4)


def main():
    parser = argparse.ArgumentParser(description="TileLang int4 dequantising GEMM")
    parser.add_argument("--m", type=int, default=256)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=4096)
    parser.add_argument("--group_size", type=int, default=128)
    args = parser.parse_args()

    import torch

    kernel = dequant_matmul(args.m, args.n, args.k, args.group_size, 64, 128, 128)
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    w_int = torch.randint(-8, 8, (args.n, args.k), device="cuda")
    scale = torch.rand(args.n, args.k // args.group_size, device="cuda", dtype=torch.float16)
    c = kernel(a, pack_int4(w_int), scale)

    w = w_int.half() * scale.repeat_interleave(args.group_size, dim=1)
    torch.testing.assert_close(c, a @ w.t(), rtol=1e-2, atol=1e-1)
    print("dequant_gemm: results match")


if __name__ == "__main__":
    main()
