"""Tiled GEMM: C = op(A) @ op(B), where op transposes when asked.

A is (M, K), or (K, M) with transpose_A; B is (K, N), or (N, K) with
transpose_B; C is (M, N). Inputs and output are in `dtype` (float16 or
bfloat16); products are accumulated in `accum_dtype`.

Sizes need not divide the block sizes: T.copy reads zeros past the edges of A
and B, and drops the part of the last tiles of C that lies outside C.
"""

import argparse

import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout


@tilelang.jit(out_idx=[-1])
def matmul(
    M,
    N,
    K,
    block_M,
    block_N,
    block_K,
    dtype="float16",
    accum_dtype="float32",
    transpose_A=False,
    transpose_B=False,
    num_stages=2,
    threads=128,
    enable_rasterization=True,
):
    A_shape = (K, M) if transpose_A else (M, K)
    B_shape = (N, K) if transpose_B else (K, N)
    A_shared_shape = (block_K, block_M) if transpose_A else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if transpose_B else (block_K, block_N)

    @T.prim_func
    def main(
            A: T.Tensor(A_shape, dtype),
            B: T.Tensor(B_shape, dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, dtype)
            B_shared = T.alloc_shared(B_shared_shape, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)

            T.annotate_layout({
                A_shared: make_swizzled_layout(A_shared),
                B_shared: make_swizzled_layout(B_shared),
            })
            # Visit the output tiles in panels so that neighbouring blocks share
            # tiles of A and B in L2.
            T.use_swizzle(panel_size=10, enable=enable_rasterization)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if transpose_A:
                    T.copy(A[ko * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                if transpose_B:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(
                    A_shared,
                    B_shared,
                    C_local,
                    transpose_A=transpose_A,
                    transpose_B=transpose_B,
                )

            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang GEMM")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=4096)
    parser.add_argument("--dtype", choices=["float16", "bfloat16"], default="float16")
    parser.add_argument("--transpose_a", action="store_true")
    parser.add_argument("--transpose_b", action="store_true")
    args = parser.parse_args()

    import torch

    torch_dtype = torch.float16 if args.dtype == "float16" else torch.bfloat16
    kernel = matmul(
        args.m,
        args.n,
        args.k,
        128,
        128,
        32,
        dtype=args.dtype,
        transpose_A=args.transpose_a,
        transpose_B=args.transpose_b,
        num_stages=3,
    )

    a = torch.randn(args.m, args.k, device="cuda", dtype=torch_dtype)
    b = torch.randn(args.k, args.n, device="cuda", dtype=torch_dtype)
    a_in = a.t().contiguous() if args.transpose_a else a
    b_in = b.t().contiguous() if args.transpose_b else b
    c = kernel(a_in, b_in)

    ref = (a.float() @ b.float()).to(torch_dtype)
    torch.testing.assert_close(c, ref, rtol=1e-2, atol=1e-2)
    print("gemm: results match")

    latency = kernel.get_profiler().do_bench()
    print(f"latency: {latency:.3f} ms, "
          f"{2 * args.m * args.n * args.k / latency * 1e-9:.2f} TFLOPS")


if __name__ == "__main__":
    main()
