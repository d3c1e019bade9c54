#!/usr/bin/env python3
"""Two builds of `coffer` side by side, to check that a change that should not change speed
did not (issue 31's refactoring): the time to the first prompt on a pseudo-terminal (as
startup.py measures it), the time of a one-shot `coffer -c pwd`, `files/stat` round trips
over pipes one at a time and 100 in flight (as rpc.py measures them), and `files/list` of a
1,000-file folder one at a time (the path where every entry's version is made, issue 33).

Usage: before_after.py BEFORE_BINARY AFTER_BINARY WORK_DIR [--rounds N]

The two builds take turns within every round, on one container, so the machine's load falls
on both alike; the medians over the rounds are printed with the ratio after/before (for
times, below 1 is faster; for rates, above 1 is faster).
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc import Client, listings, one_at_a_time, pipelined  # noqa: E402
from startup import time_to_prompt  # noqa: E402


def one_shot(binary, container, env, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([binary, "--container", container, "-c", "pwd"], stdout=subprocess.DEVNULL, check=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def stats(binary, container, count):
    client = Client([binary, "--container", container, "rpc"])
    client.send("initialize", {})
    client.receive()
    one_at_a_time(client, 200, "/notes.txt")  # warm up
    sequential = one_at_a_time(client, count, "/notes.txt")
    deep = pipelined(client, count, "/notes.txt")
    client.close()
    return sequential, deep


def main():
    before, after, work = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    container = os.path.join(work, "container")
    env = dict(os.environ, LANG="C.UTF-8", TERM="xterm", NO_COLOR="1", HOME=work)
    env.pop("LC_ALL", None)
    subprocess.run([after, "--container", container, "-c", "pwd"], stdout=subprocess.DEVNULL, check=True, env=env)
    with open(os.path.join(container, "Documents", "UserFiles", "notes.txt"), "w") as file:
        file.write("notes\n")
    thousand = os.path.join(container, "Documents", "UserFiles", "Thousand")
    os.makedirs(thousand, exist_ok=True)
    for index in range(1000):
        with open(os.path.join(thousand, f"file {index}.txt"), "w") as file:
            file.write("x" * (index % 100))
    keys = ["prompt", "pwd", "stat", "stat100", "list"]
    results = {"before": {key: [] for key in keys}, "after": {key: [] for key in keys}}
    for round_number in range(rounds):
        # Alternate which goes first, so neither always meets a warmer cache.
        order = [("before", before), ("after", after)] if round_number % 2 == 0 else [("after", after), ("before", before)]
        for label, binary in order:
            prompt = time_to_prompt([binary, "--container", container], b"files:/> ", env, 10)[0]
            results[label]["prompt"].append(prompt)
            results[label]["pwd"].append(one_shot(binary, container, env, 10))
            sequential, deep = stats(binary, container, 3000)
            results[label]["stat"].append(sequential)
            results[label]["stat100"].append(deep)
            results[label]["list"].append(listings([binary, "--container", container, "rpc"], 200, 1))
    print(f"before/after, {rounds} rounds, the builds taking turns (medians)")
    for key, title, unit, scale in [("prompt", "first prompt", "ms", 1000), ("pwd", "coffer -c pwd", "ms", 1000),
                                    ("stat", "files/stat, one at a time", "/s", 1), ("stat100", "files/stat, 100 in flight", "/s", 1),
                                    ("list", "files/list of 1,000 files", "/s", 1)]:
        old = statistics.median(results["before"][key])
        new = statistics.median(results["after"][key])
        print(f"  {title:<28} before {old * scale:10.1f} {unit}   after {new * scale:10.1f} {unit}   after/before {new / old:.2f}")


if __name__ == "__main__":
    main()
