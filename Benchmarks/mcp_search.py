#!/usr/bin/env python3
"""`search_files` on a tree of 100,000 files (100 folders of 1,000), through `coffer mcp` on stdio:
the time from the call to its answer, for a pattern whose only match is the last file met
(`**/dir099/sub/file0999.txt`: the whole tree must be gone through) and for one that matches every
file (`**/*.txt`: 20,000 reported of 100,000), beside `find` going through the same tree (`find ROOT
-path '*/dir099/sub/file0999.txt'`), in the same run. Goal (issue 38): well under a second.

Usage: mcp_search.py COFFER_BINARY WORK_DIR [--rounds N]
"""
import json
import os
import statistics
import subprocess
import sys
import time


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    container = os.path.join(work, "search-container")
    root = os.path.join(container, "Documents", "UserFiles")
    if not os.path.exists(os.path.join(root, "dir099", "sub", "file0999.txt")):
        for folder in range(100):
            path = os.path.join(root, f"dir{folder:03d}", "sub")
            os.makedirs(path, exist_ok=True)
            for index in range(1000):
                open(os.path.join(path, f"file{index:04d}.txt"), "w").close()
    server = subprocess.Popen([coffer, "--container", container, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = {"last": [], "all": [], "find": []}
    for number in range(rounds):
        for name, pattern in [("last", "**/dir099/sub/file0999.txt"), ("all", "**/*.txt")]:
            started = time.perf_counter()
            send({"jsonrpc": "2.0", "id": number * 2 + (name == "all") + 1, "method": "tools/call",
                  "params": {"name": "search_files", "arguments": {"path": root, "pattern": pattern}}})
            answer = json.loads(server.stdout.readline())
            times[name].append(time.perf_counter() - started)
            text = answer["result"]["content"][0]["text"]
            assert (text.endswith("file0999.txt") if name == "last" else "of 100,000 matches" in text), text[-200:]
        started = time.perf_counter()
        subprocess.run(["find", root, "-path", "*/dir099/sub/file0999.txt"], check=True, capture_output=True)
        times["find"].append(time.perf_counter() - started)
    server.stdin.close()
    server.wait()
    median = {name: statistics.median(values) * 1000 for name, values in times.items()}
    print(f"search_files on 100,000 files, medians of {rounds} rounds")
    print(f"  the one match, last        {median['last']:7.0f} ms  ({median['last'] / median['find']:.1f}× find's {median['find']:.0f} ms)"
          f"   goal < 1000 ms: {'met' if median['last'] < 1000 else 'NOT met'}")
    print(f"  every file (20,000 shown)  {median['all']:7.0f} ms")


if __name__ == "__main__":
    main()
