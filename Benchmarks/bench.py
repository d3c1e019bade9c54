#!/usr/bin/env python3
"""Runs Coffer and a reference tool side by side and prints medians and ratios.

Usage: bench.py COFFER_BINARY WORK_DIR [--quick]

  ls   coffer -c 'ls -l Big' vs GNU `ls -l Big` on a 20,000-file folder, alternating
       (goal: at most 0.7 of ls's time)
  cp   coffer -c 'cp big.bin copy.bin' vs `cp big.bin copy.bin` on 1 GiB (goal: >= 95% of cp's speed)
  import  coffer -c 'import --into / HOST/big.bin' vs `cp HOST/big.bin UserFiles/big.bin` on 1 GiB,
          from a folder outside the container (goal: >= 90% of cp's speed)

Each command runs several times; the median wall time counts. Output goes to /dev/null.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


def timed(argv, env, setup=None, runs=7):
    times = []
    for _ in range(runs):
        if setup:
            setup()
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def report(label, coffer, reference, goal_text, goal_met):
    print(f"{label}")
    print(f"  coffer     median {coffer[0]*1000:9.1f} ms  (min {coffer[1]*1000:.1f}, max {coffer[2]*1000:.1f})")
    print(f"  reference  median {reference[0]*1000:9.1f} ms  (min {reference[1]*1000:.1f}, max {reference[2]*1000:.1f})")
    print(f"  ratio coffer/reference time: {coffer[0]/reference[0]:.2f}  -> {goal_text}: {'met' if goal_met else 'NOT met'}")


def main():
    coffer, work = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    container = os.path.join(work, "container")
    files = os.path.join(container, "Documents", "UserFiles")
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    subprocess.run([coffer, "--container", container, "-c", "ls"], stdout=subprocess.DEVNULL, check=True, env=env)

    # 20,000 files in one folder.
    big = os.path.join(files, "Big")
    count = 20_000
    if not os.path.isdir(big) or len(os.listdir(big)) != count:
        shutil.rmtree(big, ignore_errors=True)
        os.makedirs(big)
        for index in range(count):
            with open(os.path.join(big, f"file {index}.txt"), "wb") as handle:
                handle.write(b"x" * (index % 700))
    runs = 5 if quick else 11
    # The two alternate, so the machine's load falls on both alike.
    ours_times, gnu_times = [], []
    for _ in range(runs):
        ours_times.append(timed([coffer, "--container", container, "-c", "ls -l Big"], env, runs=1)[0])
        gnu_times.append(timed(["ls", "-l", big], env, runs=1)[0])
    ours = (statistics.median(ours_times), min(ours_times), max(ours_times))
    gnu = (statistics.median(gnu_times), min(gnu_times), max(gnu_times))
    report(f"ls -l of a {count:,}-file folder", ours, gnu, "goal at most 0.7 of GNU ls's time", ours[0] <= 0.7 * gnu[0])

    # 1 GiB copy.
    size = (256 if quick else 1024) << 20
    source = os.path.join(files, "big.bin")
    if not os.path.exists(source) or os.path.getsize(source) != size:
        with open(source, "wb") as handle:
            block = os.urandom(1 << 20)
            for _ in range(size >> 20):
                handle.write(block)
    target = os.path.join(files, "copy.bin")

    def clean():
        if os.path.exists(target):
            os.remove(target)
        os.sync()

    runs = 3 if quick else 5
    ours = timed([coffer, "--container", container, "-c", "cp big.bin copy.bin"], env, setup=clean, runs=runs)
    plain = timed(["cp", source, target], env, setup=clean, runs=runs)
    durable = timed(["sh", "-c", f'cp "{source}" "{target}" && sync "{target}"'], env, setup=clean, runs=runs)
    clean()
    compare(f"copy of {size >> 20} MiB (coffer flushes the copy before it appears) vs cp", size, ours, plain,
            durable, 0.95)

    # The same file imported from a host folder outside the container.
    host = os.path.join(work, "host")
    os.makedirs(host, exist_ok=True)
    host_file = os.path.join(host, "big-import.bin")
    if not os.path.exists(host_file) or os.path.getsize(host_file) != size:
        shutil.copyfile(source, host_file)
    target = os.path.join(files, "big-import.bin")
    ours = timed([coffer, "--container", container, "-c", f"import --into / '{host_file}'"], env, setup=clean,
                 runs=runs)
    plain = timed(["cp", host_file, target], env, setup=clean, runs=runs)
    durable = timed(["sh", "-c", f'cp "{host_file}" "{target}" && sync "{target}"'], env, setup=clean, runs=runs)
    clean()
    compare(f"import of {size >> 20} MiB from a host folder (flushed before it appears) vs cp", size, ours, plain,
            durable, 0.90)


def compare(label, size, ours, plain, durable, goal):
    """Coffer against plain cp (the goal) and against cp followed by sync (the same durability)."""
    report(label, ours, plain, f"goal at least {goal:.0%} of cp's speed", plain[0] / ours[0] >= goal)
    print(f"  speed: coffer {size / ours[0] / 2**20:.0f} MiB/s, cp {size / plain[0] / 2**20:.0f} MiB/s "
          f"({plain[0] / ours[0] * 100:.0f}% of cp)")
    print(f"  same durability: cp + sync median {durable[0]*1000:.1f} ms -> coffer at "
          f"{durable[0] / ours[0] * 100:.0f}% of its speed")


if __name__ == "__main__":
    main()
