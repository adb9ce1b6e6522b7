# tilec difftest regression, reduced from generator seed 385 (56 reduction checks).
# outcome: internal_error on sm_80
# category: host build INTERNAL: error: call to Q is ambiguous
# detail: clang rejected the host kernel source (exit 1; for generated code this is a tilec bug): kernel.cu:24:15: error: call to 'iabs' is ambiguous    24 |     F3[s_1] = tl::iabs(S0[S0_layout::offset(i, j)]);       |               ^~~~~~~~ /tmp/tilec-host-cache-0/c95fb9ef9cf0f8cc/include/tl/arith.h:64:30: n
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 385 --compare --target sm_80
# case: seed=385 tolerance=float32 depth=2 atomics=0 dims= alt=threads=128
import tilelang.language as T


def kernel(M=1, N=1, bm=1, bn=1, threads=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            S0 = T.alloc_shared((bm, bn), "int32")
            F3 = T.alloc_fragment((bm, bn), "int32")
            T.copy(A[by * bm, bx * bn], S0)
            for i, j in T.Parallel(bm, bn):
                F3[i, j] = T.abs(S0[i, j])

    return main
