#!/usr/bin/env python3
"""Neovim's resident size after each step of a flood (`make bench` prints only the end figure).

Starts a headless Neovim with the plugin set up (as bench/run.py does) and prints VmRSS after
sequential calls, pipelined calls, sequential 4 MB requests, then three rounds each of eight
concurrent 4 MB `ping` and `fs-write-file` requests. Memory the allocator keeps shows as growth
from round to round; a bounded level means it is reused or returned.

    .deps/venv/bin/python bench/rss_steps.py
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as R  # noqa: E402  (bench/run.py: Neovim start-up, the Rust client)


def main():
    R.bench_bin()
    env = R.Env()
    sock = os.path.join(env.dir, "nvim.sock")
    nv = R.start_nvim(env, sock, setup=True)
    try:
        lock = env.lock_files()[0]
        with open(lock) as f:
            token = json.load(f)["authToken"]
        port = int(os.path.basename(lock).split(".")[0])

        def rss(step):
            time.sleep(0.5)  # let a pending trim (100 ms after a burst) run
            print(f"{step:24s} {R.vm_rss_kb(nv.pid) / 1024:6.1f} MB", flush=True)

        rss("after setup")
        R.run_client(port, token, "latency", 20000, 2000)
        rss("20k sequential calls")
        R.run_client(port, token, "pipeline", 50000, 5)
        rss("5 x 50k pipelined")
        R.run_client(port, token, "big", 4 << 20, "ping", 20)
        rss("20 x 4 MB ping")
        R.run_client(port, token, "big", 4 << 20, "write", 20)
        rss("20 x 4 MB fs-write-file")
        for kind in ("ping", "write"):
            for _ in range(3):
                R.run_client(port, token, "bigflood", 4 << 20, kind, 8, 1)
                rss(f"8 x 4 MB {kind} at once")
    finally:
        R.stop_nvim(nv, sock)
        env.cleanup()


if __name__ == "__main__":
    main()
