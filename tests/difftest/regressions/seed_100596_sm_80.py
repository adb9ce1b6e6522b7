# tilec difftest regression, reduced from generator seed 100596 (98 reduction checks).
# outcome: mismatch on sm_80
# category: mismatch in bfloat16 output
# detail: Y0: 1 of 2 elements differ; first at [1]: actual 0 expected 1 (atol 0.0995992 rtol 0.0995992); max abs error 1, rel L2 error 0.707107
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 100596 --compare --target sm_80
# case: seed=100596 tolerance=bfloat16 depth=155 atomics=0 dims= alt=threads=128
import tilelang.language as T


def kernel(M=1, N=2, bm=1, bn=2, threads=32):
    @T.prim_func
    def main(Y0: T.Tensor((M * N,), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            F3 = T.alloc_fragment((bm * bn,), "bfloat16")
            S4 = T.alloc_shared((bm * bn,), "bfloat16")
            F5 = T.alloc_fragment((bm, bn), "float32")
            for ko in T.serial(T.ceildiv(N, bn)):
                for k in T.Parallel(bm * bn):
                    F3[(k // bn) * bn + k % bn] = T.cast(1.0, "bfloat16")
                T.copy(F3, S4)
                for i, j in T.Parallel(bm, bn):
                    F5[i, j] = T.cast(S4[(i) * bn + j], "float32")
                for i, j in T.Parallel(bm, bn):
                    if (bx * bm + i < M) and (ko * bn + j < N):
                        Y0[(bx * bm + i) * N + ko * bn + j] = T.cast(F5[i, j], "bfloat16")

    return main
