#!/usr/bin/env python3
"""Name search on 100,000 files in 1,000 folders: Coffer's walk and index beside GNU find.

Usage: search.py COFFER_BINARY WORK_DIR [--quick] [--cold]

  find          find FILES -iname '*budget*'
  coffer walk   coffer -c 'find --walk budget'     (no index: reads the folders)
  coffer index  coffer -c 'find budget'            (complete index; the process compares
                                                    folder times with the index first)
  index build   coffer -c 'reindex --rebuild'      (from nothing)

  five in a row coffer -c 'find budget' five times on a container whose index was just
                deleted: the first run builds the index, the next ones are answered by it
  rpc search    files/search inside a running `coffer rpc` (its index complete), one request
                at a time, beside the same find; and the same search with three filters (type,
                date, size), taking turns with it, and a search by tag alone (`*` with
                `tags`) over the same 100 files tagged, beside `getfattr -R`

Every figure includes process start-up but the rpc one. Two patterns: "budget" (1,000
matches) and "budget 000" (10). With --cold the page cache is dropped before every run (needs root);
otherwise runs are warm. Peak memory is each process's maximum resident set (wait4).
Goals (issue 8): the walk not slower than find; the index 20 times faster than find.
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import search_tree  # noqa: E402

ENV = dict(os.environ, LC_ALL="C.UTF-8")


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as control:
        control.write("3\n")


def run(argv, cold):
    """Wall time (s) and the number of output lines of one run."""
    if cold:
        drop_caches()
    started = time.perf_counter()
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{argv} failed with status {result.returncode}")
    return elapsed, result.stdout.count(b"\n")


def peak_memory(argv):
    """The maximum resident set of one more run, in KiB, from GNU time (measuring the
    child from Python would count the interpreter's own pages copied at fork)."""
    report = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=ENV, text=True).stderr
    return int(report.strip().splitlines()[-1])


def measure(argv, runs, cold):
    """Median wall time, peak memory and output lines."""
    results = [run(argv, cold) for _ in range(runs)]
    return statistics.median(r[0] for r in results), peak_memory(argv), results[0][1]


