#!/usr/bin/env python3
"""Overload: Compiles that must search before compiling, far more than tilecd
can serve at once, against a real tilecd.

Starts tilecd (with the flags given after --), then runs rounds: in each,
CONCURRENCY clients at once each send one Compile of examples/gemm.py with
its tile sizes left unbound (-U: the server searches for a configuration,
then compiles), every request a different M so that none is a cache hit.
A round's clients start together and each waits for its answer (deadline
--timeout_s). Per round it prints one JSON line: how many compiled, how
many were refused at once (RESOURCE_EXHAUSTED with the retry hint), how
many ran out of time or failed otherwise, the round's wall time, and the
rate of completed compiles per second.

  benchmarks/overload.py --build build --rounds 2,20 -- --search_threads=2 --search_queue=8

The first figure of --rounds is the offered load the server can take at
once (its search threads); the next ones are overloads. Under admission
control the completed rate stays that of the first round.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import time

from bench_tilecd import start_tilecd

UNBOUND = ["block_M", "block_N", "block_K", "num_stages", "threads"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", default="2,20", help="clients at once, per round")
    ap.add_argument("--timeout_s", type=float, default=120)
    ap.add_argument("--target", default="sm_80")
    ap.add_argument("tilecd_flags", nargs="*")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tilec = os.path.join(args.build, "client", "tilec")
    server, port = start_tilecd(args.build, args.tilecd_flags, "overload")
    address = "127.0.0.1:%d" % port
    next_m = [1024]

    def one(m):
        cmd = [tilec, "compile", os.path.join(root, "examples", "gemm.py"), "--fn", "matmul",
               "-D", "M=%d" % m, "-D", "N=1024", "-D", "K=1024", "--target", args.target,
               "--server", address, "--timeout_s", str(args.timeout_s)]
        for u in UNBOUND:
            cmd += ["-U", u]
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True)
        took = time.time() - t0
        if r.returncode == 0:
            return "compiled", took
        err = r.stderr
        if "queue is full" in err:
            return "refused", took
        if "deadline" in err.lower() or "DEADLINE" in err:
            return "timed_out", took
        return "failed: " + err.strip().splitlines()[-1][:200] if err.strip() else "failed", took

    try:
        for clients in [int(c) for c in args.rounds.split(",")]:
            ms = [next_m[0] + 64 * i for i in range(clients)]
            next_m[0] += 64 * clients
            t0 = time.time()
            with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
                results = list(pool.map(one, ms))
            wall = time.time() - t0
            counts = {}
            for outcome, _ in results:
                counts[outcome] = counts.get(outcome, 0) + 1
            refused = [t for o, t in results if o == "refused"]
            compiled = counts.get("compiled", 0)
            print(json.dumps({
                "clients": clients,
                "compiled": compiled,
                "refused": counts.get("refused", 0),
                "timed_out": counts.get("timed_out", 0),
                "other": {k: v for k, v in counts.items()
                          if k not in ("compiled", "refused", "timed_out")},
                "wall_s": round(wall, 2),
                "compiled_per_s": round(compiled / wall, 3),
                "slowest_refusal_s": round(max(refused), 2) if refused else None,
                "tilecd_flags": args.tilecd_flags,
            }), flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
