#!/usr/bin/env python3
"""Round trips per second of `files/stat` over pipes: `coffer rpc` beside a minimal Python
JSON-RPC server doing the same os.stat (Benchmarks/rpc_reference_server.py) and beside the
floor, a C server that answers with one lstat and no JSON parser (Benchmarks/rpc_floor_server.c,
compiled here with cc -O2).

Usage: rpc.py COFFER_BINARY WORK_DIR [--quick] [--rounds N]

Also files/list of a 1,000-entry folder, one at a time, beside the Python reference (os.scandir
and an lstat per entry), and each server's CPU time per one-at-a-time request (from /proc).

The three servers speak newline-delimited JSON on stdin/stdout and the same client drives them.
They run in turn within each round, so the machine's load falls on all three alike; the
medians over the rounds are printed, with Coffer's ratio to each reference:
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


def listings(argv, count, runs):
    """files/list of a 1,000-entry folder, one at a time: lists per second (median of runs)."""
    client = Client(argv)
    client.send("initialize", {})
    client.receive()
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(count):
            client.send("files/list", {"path": "/Thousand"})
            client.receive()
        rates.append(count / (time.perf_counter() - start))
    client.close()
    return statistics.median(rates)


def cpu_seconds(pid):
    """User and system CPU time the process has used so far (from /proc, in clock ticks)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def measure(argv, count, runs):
    """Round trips per second one at a time and 100 in flight, and the server's user and
    system CPU time per one-at-a-time request (µs)."""
    client = Client(argv)
    client.send("initialize", {})
    client.receive()
    one_at_a_time(client, 200, "/notes.txt")  # warm up
    user, system = cpu_seconds(client.process.pid)
    sequential = [one_at_a_time(client, count, "/notes.txt") for _ in range(runs)]
    user_after, system_after = cpu_seconds(client.process.pid)
    deep = [pipelined(client, count, "/notes.txt") for _ in range(runs)]
    client.close()
    requests = count * runs
    return (statistics.median(sequential), statistics.median(deep),
            (user_after - user) / requests * 1e6, (system_after - system) / requests * 1e6)


def main():
    coffer, work = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    count, runs = (2000, 3) if quick else (10000, 5)
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    container = os.path.join(work, "rpc-container")
    env = dict(os.environ, LANG="C.UTF-8")
    subprocess.run([coffer, "--container", container, "-c", "ls"], stdout=subprocess.DEVNULL, check=True, env=env)
    files = os.path.join(container, "Documents", "UserFiles")
    with open(os.path.join(files, "notes.txt"), "w") as handle:
        handle.write("hello\n")
    thousand = os.path.join(files, "Thousand")
    if not os.path.isdir(thousand):
        os.makedirs(thousand)
        for index in range(1000):
            with open(os.path.join(thousand, f"entry {index:04d}.txt"), "w") as handle:
                handle.write("x" * (index % 300))
    here = os.path.dirname(os.path.abspath(__file__))
    floor = os.path.join(work, "rpc_floor_server")
    subprocess.run(["cc", "-O2", "-o", floor, os.path.join(here, "rpc_floor_server.c")], check=True)
    servers = {
        "coffer": [coffer, "--container", container, "rpc"],
        "python": [sys.executable, os.path.join(here, "rpc_reference_server.py"), files],
        "floor": [floor, files],
    }
    results = {name: [] for name in servers}
    for _ in range(rounds):
        for name, argv in servers.items():
            results[name].append(measure(argv, count, runs))
    lists = {name: [] for name in ("coffer", "python")}
    for _ in range(rounds):
        for name in lists:
            lists[name].append(listings(servers[name], count // 50, runs))
    print(f"files/stat round trips per second over pipes ({count:,} requests, median of {runs} runs, {rounds} rounds)")
    for index, label in ((0, "one at a time"), (1, "100 in flight")):
        rate = {name: statistics.median(result[index] for result in results[name]) for name in servers}
        print(f"  {label}:  coffer {rate['coffer']:9,.0f}/s   python {rate['python']:9,.0f}/s   floor {rate['floor']:9,.0f}/s"
              f"   coffer/python {rate['coffer'] / rate['python']:.2f}   coffer/floor {rate['coffer'] / rate['floor']:.2f}")
    cpu = {name: (statistics.median(result[2] for result in results[name]),
                  statistics.median(result[3] for result in results[name])) for name in servers}
    print("  server CPU per request, one at a time:  " + "   ".join(
        f"{name} user {user:.1f} µs, system {system:.1f} µs" for name, (user, system) in cpu.items()))
    coffer_lists, python_lists = statistics.median(lists["coffer"]), statistics.median(lists["python"])
    print(f"  files/list of 1,000 entries, one at a time:  coffer {coffer_lists:7,.0f}/s   python {python_lists:7,.0f}/s"
          f"   coffer/python {coffer_lists / python_lists:.2f}")


if __name__ == "__main__":
    main()
