# tilec difftest regression, reduced from generator seed 20261204 (49 reduction checks).
# outcome: mismatch on sm_80
# category: mismatch in int32 output
# detail: Y0: 1 of 10 elements differ; first at [0, 9]: actual 32565 expected 0 (atol 0 rtol 0); max abs error 32565, rel L2 error 32565
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 20261204 --compare --target sm_80
# case: seed=20261204 tolerance=float32 depth=32 atomics=0 dims= alt=threads=128
import tilelang.language as T


def kernel(M=1, N=10, bm=32, bn=4, threads=32):
    @T.prim_func
    def main(Y0: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            F0 = T.alloc_fragment((bm, bn), "int32")
            for i, j in T.Parallel(bn, bm):
                F0[j, i] = 0
            T.copy(F0, Y0[by * bm, bx * bn])

    return main
