"""A tilecd for the Python benchmarks (h2_rapid_reset.py, overload.py): on a
fresh cache in a temporary folder, a free port, no metrics port."""

import atexit
import os
import shutil
import subprocess
import tempfile
import time


def start_tilecd(build, flags, prefix):
    """Starts build/server/tilecd with `flags` and waits until it listens.
    Returns (process, port)."""
    work = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    port_file = os.path.join(work, "port")
    server = subprocess.Popen(
        [os.path.join(build, "server", "tilecd"), "--cache_dir=" + os.path.join(work, "cache"),
         "--port=0", "--port_file=" + port_file, "--metrics_port=-1"] + flags,
        stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.05)
    return server, int(open(port_file).read())
