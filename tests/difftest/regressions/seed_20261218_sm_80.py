# tilec difftest regression, reduced from generator seed 20261218 (48 reduction checks).
# outcome: mismatch on sm_80
# category: mismatch in float32 output
# detail: Y2: 1 of 1 elements differ; first at [0]: actual 1 expected 2 (atol 0.182428 rtol 0.091214); max abs error 1, rel L2 error 0.5
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 20261218 --compare --target sm_80
# case: seed=20261218 tolerance=bfloat16 depth=130 atomics=0 dims= alt=threads=128
import tilelang.language as T


def kernel(M=1, N=1, bm=1, bn=2, threads=32):
    @T.prim_func
    def main(Y2: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            F0 = T.alloc_fragment((bm,), "float32")
            F2 = T.alloc_fragment((bn, bm), "bfloat16")
            T.fill(F0, 0.0)
            for ko in T.serial(T.ceildiv(N, bn)):
                for i, j in T.Parallel(bm, bn):
                    F2[j, i] = T.cast(1.0, "bfloat16")
                T.reduce_sum(F2, F0, dim=0, clear=False)
            T.copy(F0, Y2[bx * bm])

    return main
