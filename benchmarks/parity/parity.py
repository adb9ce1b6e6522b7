#!/usr/bin/env python3
"""SASS parity of tilec against upstream TileLang, per kernel, without a GPU.

    benchmarks/parity/parity.py [--tilec PATH] [--venv PATH] [--only NAME ...]
                                [--json OUT] [--keep DIR] [--jobs N]

Compiles each example of examples/ with the same bindings twice for sm_90a:
with tilec (`tilec compile --local`) and with upstream TileLang (through
upstream_compile.py under the yardstick venv's Python), disassembles both
cubins with cuobjdump and prints, per kernel, each tool's registers, spills,
shared memory, warp specialisation, tensor-core and other instruction counts
and hot loop size, with the ratio tilec/TileLang. README.md explains the
columns and the rules. Standard library only; the venv is a yardstick, never
a dependency of the build or the tests.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "gpu"))

import cases as gpu_cases  # noqa: E402  (benchmarks/gpu/cases.py; numpy optional)
import sass_stats  # noqa: E402

ARCH = "sm_90a"
TIMEOUT_S = 600

# The GPU cases of benchmarks/gpu/cases.py compared here, by name.
GPU_CASES = ("gemm_f16_4096", "gemm_bf16_4096", "gemm_f16_4096_wide", "flash_attention_fwd",
             "flash_attention_fwd_causal", "gqa_decode", "mla_decode", "dequant_gemm_int4",
             "gemm_fp8_e4m3", "gemm_fp8_e4m3_wide", "softmax", "rmsnorm", "layernorm")

GEMM_128 = dict(block_M=128, block_N=128, block_K=32, num_stages=3, dtype="float16",
                accum_dtype="float32")
# The examples without a GPU case: sizes and tiles of the example's main().
EXTRA_CASES = [
    ("gemm_splitk", "gemm_splitk.py", "matmul_splitk",
     dict(GEMM_128, M=1024, N=1024, K=16384, split_k=8, threads=128)),
    ("batched_gemm", "batched_gemm.py", "batched_matmul",
     dict(GEMM_128, batch=8, M=1024, N=1024, K=512, threads=128)),
    ("gemm_eager", "gemm_eager.py", "matmul",
     dict(GEMM_128, M=4096, N=4096, K=4096, threads=128)),
    ("conv2d_im2col", "conv2d_im2col.py", "conv2d",
     dict(GEMM_128, N=128, C=128, H=64, W=64, F=128, KH=3, KW=3, S=1, P=1, threads=256)),
    ("elementwise_add", "elementwise_add.py", "elementwise_add",
     dict(M=4096, N=4096, block_M=32, block_N=128, in_dtype="float16", out_dtype="float32",
          threads=128)),
    ("reduce_sum", "reduce_sum.py", "reduce_sum",
     dict(M=8192, N=8192, block_M=16, block_N=256, dtype="float16", out_dtype="float32",
          accum_dtype="float32", threads=128)),
    ("cumsum", "cumsum.py", "cumsum",
     dict(M=4096, N=4096, block_M=32, block_N=256, reverse=False, dtype="float32",
          accum_dtype="float32", threads=128)),
    ("atomic_fold", "atomics.py", "atomic_fold",
     dict(M=1000, N=512, block_M=64, block_N=64, dtype="int64", op="max", fold=True,
          threads=128)),
    ("atomic_add_f32", "atomics.py", "atomic_fold",
     dict(M=4096, N=4096, block_M=64, block_N=64, dtype="float32", op="add", fold=False,
          threads=128)),
    ("claim_slots", "atomics.py", "claim_slots", dict(N=1 << 20, slots=1024, block_N=256,
                                                        threads=128)),
]

# An eager @tilelang.jit function takes its sizes from its tensors: upstream
# gets meta-device tensors of these shapes instead of the T.const bindings.
EAGER_TENSORS = {
    "gemm_eager": (("M", "N", "K"),
                   lambda b: {"A": [[b["M"], b["K"]], b["dtype"]],
                              "B": [[b["K"], b["N"]], b["dtype"]]}),
}


def all_cases():
    """[(name, example file, function, bindings)] in table order."""
    by_name = {c[0]: c for c in gpu_cases.CASES}
    out = []
    for name in GPU_CASES:
        case = by_name[name]
        out.append((name, case[1].example, case[1].fn, gpu_cases.bindings_for(case, ARCH)))
    return out + list(EXTRA_CASES)


def run(cmd, timeout, **kw):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    return p, None


def last_line(text, prefix=""):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    tagged = [l[len(prefix):].strip() for l in lines if prefix and l.startswith(prefix)]
    return (tagged or lines or ["(no output)"])[-1][:200]


def cuobjdump_stats(cuobjdump, cubin):
    """({kernel: FunctionStats}, {kernel: res-usage dict}) of a cubin."""
    sass = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True,
                          check=True).stdout
    res = subprocess.run([cuobjdump, "-res-usage", cubin], capture_output=True, text=True,
                         check=True).stdout
    with open(cubin + ".sass", "w") as f:
        f.write(sass)
    return sass_stats.analyse(sass), sass_stats.parse_res_usage(res)


def tilec_side(args, name, example, fn, bindings, out):
    cmd = [args.tilec, "compile", os.path.join(ROOT, "examples", example), "--fn", fn]
    for k, v in bindings.items():
        cmd += ["-D", f"{k}={json.dumps(v) if isinstance(v, str) else v}"]
    cmd += ["--target", ARCH, "--local", "-o", out]
    p, err = run(cmd, TIMEOUT_S)
    if err or p.returncode:
        raise RuntimeError(err or last_line(p.stderr or p.stdout))
    with open(os.path.join(out, fn + ".json")) as f:
        art = json.load(f)
    sass, res = cuobjdump_stats(args.cuobjdump, os.path.join(out, fn + ".cubin"))
    kernels = {}
    for k in art["kernels"]:
        kernels[k["name"]] = dict(threads=k["block"][0] * k["block"][1] * k["block"][2],
                                  dyn_smem=k["smem_bytes"],
                                  spills=(k["spill_store_bytes"], k["spill_load_bytes"]))
    return kernels, sass, res


def upstream_side(args, name, example, fn, bindings, out):
    b = dict(bindings)
    if name in EAGER_TENSORS:
        consts, tensors = EAGER_TENSORS[name]
        b["__tensors__"] = tensors(bindings)
        for c in consts:
            b.pop(c)
    python = os.path.join(args.venv, "bin", "python")
    cmd = [python, os.path.join(HERE, "upstream_compile.py"),
           os.path.join(ROOT, "examples", example), fn, json.dumps(b), ARCH, out]
    # No cache: a cached cubin would come without the ptxas log (spills).
    env = dict(os.environ, TILELANG_DISABLE_CACHE="1",
               TILELANG_CACHE_DIR=os.path.join(out, "cache"))
    p, err = run(cmd, TIMEOUT_S, env=env)
    if p is not None:
        with open(os.path.join(out, "log.txt"), "w") as f:
            f.write(p.stdout + p.stderr)
    if err or p.returncode:
        raise RuntimeError(err or last_line(p.stderr, "upstream:"))
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    sass, res = cuobjdump_stats(args.cuobjdump, os.path.join(out, "kernel.cubin"))
    spills = sass_stats.parse_ptxas_spills(meta["ptxas"])
    kernels = {n: dict(threads=k["threads"], dyn_smem=k["dyn_smem"], spills=spills.get(n))
               for n, k in meta["kernels"].items()}
    return kernels, sass, res


def main_kernel(sass):
    """The kernel compared: most tensor-core instructions, then most instructions."""
    return max(sass.values(), key=lambda s: (s.total.tc, s.total.insts)).name


def summarise(kernels, sass, res):
    """The figures of the table for one tool (its main kernel)."""
    name = main_kernel(sass)
    s, r, k = sass[name], res.get(name, {}), kernels.get(name, {})
    hot = s.hot
    c = s.total.counts
    return {
        "kernel": name, "kernels": len(sass), "threads": k.get("threads"),
        "registers": r.get("REG"), "spills": k.get("spills"), "stack": r.get("STACK"),
        "local": r.get("LOCAL"),
        "setmaxnreg": "/".join(",".join(map(str, v)) or "-" for v in s.maxnreg)
        if s.setmaxnreg else None,
        "smem": (r.get("SHARED", 0) + k["dyn_smem"]) if "dyn_smem" in k else None,
        "ws": ("yes" if s.ws else "no") + (f" ({s.ws_reason})" if s.ws else ""),
        "wgmma": c["HGMMA"] + c["QGMMA"], "mma": c["HMMA"], "tma_load": c["UTMALDG"],
        "cp_async": c["LDGSTS"], "ldmatrix": c["LDSM"], "stmatrix": c["STSM"],
        "ex2": c["MUFU.EX2"], "shfl": c["SHFL"], "insts": s.total.insts,
        "hot_insts": hot.insts if hot else None, "hot_tc": hot.tc if hot else None,
        "hot_per_unit": round(hot.per_unit(), 2) if hot and hot.per_unit() else None,
        "hot_range": f"{hot.first:#x}-{hot.last:#x}" if hot else None,
    }


def compare(args, case, work):
    name, example, fn, bindings = case
    row = {"name": name, "example": example, "fn": fn, "bindings": bindings}
    for tool, side in (("tilec", tilec_side), ("tilelang", upstream_side)):
        out = os.path.join(work, name, tool)
        os.makedirs(out, exist_ok=True)
        try:
            row[tool] = summarise(*side(args, name, example, fn, bindings, out))
        except Exception as exc:  # noqa: BLE001  one failed side is one row's note
            row[tool + "_error"] = str(exc) or type(exc).__name__
    return row


ROWS = [  # (label, key, kind): "n" ratio of numbers, "s" text compared, "t" text alone
    ("kernels in program", "kernels", "n"), ("threads per block", "threads", "n"),
    ("registers", "registers", "n"), ("setmaxnreg up/down", "setmaxnreg", "s"),
    ("spill st/ld B", "spills", "s"), ("stack frame B", "stack", "n"), ("smem B", "smem", "n"),
    ("warp-specialised", "ws", "s"),
    ("wgmma (HGMMA+QGMMA)", "wgmma", "n"), ("mma.sync (HMMA)", "mma", "n"),
    ("TMA loads (UTMALDG)", "tma_load", "n"), ("cp.async (LDGSTS)", "cp_async", "n"),
    ("ldmatrix (LDSM)", "ldmatrix", "n"), ("stmatrix (STSM)", "stmatrix", "n"),
    ("MUFU.EX2", "ex2", "n"), ("SHFL", "shfl", "n"), ("instructions", "insts", "n"),
    ("hot loop insts", "hot_insts", "n"), ("hot loop tensor-core", "hot_tc", "n"),
    ("hot loop insts/m16n16k16", "hot_per_unit", "n"), ("hot loop addresses", "hot_range", "t"),
]


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, (list, tuple)):
        return "/".join(fmt(x) for x in v)
    return str(v)


def ratio(a, b, kind):
    if kind == "t":
        return ""
    if kind == "s":
        return "" if a is None or b is None else ("same" if a == b else "differs")
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
        return f"{a / b:.2f}"
    return "-"


def print_row(row, out):
    t, u = row.get("tilec"), row.get("tilelang")
    binds = " ".join(f"{k}={v}" for k, v in row["bindings"].items())
    print(f"== {row['name']}  {row['example']} {row['fn']}  {binds}", file=out)
    if not t:
        print(f"   tilec failed: {row.get('tilec_error')}", file=out)
    if not u:
        print(f"   TileLang failed: {row.get('tilelang_error')}", file=out)
    t, u = t or {}, u or {}
    print(f"   {'':27}{'tilec':>20}{'TileLang':>20}{'ratio':>9}", file=out)
    print(f"   {'kernel':27}{fmt(t.get('kernel')):>20}{fmt(u.get('kernel')):>20}", file=out)
    for label, key, kind in ROWS:
        a, b = t.get(key), u.get(key)
        print(f"   {label:27}{fmt(a):>20}{fmt(b):>20}{ratio(a, b, kind):>9}", file=out)
    print(file=out)


def print_summary(rows, out):
    print("Summary (tilec/TileLang; '-' where a side failed or has none)", file=out)
    head = (f"{'kernel':28}{'regs':>6}{'smem':>6}{'WS t/u':>9}{'wgmma':>7}{'mma':>6}"
            f"{'TMA':>6}{'hot':>6}{'hot/MAC':>8}  upstream")
    print(head, file=out)
    for row in rows:
        t, u = row.get("tilec") or {}, row.get("tilelang") or {}
        ws = "/".join("-" if not s else s["ws"].split()[0][0] for s in (t, u))
        status = "ok" if u else f"failed: {row.get('tilelang_error', '')}"[:100]
        cells = [ratio(t.get(k), u.get(k), "n") for k in
                 ("registers", "smem", "wgmma", "mma", "tma_load", "hot_insts", "hot_per_unit")]
        print(f"{row['name']:28}{cells[0]:>6}{cells[1]:>6}{ws:>9}{cells[2]:>7}{cells[3]:>6}"
              f"{cells[4]:>6}{cells[5]:>6}{cells[6]:>8}  {status}", file=out)


def find_cuobjdump(venv):
    found = sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "nvidia",
                                          "*", "bin", "cuobjdump")))
    for path in found + [shutil.which("cuobjdump") or "",
                         os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin",
                                      "cuobjdump")]:
        if path and os.access(path, os.X_OK):
            return path
    sys.exit("parity: no cuobjdump (pip install nvidia-cuda-cuobjdump into the venv, "
             "or pass --cuobjdump)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilec", default="build/client/tilec", help="relative to the repo root")
    ap.add_argument("--venv", default="/work/tlvenv", help="venv with tilelang==0.1.15")
    ap.add_argument("--cuobjdump", help="default: the venv's nvidia-cuda-cuobjdump, PATH, CUDA")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these cases only")
    ap.add_argument("--json", metavar="OUT", help="write every figure as JSON")
    ap.add_argument("--keep", metavar="DIR", help="keep the cubins, sources and SASS in DIR")
    ap.add_argument("--jobs", type=int, default=4, help="cases compiled at once")
    args = ap.parse_args()
    args.tilec = os.path.join(ROOT, args.tilec) if not os.path.isabs(args.tilec) else args.tilec
    args.cuobjdump = args.cuobjdump or find_cuobjdump(args.venv)
    if not os.access(args.tilec, os.X_OK):
        sys.exit(f"parity: no tilec at {args.tilec}")
    if not os.access(os.path.join(args.venv, "bin", "python"), os.X_OK):
        sys.exit(f"parity: no venv at {args.venv} (README.md says how to make it)")

    cases = all_cases()
    if args.only:
        unknown = set(args.only) - {c[0] for c in cases}
        if unknown:
            sys.exit(f"parity: unknown case(s) {sorted(unknown)}; known: "
                     f"{' '.join(c[0] for c in cases)}")
        cases = [c for c in cases if c[0] in args.only]
    work = args.keep or tempfile.mkdtemp(prefix="tilec-parity-")
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            rows = list(pool.map(lambda c: compare(args, c, work), cases))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"tilec {args.tilec} vs upstream TileLang ({args.venv}), {ARCH}, SASS by "
          f"{args.cuobjdump}\n")
    for row in rows:
        print_row(row, sys.stdout)
    print_summary(rows, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