def rpc_search(coffer, container, files, runs):
    """files/search in a running server against find, for the pattern with 101 matches."""
    import json
    pattern = "budget 00"
    # The same files carry a tag, for a search by tag alone (`*`: every name), which only the
    # index's rows can answer without reading every item (issue 35).
    tagged = [os.path.join(folder, name) for folder, _, names in os.walk(files) for name in names
              if pattern.lower() in name.lower()]
    for path in tagged:
        os.setxattr(path, "user.xdg.tags", b"bench")
    # Answers are read through a buffer: an unbuffered pipe's readline reads a byte at a time,
    # which would time the client, not the server.
    server = subprocess.Popen([coffer, "--container", container, "rpc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=ENV)
    identifier = 0

    def call(method, params):
        nonlocal identifier
        identifier += 1
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}) + "\n").encode())
        server.stdin.flush()
        while True:
            answer = json.loads(server.stdout.readline())
            if answer.get("id") == identifier:
                return answer

    call("initialize", {})
    while call("files/search", {"query": pattern, "limit": 10000})["result"].get("engine") != "index":
        time.sleep(0.1)
    # A server just started is still setting up its watch and catching up with the disk
    # (searches wait for that pass) and reading the index's pages for the first time: the
    # figure is of a server already running, so the first second is left out.
    warm_until = time.perf_counter() + 1.0
    while time.perf_counter() < warm_until:
        call("files/search", {"query": pattern, "limit": 10000})
    # Name only, and with three filters (type, date, size: issue 35), taking turns.
    filtered = {"query": pattern, "limit": 10000, "types": ["public.text"], "newer": "3650d", "smaller": "1M"}
    by_tag = {"query": "*", "limit": 10000, "tags": ["bench"]}
    while len(call("files/search", by_tag)["result"]["matches"]) != len(tagged):
        time.sleep(0.1)  # until the watch's first full pass has the tags in the rows
    times, filtered_times, tag_times = [], [], []
    for _ in range(max(200, runs * 5)):
        started = time.perf_counter()
        answer = call("files/search", {"query": pattern, "limit": 10000})
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        narrowed = call("files/search", filtered)
        filtered_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        found_by_tag = call("files/search", by_tag)
        tag_times.append(time.perf_counter() - started)
    matches = len(answer["result"]["matches"])
    narrowed_matches = len(narrowed["result"]["matches"])
    server.stdin.close()
    server.wait()
    reference = measure(["find", files, "-iname", f"*{pattern}*"], runs, False)
    ours = statistics.median(times)
    print(f"files/search '{pattern}' in a running coffer rpc: {ours * 1000:.2f} ms for {matches} matches; "
          f"find {reference[0] * 1000:.1f} ms ({reference[2]} lines): {reference[0] / ours:.0f}× faster (goal >= 60×)")
    narrowed_time = statistics.median(filtered_times)
    print(f"the same with three filters (type, newer, smaller): {narrowed_time * 1000:.2f} ms for {narrowed_matches} "
          f"matches: {narrowed_time / ours:.2f}× the name-only search (goal <= 1.5×)")
    tag_reference = measure(["getfattr", "-R", "--absolute-names", "-m", r"^user\.xdg\.tags$", files], runs, False)
    tag_time = statistics.median(tag_times)
    print(f"files/search '*' --tag bench (every name, {len(found_by_tag['result']['matches'])} tagged): {tag_time * 1000:.2f} ms; "
          f"getfattr -R {tag_reference[0] * 1000:.1f} ms: {tag_reference[0] / tag_time:.0f}× faster")
    for path in tagged:
        os.removexattr(path, "user.xdg.tags")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    quick, cold = "--quick" in sys.argv, "--cold" in sys.argv
    runs = 3 if quick or cold else 9
    container = os.path.join(work, "search-container")
    files = os.path.join(container, "Documents", "UserFiles")
    if not os.path.isdir(os.path.join(files, "Area 09")):
        subprocess.run([coffer, "--container", container, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL, env=ENV)
        print("generating 100,000 files in 1,000 folders…", file=sys.stderr)
        search_tree.build(files)
    count = sum(len(names) for _, _, names in os.walk(files))
    print(f"tree: {count:,} files; {'cold' if cold else 'warm'} page cache; median of {runs} runs\n")

    def coffer_command(command):
        return [coffer, "--container", container, "-c", command]

    build = measure(coffer_command("reindex --rebuild"), 3, cold)
    print(f"index build from nothing: {build[0] * 1000:,.0f} ms, peak {build[1] / 1024:.1f} MiB")
    index_file = os.path.join(container, "Library", "Caches", "SearchIndex", "index.sqlite")
    size = sum(os.path.getsize(index_file + s) for s in ("", "-wal") if os.path.exists(index_file + s))
    print(f"index size: {size / 1048576:.1f} MiB\n")

    print("| pattern | matches | find | coffer walk | coffer index | walk vs find | index vs find |")
    print("|---|---|---|---|---|---|---|")
    memory = {}
    for pattern in ["budget", "budget 000"]:
        reference = measure(["find", files, "-iname", f"*{pattern}*"], runs, cold)
        walk = measure(coffer_command(f"find --walk '{pattern}'"), runs, cold)
        index = measure(coffer_command(f"find '{pattern}'"), runs, cold)
        if not reference[2] == walk[2] == index[2]:
            sys.exit(f"different answers for {pattern}: find {reference[2]}, walk {walk[2]}, index {index[2]}")
        print(f"| {pattern} | {reference[2]:,} | {reference[0] * 1000:.1f} ms | {walk[0] * 1000:.1f} ms "
              f"| {index[0] * 1000:.1f} ms | {reference[0] / walk[0]:.2f}× | {reference[0] / index[0]:.2f}× |")
        for name, figures in (("find", reference), ("coffer walk", walk), ("coffer index", index)):
            memory[name] = max(memory.get(name, 0), figures[1])
    # A new container's first searches: the index deleted, then five one-off finds in a row.
    reference = measure(["find", files, "-iname", "*budget*"], runs, cold)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(index_file + suffix):
            os.remove(index_file + suffix)
    in_a_row = [run(coffer_command("find budget"), cold)[0] for _ in range(5)]
    print("\nfive `find budget` in a row after the index was deleted: "
          + ", ".join(f"{seconds * 1000:.0f} ms" for seconds in in_a_row)
          + f"; find {reference[0] * 1000:.1f} ms; runs 2–5 vs find: "
          + ", ".join(f"{seconds / reference[0]:.2f}" for seconds in in_a_row[1:]) + " (goal <= 0.4)")
    rpc_search(coffer, container, files, runs)
    startup = measure(coffer_command("pwd"), runs, cold)
    print(f"\ncoffer -c pwd (start-up alone): {startup[0] * 1000:.1f} ms, peak {startup[1] / 1024:.1f} MiB")
    print("peak memory: " + ", ".join(f"{name} {kib / 1024:.1f} MiB" for name, kib in memory.items())
          + f", index build {build[1] / 1024:.1f} MiB")
    print("(ratios above 1 mean Coffer is faster)")


if __name__ == "__main__":
    main()
