#!/usr/bin/env python3
"""tilec's kernels from examples/ against torch (cuBLAS, SDPA, ...) and Triton.

    benchmarks/gpu/run.py [--only NAME,...] [--out FILE]   on a CUDA GPU
    benchmarks/gpu/run.py --dry-run [--only NAME,...]      anywhere (emulator)
    benchmarks/gpu/run.py --compile-only --target sm_90a   compile every case
    benchmarks/gpu/run.py --list

Per case (benchmarks/gpu/cases.py) the GPU run compiles the example with
tilec (the tilec Python package), checks its output against a float32 torch
reference, and times it (Kernel.time: device events, L2 flushed before each
run), then times torch's own operation and, where there is one, a Triton
kernel (benchmarks/gpu/triton_kernels.py) in the same process, with CUDA
events and an L2 flush before each run. It prints a table and writes a JSON
file with the device, driver, clocks, versions and the command line.

--dry-run needs neither torch nor a GPU: each case runs with the small
bindings of a case of examples/cases.txt on the SIMT emulator, checked against
a float64 numpy reference; the times are emulator wall times, not GPU times.

--only takes comma-separated case names or prefixes (gemm_f16 selects every
float16 GEMM). The exit status is 1 when any case fails its check or errors.
"""

import argparse
import ast
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
EXAMPLES = os.environ.get("TILEC_EXAMPLES_DIR", os.path.join(REPO, "examples"))
sys.path.insert(0, HERE)
try:
    import tilec
except ImportError:
    sys.path.insert(0, os.path.join(REPO, "runtime", "python"))
    import tilec

import cases as C  # noqa: E402  (after the path set-up)

# Where torch tensors live (a test of the harness itself may point it at "cpu"
# with the emulator as the tilec device).
TORCH_DEVICE = "cuda"


