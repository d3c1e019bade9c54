#!/usr/bin/env python3
"""Two builds' `files/search` side by side in one run: the search benchmark's 100,000 files,
one running `coffer rpc` per build (each on its own copy of the container, since the two may
keep different index schemas), requests taking turns between them so the machine's load falls
on both alike.

Usage: search_before_after.py BEFORE_BINARY AFTER_BINARY WORK_DIR [--rounds N]

Prints, for a name search ('budget 00', 100 matches) and the same with three filters (type,
date, size), each build's median time and the ratio after/before (below 1: after is faster).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import search_tree  # noqa: E402

ENV = dict(os.environ, LC_ALL="C.UTF-8")
QUERIES = {
    "name": {"query": "budget 00", "limit": 10000},
    "three filters": {"query": "budget 00", "limit": 10000, "types": ["public.text"], "newer": "3650d", "smaller": "1M"},
}


class Server:
    def __init__(self, binary, container):
        self.process = subprocess.Popen([binary, "--container", container, "rpc"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
        self.identifier = 0

    def call(self, method, params):
        self.identifier += 1
        message = {"jsonrpc": "2.0", "id": self.identifier, "method": method, "params": params}
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == self.identifier:
                return answer

    def timed(self, params):
        started = time.perf_counter()
        self.call("files/search", params)
        return time.perf_counter() - started

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    before, after, work = (os.path.abspath(argument) for argument in sys.argv[1:4])
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 400
    containers = [os.path.join(work, "before"), os.path.join(work, "after")]
    files = os.path.join(containers[0], "Documents", "UserFiles")
    if not os.path.isdir(os.path.join(files, "Area 09")):
        subprocess.run([before, "--container", containers[0], "-c", "pwd"], check=True, stdout=subprocess.DEVNULL, env=ENV)
        search_tree.build(files)
    if not os.path.isdir(containers[1]):
        shutil.copytree(containers[0], containers[1], symlinks=True)
    servers = [Server(before, containers[0]), Server(after, containers[1])]
    for server in servers:
        server.call("initialize", {})
        while server.call("files/search", QUERIES["name"])["result"].get("engine") != "index":
            time.sleep(0.2)
    # Past start-up: the watch set, the pages read once, anything a build does in the background done.
    time.sleep(5)
    for server in servers:
        for _ in range(100):
            server.timed(QUERIES["name"])
    times = {(name, side): [] for name in QUERIES for side in (0, 1)}
    for _ in range(rounds):
        for name, params in QUERIES.items():
            for side, server in enumerate(servers):
                times[(name, side)].append(server.timed(params))
    for server in servers:
        server.close()
    print(f"files/search in a running coffer rpc, 100,000 files, {rounds} rounds taking turns (medians)")
    for name in QUERIES:
        first, second = (statistics.median(times[(name, side)]) for side in (0, 1))
        print(f"  {name}: before {first * 1000:.3f} ms, after {second * 1000:.3f} ms, after/before {second / first:.2f}")


if __name__ == "__main__":
    main()
