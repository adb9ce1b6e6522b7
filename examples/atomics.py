"""Atomic updates of global memory, in every dtype T.atomic_* takes.

atomic_fold: A, B are (M, N) and O is (N,), all in `dtype`; `op` is "add",
"max" or "min". Each block loads a block_M x block_N tile of A into a
fragment and
  - updates B with it in the tile form, one contribution per element:
    B[i, j] = op(B[i, j], A[i, j]);
  - folds every row into O with the one-element form:
    O[j] = op(O[j], A[0, j], ..., A[M-1, j]), blocks racing on O.
The result does not depend on the order of the updates for integer dtypes
(adds wrap) and for max/min; a float add into O would: fold=False leaves O
alone (the tile form alone is then checked in float dtypes).

claim_slots: bucketing with return_prev=True. X is (N,) int32; element i
goes to bucket X[i] & 3, takes pos = atomic_add(Count[bucket], 1) (the
count before its own) and sets Slots[bucket, pos] = 1. The slots taken are
Count[k] .. Count[k] + n_k - 1 whatever order the updates run in; slots
outside a row are dropped.
"""

import argparse

import tilelang
import tilelang.language as T


def atomic_fold(M, N, block_M, block_N, dtype="int32", op="add", fold=True, threads=128):

    @T.prim_func
    def main(
            A: T.Tensor((M, N), dtype),
            B: T.Tensor((M, N), dtype),
            O: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=threads) as (bx, by):
            F = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[bx * block_M, by * block_N], F)
            if op == "add":
                T.atomic_add(B[bx * block_M, by * block_N], F)
            elif op == "max":
                T.atomic_max(B[bx * block_M, by * block_N], F)
            else:
                T.atomic_min(B[bx * block_M, by * block_N], F)
            if fold:
                for i, j in T.Parallel(block_M, block_N):
                    if bx * block_M + i < M:
                        if op == "add":
                            T.atomic_add(O[by * block_N + j], F[i, j])
                        elif op == "max":
                            T.atomic_max(O[by * block_N + j], F[i, j])
                        else:
                            T.atomic_min(O[by * block_N + j], F[i, j])

    return main


def claim_slots(N, slots, block_N, threads=128):

    @T.prim_func
    def main(
            X: T.Tensor((N,), "int32"),
            Count: T.Tensor((4,), "int32"),
            Slots: T.Tensor((4, slots), "int32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
            for i in T.Parallel(block_N):
                if bx * block_N + i < N:
                    bucket = X[bx * block_N + i] & 3
                    pos = T.atomic_add(Count[bucket], 1, return_prev=True)
                    Slots[bucket, pos] = 1

    return main


def main():
    parser = argparse.ArgumentParser(description="TileLang atomics")
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--dtype", default="int64")
    args = parser.parse_args()

    import torch

    dtype = getattr(torch, args.dtype)
    kernel = tilelang.compile(atomic_fold(args.m, args.n, 64, 64, args.dtype, "max"))
    a = torch.randint(-100, 100, (args.m, args.n), device="cuda").to(dtype)
    b = torch.randint(-100, 100, (args.m, args.n), device="cuda").to(dtype)
    o = torch.randint(-100, 100, (args.n,), device="cuda").to(dtype)
    want_b, want_o = torch.maximum(a, b), torch.maximum(o, a.max(dim=0).values)
    kernel(a, b, o)
    torch.testing.assert_close(b, want_b)
    torch.testing.assert_close(o, want_o)
    print("atomics: results match")


if __name__ == "__main__":
    main()