def read_cases_txt():
    out = {}
    with open(os.path.join(EXAMPLES, "cases.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _path, _fn, *binds = line.split()
            b = {}
            for kv in binds:
                k, v = kv.split("=", 1)
                try:
                    b[k] = ast.literal_eval(v)
                except (ValueError, SyntaxError):
                    b[k] = v
            out[name] = b
    return out


def select(only):
    if not only:
        return list(C.CASES)
    names = [c[0] for c in C.CASES]
    picked = []
    for token in only.split(","):
        token = token.strip()
        if not token:
            continue
        hits = [c for c in C.CASES if c[0] == token or c[0].startswith(token)]
        if not hits:
            sys.exit("run.py: --only %s matches no case; the cases are: %s" %
                     (token, ", ".join(names)))
        picked += [c for c in hits if c not in picked]
    return picked


def split_bindings(bindings, recommend):
    if not recommend:
        return dict(bindings), ()
    b = {k: v for k, v in bindings.items() if k not in C.TILE_PARAMS}
    return b, tuple(k for k in bindings if k in C.TILE_PARAMS)


def median(xs):
    return statistics.median(xs) if xs else None


# -- the dry run (emulator, numpy) ------------------------------------------------


def run_dry(name, kind, dry_case, args, txt):
    import numpy as np
    from tilec import testing as tt

    b = txt[dry_case]
    r = {"case": name, "example": kind.example, "fn": kind.fn, "bindings": b,
         "dry_run_case": dry_case, "device": "emulator"}
    t0 = time.time()
    k = tilec.compile(os.path.join(EXAMPLES, kind.example), kind.fn, device="emulator",
                      cache_dir=args.cache_dir, server=args.server, **b)
    r["compile_s"] = time.time() - t0
    r["target"] = k.target
    rng = np.random.default_rng([args.seed, sum(map(ord, name))])
    kargs, out, ref = kind.np_case(b, rng)
    k(*kargs)
    got = tt.to_float(out, kind.out_dtype(b))
    atol, rtol = kind.np_tolerance(b, ref)
    ok, max_err, _, msg = tt.compare(got, ref, atol, rtol)
    r.update(ok=ok, max_err=max_err, check=msg, atol=atol, rtol=rtol)
    ms = k.time(*kargs, warmup=0, iterations=1, flush_cache=False)
    r["tilec_ms"] = median(ms)
    r["tilec_ms_all"] = ms
    k.close()
    return r


# -- the GPU run (torch) ----------------------------------------------------------------


def bench_cuda(torch, fn, warmup, iters, flush_bytes):
    """Milliseconds of `iters` runs of fn, each between CUDA events on the
    current stream, after zeroing a buffer larger than L2."""
    flush = None
    if flush_bytes:
        flush = torch.empty(flush_bytes, dtype=torch.uint8, device=TORCH_DEVICE)
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        if flush is not None:
            flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def gpu_compare(torch, got, ref, atol, rtol):
    got = got.float()
    err = (got - ref).abs()
    bound = atol + rtol * ref.abs()
    bad = ~(err <= bound)  # NaN counts as bad
    max_err = float(torch.nan_to_num(err, nan=float("inf")).max().item()) if err.numel() else 0.0
    nbad = int(bad.sum().item())
    msg = ("max error %.3g (atol %.3g, rtol %.3g)" % (max_err, atol, rtol) if nbad == 0 else
           "%d of %d elements out of tolerance, max error %.3g (atol %.3g, rtol %.3g)" %
           (nbad, err.numel(), max_err, atol, rtol))
    return nbad == 0, max_err, msg


def pick(out_spec):
    if isinstance(out_spec, tuple):
        t, idx = out_spec
        return t[idx]
    return out_spec


def run_gpu(name, kind, bindings, args, torch, dev, flush_bytes):
    bind, unbound = split_bindings(bindings, args.recommend)
    r = {"case": name, "example": kind.example, "fn": kind.fn, "bindings": bindings,
         "device": dev.name}
    t0 = time.time()
    k = tilec.compile(os.path.join(EXAMPLES, kind.example), kind.fn, target=args.target,
                      device=dev, cache_dir=args.cache_dir, server=args.server, unbound=unbound,
                      **bind)
    r["compile_s"] = time.time() - t0
    r["target"] = k.target
    r["config"] = k.config
    torch.manual_seed(args.seed)
    kargs, out_spec, ref, base, tri = kind.torch_case(torch, bindings, TORCH_DEVICE)
    k(*kargs)
    torch.cuda.synchronize()
    got = pick(out_spec)
    scale = float(ref.abs().max().item()) if ref.numel() else 1.0
    atol, rtol = kind.tolerance(bindings, scale)
    ok, max_err, msg = gpu_compare(torch, got, ref, atol, rtol)
    r.update(ok=ok, max_err=max_err, check=msg, atol=atol, rtol=rtol, ref_scale=scale)

    ms = k.time(*kargs, warmup=args.warmup, iterations=args.iters, flush_cache=True)
    r["tilec_ms"], r["tilec_ms_all"] = median(ms), ms
    if base is not None:
        label, fn, _ = base
        r["torch_op"] = label
        try:
            tms = bench_cuda(torch, fn, args.warmup, args.iters, flush_bytes)
            r["torch_ms"], r["torch_ms_all"] = median(tms), tms
        except Exception as e:  # e.g. _scaled_mm on a GPU without fp8
            r["torch_error"] = "%s: %s" % (type(e).__name__, e)
    else:
        r["torch_op"] = None
    if tri is not None and not args.no_triton:
        fn, tri_out = tri
        try:
            fn()
            torch.cuda.synchronize()
            t_ok, t_err, t_msg = gpu_compare(torch, tri_out, ref, atol, rtol)
            r.update(triton_ok=t_ok, triton_max_err=t_err, triton_check=t_msg)
            tms = bench_cuda(torch, fn, args.warmup, args.iters, flush_bytes)
            r["triton_ms"], r["triton_ms_all"] = median(tms), tms
        except Exception as e:
            r["triton_error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300])
    k.close()
    del kargs, out_spec, ref, base, tri, got
    torch.cuda.empty_cache()
    return r


# -- reporting -----------------------------------------------------------------------


def perf_text(r, flops, nbytes, dry):
    ms = r.get("tilec_ms")
    if dry or not ms:
        return "-"
    if flops:
        r["tflops"] = flops / (ms * 1e-3) / 1e12
        return "%.1f TFLOP/s" % r["tflops"]
    if nbytes:
        r["gbps"] = nbytes / (ms * 1e-3) / 1e9
        return "%.0f GB/s" % r["gbps"]
    return "-"


def fmt_ms(v):
    return "-" if v is None else ("%.4f" % v if v < 1 else "%.3f" % v)


def print_table(results, dry):
    head = ["case", "tilec ms (emulator)" if dry else "tilec ms", "torch ms", "triton ms",
            "tilec perf", "tilec/torch", "max err", "check"]
    rows = []
    for r in results:
        if r.get("error"):
            rows.append([r["case"], "-", "-", "-", "-", "-", "-", "ERROR"])
            continue
        ratio = "-"
        if r.get("tilec_ms") and r.get("torch_ms"):
            r["ratio_tilec_torch"] = r["tilec_ms"] / r["torch_ms"]
            ratio = "%.2f" % r["ratio_tilec_torch"]
        rows.append([
            r["case"], fmt_ms(r.get("tilec_ms")), fmt_ms(r.get("torch_ms")),
            fmt_ms(r.get("triton_ms")), r.get("perf", "-"), ratio,
            "%.3g" % r["max_err"] if r.get("max_err") is not None else "-",
            "ok" if r.get("ok") else "FAIL"
        ])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))
    print(line(head))
    print(line(["-" * w for w in widths]))
    for row in rows:
        print(line(row))
    if dry:
        print("(dry run: small shapes from examples/cases.txt on the SIMT emulator; times are "
              "CPU wall times of the emulator, not GPU times)")
    for r in results:
        notes = []
        if r.get("error"):
            notes.append("error: " + r["error"].strip().splitlines()[-1])
        elif not r.get("ok"):
            notes.append("check: " + r.get("check", ""))
        if r.get("torch_op"):
            notes.append("torch = " + r["torch_op"])
        if r.get("torch_error"):
            notes.append("torch error: " + r["torch_error"])
        if r.get("triton_error"):
            notes.append("triton error: " + r["triton_error"])
        if r.get("triton_ok") is False:
            notes.append("triton check: " + r.get("triton_check", ""))
        if notes and (not dry or r.get("error") or not r.get("ok")):
            print("  %s: %s" % (r["case"], "; ".join(notes)))


def nvidia_smi():
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    fields = ["name", "driver_version", "clocks.sm", "clocks.max.sm", "clocks.mem",
              "clocks.max.mem", "power.limit", "temperature.gpu", "persistence_mode",
              "compute_mode"]
    try:
        out = subprocess.run([exe, "--query-gpu=" + ",".join(fields), "--format=csv,noheader"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": str(e)}
    if out.returncode != 0:
        return {"error": out.stderr.strip()}
    gpus = []
    for line in out.stdout.strip().splitlines():
        gpus.append(dict(zip(fields, [v.strip() for v in line.split(",")])))
    return gpus


def git_commit():
    for d in (REPO, HERE):
        f = os.path.join(d, "VERSION")
        if os.path.isfile(f):
            with open(f) as fh:
                return fh.read().strip()
    try:
        out = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def environment(dry, dev, torch=None):
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
        "host": platform.node(),
        "python": platform.python_version(),
        "tilec_commit": git_commit(),
        "runtime_library": tilec.find_runtime_library(),
        "cli": tilec.find_cli(),
        "dry_run": dry,
    }
    if dev is not None:
        env["device"] = dev.info
    if torch is not None:
        env["torch"] = torch.__version__
        env["torch_cuda"] = torch.version.cuda
        for key, query in (("cudnn", torch.backends.cudnn.version),
                           ("torch_device", torch.cuda.get_device_name)):
            try:
                env[key] = query()
            except Exception as e:  # the record is still worth writing
                env[key] = "unknown: %s" % e
        try:
            import triton
            env["triton"] = triton.__version__
        except ImportError as e:
            env["triton"] = "not available: %s" % e
        env["nvidia_smi"] = nvidia_smi()
    return env


# -- main ---------------------------------------------------------------------------


def compile_only(selected, args):
    failed = 0
    with tempfile.TemporaryDirectory(prefix="tilec-bench-") as out:
        for case in selected:
            name, kind = case[0], case[1]
            bind, unbound = split_bindings(C.bindings_for(case, args.target), args.recommend)
            cmd = tilec._kernel.compile_command(
                os.path.join(EXAMPLES, kind.example), kind.fn, args.target, out,
                args.server, args.cache_dir, unbound, bind)
            t0 = time.time()
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            status = "ok" if p.returncode == 0 else "FAIL (exit %d)" % p.returncode
            print("%-28s %-8s %6.1f s  %s" % (name, args.target, time.time() - t0, status))
            if p.returncode != 0:
                failed += 1
                print("  " + "\n  ".join(p.stderr.strip().splitlines()[-8:]))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true",
                    help="small shapes on the emulator with numpy references; no torch/GPU")
    ap.add_argument("--compile-only", action="store_true",
                    help="only compile every selected case's GPU bindings for --target")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--only", default="", help="comma-separated case names or prefixes")
    ap.add_argument("--out", default=None,
                    help="JSON results file (GPU run default: gpu_results.json)")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--target", default=None, help="sm_80 or sm_90a (default: from the GPU)")
    ap.add_argument("--server", default=None, help="compile on a tilecd at HOST:PORT")
    ap.add_argument("--cache_dir", default=None, help="the CLI's embedded cache folder")
    ap.add_argument("--recommend", action="store_true",
                    help="leave tile parameters unbound: tilec picks them for the target")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-triton", action="store_true", help="skip the Triton baselines")
    ap.add_argument("--flush_mib", type=int, default=256,
                    help="L2 flush buffer for the torch/Triton timings (MiB; 0: no flush)")
    args = ap.parse_args()

    selected = select(args.only)
    if args.list:
        for name, kind, bindings, dry, overrides in selected:
            print("%-28s %s:%s  dry run: %s%s" % (name, kind.example, kind.fn, dry,
                                                  "  overrides: %s" % overrides if overrides
                                                  else ""))
        return 0
    if args.compile_only:
        args.target = args.target or "sm_90a"
        return compile_only(selected, args)
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little") >> 1
    print("run.py: seed %d" % args.seed)

    results = []
    torch = dev = None
    if args.dry_run:
        txt = read_cases_txt()
        dev = tilec.device("emulator")
    else:
        try:
            import torch
        except ImportError:
            sys.exit("run.py: the GPU run needs torch (pip install torch); --dry-run runs "
                     "without it")
        if not torch.cuda.is_available():
            sys.exit("run.py: torch sees no CUDA GPU; --dry-run runs on the emulator")
        dev = tilec.device(args.device)
        torch.cuda.set_device(dev.ordinal)
        args.target = args.target or tilec.default_target(dev)
        print("device: %s (%s), tilec target %s" % (dev.info.get("name"), dev.info.get("arch"),
                                                   args.target or "from the device"))
    flush_bytes = args.flush_mib << 20
    env = environment(args.dry_run, dev, torch)  # the date and clocks at the start

    for case in selected:
        name, kind, _, dry, _ = case
        bindings = None if args.dry_run else C.bindings_for(case, args.target)
        t0 = time.time()
        try:
            if args.dry_run:
                r = run_dry(name, kind, dry, args, txt)
            else:
                r = run_gpu(name, kind, bindings, args, torch, dev, flush_bytes)
        except tilec.CompileError as e:
            r = {"case": name, "error": "compile failed: %s" % e.stderr.strip(), "ok": False}
        except Exception as e:
            r = {"case": name, "error": "%s: %s\n%s" % (type(e).__name__, e,
                                                        traceback.format_exc()), "ok": False}
            if torch is not None:
                torch.cuda.empty_cache()
        flops, nbytes = kind.work(txt[dry] if args.dry_run else bindings)
        r["flops"], r["bytes"] = flops, nbytes
        r["perf"] = perf_text(r, flops, nbytes, args.dry_run)
        r["wall_s"] = time.time() - t0
        status = "ok" if r.get("ok") else ("ERROR" if r.get("error") else "FAIL")
        print("  %-28s %s (%.1f s)" % (name, status, r["wall_s"]), flush=True)
        results.append(r)

    print()
    print_table(results, args.dry_run)
    out = args.out or (None if args.dry_run else "gpu_results.json")
    if out:
        env["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds")
        doc = {"environment": env, "seed": args.seed,
               "warmup": args.warmup, "iterations": args.iters, "results": results}
        with open(out, "w") as f:
            json.dump(doc, f, indent=1, default=str)
        print("results: %s" % out)
    return 0 if all(r.get("ok") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
