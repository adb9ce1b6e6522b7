# tilec difftest regression, reduced from generator seed 20261154 (93 reduction checks).
# outcome: mismatch on sm_80
# category: mismatch in float32 output
# detail: Y0: 1 of 3 elements differ; first at [2, 0]: actual 0 expected 1 (atol 0.0536656 rtol 0.0536656); max abs error 1, rel L2 error 0.57735
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 20261154 --compare --target sm_80
# case: seed=20261154 tolerance=bfloat16 depth=45 atomics=0 dims= alt=threads=128,stages=2
import tilelang.language as T


def kernel(M=1, N=3, K=1, bm=16, bn=16, threads=96, bk=16, stages=0):
    @T.prim_func
    def main(Y0: T.Tensor((N, M), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            F3 = T.alloc_fragment((bn, bm), "float32")
            for i, j in T.Parallel(bm, bn):
                F3[j, i] = 1.0
            T.copy(F3, Y0[bx * bn, by * bm])

    return main
