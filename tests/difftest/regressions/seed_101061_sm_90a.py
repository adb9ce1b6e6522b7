# tilec difftest regression, reduced from generator seed 101061 (87 reduction checks).
# outcome: mismatch on sm_90a
# category: mismatch in int32 output
# detail: Y1: 2 of 10 elements differ; first at [5]: actual -1 expected 4 (atol 0 rtol 0); max abs error 5, rel L2 error 0.827606
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 101061 --compare --target sm_90a
# case: seed=101061 tolerance=float32 depth=1 atomics=0 dims= alt=threads=256
import tilelang.language as T


def kernel(M=1, N=10, bm=7, bn=64, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), Y1: T.Tensor((M * N,), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            S0 = T.alloc_shared((bm, bn), "int32")
            S1 = T.alloc_shared((bm, bn), "int32")
            T.copy(A[by * bm, bx * bn], S0)
            T.copy(A[by * bm, bx * bn], S1)
            for i, j in T.Parallel(bm, bn):
                if (by * bm + i < M) and (bx * bn + j < N):
                    Y1[(by * bm + i) * N + bx * bn + j] = (S0[i, j] % 5)

    return main
