# tilec difftest regression, reduced from generator seed 20261277 (79 reduction checks).
# outcome: internal_error on sm_80
# category: host build INTERNAL: error: static assertion failed due to requirement Q: tl::fabs takes float or double; conve
# detail: clang rejected the host kernel source (exit 1; for generated code this is a tilec bug): In file included from /tmp/tilec-host-cXiYdl/kernel.cc:1: In file included from /tmp/tilec-host-cache-0/16644a25d52b0c37/include/tl/tl.h:23: /tmp/tilec-host-cache-0/16644a25d52b0c37/include/tl/math.h:59:1: error:
# status: fixed
# reproduce: tilec run THIS_FILE --fn kernel --seed 20261277 --compare --target sm_80
# case: seed=20261277 tolerance=float16 depth=107 atomics=0 dims= alt=threads=128,stages=2
import tilelang.language as T


def kernel(M=1, N=1, bm=1, bn=1, threads=32, stages=0):
    @T.prim_func
    def main(Y1: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=threads) as bx:
            S3 = T.alloc_shared((bm, bn), "float32")
            F4 = T.alloc_fragment((bm, bn), "float32")
            for ko in T.serial(T.ceildiv(N, bn)):
                for i, j in T.Parallel(bm, bn):
                    S3[i, j] = -2.0
                for i, j in T.Parallel(bm, bn):
                    F4[i, j] = T.abs(S3[i, j])

    return main
