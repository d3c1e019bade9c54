#!/usr/bin/env python3
"""Round trips per second of `files/stat` over pipes: `coffer rpc` beside a minimal Python
JSON-RPC server doing the same os.stat (Benchmarks/rpc_reference_server.py).

Usage: rpc.py COFFER_BINARY WORK_DIR [--quick]

Both servers speak newline-delimited JSON on stdin/stdout; the same client drives them:
  one at a time   send a request, wait for its answer, repeat
  pipelined       keep 100 requests in flight; send one more whenever an answer arrives
"""
import json
import os
import statistics
import subprocess
import sys
import time


class Client:
    def __init__(self, argv):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, bufsize=0)
        self.reader = self.process.stdout
        self.next_id = 1
        self.buffer = b""

    def send(self, method, params):
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        self.process.stdin.write((json.dumps(message) + "\n").encode())

    def receive(self):
        while b"\n" not in self.buffer:
            chunk = os.read(self.reader.fileno(), 1 << 16)
            if not chunk:
                raise SystemExit("the server closed its output")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        reply = json.loads(line)
        if "error" in reply:
            raise SystemExit(f"error: {reply['error']}")
        return reply

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def one_at_a_time(client, count, path):
    start = time.perf_counter()
    for _ in range(count):
        client.send("files/stat", {"path": path})
        client.receive()
    return count / (time.perf_counter() - start)


def pipelined(client, count, path, depth=100):
    start = time.perf_counter()
    sent = received = 0
    while sent < min(depth, count):
        client.send("files/stat", {"path": path})
        sent += 1
    while received < count:
        client.receive()
        received += 1
        if sent < count:
            client.send("files/stat", {"path": path})
            sent += 1
    return count / (time.perf_counter() - start)


def measure(argv, count, runs):
    client = Client(argv)
    client.send("initialize", {})
    client.receive()
    one_at_a_time(client, 200, "/notes.txt")  # warm up
    sequential = [one_at_a_time(client, count, "/notes.txt") for _ in range(runs)]
    deep = [pipelined(client, count, "/notes.txt") for _ in range(runs)]
    client.close()
    return statistics.median(sequential), statistics.median(deep)


def main():
    coffer, work = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    count, runs = (2000, 3) if quick else (10000, 5)
    container = os.path.join(work, "rpc-container")
    env = dict(os.environ, LANG="C.UTF-8")
    subprocess.run([coffer, "--container", container, "-c", "ls"], stdout=subprocess.DEVNULL, check=True, env=env)
    files = os.path.join(container, "Documents", "UserFiles")
    with open(os.path.join(files, "notes.txt"), "w") as handle:
        handle.write("hello\n")
    here = os.path.dirname(os.path.abspath(__file__))
    ours = measure([coffer, "--container", container, "rpc"], count, runs)
    reference = measure([sys.executable, os.path.join(here, "rpc_reference_server.py"), files], count, runs)
    print(f"files/stat round trips per second over pipes ({count:,} requests, median of {runs} runs)")
    print(f"  one at a time:   coffer {ours[0]:9,.0f}/s   python {reference[0]:9,.0f}/s   ratio {ours[0] / reference[0]:.2f}")
    print(f"  100 in flight:   coffer {ours[1]:9,.0f}/s   python {reference[1]:9,.0f}/s   ratio {ours[1] / reference[1]:.2f}")


if __name__ == "__main__":
    main()
