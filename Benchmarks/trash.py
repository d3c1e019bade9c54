#!/usr/bin/env python3
"""Trashing 1,000 files in one command: Coffer beside trash-cli's trash-put.

Usage: trash.py COFFER_BINARY WORK_DIR [--quick]

  coffer      coffer -c 'cd T; rm f0000 … f0999'        (one process, one command)
  trash-put   trash-put --trash-dir DIR f0000 … f0999    (one process)

Both move the same 1,000 small files into a freedesktop.org trash (an info file each,
then the move). The run is repeated on tmpfs (/dev/shm) when there is one, which leaves
only the tools' own cost, and a "floor" shows what the file system alone charges for the
1,000 creates and renames the specification requires. trash-put is taken from $TRASH_PUT, .ci/venv/bin, or PATH. Goal: Coffer at
least 10 times faster.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

COUNT = 1000


def make_files(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for i in range(COUNT):
        with open(os.path.join(folder, f"f{i:04d}"), "w") as file:
            file.write("x")


def timed(runs, prepare):
    """Each run gets fresh folders, made before the clock starts and flushed with sync:
    deleting between runs would make the disk discard blocks while the next run creates
    files, which slows both tools by an order of magnitude on this machine."""
    times = []
    for run in range(runs):
        argv, env = prepare(run)
        subprocess.run(["sync"], check=True)
        time.sleep(0.2)
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def find_trash_put():
    candidates = [os.environ.get("TRASH_PUT"), ".ci/venv/bin/trash-put", shutil.which("trash-put")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate) if os.path.exists(candidate) else candidate
    raise SystemExit("trash-put not found: set TRASH_PUT, or run .ci/run to make .ci/venv")


def floor(work):
    """What the file system alone charges: create 1,000 small files, then rename 1,000."""
    folder = os.path.join(work, "trash-bench", f"floor-{time.time()}")
    os.makedirs(folder)
    subprocess.run(["sync"], check=True)
    time.sleep(0.2)
    start = time.perf_counter()
    for i in range(COUNT):
        fd = os.open(os.path.join(folder, f"i{i}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"x" * 140)
        os.close(fd)
        os.rename(os.path.join(folder, f"i{i}"), os.path.join(folder, f"j{i}"))
    return time.perf_counter() - start


def main():
    coffer, work = sys.argv[1], os.path.abspath(sys.argv[2])
    runs = 3 if "--quick" in sys.argv else 7
    trash_put = find_trash_put()
    for place in [work] + (["/dev/shm/coffer-trash-bench"] if os.path.isdir("/dev/shm") else []):
        print(f"in {place}" + (" (tmpfs: software cost only)" if place.startswith("/dev/shm") else ""))
        measure(coffer, place, runs, trash_put)


def measure(coffer, work, runs, trash_put):
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    shutil.rmtree(os.path.join(work, "trash-bench"), ignore_errors=True)
    names = " ".join(f"f{i:04d}" for i in range(COUNT))
    containers = []

    def prepare_coffer(run):
        container = os.path.join(work, "trash-bench", f"coffer-{run}")
        subprocess.run([coffer, "--container", container, "-c", "pwd"], stdout=subprocess.DEVNULL, check=True, env=env)
        make_files(os.path.join(container, "Documents", "UserFiles", "T"))
        containers.append(container)
        return [coffer, "--container", container, "-c", f"cd T; rm {names}"], env

    def prepare_trash_put(run):
        folder = os.path.join(work, "trash-bench", f"put-{run}")
        make_files(os.path.join(folder, "files"))
        os.makedirs(os.path.join(folder, "trash"))
        paths = [os.path.join(folder, "files", f"f{i:04d}") for i in range(COUNT)]
        return [trash_put, "--trash-dir", os.path.join(folder, "trash")] + paths, env

    coffer_time = timed(runs, prepare_coffer)
    put_time = timed(runs, prepare_trash_put)
    for container in containers:
        moved = len(os.listdir(os.path.join(container, "Library", "Trash", "info")))
        if moved != COUNT:
            raise SystemExit(f"coffer trashed {moved} files, expected {COUNT}")
    shutil.rmtree(os.path.join(work, "trash-bench"), ignore_errors=True)

    disk = floor(work)
    shutil.rmtree(os.path.join(work, "trash-bench"), ignore_errors=True)
    print(f"  trashing {COUNT} files in one command")
    for label, (median, low, high) in [("coffer", coffer_time), ("trash-put", put_time)]:
        print(f"  {label:<10} median {median*1000:8.1f} ms  (min {low*1000:.1f}, max {high*1000:.1f})")
    print(f"  floor      {disk*1000:8.1f} ms  (Python creating {COUNT} info-sized files and {COUNT} renames, nothing else)")
    speedup = put_time[0] / coffer_time[0]
    print(f"  coffer is {speedup:.1f}x faster -> goal (>= 10x): {'met' if speedup >= 10 else 'NOT met'}")
    print()


if __name__ == "__main__":
    main()
