#!/usr/bin/env python3
"""`coffer mount` beside `rclone mount --vfs-cache-mode writes` (Debian's rclone) of the same local folder, and
the disk itself, in one run (issue 54).

Usage: mount.py COFFER_BINARY WORK_DIR [--rounds N] [--size-mib M] [--repository-files N] [--listing-files N]
                [--removed-files N]

- write: a new file of 1 GiB written in 1 MiB blocks, then `fsync`ed and closed; for rclone, until the file
  is whole in the folder underneath (its cache uploads it on close, `--vfs-write-back 0s`); MB/s.
- read: the same file read in 1 MiB blocks (cached by the kernel on every side, as a second read is); MB/s.
- git clone: of a 5,000-file repository (`file://`, so git packs and unpacks instead of linking); seconds.
- ls -lR: of 100,000 files in 100 folders, the first listing after the mount; seconds.
- rm -r: of a tree of 10,000 files in 20 folders, made through the same side; seconds (Coffer's leaves them in
  the trash, as one folder).

Goal: Coffer >= 1.0x rclone mount on each figure, and >= 0.5x the disk for reading and writing. The sides
take turns at going first in every round; medians. Both mounts are started and ended by the script.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

MIB = 1 << 20


def mounted(point):
    with open("/proc/self/mounts") as mounts:
        return any(line.split()[1] == point for line in mounts)


def wait_mounted(point, process):
    deadline = time.monotonic() + 60
    while not mounted(point):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"no mount at {point}")
        time.sleep(0.05)


def unmount(point, process):
    if mounted(point):
        subprocess.run(["fusermount3", "-u", point], capture_output=True, timeout=300)
    try:
        process.wait(timeout=300)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=60)


def write_file(path, size, settled=None):
    block = os.urandom(MIB)
    started = time.perf_counter()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for _ in range(size // MIB):
        os.write(descriptor, block)
    os.fsync(descriptor)
    os.close(descriptor)
    if settled:
        # rclone's cache uploads the file after it is closed: it is written when it is whole underneath.
        while not (os.path.exists(settled) and os.path.getsize(settled) == size):
            time.sleep(0.01)
        descriptor = os.open(settled, os.O_RDONLY)
        os.fsync(descriptor)
        os.close(descriptor)
    return size / (time.perf_counter() - started)


def read_file(path):
    size = 0
    started = time.perf_counter()
    with open(path, "rb", buffering=0) as reading:
        while chunk := reading.read(MIB):
            size += len(chunk)
    return size / (time.perf_counter() - started)


def timed(arguments, cwd=None):
    started = time.perf_counter()
    run = subprocess.run(arguments, capture_output=True, text=True, timeout=3600, cwd=cwd, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)}: {run.stderr[-600:]}")
    return seconds


def make_tree(root, files, folders):
    for index in range(files):
        folder = os.path.join(root, f"d{index % folders:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"f{index:06d}.txt"), "wb") as made:
            made.write(b"x" * (index % 200))


def main():
    coffer, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

    def option(name, default):
        return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default

    rounds, size = option("--rounds", 3), option("--size-mib", 1024) * MIB
    repository_files, listing_files = option("--repository-files", 5_000), option("--listing-files", 100_000)
    removed_files = option("--removed-files", 10_000)
    os.makedirs(work, exist_ok=True)
    container = os.path.join(work, "mount-container")
    subprocess.run([coffer, "--container", container, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL)
    files = os.path.join(container, "Documents", "UserFiles")

    # The repository, and the 100,000 files listed through every side (they are one folder underneath).
    repository = os.path.join(work, "repository")
    if not os.path.isdir(os.path.join(repository, ".git")):
        shutil.rmtree(repository, ignore_errors=True)
        make_tree(repository, repository_files, 50)
        git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@coffer.invalid"]
        subprocess.run(git + ["init", "-q", repository], check=True)
        subprocess.run(git + ["-C", repository, "add", "-A"], check=True)
        subprocess.run(git + ["-C", repository, "commit", "-q", "-m", "files"], check=True)
    listing = os.path.join(files, "Listing")
    if not os.path.isdir(listing) or sum(len(names) for _, _, names in os.walk(listing)) != listing_files:
        shutil.rmtree(listing, ignore_errors=True)
        make_tree(listing, listing_files, 100)

    # rclone uploads what its cache kept from a run that stopped half-way when it starts: it starts empty.
    shutil.rmtree(os.path.join(work, "rclone-cache"), ignore_errors=True)
    for leftover in os.listdir(files):   # of a run that stopped half-way
        if leftover.startswith(("big-", "clone-", "removed-")):
            path = os.path.join(files, leftover)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    sides = {"coffer": os.path.join(work, "coffer-mnt"), "rclone": os.path.join(work, "rclone-mnt"), "disk": files}
    figures = {name: {side: [] for side in sides} for name in ("write", "read", "clone", "list", "remove")}
    failures = {side: [] for side in sides}
    for index in range(rounds):
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        for side in order:
            point = sides[side]
            process = None
            if side == "coffer":
                os.makedirs(point, exist_ok=True)
                process = subprocess.Popen([coffer, "--container", container, "mount", point], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            elif side == "rclone":
                os.makedirs(point, exist_ok=True)
                process = subprocess.Popen(["rclone", "mount", files, point, "--config", "/dev/null", "--vfs-cache-mode", "writes",
                                            "--vfs-write-back", "0s", "--cache-dir", os.path.join(work, "rclone-cache")],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            try:
                if process:
                    wait_mounted(point, process)
                # First, while nothing is cached: the listing.
                figures["list"][side].append(timed(["ls", "-lR", os.path.join(point, "Listing")]))
                name = f"big-{side}-{index}.bin"
                figures["write"][side].append(write_file(os.path.join(point, name), size,
                                                         os.path.join(files, name) if side == "rclone" else None))
                figures["read"][side].append(read_file(os.path.join(point, name)))
                # rclone's mount fails a clone now and then (`.git/config.lock`): it is run again, into a
                # folder of its own (what the failed one left may not go at once), and counted.
                for attempt in range(3):
                    clone = f"clone-{side}-{index}-{attempt}"
                    try:
                        figures["clone"][side].append(timed(["git", "clone", "-q", "file://" + repository, os.path.join(point, clone)]))
                        break
                    except SystemExit as failed:
                        failures[side].append(str(failed)[-200:])
                        shutil.rmtree(os.path.join(point, clone), ignore_errors=True)
                        if attempt == 2:
                            raise
                removed = f"removed-{side}-{index}"
                # Made through the side itself, so its caches know the tree it removes.
                make_tree(os.path.join(point, removed), removed_files, 20)
                figures["remove"][side].append(timed(["rm", "-r", os.path.join(point, removed)]))
                for leftover in [name] + [entry for entry in os.listdir(files) if entry.startswith(f"clone-{side}-{index}-")]:
                    path = os.path.join(files, leftover)
                    shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
            finally:
                if process:
                    unmount(point, process)
        # What Coffer's deletions and versions kept is not what is measured.
        subprocess.run([coffer, "--container", container, "-c", "empty-trash --yes"], capture_output=True, timeout=600)

    print(f"{rounds} rounds, {size // MIB} MiB, a {repository_files}-file repository, {listing_files} files listed, "
          f"{removed_files} removed; medians")

    def line(label, key, unit, scale=1.0, higher_is_better=True, disk_goal=None):
        c, r, d = (statistics.median(figures[key][side]) * scale for side in ("coffer", "rclone", "disk"))
        versus_rclone = c / r if higher_is_better else r / c
        versus_disk = c / d if higher_is_better else d / c
        goal = f"rclone {'met' if versus_rclone >= 1.0 else 'NOT met'}"
        if disk_goal:
            goal += f", disk {'met' if versus_disk >= disk_goal else 'NOT met'}"
        print(f"{label:<22} coffer {c:9.2f} {unit:<4} rclone {r:9.2f} {unit:<4} disk {d:9.2f} {unit:<4} "
              f"vs rclone {versus_rclone:5.2f}x  vs disk {versus_disk:5.2f}x  ({goal})")

    line(f"write {size // MIB} MiB", "write", "MB/s", 1e-6, disk_goal=0.5)
    line(f"read {size // MIB} MiB", "read", "MB/s", 1e-6, disk_goal=0.5)
    line(f"git clone ({repository_files})", "clone", "s", higher_is_better=False)
    line(f"ls -lR ({listing_files})", "list", "s", higher_is_better=False)
    line(f"rm -r ({removed_files})", "remove", "s", higher_is_better=False)
    for side, failed in failures.items():
        if failed:
            print(f"{side}: git clone failed {len(failed)} time(s) and was run again; the last: {failed[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
