# tilec difftest regression, reduced from generator seed 20261251 (95 reduction checks).
# outcome: mismatch on sm_80
# category: mismatch in float16 output
# detail: Y0: 1 of 2 elements differ; first at [0, 1]: actual 0 expected 1 (atol 0.0538516 rtol 0.0538516); max abs error 1, rel L2 error 0.707107
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 20261251 --compare --target sm_80
# case: seed=20261251 tolerance=float16 depth=116 atomics=0 dims= alt=threads=128
import tilelang.language as T


def kernel(M=1, N=2, bm=1, bn=2, threads=32):
    @T.prim_func
    def main(Y0: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            F3 = T.alloc_fragment((bm, bn), "float16")
            S4 = T.alloc_shared((bm, bn), "float16")
            for ko in T.serial(T.ceildiv(N, bn)):
                for i, j in T.Parallel(bn, bm):
                    F3[j, i] = T.cast(1.0, "float16")
                T.copy(F3, S4)
                T.copy(S4, Y0[bx * bm:bx * bm + bm, ko * bn:ko * bn + bn])

    return main
