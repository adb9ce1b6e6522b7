"""float8 GEMM: C = A @ op(B) with float8 operands and a float32 result.

A is (M, K) in `a_dtype`; B is (N, K) with transpose_B (the K-major layout
float8 tensor cores prefer) or (K, N) otherwise, in `b_dtype`; each of
a_dtype and b_dtype is float8_e4m3 or float8_e5m2. Products accumulate in
`accum_dtype` (float32), which is also C's type, so no precision is lost on
the way out.

Sizes need not divide the block sizes: T.copy reads zeros past the edges of A
and B, and drops the part of the last tiles of C that lies outside C.
"""

import argparse

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_fp8(
    M,
    N,
    K,
    block_M,
    block_N,
    block_K,
    a_dtype="float8_e4m3",
    b_dtype="float8_e4m3",
    accum_dtype="float32",
    transpose_B=True,
    num_stages=2,
    threads=128,
):
    B_shape = (N, K) if transpose_B else (K, N)
    B_shared_shape = (block_N, block_K) if transpose_B else (block_K, block_N)

    @T.prim_func
    def main(
            A: T.Tensor((M, K), a_dtype),
            B: T.Tensor(B_shape, b_dtype),
            C: T.Tensor((M, N), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), a_dtype)
            B_shared = T.alloc_shared(B_shared_shape, b_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                if transpose_B:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=transpose_B)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang float8 GEMM")
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=4096)
    parser.add_argument("--dtype", choices=["float8_e4m3", "float8_e5m2"], default="float8_e4m3")
    args = parser.parse_args()

    import torch

    torch_dtype = torch.float8_e4m3fn if args.dtype == "float8_e4m3" else torch.float8_e5m2
    kernel = matmul_fp8(args.m, args.n, args.k, 128, 128, 64, a_dtype=args.dtype,
                        b_dtype=args.dtype, num_stages=3)

    a = torch.randn(args.m, args.k, device="cuda").to(torch_dtype)
    b = torch.randn(args.n, args.k, device="cuda").to(torch_dtype)
    c = kernel(a, b)

    ref = a.float() @ b.float().t()
    torch.testing.assert_close(c, ref, rtol=1e-2, atol=1e-2)
    print("gemm_fp8: results match")

    latency = kernel.get_profiler().do_bench()
    print(f"latency: {latency:.3f} ms, "
          f"{2 * args.m * args.n * args.k / latency * 1e-9:.2f} TFLOPS")


if __name__ == "__main__":
    main()
