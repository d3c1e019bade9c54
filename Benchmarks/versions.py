#!/usr/bin/env python3
"""Versions and undo (issue 52): what keeping versions costs a save, how fast a long history
lists, and how fast a session of 1,000 changes is undone.

Usage: versions.py COFFER_BINARY WORK_DIR [--quick] [--rounds N]

  save      `coffer -c 'import --replace --into / HOST/big.bin'` over a 1 GiB file (256 MiB with
            --quick), in a container that keeps versions beside one started with --no-versions
            (what a replace displaces goes to the trash, as before versions), taking turns in
            every round; and plain `cp` of the same file over the same name as the floor. Also
            the bytes each run writes (the children's rusage, block output), which keeping a
            version must not add to: the replaced file is hard-linked, not copied. What each run
            displaces stays until the end (3 GiB per side at 3 rounds).
  list      `files/versions` of a file with 1,000 versions, in a running `coffer rpc` (the file
            saved 1,000 times over by `files/write`), beside `files/stat` of the same file as
            the floor of a round trip; and `coffer -c 'versions FILE'` one-shot beside
            `coffer -c pwd`.
  undo      one `coffer rpc` session making 1,000 changes (250 files written new, 250 saved
            over, 250 renamed, 250 tagged), then another's `session/undo` of it; the time of
            the changes themselves is the reference.

Goals: save ≤ 1.05× with versions off and no extra bytes; list < 50 ms; undo < 5 s.
Medians over the rounds are printed.
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc import Client  # noqa: E402


def call(client, method, params):
    client.send(method, params)
    return client.receive()["result"]


def written_bytes():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock * 512


def run_timed(argv, env):
    subprocess.run(["sync"], check=True)
    before = written_bytes()
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    subprocess.run(["sync"], check=True)
    elapsed = time.perf_counter() - start
    return elapsed, written_bytes() - before


def make_big(path, size):
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    with open(path, "wb") as file:
        block = os.urandom(1 << 20)
        for _ in range(size >> 20):
            file.write(block)


def save(binary, work, env, size, rounds):
    host = os.path.join(work, "host")
    os.makedirs(host, exist_ok=True)
    big = os.path.join(host, "big.bin")
    make_big(big, size)
    kept, off = os.path.join(work, "kept"), os.path.join(work, "off")
    floor_folder = os.path.join(work, "floor")
    for folder in (kept, off, floor_folder):
        shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(floor_folder)
    # The file to replace is there first in each.
    for container, extra in ((kept, []), (off, ["--no-versions"])):
        subprocess.run([binary, "--container", container, *extra, "-c", f"import --into / {big}"],
                       stdout=subprocess.DEVNULL, env=env, check=True)
    shutil.copyfile(big, os.path.join(floor_folder, "big.bin"))
    results = {"kept": [], "off": [], "cp": []}
    written = {"kept": [], "off": [], "cp": []}
    for round_number in range(rounds):
        order = [("kept", kept, []), ("off", off, ["--no-versions"])]
        if round_number % 2:
            order.reverse()
        for name, container, extra in order:
            elapsed, wrote = run_timed([binary, "--container", container, *extra, "-c", f"import --replace --into / {big}"], env)
            results[name].append(elapsed)
            written[name].append(wrote)
            # (What each displaced stays until the end: deleting a gigabyte between runs makes the
            # disk free blocks while the next run writes, which would time the deletion instead.)
        # The floor: the same bytes copied over the same name.
        elapsed, wrote = run_timed(["cp", big, os.path.join(floor_folder, "big.bin")], env)
        results["cp"].append(elapsed)
        written["cp"].append(wrote)
    for container in (kept, off, floor_folder):
        shutil.rmtree(container, ignore_errors=True)
    medians = {name: statistics.median(times) for name, times in results.items()}
    bytes_written = {name: statistics.median(values) for name, values in written.items()}
    print(f"save {size >> 20} MiB over a file ({rounds} rounds, medians):")
    for name, label in (("kept", "versions kept"), ("off", "--no-versions"), ("cp", "cp (floor)")):
        print(f"  {label:15} {medians[name]:7.3f} s  {bytes_written[name] / (1 << 20):8.1f} MiB written")
    ratio = medians["kept"] / medians["off"]
    extra = (bytes_written["kept"] - bytes_written["off"]) / (1 << 20)
    print(f"  kept / off: {ratio:.3f}× (goal ≤ 1.05×); extra written: {extra:+.1f} MiB (goal: none)")
    return ratio


def listing(binary, work, env, rounds):
    container = os.path.join(work, "history")
    shutil.rmtree(container, ignore_errors=True)
    client = Client([binary, "--container", container, "rpc", "--framing", "ndjson"])
    call(client, "initialize", {})
    for index in range(1001):
        call(client, "files/write", {"path": "/notes.txt", "data": f"save {index}\n", "conflict": "replace"})
    count = len(call(client, "files/versions", {"path": "/notes.txt"})["versions"])
    lists, stats = [], []
    for _ in range(rounds * 10):
        start = time.perf_counter()
        call(client, "files/versions", {"path": "/notes.txt"})
        lists.append(time.perf_counter() - start)
        start = time.perf_counter()
        call(client, "files/stat", {"path": "/notes.txt"})
        stats.append(time.perf_counter() - start)
    client.close()
    one_shot, start_up = [], []
    for _ in range(rounds):
        for argv, into in (([binary, "--container", container, "-c", "versions notes.txt"], one_shot),
                           ([binary, "--container", container, "-c", "pwd"], start_up)):
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, env=env, check=True)
            into.append(time.perf_counter() - start)
    listed = statistics.median(lists) * 1000
    print(f"versions of a file with {count} versions (medians):")
    print(f"  files/versions {listed:7.2f} ms   files/stat {statistics.median(stats) * 1000:6.2f} ms (a round trip's floor)")
    print(f"  coffer -c 'versions notes.txt' {statistics.median(one_shot) * 1000:6.1f} ms   "
          f"coffer -c pwd {statistics.median(start_up) * 1000:6.1f} ms; goal: < 50 ms")
    return listed


def undo(binary, work, env, rounds):
    times, doing = [], []
    for round_number in range(rounds):
        container = os.path.join(work, f"undo{round_number}")
        shutil.rmtree(container, ignore_errors=True)
        os.makedirs(os.path.join(container, "Documents", "UserFiles", "Base"))
        for index in range(250):
            for prefix in ("old", "move", "tag"):
                with open(os.path.join(container, "Documents", "UserFiles", "Base", f"{prefix}{index:03d}.txt"), "w") as file:
                    file.write("base\n")
        agent = Client([binary, "--container", container, "rpc", "--framing", "ndjson"])
        call(agent, "initialize", {})
        session = call(agent, "session/changes", {})["current"]
        start = time.perf_counter()
        for index in range(250):
            call(agent, "files/write", {"path": f"/Base/new{index:03d}.txt", "data": "new\n"})
            call(agent, "files/write", {"path": f"/Base/old{index:03d}.txt", "data": "changed\n", "conflict": "replace"})
            call(agent, "files/rename", {"path": f"/Base/move{index:03d}.txt", "newName": f"moved{index:03d}.txt"})
            call(agent, "files/tags/set", {"paths": [f"/Base/tag{index:03d}.txt"], "add": ["done"]})
        doing.append(time.perf_counter() - start)
        agent.close()
        undoer = Client([binary, "--container", container, "rpc", "--framing", "ndjson"])
        call(undoer, "initialize", {})
        start = time.perf_counter()
        report = call(undoer, "session/undo", {"session": session})
        times.append(time.perf_counter() - start)
        undoer.close()
        shutil.rmtree(container, ignore_errors=True)
        if len(report["reverted"]) != 1000 or report["skipped"] or report["failed"]:
            raise SystemExit(f"the undo did not revert the 1,000 changes: {len(report['reverted'])} reverted, "
                             f"{len(report['skipped'])} left, {len(report['failed'])} failed")
    print(f"undo of a session of 1,000 changes ({rounds} rounds, medians):")
    print(f"  session/undo {statistics.median(times):6.2f} s   the changes themselves {statistics.median(doing):6.2f} s; "
          f"goal: < 5 s")
    return statistics.median(times)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    binary, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    quick = "--quick" in sys.argv
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else (3 if quick else 5)
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, LC_ALL="C.UTF-8", HOME=work)
    save(binary, work, env, (256 if quick else 1024) << 20, rounds)
    listing(binary, work, env, rounds)
    undo(binary, work, env, rounds)


if __name__ == "__main__":
    main()
